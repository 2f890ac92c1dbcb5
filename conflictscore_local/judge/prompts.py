"""The LLM judge prompt, shared by the ``vllm`` and ``openai`` judges.

Fixed instructions first, then the document (passage), then the claim: every request that
judges a claim against the same passage shares its prefix, which the engines' prefix
caching turns into one prefill per passage. The reply is one word, read from the
log-probabilities of its first token. ``PROMPT_VERSION`` is part of the judge spec (and
so of the cache key): change it whenever the wording changes.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.types import Pair
from ..generate._base import Message

PROMPT_VERSION = "judge-v1"

INSTRUCTIONS = """\
You check a claim against one document. Judge only from the document, not from what you know.
- SUPPORT: the document states or clearly implies that the claim is true.
- CONTRADICT: the document states or clearly implies that the claim is false, for example by giving \
a different date, number, place or name for the same fact.
- IRRELEVANT: the document does not address the claim, or does not settle it either way.
Reply with exactly one word: SUPPORT, CONTRADICT or IRRELEVANT."""

_BODY = "Document:\n{passage}\n\nClaim: {claim}"
_ASK = "Answer (SUPPORT, CONTRADICT or IRRELEVANT):"


def judge_messages(claim: str, passage: str) -> list[Message]:
    """The chat prompt: one user turn, instructions → document → claim → question."""
    return [{"role": "user", "content": f"{INSTRUCTIONS}\n\n{_BODY.format(passage=passage, claim=claim)}\n\n{_ASK}"}]


def judge_text(claim: str, passage: str) -> str:
    """The same prompt as plain text, for completion endpoints and base models."""
    return f"{INSTRUCTIONS}\n\n{_BODY.format(passage=passage, claim=claim)}\n\n{_ASK}"


def passage_order(pairs: Sequence[Pair]) -> list[int]:
    """Indices of ``pairs`` grouped by passage text (in order of first appearance), claims
    sorted within a group: the submission order that lets requests share cached prefixes."""
    first: dict[str, int] = {}
    for i, p in enumerate(pairs):
        first.setdefault(p.passage.text, i)
    return sorted(range(len(pairs)), key=lambda i: (first[pairs[i].passage.text], pairs[i].claim.text, i))
