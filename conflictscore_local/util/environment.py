"""The machine a run ran on, as every summary and export records it: Python, platform, library versions."""

from __future__ import annotations

import functools
import platform
import sys
from importlib import metadata
from typing import Iterable

RUN_LIBRARIES: tuple[str, ...] = (
    "conflictscore-local",
    "torch",
    "transformers",
    "sentence-transformers",
    "faiss-cpu",
    "faiss-gpu",
    "spacy",
    "vllm",
    "openai",
    "numpy",
    "tokenizers",
)
"""The distributions a scoring run may use (a summary's ``versions``)."""


def library_versions(dists: Iterable[str], *, missing: str | None = None) -> dict[str, str]:
    """The installed version of each distribution; one that is not installed is left out, or
    given as ``missing`` when that is set (an export's cache key needs every name)."""
    out: dict[str, str] = {}
    for dist in dists:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            if missing is not None:
                out[dist] = missing
    return out


def versions() -> dict[str, str]:
    """Python, platform and the versions of the installed libraries a run may use (read once
    per process: package metadata is read from disk, and every engine's summary asks)."""
    return dict(_versions())


@functools.cache
def _versions() -> dict[str, str]:
    return {"python": sys.version.split()[0], "platform": platform.platform(), **library_versions(RUN_LIBRARIES)}
