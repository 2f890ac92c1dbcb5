"""TruthfulQA as multiple choice with conflicting grounding documents, and strict answer parsing.

From each CSV row (``Question``, ``Best Answer``, ``Correct Answers``, ``Incorrect Answers``;
answers joined by ``;``), all deterministic, seeded by the question text (and ``seed``):

- **Options**: the Best Answer plus every Incorrect Answer (duplicates, compared case- and
  space-insensitively, dropped), shuffled with ``random.Random(sha256("options", seed,
  question))``; letters A, B, … in that order.
- **Documents**: one document per distinct reference answer, correct ones (Correct Answers,
  plus the Best Answer if the row forgot it) and incorrect ones (Incorrect Answers) alike, each
  the answer as one sentence (a final period added when it has no end punctuation). They are
  shuffled with ``random.Random(sha256("documents", seed, question))`` and numbered ``d1``,
  ``d2``, … in that order, so neither id nor position tells which side a document is on
  (``Document.meta["reference"]`` does, for the trace, never for the model). Every option
  thus has a document asserting it, and the correct answers' paraphrases outnumber or match
  them: the evidence really conflicts, as retrieved evidence on these questions does.
"""

from __future__ import annotations

import csv
import hashlib
import os
import random
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..core.errors import InputError
from ..core.types import Document
from .prompts import letter

COLUMNS: tuple[str, ...] = ("Question", "Best Answer", "Correct Answers", "Incorrect Answers")


@dataclass(frozen=True)
class MCQuestion:
    """One multiple-choice question: ``options[answer]`` is the Best Answer."""

    id: str
    question: str
    options: tuple[str, ...]
    answer: int
    documents: tuple[Document, ...]
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "question": self.question,
            "options": {letter(i): o for i, o in enumerate(self.options)},
            "answer": letter(self.answer),
            "documents": [{"id": d.id, "text": d.text, **dict(d.meta)} for d in self.documents],
            **self.meta,
        }


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def split_answers(cell: str) -> list[str]:
    """The answers of a ``;``-joined cell, stripped, empty ones dropped, first of duplicates kept."""
    out: list[str] = []
    seen: set[str] = set()
    for a in cell.split(";"):
        a = a.strip()
        if a and _norm(a) not in seen:
            seen.add(_norm(a))
            out.append(a)
    return out


def _rng(kind: str, seed: int, question: str) -> random.Random:
    digest = hashlib.sha256(f"{kind}\x00{seed}\x00{question}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _sentence(answer: str) -> str:
    return answer if answer[-1] in ".!?" else answer + "."


def make_question(
    qid: str,
    question: str,
    best: str,
    correct: Sequence[str],
    incorrect: Sequence[str],
    *,
    seed: int = 0,
    meta: dict[str, Any] | None = None,
) -> MCQuestion:
    """The options and documents of one question (see the module docstring)."""
    wrong = [a for a in incorrect if _norm(a) != _norm(best)]
    options = [best, *wrong]
    _rng("options", seed, question).shuffle(options)
    right = list(correct) if any(_norm(c) == _norm(best) for c in correct) else [best, *correct]
    refs = [(a, "correct") for a in right] + [(a, "incorrect") for a in wrong]
    _rng("documents", seed, question).shuffle(refs)
    docs = tuple(Document(f"d{k}", _sentence(a), {"reference": kind}) for k, (a, kind) in enumerate(refs, 1))
    return MCQuestion(qid, question, tuple(options), options.index(best), docs, dict(meta or {}))


def read_truthfulqa(path: str | os.PathLike[str], *, seed: int = 0) -> list[MCQuestion]:
    """Every question of a TruthfulQA CSV (with or without a UTF-8 byte-order mark).

    ``id`` is ``truthfulqa:N``, N the 0-based data row. A missing column, or a row without a
    question, Best Answer or Incorrect Answers, is an :class:`InputError` naming file, line
    and column.
    """
    p = str(path)
    try:
        fh = open(p, encoding="utf-8-sig", newline="")
    except OSError as e:
        raise InputError(f"cannot open: {e.strerror}", path=p) from None
    out: list[MCQuestion] = []
    with fh:
        reader = csv.DictReader(fh)
        try:
            header = reader.fieldnames or []
        except (csv.Error, UnicodeDecodeError) as e:
            raise InputError(f"not a readable CSV file: {e}", path=p, line=1) from None
        missing = [c for c in COLUMNS if c not in header]
        if missing:
            raise InputError(
                f"missing column(s) {', '.join(missing)}; a TruthfulQA CSV has "
                f"{', '.join(COLUMNS)} (found: {', '.join(header) or 'nothing'})",
                path=p,
                line=1,
            )
        n = 0
        while True:
            line = reader.line_num + 1
            try:
                row = next(reader)
            except StopIteration:
                break
            except (csv.Error, UnicodeDecodeError) as e:
                raise InputError(f"not readable as CSV: {e}", path=p, line=line) from None
            cells = {c: (row.get(c) or "").strip() for c in COLUMNS}
            for c in ("Question", "Best Answer", "Incorrect Answers"):
                if not cells[c]:
                    raise InputError("is empty", path=p, line=line, field=c)
            wrong = split_answers(cells["Incorrect Answers"])
            if not [a for a in wrong if _norm(a) != _norm(cells["Best Answer"])]:
                raise InputError(
                    "has no answer other than the Best Answer", path=p, line=line, field="Incorrect Answers"
                )
            meta = {k: row[k] for k in ("Type", "Category") if row.get(k)}
            out.append(
                make_question(
                    f"truthfulqa:{n}",
                    cells["Question"],
                    cells["Best Answer"],
                    split_answers(cells["Correct Answers"]),
                    wrong,
                    seed=seed,
                    meta=meta,
                )
            )
            n += 1
    if not out:
        raise InputError("holds no question", path=p)
    return out


def sample(questions: Sequence[MCQuestion], n: int) -> list[MCQuestion]:
    """A fixed sample of ``n`` questions across categories: those with the lowest sha256 of
    their text, kept in file order (the CSV is grouped by category, so its first rows are not)."""
    keep = set(sorted(range(len(questions)), key=lambda i: hashlib.sha256(questions[i].question.encode()).digest())[:n])
    return [q for i, q in enumerate(questions) if i in keep]


_REPLY = re.compile(
    r"(?:(?i:answer)\s*:\s*)?(?P<bold>\*\*)?(?P<paren>\()?(?P<letter>[A-Z])(?(paren)\))(?(bold)\*\*)"
    r"(?:[.:)]?(?:\s+(?P<rest>\S.*))?)?"
)


def parse_option(reply: str | None, options: Sequence[str]) -> tuple[int | None, str | None]:
    """The option a reply chose, strictly: ``(index, None)``, or ``(None, why it is unparseable)``.

    Only the reply's first non-empty line is read. It must be an option letter (upper case),
    optionally written ``(B)`` or ``**B**``, optionally after ``Answer:``, optionally followed by
    ``.``, ``:`` or ``)`` and then that option's own text (or the start of it: a reply cut at its
    token limit). Nothing else is accepted and nothing is guessed: ``The answer is B``, ``b``,
    ``B or C``, a letter followed by another option's text — all unparseable.
    """
    if reply is None:
        return None, "no reply"
    line = next((ln.strip() for ln in reply.splitlines() if ln.strip()), "")
    if not line:
        return None, "empty reply"
    m = _REPLY.fullmatch(line)
    if m is None:
        return None, f"not an option letter: {line[:80]!r}"
    i = ord(m["letter"]) - ord("A")
    if i >= len(options):
        return None, f"letter {m['letter']} is not an option (A-{letter(len(options) - 1)})"
    rest = m["rest"]
    if rest is not None:
        said, text = _norm(rest).rstrip(".!?"), _norm(options[i]).rstrip(".!?")
        if not said or not text.startswith(said):
            return None, f"letter {m['letter']} followed by text that is not option {m['letter']}: {rest[:80]!r}"
    return i, None
