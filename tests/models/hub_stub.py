"""A fake Hugging Face Hub on 127.0.0.1 for the ``models pull`` tests: real sockets, in a thread.

It serves the endpoints huggingface_hub's ``snapshot_download`` calls for a model repository
(repo info at a revision, the file tree, ``HEAD``/``GET`` of ``resolve/<commit>/<file>``) for
one repository whose files live in memory, and records every request, so a test runs the real
download code and checks what it asked for.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlparse


class FakeHub:
    """``with FakeHub("org/name", commit, {"config.json": b"..."}) as hub:`` → ``hub.url``, ``hub.requests``."""

    def __init__(self, repo: str, commit: str, files: dict[str, bytes], branch: str = "main"):
        self.repo, self.commit, self.files, self.branch = repo, commit, files, branch
        self.requests: list[tuple[str, str]] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_HEAD(self) -> None:  # noqa: N802 (http.server naming)
                hub._serve(self, body=False)

            def do_GET(self) -> None:  # noqa: N802
                hub._serve(self, body=True)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> "FakeHub":
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _known(self, revision: str) -> bool:
        return revision in (self.commit, self.branch)

    def _serve(self, h: BaseHTTPRequestHandler, *, body: bool) -> None:
        path = unquote(urlparse(h.path).path)
        self.requests.append((h.command, path))
        api = f"/api/models/{self.repo}/"
        resolve = f"/{self.repo}/resolve/"
        if path.startswith(api + "revision/") and self._known(path[len(api + "revision/") :]):
            siblings = [{"rfilename": f} for f in sorted(self.files)]
            info = {"id": self.repo, "modelId": self.repo, "sha": self.commit, "siblings": siblings}
            return self._json(h, info, body)
        if path.startswith(api + "tree/"):
            revision = path[len(api + "tree/") :].split("/")[0]
            if self._known(revision):
                tree = [
                    {"type": "file", "path": f, "size": len(data), "oid": hashlib.sha1(data).hexdigest()}
                    for f, data in sorted(self.files.items())
                ]
                return self._json(h, tree, body)
        if path.startswith(resolve):
            revision, _, name = path[len(resolve) :].partition("/")
            if self._known(revision) and name in self.files:
                data = self.files[name]
                h.send_response(200)
                h.send_header("Content-Type", "application/octet-stream")
                h.send_header("Content-Length", str(len(data)))
                h.send_header("ETag", f'"{hashlib.sha1(data).hexdigest()}"')
                h.send_header("X-Repo-Commit", self.commit)
                h.end_headers()
                if body:
                    h.wfile.write(data)
                return None
        h.send_response(404)
        h.send_header("Content-Type", "application/json")
        h.send_header("X-Error-Code", "EntryNotFound" if path.startswith(resolve) else "RevisionNotFound")
        payload = json.dumps({"error": f"not found: {path}"}).encode()
        h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        if body:
            h.wfile.write(payload)
        return None

    @staticmethod
    def _json(h: BaseHTTPRequestHandler, obj: object, body: bool) -> None:
        payload = json.dumps(obj).encode()
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        if body:
            h.wfile.write(payload)
