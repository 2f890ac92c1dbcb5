"""What every backend shares: a ``Config`` dataclass, ``describe()`` and ``stats()``."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from .registry import config_dict


@dataclasses.dataclass(frozen=True)
class NoConfig:
    """Arguments of a backend that takes none."""


class Backend:
    """Base class of registered backends.

    Subclasses set ``name`` and ``Config``; ``__init__`` stores the config and loads
    nothing. ``describe()`` goes into every report so a run can be replayed: name,
    arguments, and whatever a backend resolved while running (model path, revision).
    ``stats()`` holds counters worth reporting (fallbacks, unscored outputs, ...).
    """

    name: ClassVar[str] = ""
    role: ClassVar[str] = ""
    Config: ClassVar[type] = NoConfig

    def __init__(self, config: Any = None):
        self.config = config if config is not None else self.Config()
        self.resolved: dict[str, Any] = {}
        self.counters: dict[str, Any] = {}

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "args": config_dict(self.config)}
        if self.resolved:
            out["resolved"] = dict(self.resolved)
        return out

    def stats(self) -> dict[str, Any]:
        return dict(self.counters)

    def count(self, key: str, n: int = 1) -> None:
        self.counters[key] = self.counters.get(key, 0) + n
