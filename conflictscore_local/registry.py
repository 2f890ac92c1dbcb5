"""Backends registered by role and name; built from a name plus arguments.

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
import typing
from typing import Any, Iterator, Mapping, TypeVar

from .arguments import check_ranges, make_config
from .errors import BackendUnavailable, ConfigError

ROLES: tuple[str, ...] = ("decomposer", "pruner", "judge", "generator")

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


def register(role: str, name: str, target: "str | type | None" = None) -> Any:
    """Register a backend class (or a lazy ``"module:Class"`` path) under ``role``/``name``.

    Usable as a decorator: ``@register("judge", "mine")``.
    """
    if role not in _REGISTRY:
        raise ConfigError(f"unknown role {role!r}; allowed: {', '.join(ROLES)}")
    if target is not None:
        _REGISTRY[role][name] = target
        return target

    def deco(cls: T) -> T:
        _REGISTRY[role][name] = cls
        return cls

    return deco


@contextlib.contextmanager
def registered(role: str, name: str, target: "str | type") -> Iterator[None]:
    """:func:`register` for the length of a ``with`` block: the name's previous target (or its
    absence) comes back after (tests, a script trying a backend)."""
    if role not in _REGISTRY:
        raise ConfigError(f"unknown role {role!r}; allowed: {', '.join(ROLES)}")
    before = _REGISTRY[role].get(name, _ABSENT)
    _REGISTRY[role][name] = target
    try:
        yield
    finally:
        if before is _ABSENT:
            _REGISTRY[role].pop(name, None)
        else:
            _REGISTRY[role][name] = before


_ABSENT: Any = object()


def available(role: str) -> list[str]:
    """Names registered for ``role``, sorted."""
    if role not in _REGISTRY:
        raise ConfigError(f"unknown role {role!r}; allowed: {', '.join(ROLES)}")
    return sorted(_REGISTRY[role])


def resolve(role: str, name: str) -> type:
    """The backend class for ``role``/``name``; ``ConfigError`` naming the allowed names."""
    names = available(role)
    if name not in _REGISTRY[role]:
        raise ConfigError(f"unknown {role} {name!r}; allowed: {', '.join(names)}")
    target = _REGISTRY[role][name]
    if isinstance(target, str):
        mod, _, attr = target.partition(":")
        try:
            module = importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name and mod.startswith(e.name):
                raise BackendUnavailable(
                    f"{role} {name!r} is not implemented in this version ({mod} is missing); "
                    f"give claims and labels in the input, or choose another {role}: {', '.join(names)}"
                ) from None
            raise
        target = getattr(module, attr)
        _REGISTRY[role][name] = target
    return target  # type: ignore[return-value]


def check_name(role: str, name: str) -> None:
    """``ConfigError`` naming the allowed names when ``name`` is not registered (imports nothing)."""
    names = available(role)
    if name not in names:
        raise ConfigError(f"unknown {role} {name!r}; allowed: {', '.join(names)}")


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
                          "conflictscore_local.backend.Backend)")
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


_PROTOCOLS: dict[str, str] = {
    "decomposer": "conflictscore_local.decompose._base:Decomposer",
    "pruner": "conflictscore_local.prune._base:Pruner",
    "judge": "conflictscore_local.judge._base:Judge",
    "generator": "conflictscore_local.generate._base:Generator",
}


def protocol(role: str) -> type:
    """The Protocol a backend of ``role`` implements."""
    if role not in _PROTOCOLS:
        raise ConfigError(f"unknown role {role!r}; allowed: {', '.join(ROLES)}")
    mod, _, attr = _PROTOCOLS[role].partition(":")
    return getattr(importlib.import_module(mod), attr)


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


_BASES: dict[str, str] = {
    "decomposer": "conflictscore_local.decompose._base:DecomposerBase",
    "pruner": "conflictscore_local.prune._base:PrunerBase",
    "judge": "conflictscore_local.judge._base:JudgeBase",
    "generator": "conflictscore_local.generate._base:GeneratorBase",
}


def role_base(role: str) -> type:
    """The base class of ``role``'s backends (``JudgeBase`` ...): its optional members with their defaults."""
    if role not in _BASES:
        raise ConfigError(f"unknown role {role!r}; allowed: {', '.join(ROLES)}")
    mod, _, attr = _BASES[role].partition(":")
    return getattr(importlib.import_module(mod), attr)


def check_role(role: str, backend: Any, *, where: str) -> None:
    """``ConfigError`` naming what ``backend`` lacks of the role's Protocol. Subclasses of the role's base
    class (:func:`role_base`) have every optional member; a backend that has no optional member of its
    role (one subclassing :class:`conflictscore_local.backend.Backend` directly) gets the base's default
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
