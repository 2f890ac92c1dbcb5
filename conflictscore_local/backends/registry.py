"""The one registry: a namespace per kind of plugin, each name → what it names; backends built from a
name plus arguments.

:data:`REGISTRY` holds the namespaces: the four roles (``decomposer``, ``pruner``, ``judge``,
``generator``: backend classes), ``document_rule``, ``claim_selection``, ``runtime`` (where the ``nli``
judge's forward pass runs), ``data_source`` (every data set: ConflictBench's, training's), ``metric`` (per-item),
``detection_metric`` and ``command``. The role tables live here; the others are the package's own
tables (``aggregate.DOCUMENT_RULES``, ``metrics.METRICS``, ...), which the namespace reads and adds to.
A pip-installed plugin appears without code here: the entry points of the group
:data:`ENTRY_POINT_GROUP` named ``NAMESPACE.NAME`` (``judge.mine = my_pkg.judges:MyJudge``) are read
once, at the first look-up, and added to their namespace (a built-in name is kept, with a warning).

Built-in backends are registered as ``"module:Class"`` strings, so listing or choosing a
backend never imports torch, transformers, vllm, faiss or spaCy: a backend's module
imports its heavy libraries inside the methods that need them. A backend class has a
``Config`` dataclass (its arguments, with defaults, see :mod:`.arguments`) and is built by
:func:`build` alone, everywhere (the engine, the CLI, the TOML config, the Python API, backends
that use other backends), which checks it against its role's Protocol; models load lazily on
first use, so a run whose items all carry labels loads nothing.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import typing
from typing import Any, Iterator, Mapping, TypeVar

from .arguments import check_ranges, make_config
from ..core.errors import BackendUnavailable, ConfigError

log = logging.getLogger(__name__)

ROLES: tuple[str, ...] = ("decomposer", "pruner", "judge", "generator")

ENTRY_POINT_GROUP = "conflictscore_local.backends"
"""The entry-point group a plugin distribution declares its backends, rules, metrics and commands in."""

_REGISTRY: dict[str, dict[str, str | type]] = {
    "decomposer": {
        "spacy": "conflictscore_local.decompose.spacy:SpacyDecomposer",
        "seq2seq": "conflictscore_local.decompose.seq2seq:Seq2SeqDecomposer",
        "llm": "conflictscore_local.decompose.llm:LLMDecomposer",
    },
    "pruner": {
        "auto": "conflictscore_local.prune.auto:AutoPruner",
        "embedding": "conflictscore_local.prune.embedding:EmbeddingPruner",
        "none": "conflictscore_local.prune.none:NoPruner",
    },
    "judge": {
        "nli": "conflictscore_local.judge.nli:NLIJudge",
        "vllm": "conflictscore_local.judge.vllm:VLLMJudge",
        "openai": "conflictscore_local.judge.openai:OpenAIJudge",
        "ray": "conflictscore_local.judge.ray_data:RayJudge",
        "cascade": "conflictscore_local.judge.cascade:CascadeJudge",
    },
    "generator": {
        "vllm": "conflictscore_local.generate.vllm:VLLMGenerator",
        "openai": "conflictscore_local.generate.openai:OpenAIGenerator",
        "transformers": "conflictscore_local.generate.transformers:TransformersGenerator",
    },
}

T = TypeVar("T", bound=type)

_ABSENT: Any = object()


class Namespace:
    """One kind of plugin: name → target (an object, or a lazy ``"module:attr"`` resolved on first use).

    ``table`` is the dict itself, or ``"module:attr"`` naming the package's own table (read on first use,
    so listing the namespaces imports nothing). ``lazy``: entry points are kept as ``"module:attr"``
    strings (backends, commands) rather than loaded when read (rules, metrics: their tables hold objects).
    """

    def __init__(self, kind: str, table: "dict[str, Any] | str", *, lazy: bool, registry: "Registry"):
        self.kind = kind
        self._table = table
        self.lazy = lazy
        self._registry = registry

    def table(self) -> dict[str, Any]:
        """The namespace's table (entry points read first)."""
        self._registry.load_entry_points()
        return self._raw()

    def _raw(self) -> dict[str, Any]:
        if isinstance(self._table, str):
            mod, _, attr = self._table.partition(":")
            self._table = getattr(importlib.import_module(mod), attr)
        return self._table  # type: ignore[return-value]

    def names(self) -> list[str]:
        """The registered names, in registration order."""
        return list(self.table())

    def get(self, name: str) -> Any:
        """What ``name`` names (a lazy target imported now); ``ConfigError`` naming the allowed names."""
        table = self.table()
        if name not in table:
            raise ConfigError(f"unknown {self.kind} {name!r}; allowed: {', '.join(sorted(table))}")
        target = table[name]
        if isinstance(target, str) and ":" in target:
            mod, _, attr = target.partition(":")
            try:
                module = importlib.import_module(mod)
            except ModuleNotFoundError as e:
                if e.name and mod.startswith(e.name):
                    raise BackendUnavailable(
                        f"{self.kind} {name!r} is not implemented in this version ({mod} is missing); "
                        f"choose another {self.kind}: {', '.join(sorted(table))}") from None
                raise
            target = table[name] = getattr(module, attr)
        return target

    def register(self, name: str, target: Any) -> Any:
        self.table()[name] = target
        return target

    @contextlib.contextmanager
    def registered(self, name: str, target: Any) -> Iterator[None]:
        """``name`` → ``target`` for the length of a ``with`` block; what it named before comes back after."""
        table = self.table()
        before = table.get(name, _ABSENT)
        table[name] = target
        try:
            yield
        finally:
            if before is _ABSENT:
                table.pop(name, None)
            else:
                table[name] = before


class Registry:
    """The namespaces, by kind (``REGISTRY["judge"]``, ``REGISTRY["metric"]``, ...), and the entry points."""

    def __init__(self, tables: Mapping[str, tuple["dict[str, Any] | str", bool]]):
        self.namespaces = {kind: Namespace(kind, table, lazy=lazy, registry=self) for kind, (table, lazy) in tables.items()}
        self._loaded = False

    def __getitem__(self, kind: str) -> Namespace:
        if kind not in self.namespaces:
            raise ConfigError(f"unknown kind of plugin {kind!r}; allowed: {', '.join(self.namespaces)}")
        return self.namespaces[kind]

    def kinds(self) -> list[str]:
        return list(self.namespaces)

    def load_entry_points(self, *, again: bool = False) -> None:
        """Add what installed distributions declare under :data:`ENTRY_POINT_GROUP` (once per process, or
        ``again``): ``NAMESPACE.NAME = module:attr``. A name the namespace has already keeps its target."""
        if self._loaded and not again:
            return
        self._loaded = True
        from importlib.metadata import entry_points

        for ep in entry_points(group=ENTRY_POINT_GROUP):
            kind, sep, name = ep.name.partition(".")
            where = f"entry point {ep.name!r} ({ep.value}) of {ENTRY_POINT_GROUP}"
            if not sep or not name or kind not in self.namespaces:
                log.warning(f"{where}: not NAMESPACE.NAME with NAMESPACE one of {', '.join(self.namespaces)}; "
                            "left out")
                continue
            table = self.namespaces[kind]._raw()
            if name in table:
                if table[name] != ep.value:
                    log.warning(f"{where}: {kind} {name!r} is already registered; the registered one is kept")
                continue
            target = ep.value if self.namespaces[kind].lazy else ep.load()
            if kind in ("metric", "detection_metric") and getattr(target, "key", name) != name:
                log.warning(f"{where}: its key is {getattr(target, 'key', None)!r}, not {name!r}; left out")
                continue
            table[name] = target



REGISTRY = Registry({
    **{role: (_REGISTRY[role], True) for role in ROLES},
    "document_rule": ("conflictscore_local.core.aggregate:DOCUMENT_RULES", False),
    "claim_selection": ("conflictscore_local.core.sampling:SELECTIONS", False),
    "runtime": ("conflictscore_local.judge.nli:RUNTIMES", True),
    "data_source": ("conflictscore_local.formats.sources:DATA_SOURCES", False),
    "metric": ("conflictscore_local.core.metrics:METRICS", False),
    "detection_metric": ("conflictscore_local.core.detection:DETECTION_METRICS", False),
    "command": ("conflictscore_local.cli.app:SUBCOMMANDS", True),
})
"""The one registry object: see the module docstring."""


def _role(role: str) -> Namespace:
    if role not in ROLES:
        raise ConfigError(f"unknown role {role!r}; allowed: {', '.join(ROLES)}")
    return REGISTRY[role]


def register(role: str, name: str, target: "str | type | None" = None) -> Any:
    """Register a backend class (or a lazy ``"module:Class"`` path) under ``role``/``name``.

    Usable as a decorator: ``@register("judge", "mine")``.
    """
    ns = _role(role)
    if target is not None:
        return ns.register(name, target)

    def deco(cls: T) -> T:
        return ns.register(name, cls)

    return deco


def registered(role: str, name: str, target: "str | type") -> Any:
    """:func:`register` for the length of a ``with`` block: the name's previous target (or its
    absence) comes back after (tests, a script trying a backend)."""
    return _role(role).registered(name, target)


def available(role: str) -> list[str]:
    """Names registered for ``role``, sorted (installed plugins' included)."""
    return sorted(_role(role).names())


def resolve(role: str, name: str) -> type:
    """The backend class for ``role``/``name``; ``ConfigError`` naming the allowed names."""
    ns = _role(role)
    names = sorted(ns.names())
    if name not in names:
        raise ConfigError(f"unknown {role} {name!r}; allowed: {', '.join(names)}")
    try:
        return ns.get(name)
    except BackendUnavailable:
        mod = str(ns.table()[name]).partition(":")[0]
        raise BackendUnavailable(
            f"{role} {name!r} is not implemented in this version ({mod} is missing); "
            f"give claims and labels in the input, or choose another {role}: {', '.join(names)}"
        ) from None


def config_for(role: str, name: str, args: Mapping[str, Any] | None = None, *, where: str | None = None) -> Any:
    """The checked ``Config`` of backend ``role``/``name`` (imports its module, builds nothing);
    errors start with ``where`` (default ``role 'name'``)."""
    cls = resolve(role, name)
    return make_config(cls.Config, args or {}, where=where or f"{role} {name!r}")


def build(role: str, name: str, args: Mapping[str, Any] | Any = None) -> Any:
    """Construct backend ``role``/``name``: the one place backends are built.

    ``args`` is a mapping of arguments (checked by name and type) or a ready ``Config`` of that
    backend. The backend loads nothing yet; it is checked against the role's Protocol
    (:func:`check_role`), so a missing method fails here, naming it, not hours into a run.
    """
    cls = resolve(role, name)
    where = f"{role} {name!r}"
    if not isinstance(getattr(cls, "Config", None), type):
        raise ConfigError(f"{where}: {cls.__name__} has no Config dataclass of its arguments (subclass "
                          "conflictscore_local.backends.backend.Backend)")
    if isinstance(args, cls.Config):
        check_ranges(args, where=where)
        config = args
    else:
        config = make_config(cls.Config, args or {}, where=where)
    backend = cls(config)
    check_role(role, backend, where=where)
    return backend


def as_backend(role: str, given: Any, args: Mapping[str, Any] | None = None, *, where: str) -> Any:
    """``given`` as a backend of ``role``: built when it is a name (with ``args``), else an object
    the caller made, checked against the role's Protocol (:func:`check_role`)."""
    if isinstance(given, str):
        return build(role, given, args)
    check_role(role, given, where=where)
    return given


_ROLE_MODULES: dict[str, tuple[str, str, str]] = {
    "decomposer": ("conflictscore_local.decompose._base", "Decomposer", "DecomposerBase"),
    "pruner": ("conflictscore_local.prune._base", "Pruner", "PrunerBase"),
    "judge": ("conflictscore_local.judge._base", "Judge", "JudgeBase"),
    "generator": ("conflictscore_local.generate._base", "Generator", "GeneratorBase"),
}
"""Each role's module (its ``_base.py``), Protocol and base class."""


def _role_module(role: str) -> tuple[Any, str, str]:
    if role not in _ROLE_MODULES:
        raise ConfigError(f"unknown role {role!r}; allowed: {', '.join(ROLES)}")
    mod, proto, base = _ROLE_MODULES[role]
    return importlib.import_module(mod), proto, base


def protocol(role: str) -> type:
    """The Protocol a backend of ``role`` implements."""
    module, proto, _ = _role_module(role)
    return getattr(module, proto)


def role_base(role: str) -> type:
    """The base class of ``role``'s backends (``JudgeBase`` ...): its optional members with their defaults."""
    module, _, base = _role_module(role)
    return getattr(module, base)


def protocol_members(proto: type) -> list[str]:
    """The attributes and methods a Protocol declares, its bases' included, in declaration order."""
    names: dict[str, None] = {}
    for klass in reversed(proto.__mro__):
        if klass in (object, typing.Protocol, typing.Generic) or not getattr(klass, "_is_protocol", False):
            continue
        for n in list(getattr(klass, "__annotations__", {})) + list(vars(klass)):
            if not n.startswith("_") and (n in getattr(klass, "__annotations__", {}) or callable(vars(klass).get(n))):
                names[n] = None
    return list(names)


def check_role(role: str, backend: Any, *, where: str) -> None:
    """``ConfigError`` naming what ``backend`` lacks of the role's Protocol. Subclasses of the role's base
    class (:func:`role_base`) have every optional member; a backend that has no optional member of its
    role (one subclassing :class:`conflictscore_local.backends.backend.Backend` directly) gets the base's default
    here, so callers use each member without asking."""
    base = role_base(role)
    for name in base.OPTIONAL:
        if not hasattr(backend, name):
            default = getattr(base, name)
            try:
                setattr(backend, name, default.__get__(backend) if callable(default) else default)
            except (AttributeError, TypeError):  # an object that takes no attributes: named below
                pass
    missing = [m for m in protocol_members(protocol(role)) if not hasattr(backend, m)]
    if missing:
        raise ConfigError(
            f"{where}: {type(backend).__name__} is not a {role}: it has no {', '.join(missing)} (subclass "
            f"{base.__module__}.{base.__name__} for the optional members)"
        )
