"""Every prompt the experiments send, in one versioned place.

Change a text here → bump :data:`PROMPT_VERSION`: outputs record the version and the
texts (:func:`prompt_record`), so a number can always be traced to the words that produced it.
Prompts are chat conversations of user (and assistant) turns only, no system turn: every chat
template renders them, and a model's own default system prompt stays in place.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..core.types import Document

PROMPT_VERSION = "1"

STRATEGIES: dict[str, str] = {
    "standard": ("Answer the question below as a short report written from the documents."),
    "balanced": (
        "Answer the question below as a short report written from the documents. Where the documents "
        "disagree, say so: acknowledge the disagreement instead of presenting one side as settled."
    ),
    "super-balanced": (
        "Answer the question below as a short report written from the documents. Present every position "
        "the documents take, each with the documents that hold it (cite them by their ids, e.g. [d1], [d3]), "
        "and do not favour any position over another."
    ),
}
"""Report-generation strategies (``conflictscore generate --strategy``)."""

REPORT_TEMPLATE = "{instruction}\n\nDocuments:\n{documents}\n\nQuestion: {question}\n\nReport:"

MC_REPLY_RULE = "Reply with the letter of the correct option only."

CONDITIONS: tuple[str, ...] = ("closed-book", "rag", "prompt-control", "regenerated-rag")
"""The multiple-choice conditions of ``conflictscore regenerate``, in report order."""

MC_INSTRUCTIONS: dict[str, str] = {
    "closed-book": "Answer the following multiple-choice question.",
    "rag": "Answer the following multiple-choice question using the documents below.",
    "prompt-control": (
        "Answer the following multiple-choice question using the documents below. The documents may "
        "contradict each other: weigh the conflicting evidence carefully before you answer."
    ),
}
"""First-pass instructions; Regenerated-RAG starts from the ``rag`` answer."""

MC_TEMPLATE = "{instruction} {rule}\n\n{documents}Question: {question}\nOptions:\n{options}\n\nAnswer:"

FEEDBACK_TEMPLATE = (
    "A check of your answer against each document found conflicting evidence.\n\n{claims}\n\n"
    "Reconsider the conflicting evidence and answer the question again. {rule}"
)
FEEDBACK_CLAIM = 'Claim: "{claim}"\nSupported by:\n{support}\nContradicted by:\n{contradict}'


def format_documents(documents: Sequence[Document]) -> str:
    """``[id] text`` lines, one a document, in the order given."""
    return "\n".join(f"[{d.id}] {d.text.strip()}" for d in documents)


def letter(i: int) -> str:
    """The option letter of index ``i`` (0 → A)."""
    if not 0 <= i < 26:
        raise ValueError(f"option index {i} has no letter (at most 26 options)")
    return chr(ord("A") + i)


def report_prompt(strategy: str, question: str, documents: Sequence[Document]) -> list[dict[str, str]]:
    """The chat prompt asking for a report under ``strategy``."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; allowed: {', '.join(STRATEGIES)}")
    text = REPORT_TEMPLATE.format(
        instruction=STRATEGIES[strategy], documents=format_documents(documents), question=question.strip()
    )
    return [{"role": "user", "content": text}]


def mc_prompt(
    condition: str, question: str, options: Sequence[str], documents: Sequence[Document]
) -> list[dict[str, str]]:
    """The first-pass chat prompt of a multiple-choice question (closed-book shows no documents)."""
    if condition not in MC_INSTRUCTIONS:
        raise ValueError(f"no first-pass prompt for condition {condition!r}; allowed: {', '.join(MC_INSTRUCTIONS)}")
    docs = "" if condition == "closed-book" else f"Documents:\n{format_documents(documents)}\n\n"
    opts = "\n".join(f"{letter(i)}. {o}" for i, o in enumerate(options))
    text = MC_TEMPLATE.format(
        instruction=MC_INSTRUCTIONS[condition],
        rule=MC_REPLY_RULE,
        documents=docs,
        question=question.strip(),
        options=opts,
    )
    return [{"role": "user", "content": text}]


def feedback_prompt(
    first: Sequence[Mapping[str, str]],
    reply: str,
    conflicted: Sequence[tuple[str, Sequence[Document], Sequence[Document]]],
) -> list[dict[str, str]]:
    """Regenerated-RAG's second pass: the RAG conversation, the model's reply, then its
    conflicted claims, each with the documents that support and contradict it."""
    blocks = [
        FEEDBACK_CLAIM.format(claim=claim, support=format_documents(sup), contradict=format_documents(con))
        for claim, sup, con in conflicted
    ]
    turn = FEEDBACK_TEMPLATE.format(claims="\n\n".join(blocks), rule=MC_REPLY_RULE)
    return [*(dict(m) for m in first), {"role": "assistant", "content": reply}, {"role": "user", "content": turn}]


def prompt_record(kind: str) -> dict[str, Any]:
    """The version and texts of one experiment's prompts, for its outputs."""
    if kind == "report":
        return {"version": PROMPT_VERSION, "template": REPORT_TEMPLATE, "strategies": dict(STRATEGIES)}
    if kind == "multiple-choice":
        return {
            "version": PROMPT_VERSION,
            "template": MC_TEMPLATE,
            "rule": MC_REPLY_RULE,
            "instructions": dict(MC_INSTRUCTIONS),
            "feedback": FEEDBACK_TEMPLATE,
            "feedback_claim": FEEDBACK_CLAIM,
        }
    raise ValueError(f"unknown prompt kind {kind!r}; allowed: report, multiple-choice")
