"""The parts of ``benchmarks/gpu_check.py`` that need no GPU: the model shapes, the locally
built tokenizers, the FLOP counts, the peak table, the report, and a clear exit without CUDA."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def gc(benchmark_script: Any) -> Any:
    return benchmark_script("gpu_check")


def n_params(model_cls: Any, cfg: Any) -> int:
    import torch

    with torch.device("meta"):
        model = model_cls(cfg)
    return sum(p.numel() for p in model.parameters())


def test_configs_have_the_real_models_sizes(gc: Any) -> None:
    from transformers import DebertaV2ForSequenceClassification, Qwen3ForCausalLM

    deberta = gc.deberta_v3_large_config(128100)  # deberta-v3-large's own vocabulary
    assert 434e6 < n_params(DebertaV2ForSequenceClassification, deberta) < 437e6
    qwen = gc.qwen3_32b_config(8000, 2)
    assert qwen.vocab_size == 151936 and (qwen.num_attention_heads, qwen.num_key_value_heads) == (64, 8)
    assert 32.6e9 < n_params(Qwen3ForCausalLM, qwen) < 32.9e9  # Qwen3-32B: 32.8B


def test_flops_hand_computed(gc: Any) -> None:
    from transformers import BertConfig, Qwen3Config

    bert = BertConfig(hidden_size=4, intermediate_size=8, num_hidden_layers=1, num_attention_heads=1, num_labels=3)
    # layer: 2·2·(4·16 + 2·4·8) + 2·2·2²·4 = 512 + 64; head: 2·16 + 2·4·3 = 56
    assert gc.encoder_flops(bert, 2) == 632.0
    qwen = Qwen3Config(hidden_size=4, intermediate_size=8, num_hidden_layers=1, num_attention_heads=2,
                       num_key_value_heads=1, head_dim=2, vocab_size=10)
    # 2 new tokens: proj 2·(4·(4+4) + 4·4) + 2·3·4·8 = 288 each; attention pairs 2 + 3 = 5 → 2·2·4·5 = 80;
    # LM head 2·4·10 = 80
    assert gc.decoder_prefill_flops(qwen, 3, cached=1) == 2 * 288 + 80 + 80
    big = gc.qwen3_32b_config(8000, 2)
    per_token = gc.decoder_prefill_flops(big, 400) / 400
    assert 2 * 31e9 < per_token < 2 * 33.5e9  # ≈ 2 × the non-embedding parameters per token


def test_peak_table(gc: Any) -> None:
    assert gc.gpu_peak("NVIDIA H200").tflops == 989.0
    assert gc.gpu_peak("NVIDIA H100 PCIe").tflops == 756.0  # the longest matching name wins
    assert gc.gpu_peak("NVIDIA A100-SXM4-80GB").tflops == 312.0
    assert gc.gpu_peak("Some Future GPU").tflops is None
    assert gc.gpu_peak("Some Future GPU", 500.0).tflops == 500.0


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


def test_report_lists_results_and_failures(gc: Any, tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    rows = [
        {"case": "nli-deberta", "gpu": "NVIDIA H200", "peak_bf16_tflops": 989.0, "pairs": 2048,
         "mean_input_tokens": 301.5, "seconds": 2.0, "pairs_per_s": 1024.0, "gflops_per_pair": 250.0,
         "share_of_peak": 0.2589, "stats": {}},
        {"case": "classify-deberta", "error": "ValueError: DebertaV2ForSequenceClassification is not supported"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    table = gc.report(path).splitlines()
    assert table[2] == "| nli-deberta | 1024.0 | 301.5 | 250.0 | 25.9% | 2048 pairs, 2.0 s |"
    assert table[3].startswith("| classify-deberta | – | – | – | – | failed: ValueError: DebertaV2")
    assert "GPU: NVIDIA H200" in table and table[-1].startswith("FLOPs per pair count the whole input")


def test_without_cuda_it_stops_clearly(gc: Any, capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(SystemExit) as e:
        gc.main(["case", "nli-deberta", "--workdir", "/nonexistent"])
    assert e.value.code == 2
    assert "no CUDA GPU visible" in capsys.readouterr().err
