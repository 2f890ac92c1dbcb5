"""Packed checkpoints: int8 word-embedding rows that hold exactly the values a judge was trained with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from conflictscore_local.backends import packed  # noqa: E402
from conflictscore_local.core.errors import ConfigError  # noqa: E402


def test_scales_are_powers_of_two_and_rows_hit_the_int8_range() -> None:
    w = torch.tensor([[0.5, -0.25, 0.0], [0.0, 0.0, 0.0], [1.0, 0.003, -0.998]])
    q, scale = packed.quantize_rows(w)
    # row 0: max 0.5 -> 0.5/127 = 0.003937 = 2^-7.99 -> scale 2^-7, q = 0.5 * 2^7 = 64, -0.25 * 2^7 = -32
    # row 2: max 1.0 -> 1/127 = 2^-6.99 -> scale 2^-6; 0.003 * 64 = 0.19 -> 0; -0.998 * 64 = -63.9 -> -64
    assert scale.tolist() == [2.0**-7, 1.0, 2.0**-6]
    assert q.dtype == torch.int8
    assert q.tolist() == [[64, -32, 0], [0, 0, 0], [64, 0, -64]]


def test_the_round_trip_is_idempotent_and_exact_in_float16() -> None:
    torch.manual_seed(0)
    w = torch.randn(500, 64) * 0.07
    r = packed.round_trip(w)
    assert (r - w).abs().max().item() <= (w.abs().amax(dim=1) / 127).max().item()
    assert torch.equal(packed.round_trip(r), r)
    assert torch.equal(r.half().float(), r)


def test_pack_and_load_give_the_trained_values_back_and_refuse_an_unpacked_matrix(tmp_path: Path) -> None:
    torch.manual_seed(1)
    emb = packed.round_trip(torch.randn(40, 16) * 0.05)
    state = {"emb.weight": emb, "dense.weight": torch.randn(4, 16), "pos": torch.arange(4)}
    path = packed.pack(state, ("emb.weight",), tmp_path, dtype="float16")
    assert path.name == packed.PACKED_WEIGHTS and packed.is_packed(tmp_path)
    back = packed.load_state_dict(tmp_path)
    assert torch.equal(back["emb.weight"], emb)
    assert torch.equal(back["dense.weight"], state["dense.weight"].half())
    assert torch.equal(back["pos"], state["pos"])
    with pytest.raises(ConfigError, match="not its own int8 round trip"):
        packed.pack({"emb.weight": torch.randn(4, 4)}, ("emb.weight",), tmp_path / "x")


def test_unpack_writes_a_plain_folder_with_the_small_files(tmp_path: Path) -> None:
    from safetensors.torch import load_file

    src = tmp_path / "src"
    src.mkdir()
    (src / "config.json").write_text("{}", encoding="utf-8")
    emb = packed.round_trip(torch.randn(8, 4))
    packed.pack({"emb.weight": emb, "b": torch.ones(2)}, ("emb.weight",), src)
    out = packed.unpack(src, tmp_path / "plain")
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "model.safetensors"]
    plain = load_file(str(out / "model.safetensors"))
    assert torch.equal(plain["emb.weight"], emb) and plain["b"].dtype == torch.float32
    with pytest.raises(ConfigError, match="not a packed checkpoint"):
        packed.unpack(tmp_path / "plain", tmp_path / "again")


@pytest.fixture(scope="module")
def tiny_pair(tokenizer_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(plain, packed): a tiny BERT 3-way classifier with round-tripped embeddings, and its packed folder."""
    transformers = pytest.importorskip("transformers")
    tok = transformers.AutoTokenizer.from_pretrained(str(tokenizer_dir))
    cfg = transformers.BertConfig(
        vocab_size=tok.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=3,
        id2label={0: "SUPPORT", 1: "CONTRADICT", 2: "IRRELEVANT"},
        label2id={"SUPPORT": 0, "CONTRADICT": 1, "IRRELEVANT": 2},
    )
    torch.manual_seed(0)
    model = transformers.BertForSequenceClassification(cfg)
    with torch.no_grad():
        emb = model.get_input_embeddings().weight
        emb.copy_(packed.round_trip(emb))
    root = tmp_path_factory.mktemp("tiny-packed")
    model.save_pretrained(root / "plain")
    tok.save_pretrained(root / "plain")
    packed.pack_folder(root / "plain", root / "packed", dtype="float32")
    return root / "plain", root / "packed"


def test_a_packed_folder_loads_as_the_same_classifier_through_the_judges_runtimes(tiny_pair: tuple[Path, Path]) -> None:
    from tokenizers import Tokenizer
    from transformers import AutoModelForSequenceClassification

    from conflictscore_local.backends import registry
    from conflictscore_local.core.types import Claim, Pair, Passage

    plain, pk = tiny_pair
    # the tokenizer travels as the same JSON without indentation, and tokenizes alike
    assert json.loads((pk / "tokenizer.json").read_text()) == json.loads((plain / "tokenizer.json").read_text())
    assert (pk / "tokenizer.json").stat().st_size < (plain / "tokenizer.json").stat().st_size
    text = "The river's 2,500 km basin, un-dammed."
    assert (
        Tokenizer.from_file(str(pk / "tokenizer.json")).encode(text).ids
        == Tokenizer.from_file(str(plain / "tokenizer.json")).encode(text).ids
    )
    a = AutoModelForSequenceClassification.from_pretrained(str(plain)).eval()
    b = packed.from_pretrained(AutoModelForSequenceClassification, pk, dtype=torch.float32)
    assert a.state_dict().keys() == b.state_dict().keys()
    assert all(torch.equal(a.state_dict()[k], b.state_dict()[k]) for k in a.state_dict())
    pairs = [Pair(Claim("q", 0, "The river is wide."), Passage("q", "d", 0, "The river is narrow here."))]
    for runtime in ("torch", "native"):
        got = [
            registry.build("judge", "nli", {"model": str(m), "runtime": runtime}).judge(pairs)[0].probs
            for m in (plain, pk)
        ]
        assert got[0] == got[1], runtime


def test_plain_folder_unpacks_once_into_the_cache_home(
    tiny_pair: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain, pk = tiny_pair
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert packed.plain_folder(plain) == plain
    out = packed.plain_folder(pk)
    assert out.parent == tmp_path / "conflictscore" / "unpacked" and (out / "model.safetensors").is_file()
    mtime = (out / "model.safetensors").stat().st_mtime_ns
    assert packed.plain_folder(pk) == out and (out / "model.safetensors").stat().st_mtime_ns == mtime
