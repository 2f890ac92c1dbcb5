"""The one redaction point: every string that reaches a file (or stdout) passes :func:`scrub`.

Three kinds of secret are replaced by ``[redacted]``, wherever they stand (a summary's config, a
backend's resolved description, a cache's ``specs`` row, a trace, a generated reply, a warning):

- known secret values: every value handed to :func:`add_secret` (the API key a generator sends)
  and the value of every environment variable whose name says it is one (``*API_KEY*``,
  ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``), when at least :data:`MIN_SECRET` characters long;
- credentials in URLs: ``scheme://user:PASSWORD@host`` keeps the user, loses the password;
- header-shaped strings: what follows ``Bearer`` or an ``Authorization`` / ``api_key`` /
  ``x-api-key`` / ``access_token`` / ``password`` field, and in a mapping the value of a key
  named so (``{"api_key": ...}``, ``{"Authorization": ...}``).

A secret is still sent where it must go (a request's header or body): only never stored.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Any, Iterable

REDACTED = "[redacted]"
MIN_SECRET = 8
"""Shorter values are not treated as secrets by value: replacing every "abc" would ruin output."""

_KNOWN: set[str] = set()
_SECRET_ENV = re.compile(r"(?i)API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL")
_SECRET_KEY = re.compile(
    r"(?i)^(?:.*[-_])?(?:api[-_]?key|apikey|access[-_]?token|auth[-_]?token|token|secret|client[-_]?secret|"
    r"password|passwd|authorization|proxy-authorization|x-api-key|credentials?)$"
)
_TEXT = re.compile(
    r"(?i)(\bbearer\s+)(?!\[redacted\])[A-Za-z0-9._~+/=-]{8,}"
    r"|(\b(?:authorization|proxy-authorization|api[-_]?key|x-api-key|access[-_]?token|password|passwd)[\"']?\s*[:=]\s*"
    r"[\"']?)(?:(?:bearer|basic)\s+)?(?!\[redacted\])[^\s\"',;}\]]+"
    r"|(\b[a-z][a-z0-9+.-]*://[^/\s:@\"']+:)(?!\[redacted\])[^/\s@\"']+(?=@)"
)


def add_secret(value: str | None) -> None:
    """Never store ``value`` (an API key read from the environment, a token given in a file)."""
    if value and len(value) >= MIN_SECRET:
        _KNOWN.add(value)


def known_secrets() -> list[str]:
    """The values :func:`scrub` replaces: those added, and those of secret-named environment
    variables; longest first, so a secret that contains another goes whole."""
    found = set(_KNOWN)
    found.update(v for k, v in os.environ.items() if len(v) >= MIN_SECRET and _SECRET_ENV.search(k))
    return sorted(found, key=len, reverse=True)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every credential replaced by ``[redacted]``: the known secrets, ``secrets``
    (an API key in use), URL passwords and header-shaped strings."""
    return _text(text, (*sorted((s for s in secrets if s), key=len, reverse=True), *known_secrets()))


def scrub(value: Any) -> Any:
    """``value`` (JSON-like: mappings, lists, strings, numbers) with every secret replaced, as a
    new value; mapping keys named like secrets lose their string values whole."""
    return _scrub(value, tuple(known_secrets()))


_HINT = re.compile(r"(?i)://|bearer|auth|key|token|pass")
_SHORT = 256


def _text(text: str, secrets: tuple[str, ...]) -> str:
    if len(text) <= _SHORT:
        return _short_text(text, secrets)  # output rows repeat the same short strings: decided once
    return _replace(text, secrets)


@functools.lru_cache(maxsize=1 << 16)
def _short_text(text: str, secrets: tuple[str, ...]) -> str:
    return _replace(text, secrets)


def _replace(text: str, secrets: tuple[str, ...]) -> str:
    if _HINT.search(text):
        text = _TEXT.sub(_keep_prefix, text)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


@functools.lru_cache(maxsize=4096)
def _secret_key(key: str) -> bool:
    return _SECRET_KEY.match(key) is not None


def _keep_prefix(m: re.Match[str]) -> str:
    return (m.group(1) or m.group(2) or m.group(3)) + REDACTED


def _scrub(value: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return _text(value, secrets)
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if isinstance(k, str) and isinstance(v, str) and v and _secret_key(k):
                out[k] = REDACTED
            else:
                out[_text(k, secrets) if isinstance(k, str) else k] = _scrub(v, secrets)
        return out
    if isinstance(value, (list, tuple)):
        return [_scrub(v, secrets) for v in value]
    return value


def scrub_text(text: str) -> str:
    """A text (a page, a line) with every secret replaced, as :func:`scrub` replaces them in values."""
    return _text(text, tuple(known_secrets()))
