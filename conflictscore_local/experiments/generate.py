"""Report generation under a prompting strategy: fill each item's ``response`` from its
question and documents, ready for ``conflictscore score``.

Strategies (texts in :mod:`.prompts`): ``standard`` answers as a report; ``balanced``
acknowledges disagreement where the documents disagree; ``super-balanced`` presents every
position with the documents that hold it. Each output item records the strategy, the prompt
version and text, and the generator (name, arguments, resolved model) under ``generation``.
"""

from __future__ import annotations

import logging
import os
from typing import Any, Callable, Mapping, Sequence

from ..backends import registry
from ..core.errors import ConfigError, InputError
from ..core.types import Item
from ..formats.inputs import item_to_json, parse_item
from ..generate import Generator
from ..jobs import FINGERPRINT_FORMAT, Input, Job, Output, ResumableJsonlWriter, explain_fingerprint_change
from ..util.jsonl import file_sha256, iter_jsonl
from ..util.progress import bar as progress_bar
from .prompts import PROMPT_VERSION, STRATEGIES, report_prompt

log = logging.getLogger(__name__)


def check_report_items(items: Sequence[Item], path: str | None = None, lines: Sequence[int] | None = None) -> None:
    """``InputError`` (file, line, field) for an item a report cannot be written for."""
    for k, it in enumerate(items):
        line = lines[k] if lines is not None else None
        if not (it.question or "").strip():
            raise InputError("missing (a report answers a question)", path=path, line=line, field="question")
        if not any(d.text.strip() for d in it.documents):
            raise InputError(
                "no document with text (a report is written from documents)", path=path, line=line, field="documents"
            )


def generate_reports(
    items: Sequence[Item],
    generator: Generator,
    strategy: str,
    *,
    max_tokens: int = 512,
    temperature: float = 0.0,
    on_progress: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """Each item as ``score`` input (JSON) with ``response`` written by ``generator`` under
    ``strategy``. Input ``claims`` and ``labels`` are dropped: they described another response.
    A request that got no answer leaves ``response`` empty with ``generation.error`` set."""
    if strategy not in STRATEGIES:
        raise ConfigError(f"unknown strategy {strategy!r}; allowed: {', '.join(STRATEGIES)}")
    check_report_items(items)
    prompts = [report_prompt(strategy, it.question or "", it.documents) for it in items]
    gens = generator.generate(prompts, max_tokens=max_tokens, temperature=temperature, on_progress=on_progress)
    if len(gens) != len(items):
        raise RuntimeError(f"generator returned {len(gens)} completions for {len(items)} prompts")
    described = generator.describe()
    out = []
    for it, g in zip(items, gens):
        row = item_to_json(it)
        row.pop("claims", None)
        row.pop("labels", None)
        row["response"] = (g.text or "").strip()
        gen: dict[str, Any] = {
            "strategy": strategy,
            "prompts_version": PROMPT_VERSION,
            "instruction": STRATEGIES[strategy],
            "finish_reason": g.finish_reason,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "generator": described,
        }
        if g.text is None:
            gen["error"] = g.error or "no reply"
        row["generation"] = gen
        out.append(row)
    return out


def generate_file(
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    *,
    strategy: str,
    generator: str | Generator,
    generator_args: Mapping[str, Any] | None = None,
    max_tokens: int = 512,
    temperature: float = 0.0,
    limit: int | None = None,
    progress: bool = False,
    resume: bool = False,
) -> dict[str, Any]:
    """The ``conflictscore generate`` job: check OUTPUT (not the input, writable), read and check
    every item before any model loads, generate :data:`CHUNK_ITEMS` items at a time into
    ``OUTPUT.partial`` (renamed onto OUTPUT at the end; ``-`` streams to stdout). ``resume`` keeps
    the answered rows of an interrupted run whose input, strategy, prompts, generation settings and
    generator spec are the same (refused, naming what differs, otherwise) and generates the rest;
    rows that failed (``generation.error``) are asked again. Returns counts (``items``, ``failed``,
    ``resumed``) and the generator."""
    if strategy not in STRATEGIES:
        raise ConfigError(f"unknown strategy {strategy!r}; allowed: {', '.join(STRATEGIES)}")
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be at least 1, got {limit}")
    rows = None if str(output_path) == "-" else output_path
    with Job([Input(input_path, "the input file")], [Output(rows, "-o", "OUTPUT (-o)", kind="rows")]):
        return _generate_file(
            input_path,
            output_path,
            strategy=strategy,
            generator=generator,
            generator_args=generator_args,
            max_tokens=max_tokens,
            temperature=temperature,
            limit=limit,
            progress=progress,
            resume=resume,
        )


CHUNK_ITEMS = 256
"""Items sent to the generator at once: their rows are written (and kept for ``--resume``) together."""


def _generate_file(
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    *,
    strategy: str,
    generator: str | Generator,
    generator_args: Mapping[str, Any] | None,
    max_tokens: int,
    temperature: float,
    limit: int | None,
    progress: bool,
    resume: bool,
) -> dict[str, Any]:
    p = str(input_path)
    items, lines = [], []
    seen: dict[str, int] = {}
    for n, obj in iter_jsonl(p):
        if isinstance(obj, dict) and "response" not in obj:
            obj = {**obj, "response": ""}  # the response is what this command writes
        it = parse_item(obj, path=p, line=n)
        if it.id in seen:
            raise InputError(f"duplicate id {it.id!r} (first on line {seen[it.id]})", path=p, line=n, field="id")
        seen[it.id] = n
        items.append(it)
        lines.append(n)
    items, lines = items[:limit], lines[:limit]
    if not items:
        raise InputError("holds no item", path=p)
    check_report_items(items, p, lines)
    gen = registry.as_backend("generator", generator, generator_args, where="generate: generator")
    fingerprint = {
        "format": FINGERPRINT_FORMAT,
        "input": {"sha256": file_sha256(p)},
        "settings": {
            "strategy": strategy,
            "prompts_version": PROMPT_VERSION,
            "max_tokens": max_tokens,
            "temperature": temperature,
        },
        "backends": {"generator": dict(gen.spec())},
    }
    wanted = {it.id for it in items}
    writer = ResumableJsonlWriter(
        output_path,
        resume=resume,
        fingerprint=fingerprint,
        keep=lambda r: r.get("id") in wanted and not _failed(r),
        explain=explain_fingerprint_change,
        fresh="a fresh run asks every item again",
        verbatim=True,
    )  # the user's items; the answers were redacted as they came
    with writer:
        if resume and not writer.resumed:
            log.warning(f"--resume: no interrupted run of {output_path} to resume; generating every item")
        done = {r["id"]: r for r in writer.done}
        todo = [it for it in items if it.id not in done]
        rows: list[dict[str, Any]] = []
        with progress_bar(len(todo), "item", enabled=progress, desc=f"generate ({strategy})") as bar:
            for start in range(0, len(todo), CHUNK_ITEMS):
                chunk = generate_reports(
                    todo[start : start + CHUNK_ITEMS],
                    gen,
                    strategy,
                    max_tokens=max_tokens,
                    temperature=temperature,
                    on_progress=bar.update,
                )
                for row in chunk:
                    writer.write(row)
                rows.extend(chunk)
    every = [*done.values(), *rows]
    failed = sum(_failed(r) for r in every)
    if failed:
        log.warning(
            f"{failed} of {len(every)} items got no response (see generation.error in {output_path}; "
            "--resume asks them again)"
        )
    described = every[0]["generation"]["generator"] if every else gen.describe()
    return {
        "items": len(every),
        "failed": failed,
        "resumed": len(done),
        "generator": described,
        "generator_stats": gen.stats(),
    }


def _failed(row: Mapping[str, Any]) -> bool:
    """Whether a written row got no response (``generation.error``): a resume asks it again."""
    generation = row.get("generation")
    return isinstance(generation, dict) and "error" in generation
