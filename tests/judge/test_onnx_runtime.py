"""``runtime=onnx``: the committed default judge exported to ONNX and run by ONNX Runtime gives
the PyTorch judge's labels and probabilities on real pairs; exports are cached by weights;
int8 is explicit and keyed apart."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local import Engine
from conflictscore_local.backends import registry
from conflictscore_local.core.errors import BackendUnavailable, ConfigError
from conflictscore_local.core.types import Document, Item
from conflictscore_local.judge.nli.runtimes import onnx as onnx_runtime
from conflictscore_local.judge.nli.runtimes import resolve_runtime
from conflictscore_local.judge.nli.runtimes.base import RUNTIME_ENV

for module in ("onnxruntime", "onnx", "onnxscript"):
    pytest.importorskip(module)

REPO = Path(__file__).resolve().parents[2]
DEFAULT_JUDGE = REPO / "models" / "default-judge"
TOLERANCE = 1e-4
"""The most any class probability may differ between ONNX Runtime fp32 and PyTorch (6-digit
rounding included): the export check's own tolerance."""

pytestmark = [
    pytest.mark.skipif(
        not any((DEFAULT_JUDGE / f).is_file() for f in ("model.packed.safetensors", "model.safetensors")),
        reason="models/default-judge is not built",
    ),
    pytest.mark.slow,
]  # the default judge exported to ONNX and checked against torch


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx-exports")


def build(export_dir: Path, **args: Any) -> Any:
    return registry.build("judge", "nli", {"model": str(DEFAULT_JUDGE), "export_dir": str(export_dir), **args})


@pytest.fixture(scope="module")
def torch_and_onnx(export_dir: Path, bench_pairs: list) -> tuple[list, list, Any]:
    torch_judge, onnx_judge = build(export_dir, runtime="torch"), build(export_dir, runtime="onnx")
    return torch_judge.judge(bench_pairs), onnx_judge.judge(bench_pairs), onnx_judge


def test_onnx_gives_the_torch_labels_and_probabilities_on_real_pairs(torch_and_onnx: tuple, bench_pairs: list) -> None:
    by_torch, by_onnx, judge = torch_and_onnx
    assert len(by_onnx) == len(bench_pairs) == 96
    assert {j.label for j in by_torch} >= {"SUPPORT", "IRRELEVANT"}  # real pairs, not one class
    assert [j.label for j in by_onnx] == [j.label for j in by_torch]
    worst = max(abs(a.probs[k] - b.probs[k]) for a, b in zip(by_torch, by_onnx) for k in a.probs)
    assert worst <= TOLERANCE
    assert [j.note for j in by_onnx] == [j.note for j in by_torch]  # same truncation notes: same inputs
    stats = judge.stats()
    assert stats["onnx_exported"] == 1 and stats["pairs"] == 96 and stats["batches"] >= 1
    resolved = judge.describe()["resolved"]
    assert resolved["runtime"] == "onnx" and resolved["quantization"] is None
    assert resolved["onnx_model"].endswith("model.onnx")


def test_spec_names_the_runtime_and_quantization(export_dir: Path) -> None:
    torch_spec = build(export_dir, runtime="torch").spec()
    fp32, int8 = build(export_dir, runtime="onnx").spec(), build(export_dir, runtime="onnx", int8=True).spec()
    assert (torch_spec["runtime"], torch_spec["dtype"]) == ("torch", "float32")
    assert (fp32["runtime"], fp32["quantization"]) == ("onnx", None)
    assert int8["quantization"] == "dynamic-int8"
    assert len({repr(sorted(s.items())) for s in (torch_spec, fp32, int8)}) == 3
    same = {k: v for k, v in fp32.items() if k not in ("runtime", "quantization")}
    assert same == {k: v for k, v in torch_spec.items() if k != "runtime"}


def test_export_is_reused_and_keyed_by_the_weights(
    torch_and_onnx: tuple, export_dir: Path, bench_pairs: list, tiny_nli_factory: Any, tmp_path: Path
) -> None:
    again = build(export_dir, runtime="onnx")
    again.judge(bench_pairs[:4])
    assert "onnx_exported" not in again.stats()
    folders = [p for p in export_dir.iterdir() if not p.name.startswith(".")]
    assert [p.name for p in folders] == [f"default-judge-{onnx_runtime.export_key(DEFAULT_JUDGE.resolve(), None)}"]
    assert {"model.onnx", "model.onnx.data", onnx_runtime.EXPORT_INFO} <= {p.name for p in folders[0].iterdir()}
    copy = tmp_path / "default-judge"
    shutil.copytree(DEFAULT_JUDGE, copy)
    assert onnx_runtime.export_key(copy, None) == onnx_runtime.export_key(DEFAULT_JUDGE, None)
    a, b = tiny_nli_factory(seed=0), tiny_nli_factory(seed=1)
    assert onnx_runtime.export_key(a, None) != onnx_runtime.export_key(b, None)


def test_int8_is_quantized_from_the_export_and_warns(
    torch_and_onnx: tuple, export_dir: Path, bench_pairs: list, logged: Any
) -> None:
    judge = build(export_dir, runtime="onnx", int8=True)
    with logged.expect("int8=true: dynamic int8 quantization changes some labels"):
        out = judge.judge(bench_pairs)
    assert all(j.label in ("SUPPORT", "CONTRADICT", "IRRELEVANT") for j in out)
    folder = Path(judge.describe()["resolved"]["onnx_model"]).parent
    assert judge.describe()["resolved"]["onnx_model"].endswith(onnx_runtime.INT8_FILE)
    assert (folder / onnx_runtime.INT8_FILE).stat().st_size < 0.4 * (folder / "model.onnx.data").stat().st_size
    assert "onnx_exported" not in judge.stats()  # quantized from the cached fp32 export


def test_bad_runtime_combinations_are_refused(export_dir: Path) -> None:
    with pytest.raises(ConfigError, match="int8=true needs runtime=onnx"):
        build(export_dir, runtime="torch", int8=True)
    with pytest.raises(ConfigError, match="runtime=onnx runs on the CPU; device=cuda needs runtime=torch"):
        build(export_dir, runtime="onnx", device="cuda").spec()
    with pytest.raises(ConfigError, match="dtype=bfloat16 needs runtime=torch"):
        build(export_dir, runtime="onnx", dtype="bfloat16").spec()
    with pytest.raises(ConfigError, match="runtime.*not allowed; allowed: auto, torch, compile, onnx"):
        build(export_dir, runtime="tensorrt")


def test_auto_runs_torch_unless_the_environment_names_a_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(RUNTIME_ENV, raising=False)
    # ONNX Runtime measured slower than PyTorch on an idle CPU: it is opt-in, never auto
    for device, dtype in (
        ("cpu", "auto"),
        ("cpu", "float32"),
        ("auto", "auto"),
        ("cuda:1", "auto"),
        ("cpu", "bfloat16"),
        ("auto", "float16"),
    ):
        assert resolve_runtime("auto", device, dtype) == "torch"
    assert resolve_runtime("onnx", "cpu") == "onnx" and resolve_runtime("torch", "cpu") == "torch"
    monkeypatch.setenv(RUNTIME_ENV, "onnx")
    assert resolve_runtime("auto", "cpu") == "onnx"
    assert resolve_runtime("torch", "cpu") == "torch"  # a runtime named in the run beats the environment
    monkeypatch.setenv(RUNTIME_ENV, "jax")
    with pytest.raises(
        ConfigError, match=r"\$CONFLICTSCORE_NLI_RUNTIME='jax' is not allowed; allowed: torch, compile, onnx"
    ):
        resolve_runtime("auto", "cpu")


def test_auto_with_a_half_precision_dtype_never_takes_onnx_on_a_cpu(
    export_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(RUNTIME_ENV, raising=False)
    judge = build(export_dir, device="cpu", dtype="bfloat16")  # a BERT checkpoint: native runs it
    assert (judge.spec()["runtime"], judge.spec()["dtype"]) == ("native", "bfloat16")
    judge = build(export_dir, device="cpu", dtype="float16")
    assert (judge.spec()["runtime"], judge.spec()["dtype"]) == ("torch", "float16")


def test_an_export_that_disagrees_with_torch_is_refused(
    tiny_nli_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(onnx_runtime, "EXPORT_TOLERANCE", -1.0)
    judge = registry.build("judge", "nli", {"model": str(tiny_nli_dir), "runtime": "onnx", "export_dir": str(tmp_path)})
    with pytest.raises(BackendUnavailable, match="disagrees with PyTorch .* on sample pairs\\); use runtime=torch"):
        judge.judge(pairs_for(judge))
    assert list(tmp_path.iterdir()) == []  # nothing half-exported left behind


def test_an_export_dir_that_cannot_be_made_is_a_config_error(tiny_nli_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x")
    where = tmp_path / "a-file" / "onnx"
    judge = registry.build("judge", "nli", {"model": str(tiny_nli_dir), "runtime": "onnx", "export_dir": str(where)})
    with pytest.raises(
        ConfigError,
        match=rf"judge nli: cannot write the ONNX export into {where}: .*; set "
        r"export_dir=DIR to a writable folder, or use runtime=torch",
    ):
        judge.judge(pairs_for(judge))


def pairs_for(judge: Any) -> list:
    from conflictscore_local.core.types import Claim, Pair, Passage

    return [Pair(Claim("i", 0, "The bridge opened in 1932."), Passage("i", "d", 0, "It opened in 1934."))]


def test_the_summary_shows_the_runtime(torch_and_onnx: tuple, export_dir: Path) -> None:
    item = Item(
        "curie",
        "Curie was born in Warsaw.",
        (Document("wiki", "Marie Curie was born in Warsaw in 1867."),),
        claims=("Curie was born in Warsaw.",),
    )
    args = {"model": str(DEFAULT_JUDGE), "runtime": "onnx", "export_dir": str(export_dir)}
    engine = Engine(judge={"name": "nli", **args}, pruner="none")
    results, report = engine.score_all([item])
    assert results[0].verdicts[0].support == ("wiki",)
    judge = report.config["backends"]["judge"]
    assert judge["args"]["runtime"] == "onnx" and judge["resolved"]["runtime"] == "onnx"


def test_exports_go_beside_the_judgment_cache_the_run_names(tmp_path: Path) -> None:
    from conflictscore_local import Engine, RunConfig

    cfg = RunConfig().updated(
        {
            "judge": {"name": "nli", "model": str(DEFAULT_JUDGE), "runtime": "onnx"},
            "cache": {"path": str(tmp_path / "caches" / "j.sqlite")},
        }
    )
    runtime = Engine(cfg).backend("judge").runtime()
    assert runtime.export_dir().parent == tmp_path / "caches" / "onnx"  # loads nothing, exports nothing
    pinned = cfg.updated({"judge": {"export_dir": str(tmp_path / "mine")}})
    assert Engine(pinned).backend("judge").runtime().export_dir().parent == tmp_path / "mine"
