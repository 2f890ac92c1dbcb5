"""The one redaction point: every string the program writes of its own passes :func:`scrub`.

It replaces the secrets **this run holds**, and nothing else, where the program itself writes
text that could carry one (a summary's config, a backend's resolved description, a cache's
``specs`` row, a note, an error, a log line, a trace of a server's reply, a generated text: a
backend redacts what a server sends back as it comes in, :func:`redact`):

- every value handed to :func:`add_secret`: the key a backend read through ``api_key_env``, the
  header values it sends (``Bearer KEY``, ``Basic ...``), the credentials of the request body it
  was configured with (:func:`add_credentials`: ``extra_body={"api_key": ...}``), a token read
  from a file it was pointed at (the hub's token of ``models pull``); each replaced by
  ``[redacted]`` when at least :data:`MIN_SECRET` characters long;
- the credentials of every URL handed to :func:`add_url`: ``scheme://user:PASSWORD@`` of that URL
  becomes ``scheme://user:[redacted]@`` (any length: the text is that URL's own), and the
  password alone is a secret like the others.

The user's data is never rewritten: the rows a command writes of the user's items (score's and
bench run's OUTPUT, generate's copy of the items, merged rows, built benchmarks, CSV tables, a
report's items) are written ``verbatim`` (:func:`~.atomic.dumps`), even where a held secret is also
a word of them (a local server's documented placeholder key ``lm-studio`` in "Install lm-studio");
no pattern is matched in free text ("Bearer securities", "Password : forgot password" and
``https://alice:wonderland@example.org`` in a document stay as they are), no environment variable
the run did not read is looked at, and a mapping key named like a secret (an item's own
``password`` field) keeps its value. A secret is still sent where it
must go (a request's header or body): only never stored. :func:`forget_secrets` starts a new run
(the command line calls it first).
"""

from __future__ import annotations

import functools
import re
import threading
import urllib.parse
from typing import Any, Iterable, Mapping

REDACTED = "[redacted]"
MIN_SECRET = 8
"""Shorter values are not replaced by value: replacing every "EMPTY" (a dummy key) would
rewrite the user's text. A URL's ``user:password@`` is replaced whatever its length."""

_HELD: dict[str, str] = {}  # secret text -> what replaces it
_LOCK = threading.Lock()
_ORDER: list[tuple[tuple[str, str], ...]] = [()]  # the held secrets, longest first (rebuilt when one is added)
_CREDENTIAL_KEY = re.compile(
    r"(?i)^(?:.*[-_])?(?:api[-_]?key|apikey|access[-_]?token|auth[-_]?token|token|secret|client[-_]?secret|"
    r"password|passwd|authorization|proxy-authorization|x-api-key|credentials?)$"
)


def _hold(value: str, replacement: str = REDACTED) -> None:
    with _LOCK:
        if _HELD.get(value) != replacement:
            _HELD[value] = replacement
            _ORDER[0] = tuple(sorted(_HELD.items(), key=lambda kv: len(kv[0]), reverse=True))


def add_secret(value: str | None) -> None:
    """Never store ``value``, a secret this run holds (an API key it read, a header value it sends,
    a token from a file); ignored when shorter than :data:`MIN_SECRET`."""
    if isinstance(value, str) and len(value) >= MIN_SECRET:
        _hold(value)


def add_url(url: str | None) -> None:
    """Never store the password of ``url`` (a ``base_url`` this run was given): its
    ``scheme://user:PASSWORD@`` keeps the user, and the password (raw and decoded) is a secret."""
    if not isinstance(url, str):
        return
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return
    if parts.password is None or "@" not in parts.netloc:
        return
    userinfo = parts.netloc.rpartition("@")[0]
    user, _, password = userinfo.partition(":")
    _hold(f"//{userinfo}@", f"//{user}:{REDACTED}@")
    add_secret(password)
    add_secret(urllib.parse.unquote(password))


def add_credentials(body: Any) -> None:
    """Never store the credentials of a request body this run sends (``extra_body``): the string
    values of its keys named as credentials (``api_key``, ``token``, ``Authorization`` ...), at any depth."""
    if isinstance(body, Mapping):
        for k, v in body.items():
            if isinstance(v, str) and isinstance(k, str) and _CREDENTIAL_KEY.match(k):
                add_secret(v)
            else:
                add_credentials(v)
    elif isinstance(body, (list, tuple)):
        for v in body:
            add_credentials(v)


_SECRET_WORDS = re.compile(r"(?i)api[-_]?key|apikey|token|secret|passw|authorization|bearer|credential|://[^/@\s]*@")


def may_hold_secret(value: Any) -> bool:
    """Whether ``value``, given for an argument and refused, may carry a credential that this run does not hold
    yet (it never parsed): an object or a list, text that starts like one (``{"api_key": "..."`` without its
    brace), text naming a credential (``api_key``, ``token``, ``Bearer`` ...) or a URL with ``user:password@``.
    An error message names such a value by its kind, never by its text."""
    if isinstance(value, (Mapping, list, tuple, set)):
        return True
    if isinstance(value, str):
        return value.lstrip()[:1] in ("{", "[") or _SECRET_WORDS.search(value) is not None
    return False


def forget_secrets() -> None:
    """Hold no secret: a new run starts (what an earlier run in this process read is not this one's)."""
    with _LOCK:
        _HELD.clear()
        _ORDER[0] = ()


def held_secrets() -> list[str]:
    """The texts :func:`scrub` replaces now, longest first (a secret that contains another goes whole)."""
    return [s for s, _ in _ORDER[0]]


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every secret this run holds, and each of ``secrets`` (an API key in use),
    replaced by ``[redacted]``."""
    extra = tuple((s, REDACTED) for s in sorted({s for s in secrets if s}, key=len, reverse=True))
    return _text(text, extra + _ORDER[0]) if extra else _text(text, _ORDER[0])


def scrub(value: Any) -> Any:
    """``value`` (JSON-like: mappings, lists, strings, numbers) with every secret this run holds
    replaced in its strings (keys included), as a new value; ``value`` itself when none is held."""
    held = _ORDER[0]
    return _scrub(value, held) if held else value


def scrub_text(text: str) -> str:
    """A text (a page, a line) with every secret this run holds replaced, as :func:`scrub` replaces them."""
    held = _ORDER[0]
    return _text(text, held) if held else text


_SHORT = 256


def _text(text: str, secrets: tuple[tuple[str, str], ...]) -> str:
    if not secrets:
        return text
    if len(text) <= _SHORT:
        return _short_text(text, secrets)  # output rows repeat the same short strings: decided once
    return _replace(text, secrets)


@functools.lru_cache(maxsize=1 << 16)
def _short_text(text: str, secrets: tuple[tuple[str, str], ...]) -> str:
    return _replace(text, secrets)


def _replace(text: str, secrets: tuple[tuple[str, str], ...]) -> str:
    for secret, replacement in secrets:
        if secret in text:
            text = text.replace(secret, replacement)
    return text


def _scrub(value: Any, secrets: tuple[tuple[str, str], ...]) -> Any:
    if isinstance(value, str):
        return _text(value, secrets)
    if isinstance(value, dict):
        return {(_text(k, secrets) if isinstance(k, str) else k): _scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrub(v, secrets) for v in value]
    return value
