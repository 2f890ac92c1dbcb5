"""Errors users can act on: each names where the problem is and what is allowed, and quotes
values the one way every message does (:func:`shown`)."""

from __future__ import annotations

import json
from typing import Any


class ConflictScoreError(Exception):
    """Base class of the errors the CLI reports in one line, with exit status :attr:`exit_status`."""

    exit_status = 2


class InputError(ConflictScoreError, ValueError):
    """Bad input data, located by file, line and field."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None, field: str | None = None):
        self.path, self.line, self.field, self.reason = path, line, field, message
        where = ":".join(str(x) for x in (path, line) if x is not None)
        parts = [where] if where else []
        if field:
            parts.append(f"field '{field}'")
        super().__init__(": ".join(parts + [message]))


class ConfigError(ConflictScoreError, ValueError):
    """A bad configuration value: unknown backend, unknown argument, wrong type."""


class BackendUnavailable(ConflictScoreError, RuntimeError):
    """A backend needs an optional extra or a model that is not installed here."""


class OutputBusy(ConflictScoreError):
    """Another process is writing the same output file."""


class WriteFailed(ConflictScoreError):
    """Writing an output failed on the machine's side (a full disk, a file-size limit, an I/O error):
    exit status 1, and the message says what was kept."""

    exit_status = 1


def shown(value: Any, limit: int = 60, *, as_json: bool = False) -> str:
    """A value as a message quotes it: its ``repr`` (its JSON with ``as_json``), cut to ``limit``
    characters with an ellipsis; an integer of 128 bits or more is named by its size (it may
    have thousands of digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() >= 128:
        return f"an integer of {value.bit_length()} bits"
    text = json.dumps(value, ensure_ascii=False, default=str) if as_json else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
