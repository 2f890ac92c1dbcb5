"""A backend's arguments: from a mapping (TOML, ``--judge-arg KEY=VALUE``, a replayed summary)
to its typed ``Config`` dataclass, checked by name and type, and back to JSON.

Strings are accepted for numbers, booleans, lists and objects (flags and environment
variables arrive as strings) and converted; anything else of the wrong type is refused with
the argument's name and what it expects. Hand-written rather than pydantic or cattrs: see
:func:`coerce` and ``benchmarks/results/decisions/coerce_import_cost.md``.

Every numeric argument has a range (:class:`Range`, declared with :func:`ranged`): a value outside it
is refused naming the range, and ``conflictscore backends`` and ``--help`` show it.

A field marked ``flat()`` holds another backend's config (the LLM judges' ``generator``): its
arguments are given, listed and recorded beside the outer ones, as one flat set of names.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from typing import Any, Callable, Mapping, Union

from ..core.errors import ConfigError, shown
from ..jobs.redaction import may_hold_secret

FLAT = "flat"
RANGE = "range"


@dataclasses.dataclass(frozen=True)
class Range:
    """The values a number may take: ``low``/``high`` (None: unbounded), each inclusive unless
    ``low_open``/``high_open``; an integer when the field is an ``int``. NaN and infinity are never
    in a range."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def text(self, integer: bool = False) -> str:
        """``an integer in [1, 1024]``, ``a finite number in (0, 1]``, ``an integer >= 0``."""
        kind = "an integer" if integer else "a finite number"
        if self.high is None:
            return f"{kind} {'>' if self.low_open else '>='} {_num(self.low)}" if self.low is not None else kind
        if self.low is None:
            return f"{kind} {'<' if self.high_open else '<='} {_num(self.high)}"
        return (
            f"{kind} in {'(' if self.low_open else '['}{_num(self.low)}, {_num(self.high)}"
            f"{')' if self.high_open else ']'}"
        )

    def holds(self, value: float) -> bool:
        if isinstance(value, float) and not math.isfinite(value):
            return False
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return not (self.high is not None and (value >= self.high if self.high_open else value > self.high))

    def check(self, value: Any, name: str, *, integer: bool = False) -> None:
        """``ValueError`` ``NAME must be <range>, got VALUE`` unless ``value`` (a number or None) is in it."""
        if value is not None and not self.holds(value):
            raise ValueError(f"{name} must be {self.text(integer)}, got {shown(value)}")


def _num(x: float) -> str:
    if isinstance(x, int):
        return str(x)
    return str(int(x)) if x.is_integer() and abs(x) < 1e16 else f"{x:g}"


def ranged(
    default: Any,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
    what: str | None = None,
    help: str | None = None,
) -> Any:
    """A numeric dataclass field with its :class:`Range` (``what`` names it in messages; ``help`` is what
    ``conflictscore backends`` says of it)."""
    meta: dict[str, Any] = {RANGE: Range(low, high, low_open, high_open), "what": what}
    if help is not None:
        meta["help"] = help
    return dataclasses.field(default=default, metadata=meta)


COMMON_HELP: dict[str, str] = {
    "revision": "the model's revision (a commit id) where the model is a hub id",
    "device": "where the model runs: auto, cpu, cuda, cuda:N",
    "dtype": "the weights' dtype: auto (float32 on a CPU, bfloat16 on a GPU that has it), float32, bfloat16, float16",
    "batch_size": "inputs per forward pass or request batch",
    "seed": "the random seed (sampling, generation)",
    "base_url": "the OpenAI-compatible server (http://host:port/v1)",
    "api_key_env": "the environment variable holding the API key (unset: no Authorization header)",
    "endpoint": "chat (/chat/completions) or completions (/completions)",
    "max_concurrency": "requests in flight at once",
    "timeout_s": "seconds a request may take",
    "max_retries": "retries of a request that failed for a transient reason",
    "backoff_s": "the first wait before a retry (doubled each time)",
    "max_backoff_s": "the longest wait between retries",
    "enable_thinking": "passed to the chat template (Qwen3-style thinking; None: not passed)",
    "chat_template_kwargs": "other chat template variables",
    "extra_body": "merged into every request",
    "tokenizer": "another tokenizer than the model's",
    "tensor_parallel_size": "GPUs one vLLM engine spans",
    "max_model_len": "the engine's context length (None: the model's)",
    "gpu_memory_utilization": "the share of GPU memory vLLM may take",
    "enable_prefix_caching": "reuse the KV cache of shared prompt prefixes",
    "engine_args": "passed to vllm.LLM as they are",
    "max_tokens": "tokens generated at most per reply",
    "temperature": "sampling temperature (0: greedy)",
    "calibration": "use the calibrated thresholds of the checkpoint's conflictscore.json",
    "negative_label": "what the negative class of a 2-way model means",
    "id2label": "overrides the checkpoint's class names",
    "max_length": "tokens per (passage, claim) input",
    "claim_room": "tokens kept free for the claim when long documents are split",
    "chat": "render prompts with the model's chat template",
    "export_dir": "where the ONNX export is kept (default: onnx/ beside the judgment cache)",
}
"""Help for arguments many backends share, where neither the field nor its class says more."""


def field_help(config_cls: Any) -> dict[str, str]:
    """Each argument's help, for ``conflictscore backends`` and the docs: the field's ``metadata["help"]``
    (``field(metadata={"help": ...})``, ``ranged(..., help=...)``), else what the class docstring says of it
    (the text after ``` ``name``: ``` or ``` ``a``, ``b``: ``` up to the next argument so introduced), else
    :data:`COMMON_HELP`'s, else ``""``. Read only when asked."""
    import re

    out = dict.fromkeys(argument_names(config_cls), "")
    doc = " ".join((getattr(config_cls, "__doc__", None) or "").split())
    marks = []
    for m in re.finditer(r"((?:``\w+``\s*(?:,|and|/)?\s*)+):", doc):
        names = [n for n in re.findall(r"``(\w+)``", m.group(1)) if n in out]
        if names:
            marks.append((m.start(), m.end(), names))
    for k, (_, end, names) in enumerate(marks):
        stop = marks[k + 1][0] if k + 1 < len(marks) else len(doc)
        text = doc[end:stop].strip().rstrip(";,").strip()
        for name in names:
            if text and not out[name]:
                out[name] = text
    hints = _field_types(config_cls)
    for f in dataclasses.fields(config_cls):
        if f.metadata.get(FLAT):  # a nested config: its own help where this docstring says nothing
            out.update((k, v) for k, v in field_help(hints[f.name]).items() if not out.get(k))
        elif f.metadata.get("help"):
            out[f.name] = str(f.metadata["help"])
    return {k: plain_text(v) or COMMON_HELP.get(k, "") for k, v in out.items()}


def plain_text(text: str) -> str:
    """Docstring markup as a terminal shows it: ``x`` → x, :mod:`.runtime` → .runtime."""
    import re

    return re.sub(r":\w+:`~?([^`]+)`", r"\1", text).replace("``", "")


def field_range(config_cls: Any, name: str) -> Range:
    """The range declared for field ``name`` of ``config_cls``."""
    f = next(f for f in dataclasses.fields(config_cls) if f.name == name)
    return f.metadata[RANGE]


def numeric_fields(config_cls: Any) -> list[tuple[str, Any, Range | None]]:
    """``(name, hint, range)`` of every numeric argument (``int``/``float``, maybe ``| None``), flat."""
    hints = _field_types(config_cls)
    out: list[tuple[str, Any, Range | None]] = []
    for f in dataclasses.fields(config_cls):
        if f.metadata.get(FLAT):
            out.extend(numeric_fields(hints[f.name]))
        elif number_kind(hints[f.name]) is not None:
            out.append((f.name, hints[f.name], f.metadata.get(RANGE)))
    return out


def number_kind(hint: Any) -> type | None:
    """``int`` or ``float`` for a numeric hint (``X | None`` included), else None."""
    options = typing.get_args(hint) if typing.get_origin(hint) in (Union, types.UnionType) else (hint,)
    real = [o for o in options if o is not type(None)]
    return real[0] if len(real) == 1 and real[0] in (int, float) else None


def check_ranges(config: Any, *, where: str) -> None:
    """``ConfigError`` for the first argument of ``config`` outside its declared range."""
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if f.metadata.get(FLAT):
            check_ranges(value, where=where)
        elif RANGE in f.metadata:
            try:
                f.metadata[RANGE].check(value, f.metadata.get("what") or f.name, integer=isinstance(value, int))
            except ValueError as e:
                raise ConfigError(f"{where}: {e}") from None


def flat(**kw: Any) -> Any:
    """A dataclass field holding a nested config whose arguments are spelled flat (no default)."""
    return dataclasses.field(metadata={FLAT: True}, **kw)


def _flat_fields(config_cls: Any) -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(config_cls) if f.metadata.get(FLAT)]


def _field_types(config_cls: Any) -> dict[str, Any]:
    return typing.get_type_hints(config_cls)


def argument_names(config_cls: Any) -> list[str]:
    """Every argument a config takes, nested flat configs' arguments in their field's place."""
    hints = _field_types(config_cls)
    out: list[str] = []
    for f in dataclasses.fields(config_cls):
        out.extend(argument_names(hints[f.name]) if f.metadata.get(FLAT) else [f.name])
    return out


def argument_defaults(config_cls: Any) -> dict[str, Any]:
    """Each argument's default (``dataclasses.MISSING`` when it has none), flat as :func:`argument_names`."""
    hints = _field_types(config_cls)
    out: dict[str, Any] = {}
    for f in dataclasses.fields(config_cls):
        if f.metadata.get(FLAT):
            out.update(argument_defaults(hints[f.name]))
        elif f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
        else:
            out[f.name] = dataclasses.MISSING
    return out


def argument_values(config: Any) -> dict[str, Any]:
    """A config's arguments by flat name (the values :func:`make_config` was given, or defaults)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if f.metadata.get(FLAT):
            out.update(argument_values(value))
        else:
            out[f.name] = value
    return out


def make_config(config_cls: Callable[..., Any], args: Mapping[str, Any], *, where: str) -> Any:
    """Build a ``Config`` dataclass from a mapping, checking names and types (see :func:`coerce`)."""
    hints = _field_types(config_cls)
    names = argument_names(config_cls)
    own = {f.name for f in dataclasses.fields(config_cls)}  # type: ignore[arg-type]  # config_cls is a dataclass type
    nested = {f.name: set(argument_names(hints[f.name])) for f in _flat_fields(config_cls)}
    out: dict[str, Any] = {}
    inner: dict[str, dict[str, Any]] = {name: {} for name in nested}
    for k, v in args.items():
        home = next((n for n, keys in nested.items() if k in keys), None)
        if home is not None:
            inner[home][k] = v
        elif k in own and k not in nested:
            out[k] = coerce(v, hints.get(k, Any), where=f"{where}: argument {k!r}")
        elif k in nested and isinstance(v, Mapping):  # the nested config spelled as one object
            inner[k].update(v)
        else:
            raise ConfigError(f"{where}: unknown argument {k!r}; allowed: {', '.join(names) or '(none)'}")
    for name, given in inner.items():
        out[name] = make_config(hints[name], given, where=where)
    ranges = {f.name: f for f in dataclasses.fields(config_cls) if RANGE in f.metadata}  # type: ignore[arg-type]  # config_cls is a dataclass type
    for k, v in out.items():
        if k in ranges and isinstance(v, (int, float)) and not isinstance(v, bool):
            try:
                ranges[k].metadata[RANGE].check(v, ranges[k].metadata.get("what") or k, integer=isinstance(v, int))
            except ValueError as e:
                raise ConfigError(f"{where}: {e}") from None
    try:
        return config_cls(**out)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{where}: {e}") from None


def config_dict(config: Any) -> dict[str, Any]:
    """A backend config as a JSON-ready dict of its flat arguments (for reports and cache keys)."""
    return json.loads(json.dumps(argument_values(config), default=str))


def coerce(value: Any, hint: Any, *, where: str) -> Any:
    """Convert ``value`` to the type ``hint`` names, or raise ``ConfigError`` naming ``where``.

    The few hints backend configs use: ``X | None``, ``Literal[...]``, ``list``/``tuple``/``dict``
    (a JSON string, or a comma-separated list), ``bool`` (``true``/``1``/``yes``/``on`` and their
    opposites), ``int``, ``float`` (finite), ``str``, and a nested config given as a mapping.
    pydantic or cattrs would do this but do not pay their way here: every command builds configs,
    and pydantic adds about a third to the import time of the CLI plus the building of a
    validator per config class, yet still reads no comma-separated list; cattrs reads
    ``"false"`` as ``True`` without hooks as long as this code (measured in
    ``benchmarks/results/decisions/coerce_import_cost.md``).
    """
    if hint is Any:
        return value
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        return _union(value, hint, where)
    if origin is typing.Literal:
        return _literal(value, hint, where)
    if origin in (list, tuple, dict) or hint in (list, tuple, dict):
        return _container(value, hint, where)
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        if isinstance(value, hint):
            return value
        if isinstance(value, Mapping):
            return make_config(hint, value, where=where)
        got = given(value, shown_as=shown)
        raise ConfigError(f"{where}: expected an object of {hint.__name__} arguments, got {got}")
    convert = _SCALARS.get(hint)
    return convert(value, where) if convert is not None else value


def given(value: Any, *, shown_as: Callable[[Any], str] = repr) -> str:
    """How an argument error quotes the value it refused: as ``shown_as`` writes it, unless it may hold a
    credential (:func:`~..jobs.redaction.may_hold_secret`: an object, text naming an API key ...), which is
    named by its kind and size alone, so the error line never carries the credential into a log."""
    if not may_hold_secret(value):
        return shown_as(value)
    if isinstance(value, str):
        return f"text of {len(value)} characters (not shown: it may hold a credential)"
    kind = "a JSON object" if isinstance(value, Mapping) else f"a {type(value).__name__}"
    return f"{kind} (not shown: it may hold a credential)"


def _union(value: Any, hint: Any, where: str) -> Any:
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
    raise ConfigError(f"{where}: {given(value)} is not a valid {_hint_name(hint)}")


def _literal(value: Any, hint: Any, where: str) -> Any:
    allowed = typing.get_args(hint)
    if value in allowed:
        return value
    raise ConfigError(f"{where}: {given(value)} is not allowed; allowed: {', '.join(map(str, allowed))}")


def _container(value: Any, hint: Any, where: str) -> Any:
    base = typing.get_origin(hint) or hint
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as e:
            if base is dict:
                why = f"{e.msg} at character {e.pos + 1}"
                raise ConfigError(f"{where}: expected a JSON object ({why}), got {given(value)}") from None
            value = [s for s in value.split(",") if s]
    if base is dict and isinstance(value, dict):
        return value
    if base in (list, tuple) and isinstance(value, (list, tuple)):
        args = typing.get_args(hint)
        if args and args[-1] is not Ellipsis and base is list:
            value = [coerce(x, args[0], where=where) for x in value]
        return base(value)
    raise ConfigError(f"{where}: expected {_hint_name(hint)}, got {type(value).__name__}")


def _to_bool(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "1", "yes", "on", "false", "0", "no", "off"):
        return value.lower() in ("true", "1", "yes", "on")
    raise ConfigError(f"{where}: expected true/false, got {given(value)}")


def _to_int(value: Any, where: str) -> int:
    if isinstance(value, bool):
        raise ConfigError(f"{where}: expected an integer, got {value!r}")  # a boolean
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:  # not an integer, or more digits than Python converts
            pass
    raise ConfigError(f"{where}: expected an integer, got {given(value, shown_as=shown)}")


def _to_float(value: Any, where: str) -> float:
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
        raise ConfigError(f"{where}: expected a number, got {given(value, shown_as=shown)}")
    if not math.isfinite(number):
        raise ConfigError(f"{where}: expected a finite number, got {value!r}")
    return number


def _to_str(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    raise ConfigError(f"{where}: expected a string, got {given(value)}")


_SCALARS: dict[Any, Callable[[Any, str], Any]] = {bool: _to_bool, int: _to_int, float: _to_float, str: _to_str}


def _hint_name(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")
