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
from ..generate import Generator
from ..formats.inputs import item_to_json, parse_item
from ..util.jsonl import iter_jsonl
from ..util.progress import bar as progress_bar
from ..core.types import Item
from ..jobs import Input, Job, Output, write_jsonl_atomic
from .prompts import PROMPT_VERSION, STRATEGIES, report_prompt

log = logging.getLogger(__name__)


def check_report_items(items: Sequence[Item], path: str | None = None, lines: Sequence[int] | None = None) -> None:
    """``InputError`` (file, line, field) for an item a report cannot be written for."""
    for k, it in enumerate(items):
        line = lines[k] if lines is not None else None
        if not (it.question or "").strip():
            raise InputError("missing (a report answers a question)", path=path, line=line, field="question")
        if not any(d.text.strip() for d in it.documents):
            raise InputError("no document with text (a report is written from documents)", path=path, line=line,
                             field="documents")


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
        gen: dict[str, Any] = {"strategy": strategy, "prompts_version": PROMPT_VERSION,
                               "instruction": STRATEGIES[strategy], "finish_reason": g.finish_reason,
                               "max_tokens": max_tokens, "temperature": temperature, "generator": described}
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
) -> dict[str, Any]:
    """The ``conflictscore generate`` job: check OUTPUT (not the input, writable), read and check
    every item before any model loads, generate, write OUTPUT atomically. Returns counts
    (``items``, ``failed``) and the generator."""
    if strategy not in STRATEGIES:
        raise ConfigError(f"unknown strategy {strategy!r}; allowed: {', '.join(STRATEGIES)}")
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be at least 1, got {limit}")
    with Job([Input(input_path, "the input file")], [Output(output_path, "-o")]):
        return _generate_file(input_path, output_path, strategy=strategy, generator=generator,
                              generator_args=generator_args, max_tokens=max_tokens, temperature=temperature,
                              limit=limit, progress=progress)


def _generate_file(input_path: str | os.PathLike[str], output_path: str | os.PathLike[str], *, strategy: str,
                   generator: str | Generator, generator_args: Mapping[str, Any] | None, max_tokens: int,
                   temperature: float, limit: int | None, progress: bool) -> dict[str, Any]:
    p = str(input_path)
    items, lines, seen = [], [], {}
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
    with progress_bar(len(items), "item", enabled=progress, desc=f"generate ({strategy})") as bar:
        rows = generate_reports(items, gen, strategy, max_tokens=max_tokens, temperature=temperature,
                                on_progress=bar.update)
    write_jsonl_atomic(output_path, rows, what="-o")
    failed = sum("error" in r["generation"] for r in rows)
    if failed:
        log.warning(f"{failed} of {len(rows)} items got no response (see generation.error in {output_path})")
    return {"items": len(rows), "failed": failed, "generator": rows[0]["generation"]["generator"],
            "generator_stats": gen.stats()}
