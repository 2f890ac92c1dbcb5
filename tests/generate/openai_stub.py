"""A small OpenAI-compatible HTTP server for tests: real sockets on 127.0.0.1, in a thread.
``self.url`` ends in ``/v1``; ``vllm serve``'s ``/classify`` sits at the root (``self.root``).

Each test sets ``server.respond(request) -> Reply``; the server records every request and
the highest number of requests it was serving at once. ``server.models`` is what ``GET
/models`` lists: names, or whole entries (``{"id": ..., "root": ...}``); None: no such route
(404). Loaded by path from the conftests of ``tests/generate`` and ``tests/judge``.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass
class Request:
    method: str
    path: str
    body: Any
    headers: dict[str, str]


def chat_reply(content: str | None, top: list[dict[str, float]] | None = None, finish: str = "stop") -> dict:
    """A ``/chat/completions`` reply; ``top`` = per generated token, ``{token: logprob}`` (first = chosen)."""
    choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}
    if top is not None:
        choice["logprobs"] = {
            "content": [
                {
                    "token": next(iter(step)),
                    "logprob": next(iter(step.values())),
                    "top_logprobs": [{"token": t, "logprob": v} for t, v in step.items()],
                }
                for step in top
            ]
        }
    return {"id": "x", "object": "chat.completion", "choices": [choice]}


def completion_reply(text: str, top: list[dict[str, float]] | None = None, finish: str = "stop") -> dict:
    """A ``/completions`` reply in the legacy logprobs shape."""
    choice: dict[str, Any] = {"index": 0, "text": text, "finish_reason": finish, "logprobs": None}
    if top is not None:
        choice["logprobs"] = {
            "tokens": [next(iter(s)) for s in top],
            "token_logprobs": [next(iter(s.values())) for s in top],
            "top_logprobs": top,
        }
    return {"id": "x", "object": "text_completion", "choices": [choice]}


def classify_reply(probs: list[list[float]], model: str = "stub-model") -> dict:
    """A ``/classify`` reply as vLLM's ``ClassificationResponse`` (vLLM 0.11 – 0.33)."""
    data = [
        {"index": i, "label": str(max(range(len(p)), key=p.__getitem__)), "probs": p, "num_classes": len(p)}
        for i, p in enumerate(probs)
    ]
    return {
        "id": "classify-x",
        "object": "list",
        "created": 0,
        "model": model,
        "data": data,
        "usage": {"prompt_tokens": 0, "total_tokens": 0, "completion_tokens": 0, "prompt_tokens_details": None},
    }


class StubServer:
    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.respond: Callable[[Request], Reply] = lambda r: Reply(body=chat_reply("SUPPORT"))
        self.models = ["stub-model"]
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self, method: str) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                body = json.loads(raw) if raw else None
                req = Request(method, self.path, body, dict(self.headers))
                with stub._lock:
                    stub.requests.append(req)
                    stub.in_flight += 1
                    stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
                try:
                    if method == "GET" and self.path.endswith("/models") and stub.models is None:
                        reply = Reply(404, {"error": "no such route"})
                    elif method == "GET" and self.path.endswith("/models"):
                        data = [m if isinstance(m, dict) else {"id": m} for m in stub.models]
                        reply = Reply(body={"object": "list", "data": data})
                    else:
                        reply = stub.respond(req)
                    if reply.delay_s:
                        time.sleep(reply.delay_s)
                finally:
                    # out of flight before the reply leaves: a client that has read it and sent its next request
                    # must not find this one still counted (max_in_flight would then exceed the client's bound)
                    with stub._lock:
                        stub.in_flight -= 1
                data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_POST(self) -> None:
                self._serve("POST")

            def do_GET(self) -> None:
                self._serve("GET")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.root = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.url = f"{self.root}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()

    def posts(self) -> list[Request]:
        return [r for r in self.requests if r.method == "POST"]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
