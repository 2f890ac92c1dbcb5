"""Packed checkpoints: int8 word-embedding rows that hold exactly the values a judge was trained with."""

from __future__ import annotations

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
    assert scale.tolist() == [2.0 ** -7, 1.0, 2.0 ** -6]
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
