"""What every backend shares: a ``Config`` dataclass and the optional members of every role.

A role's Protocol (``decompose/_base.py``, ``prune/_base.py``, ``judge/_base.py``,
``generate/_base.py``) lists what the engine calls; :class:`Role` holds the members every
role has, which :class:`Backend` implements with defaults, and each role's base class beside its
Protocol (``JudgeBase``, ``PrunerBase``, ``DecomposerBase``, ``GeneratorBase``) declares that role's
optional members with their defaults (``OPTIONAL``), so a backend writes only its role's own methods
and the engine calls every member without asking. :func:`conflictscore_local.backends.registry.build` checks a
backend against its Protocol when it builds it (a backend subclassing :class:`Backend` directly gets
its role's defaults there).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, ClassVar, Mapping, Protocol

from .arguments import config_dict


class Role(Protocol):
    """Members every role has (defaults in :class:`Backend`).

    ``spec()``: everything that changes the backend's output, from content (weights hashes,
    thresholds, prompt versions), nothing that does not (batch sizes, devices, paths as
    spelled): it keys the judgment cache and the resume fingerprint. ``describe()``: name,
    arguments and what was resolved (model path, revision), so a run can be replayed.
    ``stats()``: counters worth reporting. ``use_cache_dir(folder)``: the judgment cache's
    folder, where derived files (ONNX exports) may be kept. ``close()``: release what was loaded.
    """

    name: str

    def spec(self) -> Mapping[str, Any]: ...

    def describe(self) -> dict[str, Any]: ...

    def stats(self) -> dict[str, Any]: ...

    def use_cache_dir(self, folder: Path) -> None: ...

    def close(self) -> None: ...


@dataclasses.dataclass(frozen=True)
class NoConfig:
    """Arguments of a backend that takes none."""


class Backend:
    """Base class of registered backends.

    Subclasses set ``name``, ``role`` and ``Config``; ``__init__`` stores the config and loads
    nothing. Put what was resolved at load time (model path, revision) in ``resolved`` and
    counters in :meth:`count`: both go into every summary.
    """

    name: ClassVar[str] = ""
    role: ClassVar[str] = ""
    Config: ClassVar[type] = NoConfig
    OPTIONAL: ClassVar[tuple[str, ...]] = ()
    """The role's optional members, declared with their defaults by the role's base class."""

    def __init__(self, config: Any = None):
        self.config = config if config is not None else self.Config()
        self.resolved: dict[str, Any] = {}
        self.counters: dict[str, Any] = {}

    def spec(self) -> Mapping[str, Any]:
        """Default: the backend's name and arguments (override with what it resolved from content)."""
        return {"name": self.name, "args": config_dict(self.config)}

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "args": config_dict(self.config)}
        if self.resolved:
            out["resolved"] = dict(self.resolved)
        return out

    def stats(self) -> dict[str, Any]:
        return dict(self.counters)

    def count(self, key: str, n: float = 1) -> None:
        self.counters[key] = self.counters.get(key, 0) + n

    def use_cache_dir(self, folder: Path) -> None:
        """Default: this backend derives no files."""

    def close(self) -> None:
        """Default: nothing to release."""
