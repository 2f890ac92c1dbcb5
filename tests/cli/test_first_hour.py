"""The words a newcomer needs on the usual first mistakes: JSONL, items without documents, a missing extra,
--limit on score, and a decomposer that fell back on too many sentences."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import pytest

from conflictscore_local import Claim, Item, Judgment, Pair
from conflictscore_local.cli import main
from conflictscore_local.decompose._base import DecomposerBase
from conflictscore_local.jobs import failure
from conflictscore_local.jobs.failures import missing_extra
from conflictscore_local.judge._base import JudgeBase

LABELLED = {
    "id": "a",
    "response": "x",
    "documents": [{"id": "d1", "text": "t"}],
    "claims": ["c"],
    "labels": [["SUPPORT"]],
}


def write(path: Path, rows: list[dict] | str) -> Path:
    path.write_text(rows if isinstance(rows, str) else "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_pretty_printed_file_is_told_about_jsonl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write(tmp_path / "items.json", json.dumps(LABELLED, indent=2))
    assert main(["score", str(src), "-o", str(tmp_path / "out.jsonl"), "-q"]) == 2
    err = capsys.readouterr().err
    assert f"{src}:1: invalid JSON: Expecting property name enclosed in double quotes (column 1)" in err
    assert (
        "the file must be JSON Lines (one whole JSON object per line) or one JSON array of objects (what "
        "json.dump writes), not pretty-printed objects"
    ) in err


def test_items_without_documents_are_warned_about_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write(
        tmp_path / "in.jsonl",
        [LABELLED, {"id": "b", "response": "y", "documents": [], "claims": ["c"], "labels": [[]]}],
    )
    summary = tmp_path / "s.json"
    assert main(["score", str(src), "-o", str(tmp_path / "out.jsonl"), "--summary", str(summary), "-q"]) == 0
    err = capsys.readouterr().err
    assert "warning: 1 item(s) have no documents, so none of their claims can be supported or contradicted" in err
    assert err.rstrip().endswith(": 'b'")
    data = json.loads(summary.read_text())
    assert data["stages"]["input"]["no_documents"] == 1
    assert any("no documents" in w for w in data["warnings"])


def test_score_limit_scores_the_first_items(tmp_path: Path) -> None:
    rows = [dict(LABELLED, id=f"i{n}") for n in range(4)]
    out = tmp_path / "out.jsonl"
    assert main(["score", str(write(tmp_path / "in.jsonl", rows)), "-o", str(out), "--limit", "2", "-q"]) == 0
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["i0", "i1"]
    with pytest.raises(SystemExit) as refused:  # argparse: out of range, before anything runs
        main(["score", str(tmp_path / "in.jsonl"), "-o", str(out), "--limit", "0", "-q"])
    assert refused.value.code == 2


@pytest.mark.parametrize(
    ("module", "extra"),
    [("accelerate", "train"), ("transformers.trainer", "nli"), ("onnxruntime", "onnx"), ("jinja2", "report")],
)
def test_a_missing_extra_names_the_extra(module: str, extra: str) -> None:
    e = ModuleNotFoundError(f"No module named '{module}'", name=module)
    top = module.split(".")[0]
    line = f"this needs the Python package {top!r}, which is not installed: pip install 'conflictscore-local[{extra}]'"
    assert missing_extra(e) == line
    assert failure(e) == (2, line)


def test_other_missing_modules_stay_bugs() -> None:
    assert (
        failure(ModuleNotFoundError("No module named 'conflictscore_local.nope'", name="conflictscore_local.nope"))
        is None
    )
    assert missing_extra(ImportError("cannot import name 'x'")) is None


class _Irrelevant(JudgeBase):
    """Every pair IRRELEVANT: the judge of a test about the decomposer."""

    name, role = "irrelevant", "judge"

    def judge(self, pairs: Sequence[Pair], on_progress: Any = None) -> list[Judgment]:
        return [Judgment(p, "IRRELEVANT", None) for p in pairs]

    def spec(self) -> dict:
        return {"name": self.name}

    def passage_budget(self) -> None:
        return None


class _FallsBack(DecomposerBase):
    """A generating decomposer whose model fails on every sentence holding 'lost': it falls back, as llm does."""

    name, role = "falls-back", "decomposer"

    def decompose(self, items: Sequence[Item]) -> list[list[Claim]]:
        out = []
        for it in items:
            parts = [s.strip() for s in it.response.split(".") if s.strip()]
            for p in parts:
                self.count("sentences_generated")
                if "lost" in p:
                    self.count("llm_fallback")
            out.append([Claim(it.id, i, p + ".") for i, p in enumerate(parts)])
        return out


@pytest.mark.parametrize(("response", "status"), [("A is b. C is lost.", 3), ("A is b. C is d. E is f. G is h.", 0)])
def test_decomposer_fallbacks_above_the_share_warn_and_exit_3(
    response: str, status: int, tmp_path: Path, register_backend: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    register_backend("judge", "irrelevant", _Irrelevant)
    register_backend("decomposer", "falls-back", _FallsBack)
    src = write(tmp_path / "in.jsonl", [{"id": "x", "response": response, "documents": [{"id": "d", "text": "t"}]}])
    summary = tmp_path / "s.json"
    argv = [
        "score",
        str(src),
        "-o",
        str(tmp_path / "o.jsonl"),
        "--summary",
        str(summary),
        "--decomposer",
        "falls-back",
        "--judge",
        "irrelevant",
        "--pruner",
        "none",
        "--no-cache",
        "-q",
    ]
    assert main(argv) == status
    err = capsys.readouterr().err
    loud = (
        "the decomposer fell back to spaCy's claims for 1 of 2 sentences (50.0%), above engine.max_fallback_share=0.1"
    )
    assert (loud in err) == (status == 3)
    assert any("fell back" in w for w in json.loads(summary.read_text())["warnings"]) == (status == 3)
    assert main([*argv, "--set", "engine.max_fallback_share=0.5"]) == 0  # the share is a setting


def test_backends_lists_the_generators(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["backends", "--role", "generator", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert sorted(listing["generator"]) == ["openai", "transformers", "vllm"]
    assert main(["backends", "--json"]) == 0
    assert "generator" in json.loads(capsys.readouterr().out)


def test_python_warnings_show_in_the_one_warning_format(capsys: pytest.CaptureFixture[str]) -> None:
    import warnings

    from conflictscore_local.cli import command_logging

    with command_logging(quiet=True), warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("a library complains", UserWarning)
    err = capsys.readouterr().err
    assert err == "warning: UserWarning: a library complains\n"
