"""The one registry: a namespace per kind of plugin, each name → what it names; backends built from a
name plus arguments.

:data:`REGISTRY` holds the namespaces: the four roles (``decomposer``, ``pruner``, ``judge``,
``generator``: backend classes), ``document_rule``, ``claim_selection``, ``runtime`` (where the ``nli``
judge's forward pass runs), ``data_source`` (every data set: ConflictBench's, training's), ``metric`` (per-item),
``detection_metric`` and ``command``. The role tables live here; the others are the package's own
tables (``aggregate.DOCUMENT_RULES``, ``metrics.METRICS``, ...), which the namespace reads and adds to.
This module names no room above its own: a table that lives higher up (the nli judge's runtimes, the
commands) is handed to its namespace by its owner when the owner is imported (:meth:`Registry.provide`).
A pip-installed plugin appears without code here: the entry points of the group
:data:`ENTRY_POINT_GROUP` named ``NAMESPACE.NAME`` (``judge.mine = my_pkg.judges:MyJudge``) are read
once, and each namespace adds its own at its first look-up (a built-in name is kept, with a warning); a
plugin that fails to load is left out with a warning naming it and the error, and the rest carries on.

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

from ..core.errors import BackendUnavailable, ConfigError
from .arguments import check_ranges, make_config

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
        "nli": "conflictscore_local.judge.nli.judge:NLIJudge",
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

    ``table`` is the dict itself, ``"module:attr"`` naming a table of a room below this one (read on first
    use, so listing the namespaces imports nothing), or None: the table's owner, a room above, hands it
    over with :meth:`provide` when it is imported (names registered before, plugins' included, are added
    to it). ``lazy``: entry points are kept as ``"module:attr"`` strings (backends, runtimes, commands)
    rather than loaded when read (rules, metrics: their tables hold objects).
    """

    def __init__(self, kind: str, table: "dict[str, Any] | str | None", *, lazy: bool, registry: "Registry"):
        self.kind = kind
        self._table: dict[str, Any] | str = {} if table is None else table
        self.owned = table is not None
        self.lazy = lazy
        self._registry = registry
        self._plugins: dict[str, str] = {}  # name → the distribution that declared it

    def table(self) -> dict[str, Any]:
        """The namespace's table (installed plugins' entry points added first)."""
        self._registry.load_entry_points()
        return self._raw()

    def _raw(self) -> dict[str, Any]:
        if isinstance(self._table, str):
            mod, _, attr = self._table.partition(":")
            self._table = getattr(importlib.import_module(mod), attr)
        return self._table  # type: ignore[return-value]  # the table loaded from its 'module:attr'

    def provide(self, table: dict[str, Any]) -> dict[str, Any]:
        """The owner's table becomes this namespace's (once; the same table again is a no-op): a room
        above ``backends/`` creates its own namespace this way, so nothing here names it. A name
        registered before that the table has too keeps the table's target, with a warning."""
        if self.owned:
            if self._raw() is not table:
                raise ConfigError(f"the {self.kind} namespace already has its table")
            return table
        for name, target in self._raw().items():
            if name in table:
                log.warning(f"{self.kind} {name!r} is already registered; the registered one is kept")
            else:
                table[name] = target
        self._table, self.owned = table, True
        return table

    def plugin(self, name: str) -> str | None:
        """The distribution whose entry point registered ``name``, or None."""
        return self._plugins.get(name)

    def names(self) -> list[str]:
        """The registered names, in registration order."""
        return list(self.table())

    def get(self, name: str) -> Any:
        """What ``name`` names (a lazy target imported now); ``ConfigError`` naming the allowed names;
        ``BackendUnavailable`` where its module is missing or a plugin's module fails to import."""
        table = self.table()
        if name not in table:
            raise ConfigError(f"unknown {self.kind} {name!r}; allowed: {', '.join(sorted(table))}")
        target = table[name]
        if isinstance(target, str) and ":" in target:
            mod, _, attr = target.partition(":")
            try:
                module = importlib.import_module(mod)
                found = getattr(module, attr)
            except Exception as e:
                dist = self._plugins.get(name)
                if dist is not None:
                    raise BackendUnavailable(
                        f"{self.kind} {name!r} of the plugin {dist} ({target}) cannot be "
                        f"loaded: {type(e).__name__}: {e}"
                    ) from e
                if isinstance(e, ModuleNotFoundError) and e.name and mod.startswith(e.name):
                    raise BackendUnavailable(
                        f"{self.kind} {name!r} is not implemented in this version ({mod} is missing); "
                        f"choose another {self.kind}: {', '.join(sorted(table))}"
                    ) from None
                raise
            target = table[name] = found
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

    def __init__(self, tables: Mapping[str, tuple["dict[str, Any] | str | None", bool]]):
        self.namespaces = {
            kind: Namespace(kind, table, lazy=lazy, registry=self) for kind, (table, lazy) in tables.items()
        }
        self._entry_points: dict[str, list[Any]] | None = None

    def __getitem__(self, kind: str) -> Namespace:
        if kind not in self.namespaces:
            raise ConfigError(f"unknown kind of plugin {kind!r}; allowed: {', '.join(self.namespaces)}")
        return self.namespaces[kind]

    def kinds(self) -> list[str]:
        return list(self.namespaces)

    def provide(self, kind: str, table: dict[str, Any]) -> dict[str, Any]:
        """:meth:`Namespace.provide`: the owner of ``kind``'s table hands it over (returns it)."""
        return self[kind].provide(table)

    def load_entry_points(self, *, again: bool = False) -> None:
        """Add installed plugins' entry points to every namespace, at the first look-up of any (once per
        process, or ``again``), so a table read directly (``METRICS``) has them too."""
        if self._entry_points is not None and not again:
            return
        self.entry_points(again=again)
        for namespace in self.namespaces.values():
            self.add_entry_points(namespace)

    def entry_points(self, *, again: bool = False) -> dict[str, list[Any]]:
        """What installed distributions declare under :data:`ENTRY_POINT_GROUP`, by namespace (read once
        per process, or ``again``): ``NAMESPACE.NAME = module:attr``. A name that is not ``NAMESPACE.NAME``
        with a known namespace is left out with a warning."""
        if self._entry_points is None or again:
            from importlib.metadata import entry_points

            found: dict[str, list[Any]] = {}
            for ep in entry_points(group=ENTRY_POINT_GROUP):
                kind, sep, name = ep.name.partition(".")
                if not sep or not name or kind not in self.namespaces:
                    log.warning(
                        f"{_where(ep)}: not NAMESPACE.NAME with NAMESPACE one of {', '.join(self.namespaces)}; left out"
                    )
                    continue
                found.setdefault(kind, []).append(ep)
            self._entry_points = found
        return self._entry_points

    def add_entry_points(self, namespace: Namespace) -> None:
        """Add the entry points of ``namespace``'s kind to it. A name it has already keeps its target; an
        entry point that fails to load (a non-lazy kind: loaded now) is left out with a warning naming the
        plugin and the error, and everything else carries on."""
        table = namespace._raw()
        for ep in self.entry_points().get(namespace.kind, []):
            name = ep.name.partition(".")[2]
            where = _where(ep)
            if name in table:
                if table[name] != ep.value:
                    log.warning(f"{where}: {namespace.kind} {name!r} is already registered; the registered one is kept")
                continue
            if namespace.lazy:
                target = ep.value
            else:
                try:
                    target = ep.load()
                except Exception as e:
                    log.warning(f"{where}: cannot be loaded ({type(e).__name__}: {e}); left out")
                    continue
            if namespace.kind in ("metric", "detection_metric") and getattr(target, "key", name) != name:
                log.warning(f"{where}: its key is {getattr(target, 'key', None)!r}, not {name!r}; left out")
                continue
            table[name] = target
            namespace._plugins[name] = _distribution(ep)


def _distribution(ep: Any) -> str:
    """The name of the distribution that declares entry point ``ep`` (``?`` where it is not known)."""
    dist = getattr(ep, "dist", None)
    return str(getattr(dist, "name", None) or "?")


def _where(ep: Any) -> str:
    return f"entry point {ep.name!r} ({ep.value}) of {ENTRY_POINT_GROUP} in the plugin {_distribution(ep)}"


REGISTRY = Registry(
    {
        **{role: (_REGISTRY[role], True) for role in ROLES},
        "document_rule": ("conflictscore_local.core.aggregate:DOCUMENT_RULES", False),
        "claim_selection": ("conflictscore_local.core.sampling:SELECTIONS", False),
        "runtime": (None, True),  # provided by the nli judge's runtimes (its RUNTIMES table), a room above
        "data_source": ("conflictscore_local.formats.sources:DATA_SOURCES", False),
        "metric": ("conflictscore_local.core.metrics:METRICS", False),
        "detection_metric": ("conflictscore_local.core.detection:DETECTION_METRICS", False),
        "command": (None, True),  # provided by the command line's table of commands, the top room
    }
)
"""The one registry object: see the module docstring. A namespace whose table lives in a room above
``backends/`` gets it from that room when it is imported (:meth:`Registry.provide`)."""


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


def resolve(role: str, name: str) -> type[Any]:
    """The backend class for ``role``/``name``; ``ConfigError`` naming the allowed names."""
    ns = _role(role)
    names = sorted(ns.names())
    if name not in names:
        raise ConfigError(f"unknown {role} {name!r}; allowed: {', '.join(names)}")
    try:
        return ns.get(name)
    except BackendUnavailable:
        if ns.plugin(name) is not None:  # a plugin's module that fails to import: its own error says why
            raise
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
        raise ConfigError(
            f"{where}: {cls.__name__} has no Config dataclass of its arguments (subclass "
            "conflictscore_local.backends.backend.Backend)"
        )
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


def role_base(role: str) -> type[Any]:
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
