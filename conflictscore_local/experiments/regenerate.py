"""Regenerated-RAG on TruthfulQA multiple choice: does feeding ConflictScore's conflicts back
fix wrong answers without breaking right ones?

Conditions (prompts in :mod:`.prompts`): ``closed-book`` (question and options), ``rag`` (plus
the grounding documents), ``prompt-control`` (RAG, told to weigh conflicting evidence; no
ConflictScore), ``regenerated-rag``: the ``rag`` answer's chosen option is scored with
ConflictScore as a one-claim response against the question's documents; when that claim is
conflicted (some document supports it, another contradicts it) the model gets its RAG
conversation back, its reply, the claim and the documents on each side, and answers again.
An answer whose claim is not conflicted is kept, and so is a RAG reply that chose no option
(nothing to score): only a reply with feedback is regenerated.

Each answer is in one state: ``right``, ``wrong`` (another option), ``unparseable`` (a reply
that :func:`~.truthfulqa.parse_option` refuses) or ``failed`` (no reply: the backend gave up,
e.g. a timeout). Accuracy counts only ``right`` and is over every question. Fix rate = wrong →
right among the RAG answers that were wrong; harm rate = right → anything else among those that
were right. Every transition is counted, so accuracy(regenerated) − accuracy(rag) = (fixed −
harmed) / n exactly.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from ..backends import registry
from ..core.errors import ConfigError
from ..core.metrics import bootstrap_mean_ci
from ..core.types import Document, Item, ItemResult
from ..generate import Generation, Generator
from ..jobs import (
    FINGERPRINT_FORMAT,
    Input,
    Job,
    Output,
    ResumableJsonlWriter,
    explain_fingerprint_change,
    write_json_atomic,
)
from ..pipeline.engine import Engine
from ..pipeline.scoring import cache_output
from ..util.environment import versions
from ..util.jsonl import file_sha256
from ..util.progress import bar as progress_bar
from .prompts import CONDITIONS, feedback_prompt, letter, mc_prompt, prompt_record
from .truthfulqa import MCQuestion, parse_option, read_truthfulqa, sample

log = logging.getLogger(__name__)

STATES: tuple[str, ...] = ("right", "wrong", "unparseable", "failed")
FIRST_PASS: tuple[str, ...] = ("closed-book", "rag", "prompt-control")


@dataclass(frozen=True)
class Answer:
    """One model answer to one question: prompt, reply, the option read from it and its state."""

    condition: str
    prompt: tuple[Mapping[str, str], ...]
    reply: str | None
    choice: int | None
    state: str
    note: str | None = None
    finish_reason: str | None = None
    pass_: int = 1

    def to_json(self) -> dict[str, Any]:
        return {
            "condition": self.condition,
            "pass": self.pass_,
            "prompt": [dict(m) for m in self.prompt],
            "reply": self.reply,
            "finish_reason": self.finish_reason,
            "choice": letter(self.choice) if self.choice is not None else None,
            "state": self.state,
            "note": self.note,
        }

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> "Answer":
        """The answer a trace row (``kind: answer``) holds: what :meth:`to_json` wrote."""
        choice = row.get("choice")
        return cls(
            row["condition"],
            tuple(dict(m) for m in row["prompt"]),
            row.get("reply"),
            ord(choice) - ord("A") if isinstance(choice, str) else None,
            row["state"],
            row.get("note"),
            row.get("finish_reason"),
            int(row.get("pass", 1)),
        )


def read_answer(
    q: MCQuestion, condition: str, prompt: Sequence[Mapping[str, str]], g: Generation, pass_: int = 1
) -> Answer:
    """The :class:`Answer` a generation gives to ``q``: parsed strictly, never guessed."""
    if g.text is None:
        return Answer(condition, tuple(prompt), None, None, "failed", g.error or "no reply", g.finish_reason, pass_)
    choice, why = parse_option(g.text, q.options)
    state = "unparseable" if choice is None else "right" if choice == q.answer else "wrong"
    return Answer(condition, tuple(prompt), g.text, choice, state, why, g.finish_reason, pass_)


def conflicted_feedback(q: MCQuestion, result: ItemResult) -> list[tuple[str, list[Document], list[Document]]]:
    """``(claim, supporting documents, contradicting documents)`` of every conflicted claim."""
    docs = {d.id: d for d in q.documents}
    return [
        (v.claim.text, [docs[i] for i in v.support], [docs[i] for i in v.contradict])
        for v in result.verdicts
        if v.conflicted
    ]


def _generate(
    generator: Generator, prompts: Sequence[Any], *, max_tokens: int, temperature: float, desc: str, progress: bool
) -> list[Generation]:
    if not prompts:
        return []
    with progress_bar(len(prompts), "prompt", enabled=progress, desc=desc) as bar:
        out = generator.generate(list(prompts), max_tokens=max_tokens, temperature=temperature, on_progress=bar.update)
    if len(out) != len(prompts):
        raise RuntimeError(f"generator returned {len(out)} completions for {len(prompts)} prompts")
    return out


def run_regenerate(
    questions: Sequence[MCQuestion],
    generator: Generator,
    engine: Engine,
    *,
    conditions: Sequence[str] = CONDITIONS,
    max_tokens: int = 32,
    temperature: float = 0.0,
    trace: Callable[[Mapping[str, Any]], None] | None = None,
    progress: bool = False,
    done: Mapping[tuple[str, str], Answer] | None = None,
    traced: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """Answer every question under every condition; the results dict (see :func:`summarize`).

    ``trace(record)`` receives every question, prompt, reply and ConflictScore verdict.
    ``regenerated-rag`` runs ``rag`` as its first pass (and reports it). ``done`` (a resume):
    answers by ``(condition, question id)`` already written, which are neither asked again nor
    traced again; ``traced``: the ids whose question row is already written.
    """
    bad = [c for c in conditions if c not in CONDITIONS]
    if bad or not conditions:
        raise ConfigError(f"unknown condition {', '.join(bad) or '(none given)'}; allowed: {', '.join(CONDITIONS)}")
    emit = trace or (lambda record: None)
    done = done or {}
    for q in questions:
        if q.id not in traced:
            emit({"kind": "question", **q.to_json()})
    wanted = [c for c in CONDITIONS if c in conditions or (c == "rag" and "regenerated-rag" in conditions)]
    answers: dict[str, list[Answer]] = {}
    for cond in (c for c in wanted if c in FIRST_PASS):
        todo = [q for q in questions if (cond, q.id) not in done]
        prompts = [mc_prompt(cond, q.question, q.options, q.documents) for q in todo]
        gens = _generate(
            generator, prompts, max_tokens=max_tokens, temperature=temperature, desc=cond, progress=progress
        )
        new = {q.id: read_answer(q, cond, p, g) for q, p, g in zip(todo, prompts, gens)}
        answers[cond] = [new[q.id] if q.id in new else done[(cond, q.id)] for q in questions]
        for q in todo:
            emit({"kind": "answer", "id": q.id, **new[q.id].to_json()})
    scoring: dict[str, Any] | None = None
    if "regenerated-rag" in wanted:
        answers["regenerated-rag"], scoring = _regenerate(
            questions,
            answers["rag"],
            generator,
            engine,
            max_tokens=max_tokens,
            temperature=temperature,
            emit=emit,
            progress=progress,
            done=done,
        )
    return summarize(questions, answers, engine=engine, scoring=scoring)


def _regenerate(
    questions: Sequence[MCQuestion],
    first: Sequence[Answer],
    generator: Generator,
    engine: Engine,
    *,
    max_tokens: int,
    temperature: float,
    emit: Callable[[Mapping[str, Any]], None],
    progress: bool,
    done: Mapping[tuple[str, str], Answer] | None = None,
) -> tuple[list[Answer], dict[str, Any]]:
    """The second pass: score each parsed RAG answer, regenerate those with conflicted claims
    (those in ``done``, a resume, are kept as written; every answer is scored again: the judgment
    cache keeps that cheap)."""
    done = done or {}
    scored = [(q, a) for q, a in zip(questions, first) if a.choice is not None]
    items = [
        Item(q.id, q.options[a.choice], q.documents, q.question, (q.options[a.choice],))  # type: ignore[index]  # scored keeps answers with a choice
        for q, a in scored
    ]
    t0 = time.perf_counter()
    results, report = engine.score_all(items) if items else ([], None)
    score_s = time.perf_counter() - t0
    by_id = {r.item_id: r for r in results}
    final: list[Answer] = []
    todo: list[tuple[int, MCQuestion, list[dict[str, str]]]] = []
    for k, (q, a) in enumerate(zip(questions, first)):
        r = by_id.get(q.id)
        if r is None:
            final.append(_kept(a, "the RAG reply chose no option: nothing to score, not regenerated"))
            continue
        conflicts = conflicted_feedback(q, r)
        emit(
            {
                "kind": "conflictscore",
                "id": q.id,
                "response": q.options[a.choice],  # type: ignore[index]  # the loop skipped answers without a choice
                "conflicted": len(conflicts),
                "result": r.to_json(),
            }
        )
        if not conflicts:
            final.append(_kept(a, "no conflicted claim: RAG answer kept"))
            continue
        if ("regenerated-rag", q.id) in done:  # regenerated by the interrupted run
            final.append(done[("regenerated-rag", q.id)])
            continue
        final.append(a)  # replaced below
        todo.append((k, q, feedback_prompt(a.prompt, a.reply or "", conflicts)))
    gens = _generate(
        generator,
        [p for _, _, p in todo],
        max_tokens=max_tokens,
        temperature=temperature,
        desc="regenerated-rag",
        progress=progress,
    )
    for (k, q, prompt), g in zip(todo, gens):
        final[k] = read_answer(q, "regenerated-rag", prompt, g, pass_=2)
    for q, a in zip(questions, final):
        if ("regenerated-rag", q.id) not in done:  # the interrupted run's answers are written already
            emit({"kind": "answer", "id": q.id, **a.to_json()})
    scoring = {
        "scored": len(items),
        "regenerated": sum(a.pass_ == 2 for a in final),
        "score_s": round(score_s, 3),
        "report": report.to_json() if report is not None else None,
    }
    return final, scoring


def _kept(a: Answer, why: str) -> Answer:
    return Answer("regenerated-rag", a.prompt, a.reply, a.choice, a.state, why, a.finish_reason, 1)


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


def summarize(
    questions: Sequence[MCQuestion],
    answers: Mapping[str, Sequence[Answer]],
    *,
    engine: Engine | None = None,
    scoring: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Per condition: counts by state, accuracy (right / all) with a bootstrap interval over
    questions, accuracy among parsed answers; for ``regenerated-rag`` the transitions from the
    RAG answer, fix and harm rates."""
    n_boot = engine.config.engine.bootstrap if engine is not None else 1000
    seed = engine.config.engine.seed if engine is not None else 0
    out: dict[str, Any] = {}
    for cond in CONDITIONS:
        if cond not in answers:
            continue
        states = [a.state for a in answers[cond]]
        counts = {s: states.count(s) for s in STATES}
        parsed = counts["right"] + counts["wrong"]
        out[cond] = {
            "n": len(states),
            **counts,
            "accuracy": _rate(counts["right"], len(states)),
            "ci95": bootstrap_mean_ci([s == "right" for s in states], n_resamples=n_boot, seed=seed),
            "accuracy_parsed": _rate(counts["right"], parsed),
        }
    if "regenerated-rag" in answers:
        before, after = answers["rag"], answers["regenerated-rag"]
        moves = {f"{s}->{t}": 0 for s in STATES for t in STATES}
        for a, b in zip(before, after):
            moves[f"{a.state}->{b.state}"] += 1
        wrong = sum(a.state == "wrong" for a in before)
        right = sum(a.state == "right" for a in before)
        fixed = moves["wrong->right"]
        harmed = sum(v for k, v in moves.items() if k.startswith("right->") and k != "right->right")
        out["regenerated-rag"].update(
            regenerated=sum(b.pass_ == 2 for b in after),
            kept=sum(b.pass_ == 1 for b in after),
            initially_wrong=wrong,
            fixed=fixed,
            fix_rate=_rate(fixed, wrong),
            initially_right=right,
            harmed=harmed,
            harm_rate=_rate(harmed, right),
            transitions={k: v for k, v in moves.items() if v},
        )
        if scoring is not None:
            out["regenerated-rag"]["conflictscore"] = dict(scoring)
    return out


def regenerate_file(
    truthfulqa: str | os.PathLike[str],
    output_path: str | os.PathLike[str] | None,
    *,
    summary_path: str | os.PathLike[str] | None = None,
    generator: str | Generator,
    generator_args: Mapping[str, Any] | None = None,
    engine: Engine,
    conditions: Sequence[str] = CONDITIONS,
    limit: int | None = None,
    sample_size: int | None = None,
    seed: int = 0,
    max_tokens: int = 32,
    temperature: float = 0.0,
    progress: bool = False,
    config_file: str | os.PathLike[str] | None = None,
    output_flag: str = "-o",
    summary_flag: str = "--summary",
    resume: bool = False,
) -> dict[str, Any]:
    """The ``conflictscore regenerate`` job: check every destination (the per-question output,
    the results, the cache: none the CSV or each other), read the CSV, run, write
    ``output_path`` (JSONL: every question, prompt, reply and ConflictScore verdict, a row as it
    happens, renamed into place at the end) and ``summary_path`` (the results per condition,
    JSON); returns the results. Either may be ``None`` (not written). More failed replies than
    ``engine.max_unscored_share`` is a warning in ``warnings`` (the command's exit status 3:
    :func:`too_many_failed`). ``output_flag`` and ``summary_flag``: the flags the command line
    named the two files by, which messages name. ``resume`` keeps the answers an interrupted run
    wrote to ``OUTPUT.partial`` (same CSV, questions, conditions, prompts, generation settings,
    generator and ConflictScore configuration; refused, naming what differs, otherwise) and asks
    the rest; failed replies are asked again."""
    if resume and output_path is None:
        raise ConfigError(
            f"--resume needs the per-question rows ({output_flag} OUT.jsonl): they are what a resume keeps"
        )
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be at least 1, got {limit}")
    if sample_size is not None and sample_size < 1:
        raise ConfigError(f"--questions must be at least 1, got {sample_size}")
    job = Job(
        [Input(truthfulqa, "the TruthfulQA CSV (--truthfulqa)"), Input(config_file, "the --config file")],
        [
            Output(
                None if str(output_path) == "-" else output_path,
                f"output ({output_flag})",
                f"OUTPUT ({output_flag})",
                kind="rows",
            ),
            Output(summary_path, summary_flag, f"the results ({summary_flag})"),
            *cache_output(engine.config),
        ],
    )
    with job:
        questions = read_truthfulqa(truthfulqa, seed=seed)
        if sample_size is not None:
            questions = sample(questions, sample_size)
        if limit is not None:
            questions = questions[:limit]
        gen = registry.as_backend("generator", generator, generator_args, where="regenerate: generator")
        t0 = time.perf_counter()
        done: dict[tuple[str, str], Answer] = {}
        traced: frozenset[str] = frozenset()
        with contextlib.ExitStack() as stack:
            trace = None
            if output_path is not None:
                fingerprint = _fingerprint(
                    truthfulqa,
                    questions,
                    gen,
                    engine,
                    conditions=conditions,
                    limit=limit,
                    sample_size=sample_size,
                    seed=seed,
                    max_tokens=max_tokens,
                    temperature=temperature,
                )
                ids = {q.id for q in questions}
                trace = stack.enter_context(
                    ResumableJsonlWriter(
                        output_path,
                        resume=resume,
                        fingerprint=fingerprint,
                        explain=explain_fingerprint_change,
                        keep=lambda r: r.get("id") in ids and _kept_on_resume(r),
                        fresh="a fresh run asks every question again",
                        verbatim=True,
                    )
                )
                if resume and not trace.resumed:
                    log.warning(f"--resume: no interrupted run of {output_path} to resume; asking every question")
                done = {(r["condition"], r["id"]): Answer.from_json(r) for r in trace.done if r["kind"] == "answer"}
                traced = frozenset(r["id"] for r in trace.done if r["kind"] == "question")
            conds = run_regenerate(
                questions,
                gen,
                engine,
                conditions=conditions,
                max_tokens=max_tokens,
                temperature=temperature,
                trace=trace.write if trace is not None else None,
                progress=progress,
                done=done,
                traced=traced,
            )
        result: dict[str, Any] = {
            "conditions": conds,
            "config": {
                "truthfulqa": str(truthfulqa),
                "truthfulqa_sha256": file_sha256(truthfulqa),
                "n_questions": len(questions),
                "limit": limit,
                "sample": sample_size,
                "seed": seed,
                "conditions": [c for c in CONDITIONS if c in conditions],
                "max_tokens": max_tokens,
                "temperature": temperature,
                "prompts": prompt_record("multiple-choice"),
                "generator": gen.describe(),
                "generator_stats": gen.stats(),
                "conflictscore": engine.describe(),
            },
            "timing": {"total_s": round(time.perf_counter() - t0, 3)},
            "resumed_answers": len(done),
            "versions": versions(),
            "warnings": _failed_warning(conds, engine.config.engine.max_unscored_share),
        }
        for w in result["warnings"]:
            log.warning(w)
        if summary_path is not None:
            write_json_atomic(summary_path, result, what=summary_flag)
    return result


def _kept_on_resume(row: Mapping[str, Any]) -> bool:
    """Which rows of an interrupted run a resume keeps: question rows and answers that got a reply
    (a failed one is asked again); ConflictScore rows are written again, the verdicts rescored."""
    return row.get("kind") == "question" or (row.get("kind") == "answer" and row.get("state") != "failed")


def _fingerprint(
    truthfulqa: str | os.PathLike[str],
    questions: Sequence[MCQuestion],
    gen: Generator,
    engine: Engine,
    *,
    conditions: Sequence[str],
    limit: int | None,
    sample_size: int | None,
    seed: int,
    max_tokens: int,
    temperature: float,
) -> dict[str, Any]:
    """What decides a run's per-question rows, for refusing a resume that would mix answers: the CSV,
    which questions (limit, sample, seed), the conditions, prompts, generation settings, the
    generator's spec and, for regenerated-rag, what decides ConflictScore's verdicts."""
    backends: dict[str, Any] = {"generator": dict(gen.spec())}
    if "regenerated-rag" in conditions and questions:
        q = questions[0]  # the verdicts' settings and backends: the same for every one-claim item
        backends["conflictscore"] = engine.fingerprint(
            [Item(q.id, q.options[0], q.documents, q.question, (q.options[0],))]
        )
    return {
        "format": FINGERPRINT_FORMAT,
        "input": {"sha256": file_sha256(truthfulqa)},
        "settings": {
            "limit": limit,
            "sample": sample_size,
            "seed": seed,
            "conditions": [c for c in CONDITIONS if c in conditions],
            "max_tokens": max_tokens,
            "temperature": temperature,
            "prompts": prompt_record("multiple-choice"),
        },
        "backends": backends,
    }


def _failed_warning(conds: Mapping[str, Mapping[str, Any]], limit: float) -> list[str]:
    """The warning of a run with more failed replies (no answer from the generator) than ``limit`` allows."""
    total = sum(c["n"] for c in conds.values())
    failed = sum(c["failed"] for c in conds.values())
    if not total or failed / total <= limit:
        return []
    return [
        f"{failed} of {total} replies ({failed / total:.1%}) FAILED (no answer: a server down, every request "
        f"timed out), above engine.max_unscored_share={limit:g}: the accuracies count them as wrong. Each "
        "one's note in the per-question rows says why. Exit status 3."
    ]


def too_many_failed(result: Mapping[str, Any]) -> bool:
    """Whether a :func:`regenerate_file` result warns of too many failed replies (exit status 3)."""
    return bool(result.get("warnings"))
