"""Reading items with errors that name file, line and field; atomic and resumable writing."""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Iterator, Mapping, Sequence

from .aggregate import item_metrics
from .errors import ConfigError, InputError, OutputBusy
from .types import Claim, ClaimVerdict, DocJudgment, Document, Item, ItemResult, Label, normalize_label

ITEM_FIELDS = ("id", "question", "response", "documents", "claims", "labels")


def _type_name(v: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(v), type(v).__name__
    )


def parse_item(obj: Any, *, path: str | None = None, line: int | None = None) -> Item:
    """Validate one decoded JSON object and turn it into an :class:`Item`.

    Unknown top-level fields are kept in ``Item.meta`` (benchmark gold fields travel that
    way); unknown document fields in ``Document.meta``.
    """

    def err(field: str | None, msg: str) -> InputError:
        return InputError(msg, path=path, line=line, field=field)

    def want_str(v: Any, field: str, *, empty_ok: bool = True) -> str:
        if not isinstance(v, str):
            raise err(field, f"expected a string, got {_type_name(v)}")
        if not empty_ok and not v.strip():
            raise err(field, "must not be empty")
        return v

    if not isinstance(obj, dict):
        raise err(None, f"expected a JSON object, got {_type_name(obj)}")
    if "id" not in obj:
        raise err("id", "missing (every item needs a unique string id)")
    item_id = want_str(obj["id"], "id", empty_ok=False)
    question = obj.get("question")
    if question is not None:
        want_str(question, "question")
    if "response" not in obj and "claims" not in obj:
        raise err("response", "missing (give a response to decompose, or claims)")
    response = obj.get("response", "")
    if response is None:
        response = ""
    want_str(response, "response")
    if "documents" not in obj:
        raise err("documents", "missing (a list of {\"id\", \"text\"} objects)")
    docs_raw = obj["documents"]
    if not isinstance(docs_raw, list):
        raise err("documents", f"expected an array, got {_type_name(docs_raw)}")
    docs: list[Document] = []
    seen_docs: set[str] = set()
    for j, d in enumerate(docs_raw):
        f = f"documents[{j}]"
        if not isinstance(d, dict):
            raise err(f, f"expected an object with 'id' and 'text', got {_type_name(d)}")
        for k in ("id", "text"):
            if k not in d:
                raise err(f"{f}.{k}", "missing")
        did = want_str(d["id"], f"{f}.id", empty_ok=False)
        if did in seen_docs:
            raise err(f"{f}.id", f"duplicate document id {did!r} in item {item_id!r}")
        seen_docs.add(did)
        text = want_str(d["text"], f"{f}.text")
        docs.append(Document(did, text, {k: v for k, v in d.items() if k not in ("id", "text")}))

    claims: tuple[str, ...] | None = None
    if obj.get("claims") is not None:
        cr = obj["claims"]
        if not isinstance(cr, list):
            raise err("claims", f"expected an array of strings, got {_type_name(cr)}")
        claims = tuple(want_str(c, f"claims[{i}]", empty_ok=False) for i, c in enumerate(cr))

    labels = None
    if obj.get("labels") is not None:
        lr = obj["labels"]
        if claims is None:
            raise err("labels", "given without 'claims' (labels[i][j] is claims[i] against documents[j])")
        labels = parse_label_matrix(lr, len(claims), len(docs), "labels", err)

    meta = {k: v for k, v in obj.items() if k not in ITEM_FIELDS}
    return Item(item_id, response, tuple(docs), question, claims, labels, meta)


@dataclass
class InputStats:
    """What reading a JSONL file saw: its sha256 (of every byte read), lines and blank lines."""

    sha256: str = ""
    lines: int = 0
    blank_lines: int = 0


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def iter_jsonl(path: str | os.PathLike[str], stats: InputStats | None = None) -> Iterator[tuple[int, Any]]:
    """Yield ``(line, value)`` for every non-blank line of a JSONL file, ``line`` 1-based.

    Lines end at ``\\n`` only, as JSON Lines defines them: U+2028, U+0085 and the other
    characters ``str.splitlines`` breaks at may stand unescaped inside JSON strings. An
    unreadable file, a line that is not UTF-8, not JSON, nested too deeply, holding an
    integer too long to convert or a lone UTF-16 surrogate (``"\\ud800"``, which is no
    text and cannot be written back) is an :class:`InputError` naming the file and the
    line. ``stats``, when given, is filled in as the file is read (one pass, so a pipe
    works too).
    """
    p = str(path)
    try:
        fh = open(p, "rb")
    except OSError as e:
        raise InputError(f"cannot open: {e.strerror}", path=p) from None
    h = hashlib.sha256()
    with fh:
        try:
            for n, raw in enumerate(fh, 1):
                h.update(raw)
                if stats is not None:
                    stats.lines = n
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise InputError(f"not UTF-8 text: {e.reason} (byte {e.start + 1})", path=p, line=n) from None
                if not text.strip():
                    if stats is not None:
                        stats.blank_lines += 1
                    continue
                obj = _loads(text, path=p, line=n)
                if "\\u" in text and _SURROGATE_ESCAPE.search(text):
                    _check_surrogates(obj, path=p, line=n)
                yield n, obj
        except OSError as e:
            raise InputError(f"cannot read: {e.strerror}", path=p) from None
    if stats is not None:
        stats.sha256 = h.hexdigest()


def _loads(text: str, *, path: str | None, line: int | None) -> Any:
    """``json.loads`` with every way it can fail on bad input turned into an :class:`InputError`."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"invalid JSON: {e.msg} (column {e.colno})", path=path, line=line) from None
    except RecursionError:
        raise InputError("invalid JSON: arrays or objects nested too deeply", path=path, line=line) from None
    except ValueError as e:  # an integer beyond Python's int-string conversion limit
        raise InputError(f"invalid JSON: {e}".split("; use sys.")[0], path=path, line=line) from None


def _check_surrogates(obj: Any, *, path: str | None, line: int | None) -> None:
    """:class:`InputError` naming the field of the first string (or key) with a lone surrogate."""
    stack: list[tuple[str, Any]] = [("", obj)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, dict):
            subs = [(f"{where}.{k}" if where else str(k), k, x) for k, x in v.items()]
            for sub, k, _ in subs:
                _check_text(k, sub, path, line)
            stack.extend((sub, x) for sub, _, x in reversed(subs))
        elif isinstance(v, list):
            stack.extend((f"{where}[{i}]", x) for i, x in reversed(list(enumerate(v))))
        elif isinstance(v, str):
            _check_text(v, where, path, line)


def _check_text(s: str, where: str, path: str | None, line: int | None) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InputError(
            f"lone surrogate \\u{ord(s[e.start]):04x} at character {e.start}: half of a UTF-16 pair, not text "
            "(fix the program that wrote this file, or remove the character)",
            path=path, line=line, field=where or None,
        ) from None


def parse_label_matrix(
    raw: Any, n_claims: int, n_docs: int, field: str, err: Callable[[str, str], InputError]
) -> tuple[tuple[Label, ...], ...]:
    """Validate a claims × documents label matrix (``labels`` or a benchmark's ``gold_labels``).

    ``err(field, message)`` builds the error, so it names the caller's file and line.
    """
    if not isinstance(raw, list):
        raise err(field, f"expected an array of arrays, got {_type_name(raw)}")
    if len(raw) != n_claims:
        raise err(field, f"has {len(raw)} rows but there are {n_claims} claims (need claims × documents)")
    rows = []
    for i, row in enumerate(raw):
        if not isinstance(row, list):
            raise err(f"{field}[{i}]", f"expected an array, got {_type_name(row)}")
        if len(row) != n_docs:
            raise err(f"{field}[{i}]", f"has {len(row)} labels but there are {n_docs} documents (need claims × documents)")
        out_row = []
        for j, lab in enumerate(row):
            try:
                out_row.append(normalize_label(lab))
            except ValueError as e:
                raise err(f"{field}[{i}][{j}]", str(e)) from None
        rows.append(tuple(out_row))
    return tuple(rows)


def iter_items(path: str | os.PathLike[str], stats: InputStats | None = None) -> Iterator[Item]:
    """Yield the items of a JSONL file, validating as it goes (duplicate ids included).

    Blank lines are skipped (and counted in ``stats``). Errors carry the file, the 1-based
    line and the field.
    """
    p = str(path)
    seen: dict[str, int] = {}
    for n, obj in iter_jsonl(p, stats):
        item = parse_item(obj, path=p, line=n)
        if item.id in seen:
            raise InputError(f"duplicate id {item.id!r} (first on line {seen[item.id]})", path=p, line=n, field="id")
        seen[item.id] = n
        yield item


def read_items(path: str | os.PathLike[str], stats: InputStats | None = None) -> list[Item]:
    """All items of a JSONL file, validated before any model is loaded; ``stats`` gets the
    file's sha256 and line counts from the same single read."""
    return list(iter_items(path, stats))


def item_to_json(item: Item) -> dict[str, Any]:
    """The input-format JSON object of an item (inverse of :func:`parse_item`)."""
    out: dict[str, Any] = {"id": item.id}
    if item.question is not None:
        out["question"] = item.question
    out["response"] = item.response
    out["documents"] = [{"id": d.id, "text": d.text, **dict(d.meta)} for d in item.documents]
    if item.claims is not None:
        out["claims"] = list(item.claims)
    if item.labels is not None:
        out["labels"] = [list(r) for r in item.labels]
    out.update(item.meta)
    return out


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file's bytes (inputs are fingerprinted by content, not by name)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


FILE_MODE = 0o666
"""Every file this package writes (OUTPUT, its ``.partial`` and ``.partial.meta.json``, the
summary, the judgment cache) is created with this mode less the process umask, as the shell
creates files (0644 under the usual umask 022); a file that is replaced keeps its mode."""


def _umask() -> int:
    try:  # Linux says it without changing it (os.umask would, for every thread at once)
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode(replacing: Path | None = None) -> int:
    """The mode of a file written to ``replacing``: its current one, else :data:`FILE_MODE` less the umask."""
    if replacing is not None:
        try:
            st = os.stat(replacing)
            if stat.S_ISREG(st.st_mode):
                return stat.S_IMODE(st.st_mode)
        except OSError:
            pass
    return FILE_MODE & ~_umask()


@dataclass(frozen=True)
class OutputTarget:
    """Where writing to a path really goes.

    ``real`` is the file the bytes land in: a symlink is followed, so it keeps pointing at
    its target and the target gets the new content. ``stream`` marks an existing file that is
    not a regular one (a device such as ``/dev/null``, a FIFO, ``/dev/stdout``): it is
    written to directly, never renamed onto or replaced, and cannot be resumed.
    """

    path: Path
    real: Path
    stream: bool

    @classmethod
    def of(cls, path: str | os.PathLike[str], *, what: str = "output") -> "OutputTarget":
        """The target of ``path``; :class:`ConfigError` when it names a directory or cannot be a file."""
        p = Path(path)
        if _is_fd_alias(p):
            return cls(p, p, True)
        try:
            st = os.stat(p)
        except FileNotFoundError:
            st = None
        except OSError as e:
            raise ConfigError(f"{what} {p}: {_why(e)}") from None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise ConfigError(f"{what} {p} is a directory; name a file")
        if st is not None and not stat.S_ISREG(st.st_mode):
            return cls(p, p, True)
        return cls(p, Path(os.path.realpath(p)), False)

    def sibling(self, suffix: str) -> Path:
        """A file beside the real target: ``OUTPUT.partial``, ``OUTPUT.partial.meta.json``."""
        return self.real.with_name(self.real.name + suffix)

    def check_writable(self, *, what: str = "output") -> None:
        """:class:`ConfigError` unless the file can be created (or replaced) where it goes.

        Checked before a run starts, so a summary that cannot be written is known before
        hours of scoring, not after. Creates nothing that stays.
        """
        if self.stream:
            if not os.access(self.path, os.W_OK):
                raise ConfigError(f"{what} {self.path}: not writable")
            return
        if self.real.exists() and not os.access(self.real, os.W_OK):
            raise ConfigError(f"{what} {self.path}: the file is read-only")
        folder = self.real.parent
        while not folder.exists():
            folder = folder.parent
        if not folder.is_dir():
            raise ConfigError(f"{what} {self.path}: {folder} is not a directory")
        if folder != self.real.parent:
            if not os.access(folder, os.W_OK | os.X_OK):
                raise ConfigError(f"{what} {self.path}: cannot create folders in {folder}")
            return
        try:
            fd, probe = tempfile.mkstemp(dir=folder, prefix=f".{self.real.name}.", suffix=".probe")
            os.close(fd)
            os.unlink(probe)
        except OSError as e:
            raise ConfigError(f"{what} {self.path}: cannot write in {folder}: {_why(e)}") from None


def _is_fd_alias(p: Path) -> bool:
    """``/dev/stdout``, ``/dev/fd/N``, ``/proc/self/fd/N``: names of an open file, streamed to."""
    names = (os.path.abspath(p), os.path.realpath(p))
    return any(n in ("/dev/stdout", "/dev/stderr") or n.startswith(("/dev/fd/", "/proc/")) for n in names)


def _why(e: OSError) -> str:
    return e.strerror or type(e).__name__


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name one file (hard links and symlinks included; a missing file by its resolved path)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def dumps(obj: Any, *, indent: int | None = None) -> str:
    """JSON as every output file holds it: UTF-8 text, and never NaN or Infinity (not JSON)."""
    return json.dumps(obj, ensure_ascii=False, allow_nan=False, indent=indent)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_json_atomic(path: str | os.PathLike[str], obj: Any, *, what: str = "file") -> None:
    """Write JSON (indented, UTF-8, never NaN) atomically: see :func:`write_text_atomic`."""
    text = dumps(obj, indent=2) + "\n"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a path given in bytes that are not UTF-8: kept as its \u escape
        text = json.dumps(obj, ensure_ascii=True, allow_nan=False, indent=2) + "\n"
    write_text_atomic(path, text, what=what)


def write_text_atomic(path: str | os.PathLike[str], text: str, *, what: str = "file") -> None:
    """Write UTF-8 text to a temporary file beside ``path`` and rename it into place.

    A symlink is written through to its target; a device or FIFO is written to directly.
    The file gets :func:`file_mode` (0666 less the umask, or the mode of the file it replaces).
    """
    target = OutputTarget.of(path, what=what)
    if target.stream:
        with open(target.path, "a", encoding="utf-8") as fh:
            fh.write(text)
        return
    target.real.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.real.parent, prefix=f".{target.real.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, file_mode(target.real))
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target.real)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_jsonl_atomic(path: str | os.PathLike[str], rows: Iterable[Mapping[str, Any]]) -> None:
    """Write JSONL through a temporary file and an atomic rename."""
    with ResumableJsonlWriter(path, resume=False) as w:
        for r in rows:
            w.write(r)


def _lock(path: Path, *, output: Path) -> IO[str]:
    """``path`` opened for writing (created if missing, not truncated) under an exclusive lock.

    :class:`OutputBusy` when another process holds it. The lock is ``flock``: it goes with
    the process, so a killed run leaves nothing stale behind.
    """
    import fcntl

    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
        except OSError as e:
            raise ConfigError(f"output {output}: cannot create {path}: {_why(e)}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise OutputBusy(
                f"output {output} is being written by another run (it holds the lock on {path}); "
                "wait for that run to finish, or choose another -o"
            ) from None
        except OSError as e:
            os.close(fd)
            raise ConfigError(f"output {output}: cannot lock {path}: {_why(e)}") from None
        try:
            if os.path.samestat(os.fstat(fd), os.stat(path)):
                return os.fdopen(fd, "r+", encoding="utf-8")
        except FileNotFoundError:
            pass
        os.close(fd)  # a finishing run renamed it away between open and lock: take the new one


class ResumableJsonlWriter:
    """JSONL output that is never half-written, has one writer at a time and can resume.

    Rows go to ``OUTPUT.partial`` beside the real target (flushed per row); ``close()``
    renames it onto the target. The partial file is held under an exclusive lock from start
    to rename, so a second writer of the same OUTPUT is refused (:class:`OutputBusy`). After
    a crash the partial file holds every finished row; with ``resume=True`` those rows (minus
    a truncated last line) are read back as :attr:`done`, written to a new file beside the
    partial one and renamed over it, so a crash while resuming loses nothing (``resumed`` says
    whether there was a partial file; a finished OUTPUT is never resumed from).
    ``fingerprint`` (what decides the rows) is stored beside the partial file, and resuming
    with another one is refused; ``explain(old, new)`` says what differs. ``keep`` filters
    recovered rows. An OUTPUT that is a device, a FIFO or ``/dev/stdout`` is streamed to
    directly (no partial file, no lock, no resume).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        resume: bool = False,
        fingerprint: Mapping[str, Any] | None = None,
        keep: Callable[[Mapping[str, Any]], bool] | None = None,
        explain: Callable[[Mapping[str, Any], Mapping[str, Any]], str] | None = None,
    ):
        self.target = OutputTarget.of(path)
        self.path = self.target.path
        self.partial = self.target.sibling(".partial")
        self.meta_path = self.target.sibling(".partial.meta.json")
        self.done: list[dict[str, Any]] = []
        self.dropped = 0
        self.resumed = False
        self.closed = False
        if self.target.stream:
            if resume:
                raise ConfigError(
                    f"--resume: output {self.path} is not a regular file (a device, a pipe or a terminal), "
                    "so there is nothing to resume from; rerun without --resume"
                )
            self._fh: IO[str] = open(self.path, "a", encoding="utf-8")
            return
        self.target.real.parent.mkdir(parents=True, exist_ok=True)
        existed = self.partial.exists()
        self._fh = _lock(self.partial, output=self.path)
        try:
            if resume and existed:
                self.resumed = True
                rows = self._recover(fingerprint, explain)
                self.done = [r for r in rows if keep is None or keep(r)]
                self.dropped = len(rows) - len(self.done)
                self._rewrite(self.done)
            else:
                self._fh.truncate(0)
            if fingerprint is not None:
                write_json_atomic(self.meta_path, dict(fingerprint))
            else:
                self.meta_path.unlink(missing_ok=True)
        except BaseException:
            self._fh.close()
            raise

    def _recover(
        self,
        fingerprint: Mapping[str, Any] | None,
        explain: Callable[[Mapping[str, Any], Mapping[str, Any]], str] | None,
    ) -> list[dict[str, Any]]:
        if fingerprint is not None and self.meta_path.exists():
            try:
                old = json.loads(self.meta_path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise ConfigError(f"--resume: cannot read {self.meta_path}: {e}; rerun without --resume") from None
            new = json.loads(json.dumps(dict(fingerprint)))
            if old != new:
                why = explain(old, new) if explain is not None else "it was written with another configuration"
                raise ConfigError(
                    f"--resume: refusing to continue {self.partial}: {why}; rerun with what the interrupted run "
                    "used, or without --resume to start over (the judgment cache keeps a fresh run cheap)"
                )
        rows: list[dict[str, Any]] = []
        self._fh.seek(0)
        for n, raw in enumerate(self._fh, 1):
            if not raw.endswith("\n"):
                break  # the line a crash cut off
            try:
                row = json.loads(raw)
            except (ValueError, RecursionError):
                break
            if not isinstance(row, dict):
                raise InputError(f"--resume: not a scored result (a JSON {_type_name(row)})", path=str(self.partial),
                                 line=n)
            rows.append(row)
        return rows

    def _rewrite(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Write ``rows`` to a new locked file beside the partial one, then rename it over it."""
        import fcntl

        fd, tmp = tempfile.mkstemp(dir=self.partial.parent, prefix=f".{self.partial.name}.", suffix=".tmp")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.fchmod(fd, file_mode(self.partial))
            fh = os.fdopen(fd, "r+", encoding="utf-8")
        except BaseException:
            os.close(fd)
            Path(tmp).unlink(missing_ok=True)
            raise
        try:
            for row in rows:
                fh.write(dumps(row) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
            os.replace(tmp, self.partial)
        except BaseException:
            fh.close()
            Path(tmp).unlink(missing_ok=True)
            raise
        self._fh.close()  # the old partial's lock: the new file already holds its own
        self._fh = fh

    def write(self, row: Mapping[str, Any]) -> None:
        self._fh.write(dumps(row) + "\n")
        self._fh.flush()

    def close(self) -> None:
        """Finish: fsync and rename the partial file onto the output's real target."""
        if self.closed:
            return
        self.closed = True
        fh = self._fh
        try:
            fh.flush()
            if not self.target.stream:
                os.fsync(fh.fileno())
                os.fchmod(fh.fileno(), file_mode(self.target.real))
                os.replace(self.partial, self.target.real)
                _fsync_dir(self.target.real.parent)
                self.meta_path.unlink(missing_ok=True)
        finally:
            fh.close()

    def abort(self) -> None:
        """Stop without finishing: the partial file stays for ``--resume``."""
        if not self.closed:
            self._fh.close()
            self.closed = True

    def __enter__(self) -> "ResumableJsonlWriter":
        return self

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def doc_judgment_from_json(d: Mapping[str, Any]) -> DocJudgment:
    """A :class:`DocJudgment` from its output JSON (inverse of ``DocJudgment.to_json``)."""
    return DocJudgment(
        doc_id=d["doc_id"],
        label=d["label"],
        probs=d.get("probs"),
        source=d["source"],
        passage=d.get("passage"),
        n_passages=d.get("n_passages", 1),
        similarity=d.get("similarity"),
        note=d.get("note"),
        both=d.get("both", False),
        passage_span=tuple(d["passage_span"]) if d.get("passage_span") else None,  # type: ignore[arg-type]
    )


def claim_verdict_from_json(item_id: str, index: int, d: Mapping[str, Any]) -> ClaimVerdict:
    """A :class:`ClaimVerdict` from its output JSON (inverse of ``ClaimVerdict.to_json``)."""
    span = d.get("span")
    return ClaimVerdict(
        claim=Claim(item_id, index, d["text"], tuple(span) if span else None),  # type: ignore[arg-type]
        support=tuple(d["support"]),
        contradict=tuple(d["contradict"]),
        irrelevant=tuple(d["irrelevant"]),
        unscored=tuple(d.get("unscored", ())),
        judgments=tuple(doc_judgment_from_json(j) for j in d["judgments"]),
    )


def result_from_json(d: Mapping[str, Any]) -> ItemResult:
    """An :class:`ItemResult` from one output line; the metrics are recomputed from the
    verdicts (``aggregate.item_metrics``), not trusted from the file."""
    verdicts = tuple(claim_verdict_from_json(d["id"], i, c) for i, c in enumerate(d["claims"]))
    return ItemResult(d["id"], verdicts, item_metrics(verdicts))


def read_results(path: str | os.PathLike[str]) -> list[ItemResult]:
    """Read a scored OUTPUT file back into :class:`ItemResult` objects."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            if raw.strip():
                try:
                    out.append(result_from_json(json.loads(raw)))
                except (json.JSONDecodeError, KeyError, TypeError, AttributeError, ValueError) as e:
                    raise InputError(f"not a scored result line: {e}", path=str(path), line=n) from None
    return out
