"""``benchmarks/gpu/gpu_check.sh`` and its Python part without a GPU: the model shapes, the locally built
tokenizers, the FLOP counts, the report, the clear exits, ``benchmarks/tools/tree_size.py``, and the whole
script's dry run on the CPU (the same entry points at tiny sizes), so that the check cannot rot."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers")

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gc() -> Any:
    from benchmarks.gpu import gpu_check

    return gpu_check


def n_params(model_cls: Any, cfg: Any) -> int:
    import torch

    with torch.device("meta"):
        model = model_cls(cfg)
    return sum(p.numel() for p in model.parameters())


def test_configs_have_the_real_models_sizes(gc: Any) -> None:
    from transformers import DebertaV2ForSequenceClassification, Qwen3ForCausalLM

    deberta = gc.deberta_v3_large_config(128100)  # deberta-v3-large's own vocabulary
    assert 434e6 < n_params(DebertaV2ForSequenceClassification, deberta) < 437e6
    tiny = gc.deberta_v3_large_config(8000, tiny=True)  # the dry run's: the same architecture, small
    assert (tiny.num_hidden_layers, tiny.hidden_size, tiny.relative_attention) == (2, 64, True)
    qwen = gc.qwen3_32b_config(8000, 2)
    assert qwen.vocab_size == 151936 and (qwen.num_attention_heads, qwen.num_key_value_heads) == (64, 8)
    assert 32.6e9 < n_params(Qwen3ForCausalLM, qwen) < 32.9e9  # Qwen3-32B: 32.8B


def test_flops_hand_computed(gc: Any) -> None:
    from transformers import BertConfig, Qwen3Config

    bert = BertConfig(hidden_size=4, intermediate_size=8, num_hidden_layers=1, num_attention_heads=1, num_labels=3)
    # layer: 2·2·(4·16 + 2·4·8) + 2·2·2²·4 = 512 + 64; head: 2·16 + 2·4·3 = 56
    assert gc.encoder_flops(bert, 2) == 632.0
    qwen = Qwen3Config(
        hidden_size=4,
        intermediate_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=2,
        vocab_size=10,
    )
    # 2 new tokens: proj 2·(4·(4+4) + 4·4) + 2·3·4·8 = 288 each; attention pairs 2 + 3 = 5 → 2·2·4·5 = 80;
    # LM head 2·4·10 = 80
    assert gc.decoder_prefill_flops(qwen, 3, cached=1) == 2 * 288 + 80 + 80
    big = gc.qwen3_32b_config(8000, 2)
    per_token = gc.decoder_prefill_flops(big, 400) / 400
    assert 2 * 31e9 < per_token < 2 * 33.5e9  # ≈ 2 × the non-embedding parameters per token


def test_datasheet_peaks(gc: Any) -> None:
    assert gc.datasheet_peak("NVIDIA H200") == 989.0
    assert gc.datasheet_peak("NVIDIA H100 PCIe") == 756.0  # the longest matching name wins
    assert gc.datasheet_peak("NVIDIA A100-SXM4-80GB") == 312.0
    assert gc.datasheet_peak("Some Future GPU") is None


def test_matmul_peak_runs_on_the_cpu(gc: Any) -> None:
    tflops, products = gc.matmul_tflops(32, "float32", "cpu", 0.0)
    assert products == 1 and tflops > 0  # at least one timed product, however short the time asked


def test_local_tokenizers_work_with_the_judges(gc: Any, tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    from conflictscore_local.generate.text import render_prompt
    from conflictscore_local.judge.labels import token_label
    from conflictscore_local.judge.prompts import judge_messages

    gc.build_tokenizer(tmp_path / "bert", "bert")
    bert = AutoTokenizer.from_pretrained(str(tmp_path / "bert"))
    enc = bert("the bridge opened in 1932", "the bridge closed")
    assert bert.convert_ids_to_tokens(enc["input_ids"])[0] == "[CLS]" and enc["input_ids"].count(bert.sep_token_id) == 2
    assert enc["token_type_ids"][-1] == 1 and enc["token_type_ids"][0] == 0
    gc.build_tokenizer(tmp_path / "qwen", "qwen")
    qwen = AutoTokenizer.from_pretrained(str(tmp_path / "qwen"))
    for word in gc.LABEL_WORDS:
        first = qwen.decode(qwen(word, add_special_tokens=False)["input_ids"][:1])
        assert token_label(first) == word
    text, chat = render_prompt(qwen, judge_messages("a claim", "a passage"), {"enable_thinking": False})
    assert chat and text.startswith("<|im_start|>user\n") and text.endswith("<think>\n\n</think>\n\n")
    with pytest.raises(ValueError, match="unknown tokenizer kind 'spm'"):
        gc.build_tokenizer(tmp_path / "x", "spm")


def test_synthetic_pairs_group_claims_by_passage(gc: Any) -> None:
    pairs = gc.synthetic_pairs(3, 4)
    assert len(pairs) == 12 and len({p.passage.text for p in pairs}) == 3
    assert [p.passage.item_id for p in pairs[:5]] == ["item0"] * 4 + ["item1"]
    assert 200 <= len(pairs[0].passage.text.split()) <= 240


def test_report_shares_of_the_measured_peak_agreement_skips_and_failures(gc: Any) -> None:
    rows = [
        {
            "case": "machine",
            "gpu": "NVIDIA H200",
            "date": "2026-12-04",
            "commit": "abc",
            "cpus": 16,
            "python": "3.12.3",
            "cuda": "13.0",
            "driver": "580",
            "platform": "Linux",
            "datasheet_bf16_tflops": 989.0,
            "versions": {"torch": "2.11.0", "transformers": "5.17.0", "sentence_transformers": "6.0.1"},
            "optional_missing": {"vllm": "the vLLM cases are skipped"},
            "carried": ["tqdm-4.70.1"],
        },
        {"case": "peak", "variant": "matmul 8192^3", "dtype": "bfloat16", "tflops": 791.2, "products": 40},
        {"case": "peak", "variant": "matmul 8192^3", "dtype": "float32", "tflops": 50.0, "products": 3},
        {
            "case": "nli-deberta",
            "variant": "nli bfloat16",
            "dtype": "bfloat16",
            "pairs": 4096,
            "seconds": 1.0,
            "pairs_per_s": 4000.0,
            "mean_input_tokens": 301.5,
            "gflops_per_pair": 197.8,
            "peak_mem_gib": 3.25,
            "note": "batch_size 64",
        },
        {
            "case": "default-judge",
            "variant": "nli float32",
            "dtype": "float32",
            "pairs": 100,
            "seconds": 0.1,
            "pairs_per_s": 1000.0,
            "mean_input_tokens": 200.0,
            "gflops_per_pair": 10.0,
            "peak_mem_gib": 0.5,
            "note": "RAMDocs",
        },
        {
            "case": "default-judge",
            "variant": "labels fp32 vs bf16",
            "labels_equal": 99,
            "labels": 100,
            "share_equal": 0.99,
        },
        {"case": "classify-deberta", "error": "ValueError: DebertaV2ForSequenceClassification is not supported"},
        {"case": "vllm-prefix-on", "skipped": "vLLM is not installed on this machine"},
    ]
    peers = {
        "command": "python -m benchmarks.speed.throughput_peers --device cuda",
        "dtype_auto": "bfloat16",
        "dtype_reason": "auto: the GPU supports bf16",
        "workloads": {
            "rag": {
                "passage_pairs": 500,
                "variants": {
                    "crossencoder": {
                        "wall_s": 2.0,
                        "speedup_vs_crossencoder": 1.0,
                        "label_agreement_with_crossencoder": 1.0,
                    },
                    "engine_none": {
                        "wall_s": 0.5,
                        "speedup_vs_crossencoder": 4.0,
                        "label_agreement_with_crossencoder": 0.998,
                    },
                },
            }
        },
        "roofline": {"variants": {"rag/engine_none": {"achieved_gflops": 79120.0}}},
    }
    text = gc.report(rows, peers)
    lines = text.splitlines()
    assert lines[0] == "# GPU check: NVIDIA H200"
    assert "Carried wheels installed for this run: tqdm-4.70.1.  " in lines
    assert "Not installed: vllm (the vLLM cases are skipped).  " in lines
    # 791.2 / 989 = 80%
    assert (
        "Measured matmul peak: bf16 791.2 TFLOP/s = 80% of the datasheet's 989.0, fp32 50.0 TFLOP/s "
        "(matmul 8192^3, best product)."
    ) in lines
    # 197.8 GFLOP × 4000 /s = 791.2 TFLOP/s = 100% of the bf16 peak; 10 GFLOP × 1000 /s = 10 TFLOP/s = 20% of fp32's
    assert (
        "| nli-deberta | nli bfloat16 | bfloat16 | 4096 | 4000.0 | 301.5 | 197.8 | 100.0% | 3.25 | batch_size 64 |"
    ) in lines
    assert "| default-judge | nli float32 | float32 | 100 | 1000.0 | 200.0 | 10.0 | 20.0% | 0.5 | RAMDocs |" in lines
    assert (
        "| classify-deberta | – | – | – | – | – | – | – | – | FAILED: ValueError: "
        "DebertaV2ForSequenceClassification is not supported |"
    ) in lines
    assert "Labels equal between float32 and bfloat16 on the default judge: 99 of 100 pairs (99.00%)." in lines
    assert "Skipped vllm-prefix-on: vLLM is not installed on this machine." in lines
    # 500 pairs / 0.5 s; 79,120 GFLOP/s of the 791.2 TFLOP/s bf16 peak = 10%
    assert "| rag | engine_none | 500 | 0.5 | 1000.0 | 4.0 | 0.998 | 10.0% |" in lines
    assert "| rag | crossencoder | 500 | 2.0 | 250.0 | 1.0 | 1.0 | – |" in lines
    assert lines[-1].startswith("1 case(s) FAILED: classify-deberta")


def test_without_cuda_it_stops_clearly(gc: Any, capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    for argv in (["case", "nli-deberta", "--workdir", "/nonexistent"], ["env", "--device", "cuda"]):
        with pytest.raises(SystemExit) as e:
            gc.main(argv)
        assert e.value.code == 2
        assert "no CUDA GPU visible" in capsys.readouterr().err


def test_a_missing_module_is_named_with_how_to_carry_it(
    gc: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(gc, "REQUIRED", ("torch", "no_such_module_here"))
    with pytest.raises(SystemExit) as e:
        gc.main(["env", "--device", "cpu"])
    assert e.value.code == 2
    assert (
        "lacks no_such_module_here, which the GPU cases import: carry them as wheels (benchmarks/gpu/gpu_carry.sh "
        "NAME==VERSION" in capsys.readouterr().err
    )


def test_vllm_cases_are_skipped_saying_why(gc: Any, tmp_path: Path) -> None:
    rows = gc.run_case("vllm-prefix-on", "cpu", gc.SIZES["tiny"], tmp_path)
    if importlib.util.find_spec("vllm") is not None:
        assert rows == [{"case": "vllm-prefix-on", "skipped": "the vLLM cases run only on a CUDA GPU at --size full"}]
    else:
        assert rows == [{"case": "vllm-prefix-on", "skipped": gc.NO_VLLM}]
        assert "vLLM is not installed on this machine" in gc.NO_VLLM and "skipped, not failed" in gc.NO_VLLM


# -- what travels ------------------------------------------------------------------------------


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_tree_size_counts_what_travels(tmp_path: Path) -> None:
    from benchmarks.tools import tree_size as ts

    root = tmp_path / "checkout"
    (root / "benchmarks" / "gpu_carry" / "wheels").mkdir(parents=True)
    (root / "benchmarks" / "gpu_carry" / "data").mkdir()
    (root / "a.py").write_bytes(b"x" * 100)
    (root / ".gitignore").write_bytes(b"big.bin\nbenchmarks/gpu_carry/\n")  # 30 bytes
    (root / "big.bin").write_bytes(b"x" * 5000)  # ignored: does not travel
    (root / "new.txt").write_bytes(b"x" * 7)  # untracked, not ignored: travels
    (root / "benchmarks" / "gpu_carry" / "wheels" / "t.whl").write_bytes(b"x" * 30)
    (root / "benchmarks" / "gpu_carry" / "data" / "d.jsonl").write_bytes(b"x" * 20)
    (root / "benchmarks" / "gpu_carry" / "COMMIT").write_bytes(b"x" * 3)
    git(root, "init", "-q")
    git(root, "add", "a.py", ".gitignore")
    # tracked: a.py 100 + .gitignore 30
    assert ts.sizes(root) == {
        "tracked": 130,
        "untracked_not_ignored": 7,
        "carry_wheels": 30,
        "carry_data": 20,
        "carry_other": 3,
        "total": 190,
    }
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.tools.tree_size", "--root", str(root)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].split() == [
        "tracked",
        "files",
        "130",
        "B",
        "0.00",
        "MiB",
        "target",
        "<",
        "40",
        "MiB:",
        "ok",
    ]
    assert "limit 64 MiB: ok, 64.00 MiB left" in out.stdout.splitlines()[-1]
    over = ts.table({**ts.sizes(root), "total": 65 << 20}).splitlines()[-1]
    assert over.endswith("limit 64 MiB: OVER, -1.00 MiB left")


def probe_wheel(folder: Path) -> Path:
    """A real (tiny) wheel: module gpucarryprobe 0.1, as pip download would bring one."""
    folder.mkdir(parents=True)
    path = folder / "gpucarryprobe-0.1-py3-none-any.whl"
    info = "gpucarryprobe-0.1.dist-info"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("gpucarryprobe/__init__.py", "__version__ = '0.1'\n")
        zf.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: gpucarryprobe\nVersion: 0.1\n")
        zf.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(
            f"{info}/RECORD", f"gpucarryprobe/__init__.py,,\n{info}/METADATA,,\n{info}/WHEEL,,\n{info}/RECORD,,\n"
        )
    return path


@pytest.mark.slow
def test_the_dry_run_runs_every_case_on_the_cpu(shared_data: Path, tmp_path: Path) -> None:
    """`gpu_check.sh --dry-run`: the carried wheels installed beside the checkout, every case at tiny
    sizes, the vLLM cases skipped saying why, every figure in one folder, the table at the end."""
    out, carry = tmp_path / "out", tmp_path / "carry"
    probe_wheel(carry / "wheels")
    env = {
        **os.environ,
        "OUT": str(out),
        "PYTHON": sys.executable,
        "CARRY": str(carry),
        "SITE": str(tmp_path / "site"),
        "CONFLICTSCORE_DATA": str(shared_data),
    }
    run = subprocess.run(
        ["bash", str(REPO / "benchmarks" / "gpu" / "gpu_check.sh"), "--dry-run"],
        env=env,
        capture_output=True,
        text=True,
        timeout=3700,
    )  # the script stops itself at 3600 s
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:] + (out / "gpu_check.log").read_text()[-5000:]
    files = sorted(p.name for p in out.iterdir())
    assert files[:5] == [
        "gpu_check.jsonl",
        "gpu_check.log",
        "gpu_check.md",
        "throughput_peers.json",
        "throughput_peers.md",
    ] and set(files[5:]) <= {"throughput_peers.png"}
    rows = [json.loads(x) for x in (out / "gpu_check.jsonl").read_text().splitlines()]
    machine = rows[0]
    assert machine["case"] == "machine" and machine["device"] == "cpu" and machine["carried"] == ["gpucarryprobe-0.1"]
    by = {(r["case"], r.get("variant")): r for r in rows[1:]}
    assert {r["dtype"] for r in rows if r["case"] == "peak"} == {"bfloat16", "float32"}
    variants = {
        "default-judge": [
            "nli float32",
            "nli bfloat16",
            "labels fp32 vs bf16",
            "CrossEncoder.predict float32",
            "CrossEncoder.predict bfloat16",
        ],
        "nli-deberta": ["nli bfloat16", "nli float32"],
        "engine": ["score cold", "score warm"],
    }
    for case, want in variants.items():
        assert [r["variant"] for r in rows if r["case"] == case] == want
    timed = [r for r in rows if "seconds" in r]
    assert len(timed) == 8 and all(r["pairs"] > 0 and r["seconds"] > 0 and r["pairs_per_s"] > 0 for r in timed)
    agree = by[("default-judge", "labels fp32 vs bf16")]
    assert agree["labels"] == by[("default-judge", "nli float32")]["pairs"]
    assert 0 <= agree["labels_equal"] <= agree["labels"]
    cold, warm = by[("engine", "score cold")], by[("engine", "score warm")]
    assert cold["judged"] == cold["doc_pairs"] > 0 and cold["cached"] == 0  # --pruner none: every pair judged
    assert warm["judged"] == 0 and warm["cached"] == cold["doc_pairs"]
    skipped = [r for r in rows if "skipped" in r]
    assert [r["case"] for r in skipped] == ["vllm-prefix-on", "vllm-prefix-off", "classify-default", "classify-deberta"]
    assert not [r for r in rows if "error" in r]
    peers = json.loads((out / "throughput_peers.json").read_text())
    assert peers["device"] == "cpu" and set(peers["workloads"]) == {"rag", "pooled", "long"}
    table = (out / "gpu_check.md").read_text()
    assert table in run.stdout and "| case | variant | dtype | pairs | pairs/s |" in table
    assert (
        f"Labels equal between float32 and bfloat16 on the default judge: {agree['labels_equal']} of "
        f"{agree['labels']} pairs" in table
    )
    assert "## Peers: `python -m benchmarks.speed.throughput_peers --device cpu" in table
