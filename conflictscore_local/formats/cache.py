"""A SQLite judgment cache: reruns and overlapping sweeps judge only new pairs.

Key = sha256(judge spec, claim text, passage text). The judge spec holds everything that
changes a label (backend, model weights or revision, prompt version, thresholds), so a new
model or prompt never reads an old answer; each spec is stored once, in ``specs``, so a
cache file says which judges filled it. WAL mode and a busy timeout make it safe for
several processes writing at once. Unscored judgments are not cached: a retry may succeed.
A file of another schema is refused before a run starts (:func:`check_cache_file`); a row that
cannot be read back (a label not in ``LABELS``, probabilities that are not a JSON object of
finite numbers, a selection of another shape) is a miss, judged again and counted
(:attr:`JudgmentCache.rejected`), never a crash. Specs are stored redacted (no secret a judge's
identity may hold reaches the file) and keyed by what is stored.

The same file holds the pruner's selections (table ``selections``), keyed by the pruner's
spec, the claim text and its candidate passages: a rerun looks them up before pruning, so
a fully cached rerun neither prunes nor judges, and reports every pair (pruned ones with
their similarity and note) exactly as the first run did. And the embedder's vectors (table
``vectors``), keyed by the embedder's spec and a text's content: new claims against documents
already seen (another response, another prompt strategy, another judge) embed only what is
new, and a step whose texts are all stored loads no embedder. And each document's passage
spans (table ``spans``), keyed by the splitting's spec (the judge's, the budget and overlap)
and the document's content: a rerun does not count tokens again.
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import re
import sqlite3
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..core.chunk import is_cover
from ..core.errors import ConfigError, WriteFailed
from ..core.types import LABELS, Judgment, Pair
from ..jobs import FILE_MODE, scrub

SCHEMA_VERSION = 2
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS specs (
        hash TEXT PRIMARY KEY,
        spec TEXT NOT NULL,
        created REAL NOT NULL DEFAULT (julianday('now'))
    )""",
    """CREATE TABLE IF NOT EXISTS judgments (
        key TEXT PRIMARY KEY,
        spec_hash TEXT NOT NULL,
        label TEXT NOT NULL,
        probs TEXT,
        created REAL NOT NULL DEFAULT (julianday('now')),
        decided_by TEXT,
        rule TEXT
    )""",  # decided_by: which judge of a cascade gave the label; rule: the rule that gave it (added within schema 2)
    # added within schema 2: older versions ignore the table, this one creates it when missing
    """CREATE TABLE IF NOT EXISTS selections (
        key TEXT PRIMARY KEY,
        spec_hash TEXT NOT NULL,
        selection TEXT NOT NULL,
        created REAL NOT NULL DEFAULT (julianday('now'))
    )""",
    # added within schema 2, like selections: an embedder's float32 rows of one text
    """CREATE TABLE IF NOT EXISTS vectors (
        key TEXT PRIMARY KEY,
        spec_hash TEXT NOT NULL,
        rows INTEGER NOT NULL,
        vector BLOB NOT NULL,
        created REAL NOT NULL DEFAULT (julianday('now'))
    )""",
    # added within schema 2, like vectors: a document's passage spans, as JSON [[start, end], ...]
    """CREATE TABLE IF NOT EXISTS spans (
        key TEXT PRIMARY KEY,
        spec_hash TEXT NOT NULL,
        spans TEXT NOT NULL,
        created REAL NOT NULL DEFAULT (julianday('now'))
    )""",
)


_COLUMNS: dict[str, tuple[str, ...]] = {
    "specs": ("hash", "spec", "created"),
    "judgments": ("key", "spec_hash", "label", "probs", "created", "decided_by", "rule"),
    "selections": ("key", "spec_hash", "selection", "created"),
    "vectors": ("key", "spec_hash", "rows", "vector", "created"),
    "spans": ("key", "spec_hash", "spans", "created"),
}
"""The columns of each table this version reads and writes."""

_ADDED_TABLES: tuple[str, ...] = ("selections", "vectors", "spans")
"""Tables added within schema 2: a file without them is read and gets them."""

_ADDED_COLUMNS: dict[str, tuple[str, ...]] = {"judgments": ("decided_by", "rule")}
"""Columns added within schema 2, last in their table: a file without them is read and gets them
(``ALTER TABLE``); versions before them refuse a file that has them."""


def spec_digest(spec: Mapping[str, Any]) -> str:
    """A stable short hash of a judge spec, as it is stored (redacted)."""
    return hashlib.sha256(_spec_json(spec).encode()).hexdigest()[:16]


def _spec_json(spec: Mapping[str, Any]) -> str:
    return json.dumps(scrub(json.loads(json.dumps(dict(spec), default=str))), sort_keys=True)


def pair_key(spec_hash: str, claim: str, passage: str) -> str:
    h = hashlib.sha256()
    for part in (spec_hash, claim, passage):
        b = part.encode("utf-8")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def selection_key(spec_hash: str, group: Sequence[Pair]) -> str:
    """The key of a pruner's selection for one claim: its spec, the claim text, and each
    candidate passage's text with which of the candidates' documents it belongs to (by order
    of appearance; ids are left out, as in judgment keys)."""
    h = hashlib.sha256()
    docs: dict[str, int] = {}
    parts = [spec_hash, group[0].claim.text if group else ""]
    for p in group:
        parts.append(f"{docs.setdefault(p.passage.doc_id, len(docs))}:{p.passage.text}")
    for part in parts:
        b = part.encode("utf-8")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def vector_key(spec_hash: str, text: str) -> str:
    """The key of an embedder's rows for one text: its spec and the text's content."""
    return pair_key(spec_hash, "vector", text)


def spans_key(spec_hash: str, text: str) -> str:
    """The key of one document's passage spans: the splitting's spec and the text's content."""
    return pair_key(spec_hash, "spans", text)


def valid_spans(text: str, spans: Any) -> tuple[tuple[int, int], ...] | None:
    """``spans`` as a tuple of ``(start, end)`` when it is a list of integer pairs that are passage
    spans of ``text`` as the splitter makes them (:func:`~..core.chunk.is_cover`: ordered, within the
    text, every non-blank character in one); else None."""
    if not isinstance(spans, list):
        return None
    out: list[tuple[int, int]] = []
    for sp in spans:
        if not (isinstance(sp, list) and len(sp) == 2 and all(type(x) is int for x in sp)):
            return None
        out.append((sp[0], sp[1]))
    return tuple(out) if is_cover(text, out) else None


def check_cache_path(path: str | os.PathLike[str]) -> None:
    """:class:`ConfigError` unless a cache file can live at ``path`` (checked before a run starts)."""
    p = Path(path)
    if p.is_dir():
        raise ConfigError(f"judgment cache {p} is a directory; name a file (--cache PATH) or use --no-cache")
    if p.exists() and not p.is_file():
        raise ConfigError(
            f"judgment cache {p} is not a regular file (a device, a pipe or a socket): the cache is a "
            "SQLite file that runs read back; name a file (--cache PATH) or use --no-cache"
        )
    folder = p.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise ConfigError(f"judgment cache {p}: {folder} is not a directory")
    target = p if p.exists() else folder
    if not os.access(target, os.W_OK):
        raise ConfigError(
            f"judgment cache {p}: {target} is not writable; choose another with --cache PATH or use --no-cache"
        )


def check_cache_file(path: str | os.PathLike[str]) -> None:
    """:func:`check_cache_path`, and a file already there must be a judgment cache of this schema
    (read only, at once: a wrong file is refused before a run loads any model)."""
    check_cache_path(path)
    p = Path(path)
    if not p.is_file() or p.stat().st_size == 0:
        return
    try:
        db = sqlite3.connect(f"{p.absolute().as_uri()}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error as e:
        raise ConfigError(f"judgment cache {p}: {e}; delete the file or choose another with --cache PATH") from None
    try:
        _check_schema(db, p)
    except sqlite3.DatabaseError as e:
        raise ConfigError(f"judgment cache {p}: {e}; delete the file or choose another with --cache PATH") from None
    finally:
        db.close()


def _check_schema(db: sqlite3.Connection, path: Path) -> None:
    """``ConfigError`` unless ``db`` is empty or a judgment cache of :data:`SCHEMA_VERSION` with its columns."""
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables:
        return
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version != SCHEMA_VERSION:
        raise ConfigError(
            f"judgment cache {path} has schema version {version}, this version uses "
            f"{SCHEMA_VERSION}; delete the file or choose another with --cache PATH"
        )
    for table, columns in _COLUMNS.items():
        if table not in tables:
            if table in _ADDED_TABLES:
                continue  # added within schema 2: created when missing
            raise ConfigError(
                f"judgment cache {path} has no table {table!r}: not a judgment cache of this "
                "version; delete the file or choose another with --cache PATH"
            )
        have = tuple(r[1] for r in db.execute(f"PRAGMA table_info({table})"))
        added = _ADDED_COLUMNS.get(table, ())
        if have != columns[: len(have)] or len(have) < len(columns) - len(added):  # some added ones may be missing
            raise ConfigError(
                f"judgment cache {path}: table {table!r} has the columns {', '.join(have)}, this "
                f"version reads {', '.join(columns)}; delete the file or choose another with --cache PATH"
            )


class JudgmentCache:
    """Look up and store judgments of one judge spec (and selections of any pruner spec)."""

    def __init__(self, path: str | os.PathLike[str], spec: Mapping[str, Any], *, timeout_s: float = 60.0):
        self.path = Path(path)
        self.spec = dict(spec)
        self.spec_hash = spec_digest(self.spec)
        self._spec_json = _spec_json(self.spec)
        self.rejected = 0
        """Rows read back that were not a valid judgment or selection: treated as misses."""
        self._lock = threading.Lock()
        self._known_specs: set[str] = {self.spec_hash}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # created here, not by SQLite, so it gets the mode every output file gets
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), FILE_MODE))
            self._db = sqlite3.connect(str(self.path), timeout=timeout_s, check_same_thread=False)
        except (OSError, sqlite3.Error) as e:
            why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO):
                raise WriteFailed(
                    f"judgment cache {self.path}: {why}: make room, then rerun the command, or choose "
                    "another with --cache PATH"
                ) from None
            raise ConfigError(
                f"judgment cache {self.path}: {why}; choose another with --cache PATH or use --no-cache"
            ) from None
        try:
            self._init_schema(timeout_s)
        except sqlite3.DatabaseError as e:
            self._db.close()
            raise _open_failed(self.path, e, timeout_s) from None
        except BaseException:
            self._db.close()
            raise

    def _init_schema(self, timeout_s: float) -> None:
        """Create or check the tables, one process at a time (``BEGIN IMMEDIATE``)."""
        db = self._db
        db.execute(f"PRAGMA busy_timeout={int(timeout_s * 1000)}")
        # Switching to WAL while another process opens the same new file can fail at once with
        # "database is locked" (SQLite does not wait on its busy handler there): retry until timeout.
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                db.execute("PRAGMA journal_mode=WAL")
                break
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("BEGIN IMMEDIATE")
        try:
            _check_schema(db, self.path)
            for stmt in _SCHEMA:
                db.execute(stmt)
            have = {row[1] for row in db.execute("PRAGMA table_info(judgments)")}
            for column in _ADDED_COLUMNS["judgments"]:
                if column not in have:  # a file an earlier version of schema 2 made
                    db.execute(f"ALTER TABLE judgments ADD COLUMN {column} TEXT")
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            db.execute("INSERT OR IGNORE INTO specs (hash, spec) VALUES (?, ?)", (self.spec_hash, self._spec_json))
            db.commit()
        except BaseException:
            db.rollback()
            raise

    def key(self, pair: Pair) -> str:
        return pair_key(self.spec_hash, pair.claim.text, pair.passage.text)

    def get_many(self, pairs: Sequence[Pair]) -> list[Judgment | None]:
        """The cached judgment of each pair (``source="cache"``), or None on a miss."""
        keys = [self.key(p) for p in pairs]
        found = {
            k: (label, probs, decided_by, rule)
            for k, label, probs, decided_by, rule in self._lookup("judgments", "label, probs, decided_by, rule", keys)
        }
        out: list[Judgment | None] = []
        cascade = self.spec.get("backend") == "cascade"
        for p, k in zip(pairs, keys):
            hit = found.get(k)
            judgment = None if hit is None else _judgment(p, *hit, cascade=cascade)
            self.rejected += hit is not None and judgment is None
            out.append(judgment)
        return out

    def use_spec(self, spec: Mapping[str, Any]) -> None:
        """Look up and store under another judge spec from now on (a judge whose way of reading
        labels changed during the run, e.g. a server that stopped returning logprobs)."""
        spec = dict(spec)
        if spec == self.spec:
            return
        spec_json = _spec_json(spec)
        spec_hash = spec_digest(spec)
        with self._lock, self._db:
            self._db.execute("INSERT OR IGNORE INTO specs (hash, spec) VALUES (?, ?)", (spec_hash, spec_json))
        self.spec, self.spec_hash, self._spec_json = spec, spec_hash, spec_json

    def put_many(self, judgments: Iterable[Judgment], *, spec: Mapping[str, Any] | None = None) -> int:
        """Store the scored judgments; returns how many were written. ``spec``: the spec the
        judge names now, which made them (see :meth:`use_spec`)."""
        if spec is not None:
            self.use_spec(spec)
        rows = [
            (
                self.key(j.pair),
                self.spec_hash,
                j.label,
                json.dumps(dict(j.probs)) if j.probs is not None else None,
                j.decided_by,
                j.rule,
            )
            for j in judgments
            if j.label is not None
        ]
        if not rows:
            return 0
        with self._lock, self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO judgments (key, spec_hash, label, probs, decided_by, rule) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )
        return len(rows)

    def get_selections(
        self, spec: Mapping[str, Any], groups: Sequence[Sequence[Pair]]
    ) -> list[tuple[list[Pair], list[Judgment]] | None]:
        """A pruner's stored selection of each group (one claim's candidate pairs): the kept
        pairs with their similarity and the pruned judgments, as the pruner returned them; None
        where there is none."""
        h = spec_digest(spec)
        keys = [selection_key(h, g) for g in groups]
        found: dict[str, str] = dict(self._lookup("selections", "selection", keys))
        out: list[tuple[list[Pair], list[Judgment]] | None] = []
        for g, k in zip(groups, keys):
            raw = found.get(k)
            sel = None if raw is None else _selection(g, raw)
            self.rejected += raw is not None and sel is None
            out.append(sel)
        return out

    def put_selections(
        self,
        spec: Mapping[str, Any],
        groups: Sequence[Sequence[Pair]],
        kept: Iterable[Pair],
        pruned: Iterable[Judgment],
    ) -> int:
        """Store what a pruner returned for ``groups`` (each one claim's candidates)."""
        h = spec_digest(spec)
        sim: dict[tuple[Any, Any], float | None] = {}
        dropped: dict[tuple[Any, Any], list[Any]] = {}
        for p in kept:
            sim[(p.claim, p.passage)] = p.similarity
        for j in pruned:
            key = (j.pair.claim, j.pair.passage)
            sim[key] = j.pair.similarity
            dropped[key] = [j.label, dict(j.probs) if j.probs is not None else None, j.note]
        rows = []
        for g in groups:
            keys = [(p.claim, p.passage) for p in g]
            sel = {
                "sim": [sim[k] for k in keys],
                "pruned": {str(i): dropped[k] for i, k in enumerate(keys) if k in dropped},
            }
            rows.append((selection_key(h, g), h, json.dumps(sel, allow_nan=False)))
        return self._put(
            spec, h, "INSERT OR REPLACE INTO selections (key, spec_hash, selection) VALUES (?, ?, ?)", rows
        )

    def get_vectors(self, spec: Mapping[str, Any], texts: Sequence[str]) -> dict[str, Any]:
        """The stored rows (a float32 array of shape rows × dim) of each of ``texts`` that an
        embedder of ``spec`` embedded before; texts never stored are left out. A row whose width
        is not the embedder's (``spec["dim"]``; without it, what most rows have), or not finite,
        is a miss, counted in :attr:`rejected`."""
        import numpy as np

        h = spec_digest(spec)
        keys = {vector_key(h, t): t for t in dict.fromkeys(texts)}
        found = self._lookup("vectors", "rows, vector", list(keys))
        out: dict[str, Any] = {}
        dims: dict[int, int] = {}
        arrays: dict[str, Any] = {}
        want = spec.get("dim")
        want = want if type(want) is int and want > 0 else None
        for key, rows, blob in found:
            if not (
                isinstance(rows, int)
                and rows > 0
                and isinstance(blob, bytes)
                and len(blob) % (4 * rows) == 0
                and blob
                and (want is None or len(blob) == 4 * rows * want)
            ):
                self.rejected += 1
                continue
            a = np.frombuffer(blob, dtype="<f4").reshape(rows, -1)
            if not np.isfinite(a).all():
                self.rejected += 1
                continue
            arrays[keys[key]] = a
            dims[a.shape[1]] = dims.get(a.shape[1], 0) + 1
        if arrays:
            dim = want if want is not None else max(dims, key=lambda d: dims[d])  # without it: what most rows have
            for text, a in arrays.items():
                if a.shape[1] == dim:
                    out[text] = a.astype(np.float32)
                else:
                    self.rejected += 1
        return out

    def put_vectors(self, spec: Mapping[str, Any], vectors: Mapping[str, Any]) -> int:
        """Store an embedder's rows of each text (``text -> array rows × dim``) under its ``spec``."""
        import numpy as np

        h = spec_digest(spec)
        rows = []
        for text, a in vectors.items():
            arr = np.asarray(a, dtype="<f4")
            if arr.ndim == 1:
                arr = arr[None, :]
            if arr.ndim != 2 or not arr.size or not np.isfinite(arr).all():
                continue  # nothing worth keeping: it is embedded again next time
            rows.append((vector_key(h, text), h, int(arr.shape[0]), arr.tobytes()))
        return self._put(
            spec, h, "INSERT OR REPLACE INTO vectors (key, spec_hash, rows, vector) VALUES (?, ?, ?, ?)", rows
        )

    def get_spans(self, spec: Mapping[str, Any], texts: Sequence[str]) -> dict[str, tuple[tuple[int, int], ...]]:
        """The stored passage spans of each of ``texts`` split under ``spec`` before; texts never
        stored are left out. A row that is not valid spans of its text (:func:`valid_spans`) is
        a miss, counted in :attr:`rejected`."""
        h = spec_digest(spec)
        keys = {spans_key(h, t): t for t in dict.fromkeys(texts)}
        found = self._lookup("spans", "spans", list(keys))
        out: dict[str, tuple[tuple[int, int], ...]] = {}
        for key, raw in found:
            text = keys[key]
            try:
                spans = valid_spans(text, json.loads(raw)) if isinstance(raw, str) else None
            except ValueError:
                spans = None
            if spans is None:
                self.rejected += 1
            else:
                out[text] = spans
        return out

    def put_spans(self, spec: Mapping[str, Any], spans: Mapping[str, Sequence[tuple[int, int]]]) -> int:
        """Store the passage spans of each text (``text -> [(start, end), ...]``) under ``spec``."""
        h = spec_digest(spec)
        rows = [(spans_key(h, t), h, json.dumps([[a, b] for a, b in sp])) for t, sp in spans.items() if sp]
        return self._put(spec, h, "INSERT OR REPLACE INTO spans (key, spec_hash, spans) VALUES (?, ?, ?)", rows)

    def _lookup(self, table: str, columns: str, keys: Sequence[str]) -> list[tuple[Any, ...]]:
        """The rows ``(key, *columns)`` of ``table`` whose key is one of ``keys``, asked 500 keys
        at a time (SQLite's limit on bound variables)."""
        found: list[tuple[Any, ...]] = []
        with self._lock:
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                q = f"SELECT key, {columns} FROM {table} WHERE key IN ({','.join('?' * len(chunk))})"
                found.extend(self._db.execute(q, chunk).fetchall())
        return found

    def _put(self, spec: Mapping[str, Any], h: str, sql: str, rows: list[tuple[Any, ...]]) -> int:
        """Write ``rows`` with ``sql`` in one transaction, ``spec`` (hashed ``h``) stored once beside them."""
        if not rows:
            return 0
        with self._lock, self._db:
            if h not in self._known_specs:
                self._db.execute("INSERT OR IGNORE INTO specs (hash, spec) VALUES (?, ?)", (h, _spec_json(spec)))
                self._known_specs.add(h)
            self._db.executemany(sql, rows)
        return len(rows)

    def __len__(self) -> int:
        """Judgments stored under this cache's judge spec."""
        with self._lock:
            row = self._db.execute("SELECT COUNT(*) FROM judgments WHERE spec_hash = ?", (self.spec_hash,)).fetchone()
            return row[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> "JudgmentCache":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


_DECIDED_BY = re.compile(r"(?:first|second)(?:/(?:first|second))*")
"""Who decided a cascade's judgment: ``first`` or ``second``, ``first/second`` inside a nested cascade."""


_FULL = {10: "SQLITE_IOERR", 13: "SQLITE_FULL"}
_BUSY = {5: "SQLITE_BUSY", 6: "SQLITE_LOCKED"}


def _open_failed(path: Path, e: sqlite3.DatabaseError, timeout_s: float) -> Exception:
    """What opening the cache at ``path`` failing with ``e`` is: a full disk or an I/O error
    (:class:`WriteFailed`, exit 1: the file is fine, the machine refused), a lock another process
    holds or a read-only file (:class:`ConfigError`, neither a reason to delete it), or a file
    that is not a judgment cache of this version (:class:`ConfigError`: delete it or choose another)."""
    code = (getattr(e, "sqlite_errorcode", None) or 0) & 0xFF
    if code in _FULL:
        return WriteFailed(
            f"judgment cache {path}: {e} (a full disk, a file-size limit?): make room, then rerun "
            "the command (`score` with --resume keeps the rows finished so far), or choose another "
            "with --cache PATH"
        )
    if code in _BUSY:
        return ConfigError(
            f"judgment cache {path}: {e} after {timeout_s:g} s: another process holds it; rerun "
            "when it is done, or choose another with --cache PATH"
        )
    if code == 8:  # SQLITE_READONLY
        return ConfigError(f"judgment cache {path}: {e}; choose another with --cache PATH or use --no-cache")
    return ConfigError(f"judgment cache {path}: {e}; delete the file or choose another with --cache PATH")


def _judgment(
    pair: Pair, label: Any, probs: Any, decided_by: Any = None, rule: Any = None, *, cascade: bool = False
) -> Judgment | None:
    """The cached judgment of a row, or None when the row is not one this version wrote: a label
    of SUPPORT / CONTRADICT / IRRELEVANT, probabilities of those labels (finite numbers) or none,
    and ``decided_by`` naming a judge of a cascade (``first``, ``second/first`` ...) or nothing;
    under a cascade's spec (``cascade``) a row must say which of its judges decided. ``rule``: the
    decision rule the judge named (a short text), or nothing (a row of an earlier version)."""
    if label not in LABELS:
        return None
    if rule is not None and not (isinstance(rule, str) and len(rule) <= 200):
        return None
    if decided_by is None and cascade:
        return None
    if decided_by is not None and not (isinstance(decided_by, str) and _DECIDED_BY.fullmatch(decided_by)):
        return None
    if probs is None:
        return Judgment(pair, label, None, "cache", decided_by=decided_by, rule=rule)
    try:
        values = json.loads(probs)
    except (TypeError, ValueError):
        return None
    if not _probabilities(values):
        return None
    return Judgment(pair, label, values, "cache", decided_by=decided_by, rule=rule)


def _probabilities(values: Any) -> bool:
    return isinstance(values, dict) and all(
        k in LABELS and isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        for k, v in values.items()
    )


def _selection(group: Sequence[Pair], raw: Any) -> tuple[list[Pair], list[Judgment]] | None:
    """A stored selection of one claim's candidates, or None when the row has another shape."""
    try:
        sel = json.loads(raw)
        sims, dropped = sel["sim"], sel["pruned"]
        if not (isinstance(sims, list) and len(sims) == len(group) and isinstance(dropped, dict)):
            return None
        kept: list[Pair] = []
        pruned: list[Judgment] = []
        for i, p in enumerate(group):
            sim = sims[i]
            if sim is not None and not (isinstance(sim, (int, float)) and math.isfinite(sim)):
                return None
            scored = replace(p, similarity=sim)
            drop = dropped.get(str(i))
            if drop is None:
                kept.append(scored)
                continue
            label, probs, note = drop
            if (
                label not in LABELS
                or (probs is not None and not _probabilities(probs))
                or (note is not None and not isinstance(note, str))
            ):
                return None
            pruned.append(Judgment(scored, label, probs, "pruned", note))
    except (TypeError, ValueError, KeyError, AttributeError):
        return None
    return kept, pruned
