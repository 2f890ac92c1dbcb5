"""Errors users can act on: each names where the problem is and what is allowed."""

from __future__ import annotations


class ConflictScoreError(Exception):
    """Base class of the errors the CLI reports with exit status 2."""


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
