"""Backends registered by role and name; built from a name plus arguments.

Built-in backends are registered as ``"module:Class"`` strings, so listing or choosing a
backend never imports torch, transformers, vllm, faiss or spaCy: a backend's module
imports its heavy libraries inside the methods that need them. A backend class has a
``Config`` dataclass (its arguments, with defaults) and is constructed as ``cls(config)``;
models load lazily on first use, so a run whose items all carry labels loads nothing.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import types
import typing
from typing import Any, Callable, Mapping, TypeVar, Union

from .errors import BackendUnavailable, ConfigError

ROLES: tuple[str, ...] = ("decomposer", "pruner", "judge", "generator")

_REGISTRY: dict[str, dict[str, str | type]] = {
    "decomposer": {
        "spacy": "conflictscore_local.decompose.spacy:SpacyDecomposer",
        "seq2seq": "conflictscore_local.decompose.seq2seq:Seq2SeqDecomposer",
        "llm": "conflictscore_local.decompose.llm:LLMDecomposer",
    },
    "pruner": {
        "embedding": "conflictscore_local.prune.embedding:EmbeddingPruner",
        "none": "conflictscore_local.prune.none:NoPruner",
    },
    "judge": {
        "nli": "conflictscore_local.judge.nli:NLIJudge",
        "vllm": "conflictscore_local.judge.vllm:VLLMJudge",
        "openai": "conflictscore_local.judge.openai:OpenAIJudge",
        "ray": "conflictscore_local.judge.ray_data:RayJudge",
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


def build(role: str, name: str, args: Mapping[str, Any] | None = None) -> Any:
    """Construct the backend ``role``/``name`` from its arguments (validated, no model load)."""
    cls = resolve(role, name)
    config = make_config(cls.Config, args or {}, where=f"{role} {name!r}")
    return cls(config)


def make_config(config_cls: Callable[..., Any], args: Mapping[str, Any], *, where: str) -> Any:
    """Build a backend's ``Config`` dataclass from a mapping, checking names and types.

    Strings are accepted for numbers and booleans (CLI flags and environment variables
    arrive as strings) and converted; anything else of the wrong type is refused.
    """
    fields = {f.name: f for f in dataclasses.fields(config_cls)}  # type: ignore[arg-type]
    hints = typing.get_type_hints(config_cls)
    out: dict[str, Any] = {}
    for k, v in args.items():
        if k not in fields:
            raise ConfigError(f"{where}: unknown argument {k!r}; allowed: {', '.join(fields) or '(none)'}")
        out[k] = coerce(v, hints.get(k, Any), where=f"{where}: argument {k!r}")
    try:
        return config_cls(**out)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{where}: {e}") from None


def coerce(value: Any, hint: Any, *, where: str) -> Any:
    """Convert ``value`` to the type ``hint`` names, or raise ``ConfigError``."""
    if hint is Any:
        return value
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        if isinstance(value, str) and value.lower() in ("none", "null") and type(None) in options:
            return None
        real = [o for o in options if o is not type(None)]
        errors = []
        for opt in real:
            try:
                return coerce(value, opt, where=where)
            except ConfigError as e:
                errors.append(e)
        if len(real) == 1:
            raise ConfigError(f"{errors[0]}" + (" (or none)" if len(options) > 1 else "")) from None
        raise ConfigError(f"{where}: {value!r} is not a valid {_hint_name(hint)}")
    if origin is typing.Literal:
        allowed = typing.get_args(hint)
        if value in allowed:
            return value
        raise ConfigError(f"{where}: {value!r} is not allowed; allowed: {', '.join(map(str, allowed))}")
    if origin in (list, tuple, dict) or hint in (list, tuple, dict):
        base = origin or hint
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                if base is dict:
                    raise ConfigError(f"{where}: expected a JSON object, got {value!r}") from None
                value = [s for s in value.split(",") if s]
        if base is dict and isinstance(value, dict):
            return value
        if base in (list, tuple) and isinstance(value, (list, tuple)):
            args = typing.get_args(hint)
            if args and args[-1] is not Ellipsis and base is list:
                value = [coerce(x, args[0], where=where) for x in value]
            return base(value)
        raise ConfigError(f"{where}: expected {_hint_name(hint)}, got {type(value).__name__}")
    if hint is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "1", "yes", "on", "false", "0", "no", "off"):
            return value.lower() in ("true", "1", "yes", "on")
        raise ConfigError(f"{where}: expected true/false, got {value!r}")
    if hint is int:
        if isinstance(value, bool):
            raise ConfigError(f"{where}: expected an integer, got {value!r}")
        if isinstance(value, int):
            return value
        if isinstance(value, str):
            try:
                return int(value)
            except ValueError:  # not an integer, or more digits than Python converts
                pass
        raise ConfigError(f"{where}: expected an integer, got {_short(value)}")
    if hint is float:
        number: float | None = None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                number = float(value)
            except OverflowError:
                pass
        elif isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                pass
        if number is None:
            raise ConfigError(f"{where}: expected a number, got {_short(value)}")
        if not math.isfinite(number):
            raise ConfigError(f"{where}: expected a finite number, got {value!r}")
        return number
    if hint is str:
        if isinstance(value, str):
            return value
        raise ConfigError(f"{where}: expected a string, got {value!r}")
    return value


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters (a value may be thousands of digits long)."""
    text = repr(value) if not isinstance(value, int) or value.bit_length() < 128 else f"an integer of {value.bit_length()} bits"
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def _hint_name(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")


def config_dict(config: Any) -> dict[str, Any]:
    """A backend config as a JSON-ready dict (for reports and cache keys)."""
    return json.loads(json.dumps(dataclasses.asdict(config), default=str))
