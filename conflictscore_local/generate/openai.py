"""``openai``: any server speaking the OpenAI API (``vllm serve``, llama.cpp, hosted APIs).

Standard library only (``urllib`` + a thread pool): bounded concurrency, a timeout per
request, retries with exponential backoff and jitter on 408, 429, 5xx, timeouts and
transport errors (refused or reset connections, TLS errors while reading; honouring
``Retry-After``). A request that never gets a proper answer (or whose answer is malformed,
logprob values included) comes back as a :class:`Generation` with ``text=None`` and the
reason in ``error``; a wrong URL, model, key or certificate (401/403/404, a TLS certificate
that does not verify, an HTTP 400 for a model the server does not list) stops the run
instead, since every other request would fail the same way. A server that refuses
``logprobs`` (HTTP 400 naming them) or ignores them (answers without any) is asked without
them from then on (``logprobs_refused`` says why). Whatever server text goes into an error
passes through :func:`~..jobs.redact` first, so an API key the server echoes never reaches a
note (and every stored string passes the same point). A ``base_url`` with ``user:password@``
sends those as Basic credentials. Both ``/chat/completions`` (with
``chat_template_kwargs`` for vLLM servers) and ``/completions``.
"""

from __future__ import annotations

import base64
import dataclasses
import email.utils
import http.client
import json
import os
import random
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping, Sequence

from ..backends.arguments import ranged
from ..core.errors import BackendUnavailable, ConfigError
from ..jobs import add_credentials, add_secret, add_url, redact
from ._base import Generation, GeneratorBase, Prompt, generation_spec
from .text import strip_thinking

_FATAL = (401, 403, 404)
_RETRIED = (408, 429)
"""Client-side HTTP statuses worth retrying (request timeout, rate limit); every 5xx is retried too."""
SERVED_MODEL_FIELDS: tuple[str, ...] = ("id", "root", "parent", "owned_by", "max_model_len")
"""The fields of a ``GET /models`` entry that identify what is served (vLLM: ``root`` is the
checkpoint it was started with). ``created`` is reported but not part of the identity: vLLM
fills it with the time of each listing."""
LOGPROBS_IGNORED = "the server answered without log-probabilities (it ignores logprobs)"
"""``logprobs_refused`` of a server that takes the ``logprobs`` field and returns none."""


@dataclass(frozen=True)
class OpenAIConfig:
    """Arguments of the ``openai`` generator.

    ``model``: the served model name (None → the first one the server lists). The API key
    is read from the environment variable ``api_key_env`` (none set → no Authorization
    header; ``vllm serve`` without ``--api-key`` needs none). ``enable_thinking`` is sent as
    ``chat_template_kwargs`` (vLLM servers; None → not sent, for servers that refuse
    unknown fields). ``extra_body`` is merged into every request.
    """

    base_url: str = "http://localhost:8000/v1"
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    endpoint: Literal["chat", "completions"] = "chat"
    max_concurrency: int = ranged(8, 1, 4096)
    timeout_s: float = ranged(120.0, 0.0, 86400.0, low_open=True)
    max_retries: int = ranged(4, 0, 100)
    backoff_s: float = ranged(1.0, 0.0, 3600.0)
    max_backoff_s: float = ranged(60.0, 0.0, 86400.0)
    enable_thinking: bool | None = False
    chat_template_kwargs: dict | None = None
    extra_body: dict | None = None
    seed: int | None = ranged(0, 0, 2**63 - 1)

    def __post_init__(self) -> None:
        hold_secrets(self)
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {self.base_url!r}")


def hold_secrets(cfg: OpenAIConfig) -> None:
    """Hand the redaction point the secrets a generator of ``cfg`` will send, before anything is
    recorded: the key of ``api_key_env`` (what its ``Bearer`` header holds), the password of
    ``base_url`` and the Basic credentials made of it, the credentials of ``extra_body``."""
    key = os.environ.get(cfg.api_key_env) if isinstance(cfg.api_key_env, str) else None
    add_secret(key)
    if isinstance(cfg.base_url, str):
        try:
            add_secret(_url_credentials(cfg.base_url)[1])
        except ValueError:  # not a URL: refused right after, its text never a credential of ours
            pass
    add_credentials(cfg.extra_body)


class RequestFailed(Exception):
    """A request that failed for good (after retries where they apply)."""


class OpenAIGenerator(GeneratorBase):
    """Concurrent requests to an OpenAI-compatible server."""

    name = "openai"
    role = "generator"
    Config = OpenAIConfig

    def spec(self) -> dict[str, Any]:
        """What decides the answers (see :func:`._base.generation_spec`), with the model named as the
        server knows it: the name in use (the first one it lists when none is configured) and what
        ``GET /models`` reports about it, so another model restarted behind the same URL changes it."""
        return {**generation_spec(self), "model": self.model_name(), "served": self.served_model()}

    def __init__(self, config: OpenAIConfig | None = None):
        super().__init__(config)
        self._model: str | None = self.config.model
        self._listing: Any = None
        self._served: dict[str, Any] | None = None
        self._served_known = False
        self.logprobs_refused: str | None = None
        """Why the server refused logprobs (an HTTP 400 naming them, or an answer without them:
        :data:`LOGPROBS_IGNORED`); requests are sent without them from then on. None: not refused."""
        self._logprobs_seen = False  # whether any answer came with the logprobs it was asked for
        self.sleep: Callable[[float], Any] = time.sleep
        """How a retry waits out its backoff (tests hand in one that records instead of waiting)."""
        self._lock = threading.Lock()

    # -- HTTP ---------------------------------------------------------------------------
    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.config.api_key_env)
        _, basic = _url_credentials(self.config.base_url)
        if key:
            add_secret(key)  # read again: it may have been set after the config was made
            headers["Authorization"] = f"Bearer {key}"
        elif basic:
            add_secret(basic)
            headers["Authorization"] = f"Basic {basic}"
        return headers

    def secrets(self) -> tuple[str, ...]:
        """The values no stored note may contain: the API key (every stored string passes the
        redaction point with it, :mod:`..jobs.redaction`), a password in ``base_url``."""
        key = os.environ.get(self.config.api_key_env)
        password = urllib.parse.urlsplit(self.config.base_url).password
        return tuple(v for v in (key, password) if v)

    def _redact(self, text: str) -> str:
        return redact(text, self.secrets())

    def _count(self, key: str) -> None:
        with self._lock:
            self.count(key)

    def request(self, path: str, body: Mapping[str, Any] | None = None) -> Any:
        """POST ``body`` (or GET when None) to ``base_url + path``; the decoded JSON reply.

        Retries 408, 429, 5xx, timeouts and connection errors; raises ``RequestFailed`` with the
        reason when it gives up, ``BackendUnavailable`` on 401/403/404.
        """
        cfg = self.config
        url = _url_credentials(cfg.base_url)[0].rstrip("/") + path
        data = json.dumps(body).encode() if body is not None else None
        reason = ""
        for attempt in range(cfg.max_retries + 1):
            if attempt:
                self._count("retries")
            wait: float | None = None
            try:
                req = urllib.request.Request(url, data=data, headers=self._headers(), method="POST" if data else "GET")
                with urllib.request.urlopen(req, timeout=cfg.timeout_s) as resp:
                    raw = resp.read()
            except urllib.error.HTTPError as e:
                detail = self._redact(_snippet(_error_body(e)))
                if e.code in _FATAL:
                    raise BackendUnavailable(
                        f"{url}: HTTP {e.code} {detail} (check base_url, model and {cfg.api_key_env})"
                    ) from None
                if e.code not in _RETRIED and e.code < 500:
                    raise RequestFailed(f"HTTP {e.code}: {detail}") from None
                reason, wait = f"HTTP {e.code}: {detail}", _retry_after(e.headers.get("Retry-After"))
            except TimeoutError:
                reason = f"timeout after {cfg.timeout_s:g}s"
            except urllib.error.URLError as e:
                if isinstance(e.reason, ssl.SSLCertVerificationError):
                    raise BackendUnavailable(
                        f"{url}: TLS certificate not verified ({e.reason.verify_message or e.reason}); "
                        "check base_url, or point SSL_CERT_FILE at the server's CA bundle"
                    ) from None
                if isinstance(e.reason, TimeoutError):
                    reason = f"timeout after {cfg.timeout_s:g}s"
                else:
                    reason = f"connection error: {e.reason}"
            except (OSError, http.client.HTTPException) as e:
                # a reset or refused connection, a TLS error while reading the reply (ssl.SSLError),
                # a reply cut short: all transport trouble that another attempt may not meet
                reason = f"connection error: {type(e).__name__}: {e}"
            else:
                try:
                    return json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    raise RequestFailed(f"malformed JSON reply: {self._redact(_snippet(raw))}") from None
            if attempt < cfg.max_retries:
                self.sleep(self._backoff(attempt, wait))
        raise RequestFailed(f"{self._redact(reason)} (gave up after {cfg.max_retries + 1} attempts)")

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        """Exponential backoff with jitter; a server's Retry-After wins when it asks for longer."""
        cfg = self.config
        delay = min(cfg.max_backoff_s, cfg.backoff_s * 2**attempt) * random.uniform(0.5, 1.0)
        if retry_after is not None:
            delay = max(delay, min(retry_after, cfg.max_backoff_s))
        return delay

    def models(self) -> Any:
        """The server's ``GET /models`` reply (asked once); ``RequestFailed`` when it gives none."""
        if self._listing is None:
            self._listing = self.request("/models")
        return self._listing

    def model_name(self) -> str:
        """The configured model, else the first model the server lists (``GET /models``)."""
        if self._model is None:
            try:
                self._model = str(self.models()["data"][0]["id"])
            except RequestFailed as e:
                raise BackendUnavailable(f"{self.config.base_url}/models: cannot list models: {e}") from None
            except (KeyError, IndexError, TypeError):
                raise BackendUnavailable(f"{self.config.base_url}/models lists no model; pass model=NAME") from None
        self.resolved.setdefault("model", self._model)
        return self._model

    def served_model(self) -> dict[str, Any] | None:
        """What ``GET /models`` says about the model in use: its ``SERVED_MODEL_FIELDS``, or
        None when the server does not say (no listing, or the model is not in it). The whole
        entry, or why there is none, goes into ``resolved["served_model"]``."""
        if not self._served_known:
            name = self.model_name()
            try:
                entries = self.models()["data"]
                entry = next(e for e in entries if isinstance(e, dict) and e.get("id") == name)
            except (RequestFailed, BackendUnavailable) as e:  # a server without /models still serves
                self.resolved["served_model"] = f"unknown: GET /models failed: {e}"
            except (KeyError, TypeError, StopIteration):
                self.resolved["served_model"] = f"unknown: GET /models does not list {name!r}"
            else:
                self._served = {k: entry[k] for k in SERVED_MODEL_FIELDS if entry.get(k) is not None}
                self.resolved["served_model"] = {
                    k: v for k, v in entry.items() if isinstance(v, (str, int, float, bool)) or v is None
                }
            self._served_known = True
        return self._served

    # -- generation -----------------------------------------------------------------------
    def body(
        self, prompt: Prompt, *, max_tokens: int, temperature: float, stop: Sequence[str] | None, logprobs: int | None
    ) -> tuple[str, dict[str, Any]]:
        """The endpoint path and JSON body of one request."""
        cfg = self.config
        body: dict[str, Any] = {"model": self.model_name(), "max_tokens": max_tokens, "temperature": temperature}
        if stop:
            body["stop"] = list(stop)
        if cfg.seed is not None:
            body["seed"] = cfg.seed
        want_logprobs = bool(logprobs) and self.logprobs_refused is None
        if cfg.endpoint == "chat":
            messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else [dict(m) for m in prompt]
            body["messages"] = messages
            kw = dict(cfg.chat_template_kwargs or {})
            if cfg.enable_thinking is not None:
                kw["enable_thinking"] = cfg.enable_thinking
            if kw:
                body["chat_template_kwargs"] = kw
            if want_logprobs:
                body.update(logprobs=True, top_logprobs=logprobs)
            path = "/chat/completions"
        else:
            if not isinstance(prompt, str):
                raise ConfigError("openai: chat prompts need endpoint=chat (a completions endpoint takes text)")
            body["prompt"] = prompt
            if want_logprobs:
                body["logprobs"] = logprobs
            path = "/completions"
        body.update(cfg.extra_body or {})
        return path, body

    def _one(self, prompt: Prompt, kw: dict[str, Any]) -> Generation:
        path, body = self.body(prompt, **kw)
        try:
            try:
                reply = self.request(path, body)
            except RequestFailed as e:
                asked = "logprobs" in body
                if not (asked and str(e).startswith("HTTP 400") and "logprob" in str(e).lower()):
                    raise
                # the server refuses logprobs: ask without them from now on, parse text instead
                with self._lock:
                    if self.logprobs_refused is None:
                        self.logprobs_refused = str(e)
                    self.count("logprobs_refused")
                path, body = self.body(prompt, **kw)
                reply = self.request(path, body)
            out = parse_reply(reply, self.config.endpoint)
        except RequestFailed as e:
            if str(e).startswith("HTTP 400"):
                self._check_listed(str(e))
            self._count("failed")
            return Generation(None, error=self._redact(str(e)))
        if "logprobs" in body and out.text:
            returned = reply["choices"][0].get("logprobs") is not None
            with self._lock:
                if returned:
                    self._logprobs_seen = True
                else:
                    # asked, answered without them: a server that never returned any ignores the
                    # field (``transformers serve``); after some answers with them, one is only counted
                    self.count("answers_without_logprobs")
                    if self.logprobs_refused is None and not self._logprobs_seen:
                        self.logprobs_refused = LOGPROBS_IGNORED
        if out.text is not None:  # a server that echoes the request (its headers) echoes the key: redacted here,
            out = dataclasses.replace(out, text=self._redact(out.text))  # where it comes in, not in the user's rows
        return out

    def _check_listed(self, failure: str) -> None:
        """After an HTTP 400: stop the run (``BackendUnavailable``) when the server lists its
        models and the configured one is not among them, since every request will be refused
        alike (``transformers serve`` pinned to another model answers 400, not vLLM's 404)."""
        try:
            listed = [str(e["id"]) for e in self.models()["data"] if isinstance(e, dict) and "id" in e]
        except (RequestFailed, BackendUnavailable, KeyError, TypeError):
            return  # no listing to compare with (none, or no such route): the request's own failure stands
        name = self.model_name()
        if listed and name not in listed:
            raise BackendUnavailable(
                f"{self.config.base_url}: {self._redact(failure)}; the server lists {', '.join(map(repr, listed))}, "
                f"not model={name!r}: check model="
            )

    def generate(
        self,
        prompts: Sequence[Prompt],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        logprobs: int | None = None,
        on_progress: Callable[[int], None] | None = None,
    ) -> list[Generation]:
        """One completion per prompt, in input order, at most ``max_concurrency`` in flight;
        ``on_progress(1)`` (in this thread) as each request is answered."""
        if not prompts:
            return []
        self.model_name()
        kw = {"max_tokens": max_tokens, "temperature": temperature, "stop": stop, "logprobs": logprobs}
        workers = min(self.config.max_concurrency, len(prompts))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="openai") as pool:
            try:
                futures = [pool.submit(self._one, p, kw) for p in prompts]
                for done in as_completed(futures):
                    done.result()
                    if on_progress is not None:
                        on_progress(1)
            except BaseException:
                pool.shutdown(cancel_futures=True)
                raise
        self.count("prompts", len(prompts))
        return [f.result() for f in futures]


def parse_reply(reply: Any, endpoint: str) -> Generation:
    """A :class:`Generation` from a chat or completions reply; ``RequestFailed`` when malformed."""
    try:
        choice = reply["choices"][0]
        finish = choice.get("finish_reason")
        if endpoint == "chat":
            text = choice["message"].get("content")
            steps = (choice.get("logprobs") or {}).get("content")
            top = (
                None
                if not steps
                else tuple(
                    {
                        **{_token(a["token"]): _logprob(a["logprob"]) for a in s.get("top_logprobs") or []},
                        **{_token(s["token"]): _logprob(s["logprob"])},
                    }
                    for s in steps
                )
            )
        else:
            text = choice["text"]
            lp = choice.get("logprobs") or {}
            alts = lp.get("top_logprobs")
            chosen = list(zip(lp.get("tokens") or [], lp.get("token_logprobs") or []))
            top = (
                None
                if not alts
                else tuple(
                    {
                        **{_token(t): _logprob(v) for t, v in (a or {}).items()},
                        **(
                            {_token(chosen[k][0]): _logprob(chosen[k][1])}
                            if k < len(chosen) and chosen[k][1] is not None
                            else {}
                        ),
                    }
                    for k, a in enumerate(alts)
                )
            )
    except _Malformed as e:
        raise RequestFailed(f"malformed reply: {e}: {_snippet(json.dumps(reply)[:300].encode())}") from None
    except (KeyError, IndexError, TypeError, AttributeError) as e:
        raise RequestFailed(f"malformed reply (missing {e}): {_snippet(json.dumps(reply)[:300].encode())}") from None
    if text is None:
        raise RequestFailed(f"reply without text (finish_reason {finish!r})")
    if not isinstance(text, str):
        raise RequestFailed(f"malformed reply: text is {type(text).__name__}")
    return Generation(strip_thinking(text), top, None, finish)


class _Malformed(ValueError):
    """A reply field of the wrong type."""


def _logprob(value: Any) -> float:
    """A log-probability from a reply: a JSON number (a string, null or boolean is malformed)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Malformed(f"logprob {value!r} is not a number")
    return float(value)


def _token(value: Any) -> str:
    if not isinstance(value, str):
        raise _Malformed(f"token {value!r} is not a string")
    return value


def _error_body(e: urllib.error.HTTPError) -> bytes:
    """The body of an HTTP error reply, or nothing when reading it fails too."""
    try:
        return e.read()
    except (OSError, http.client.HTTPException):
        return b""


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


def _url_credentials(base_url: str) -> tuple[str, str | None]:
    """``base_url`` without ``user:password@`` (urllib sends none of it), and the Basic credentials it held."""
    parts = urllib.parse.urlsplit(base_url)
    if parts.username is None and parts.password is None:
        return base_url, None
    add_url(base_url)
    host = parts.netloc.rpartition("@")[2]
    user = urllib.parse.unquote(parts.username or "")
    secret = urllib.parse.unquote(parts.password or "")
    basic = base64.b64encode(f"{user}:{secret}".encode()).decode("ascii")
    return urllib.parse.urlunsplit(parts._replace(netloc=host)), basic


def _snippet(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace").strip().replace("\n", " ")
    return text[:200] + ("…" if len(text) > 200 else "")
