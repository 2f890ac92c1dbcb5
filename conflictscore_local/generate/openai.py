"""``openai``: any server speaking the OpenAI API (``vllm serve``, llama.cpp, hosted APIs).

Standard library only (``urllib`` + a thread pool): bounded concurrency, a timeout per
request, retries with exponential backoff and jitter on 429, 5xx and connection errors
(honouring ``Retry-After``). A request that never gets a proper answer comes back as a
:class:`Generation` with ``text=None`` and the reason in ``error``; a wrong URL, model or
key (401/403/404) stops the run instead, since every other request would fail the same way.
Both ``/chat/completions`` (with ``chat_template_kwargs`` for vLLM servers) and
``/completions``.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import os
import random
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping, Sequence

from ..backend import Backend
from ..errors import BackendUnavailable, ConfigError
from ._base import Generation, Prompt
from .common import strip_thinking

_FATAL = (401, 403, 404)


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
    max_concurrency: int = 8
    timeout_s: float = 120.0
    max_retries: int = 4
    backoff_s: float = 1.0
    max_backoff_s: float = 60.0
    enable_thinking: bool | None = False
    chat_template_kwargs: dict | None = None
    extra_body: dict | None = None
    seed: int | None = 0

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {self.base_url!r}")
        if self.max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {self.max_concurrency}")
        if self.timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {self.timeout_s}")
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries}")


class _Failure(Exception):
    """A request that failed for good (after retries where they apply)."""


class OpenAIGenerator(Backend):
    """Concurrent requests to an OpenAI-compatible server."""

    name = "openai"
    role = "generator"
    Config = OpenAIConfig

    def __init__(self, config: OpenAIConfig | None = None):
        super().__init__(config)
        self._model: str | None = self.config.model
        self._no_logprobs = False
        self._lock = threading.Lock()

    # -- HTTP ---------------------------------------------------------------------------
    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.config.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _count(self, key: str) -> None:
        with self._lock:
            self.count(key)

    def request(self, path: str, body: Mapping[str, Any] | None = None) -> Any:
        """POST ``body`` (or GET when None) to ``base_url + path``; the decoded JSON reply.

        Retries 429, 5xx, timeouts and connection errors; raises ``_Failure`` with the
        reason when it gives up, ``BackendUnavailable`` on 401/403/404.
        """
        cfg = self.config
        url = cfg.base_url.rstrip("/") + path
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
                detail = _snippet(e.read())
                if e.code in _FATAL:
                    raise BackendUnavailable(
                        f"{url}: HTTP {e.code} {detail} (check base_url, model and {cfg.api_key_env})"
                    ) from None
                if e.code != 429 and e.code < 500:
                    raise _Failure(f"HTTP {e.code}: {detail}") from None
                reason, wait = f"HTTP {e.code}: {detail}", _retry_after(e.headers.get("Retry-After"))
            except TimeoutError:
                reason = f"timeout after {cfg.timeout_s:g}s"
            except urllib.error.URLError as e:
                if isinstance(e.reason, TimeoutError):
                    reason = f"timeout after {cfg.timeout_s:g}s"
                else:
                    reason = f"connection error: {e.reason}"
            except (ConnectionError, http.client.HTTPException) as e:
                reason = f"connection error: {type(e).__name__}: {e}"
            else:
                try:
                    return json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    raise _Failure(f"malformed JSON reply: {_snippet(raw)}") from None
            if attempt < cfg.max_retries:
                time.sleep(self._backoff(attempt, wait))
        raise _Failure(f"{reason} (gave up after {cfg.max_retries + 1} attempts)")

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        """Exponential backoff with jitter; a server's Retry-After wins when it asks for longer."""
        cfg = self.config
        delay = min(cfg.max_backoff_s, cfg.backoff_s * 2 ** attempt) * random.uniform(0.5, 1.0)
        if retry_after is not None:
            delay = max(delay, min(retry_after, cfg.max_backoff_s))
        return delay

    def model_name(self) -> str:
        """The configured model, else the first model the server lists (``GET /models``)."""
        if self._model is None:
            try:
                listed = self.request("/models")
                self._model = str(listed["data"][0]["id"])
            except _Failure as e:
                raise BackendUnavailable(f"{self.config.base_url}/models: cannot list models: {e}") from None
            except (KeyError, IndexError, TypeError):
                raise BackendUnavailable(f"{self.config.base_url}/models lists no model; pass model=NAME") from None
        self.resolved.setdefault("model", self._model)
        return self._model

    # -- generation -----------------------------------------------------------------------
    def body(self, prompt: Prompt, *, max_tokens: int, temperature: float, stop: Sequence[str] | None,
             logprobs: int | None) -> tuple[str, dict[str, Any]]:
        """The endpoint path and JSON body of one request."""
        cfg = self.config
        body: dict[str, Any] = {"model": self.model_name(), "max_tokens": max_tokens, "temperature": temperature}
        if stop:
            body["stop"] = list(stop)
        if cfg.seed is not None:
            body["seed"] = cfg.seed
        want_logprobs = bool(logprobs) and not self._no_logprobs
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
            except _Failure as e:
                if not (str(e).startswith("HTTP 400") and "logprob" in str(e).lower() and kw.get("logprobs")):
                    raise
                # the server refuses logprobs: ask without them from now on, parse text instead
                self._no_logprobs = True
                self._count("logprobs_refused")
                path, body = self.body(prompt, **kw)
                reply = self.request(path, body)
            return parse_reply(reply, self.config.endpoint)
        except _Failure as e:
            self._count("failed")
            return Generation(None, error=str(e))

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
    """A :class:`Generation` from a chat or completions reply; ``_Failure`` when malformed."""
    try:
        choice = reply["choices"][0]
        finish = choice.get("finish_reason")
        if endpoint == "chat":
            text = choice["message"].get("content")
            steps = (choice.get("logprobs") or {}).get("content")
            top = None if not steps else tuple(
                {**{a["token"]: a["logprob"] for a in s.get("top_logprobs") or []}, **{s["token"]: s["logprob"]}}
                for s in steps
            )
        else:
            text = choice["text"]
            lp = choice.get("logprobs") or {}
            alts = lp.get("top_logprobs")
            chosen = list(zip(lp.get("tokens") or [], lp.get("token_logprobs") or []))
            top = None if not alts else tuple(
                {**(a or {}), **({chosen[k][0]: chosen[k][1]} if k < len(chosen) and chosen[k][1] is not None else {})}
                for k, a in enumerate(alts)
            )
    except (KeyError, IndexError, TypeError, AttributeError) as e:
        raise _Failure(f"malformed reply (missing {e}): {_snippet(json.dumps(reply)[:300].encode())}") from None
    if text is None:
        raise _Failure(f"reply without text (finish_reason {finish!r})")
    if not isinstance(text, str):
        raise _Failure(f"malformed reply: text is {type(text).__name__}")
    return Generation(strip_thinking(text), top, None, finish)


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


def _snippet(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace").strip().replace("\n", " ")
    return text[:200] + ("…" if len(text) > 200 else "")
