"""The module paths of 0.1 (before the layered layout), a deprecation shim until :data:`REMOVED_IN`.

``import conflictscore_local.types`` (or ``from conflictscore_local.engine import Engine``) still works but
warns: a finder on ``sys.meta_path`` answers each old name in :data:`MOVED` with the module at its new
place, the same module object (so patching either name patches both), and raises a ``DeprecationWarning``
naming the new path and the version that removes the old one. The package, its tests and benchmarks
import the new paths only (``tests/test_layout.py`` checks it); CHANGELOG.md lists what moved.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import ModuleType
from typing import Any, Sequence

MOVED: dict[str, str] = {
    "aggregate": "core.aggregate",
    "arguments": "backends.arguments",
    "backend": "backends.backend",
    "bench.metrics": "core.detection",
    "cache": "formats.cache",
    "checkpoints": "backends.checkpoints",
    "chunk": "core.chunk",
    "config": "pipeline.config",
    "detection": "core.detection",
    "devices": "util.devices",
    "diff": "core.diff",
    "engine": "pipeline.engine",
    "environment": "util.environment",
    "errors": "core.errors",
    "extras": "util.extras",
    "flops": "util.flops",
    "inputs": "formats.inputs",
    "judge.calibrate": "judge.nli.calibrate",
    "judge.native": "judge.nli.runtimes.native",
    "judge.onnx_runtime": "judge.nli.runtimes.onnx",
    "judge.openvino_runtime": "judge.nli.runtimes.openvino",
    "jsonl": "util.jsonl",
    "labels": "core.labels",
    "locations": "util.locations",
    "metrics": "core.metrics",
    "models.lock": "backends.modelstore.lock",
    "models.manifest": "backends.modelstore.manifest",
    "models.store": "backends.modelstore.store",
    "models.verify": "backends.modelstore.verify",
    "nlp": "util.nlp",
    "paths": "util.paths",
    "progress": "util.progress",
    "registry": "backends.registry",
    "results": "formats.results",
    "sampling": "core.sampling",
    "scoring": "pipeline.scoring",
    "shards": "pipeline",
    "shards.merge": "pipeline.merge",
    "shards.split": "pipeline.shards",
    "summary": "formats.summary",
    "types": "core.types",
}
"""Old name → new name, both below ``conflictscore_local``."""

SPLIT: dict[str, tuple[str, ...]] = {
    "judge.runtime": ("judge.nli.runtimes.base", "judge.nli.runtimes.torch", "judge.nli.runtimes"),
}
"""Old name → the modules its names went to: the old name is answered by a module that looks each name
up in them, in order (patching it patches nothing: patch the new module)."""

REMOVED_IN = "0.3.0"
"""The release that removes the old paths (and this module)."""

_PREFIX = __name__.rpartition(".")[0] + "."


class _Moved(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers an old module name with the module at its new place."""

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        old = name[len(_PREFIX) :] if name.startswith(_PREFIX) else None
        if old in MOVED or old in SPLIT:
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        old = spec.name[len(_PREFIX) :]
        new = [_PREFIX + n for n in SPLIT.get(old, (MOVED.get(old, ""),))]
        # stacklevel 2: the import system's own frames are skipped, so the warning names the importing line
        warnings.warn(
            f"{spec.name} is deprecated and will be removed in {REMOVED_IN}: import {' or '.join(new)}",
            DeprecationWarning,
            stacklevel=2,
        )
        if old in SPLIT:
            return _Joined(spec.name, [importlib.import_module(n) for n in new])
        module = importlib.import_module(new[0])
        self._spec: Any = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        if not isinstance(module, _Joined):
            module.__spec__ = self._spec  # the module keeps its own spec (the import system set the alias's)


class _Joined(ModuleType):
    """An old module whose names went to several: each name looked up in them, in order."""

    def __init__(self, name: str, parts: list[ModuleType]):
        super().__init__(name, f"Deprecated: the names of {name} are in {', '.join(p.__name__ for p in parts)}.")
        self._parts = parts

    def __getattr__(self, attr: str) -> Any:
        for part in self.__dict__.get("_parts", ()):
            if hasattr(part, attr):
                return getattr(part, attr)
        raise AttributeError(f"module {self.__name__!r} has no attribute {attr!r}")


def install() -> None:
    """Put the finder on ``sys.meta_path`` once."""
    if not any(isinstance(f, _Moved) for f in sys.meta_path):
        sys.meta_path.insert(0, _Moved())  # before the path finders: an old file elsewhere must not answer
