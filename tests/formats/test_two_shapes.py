"""Issue 47 (review reliability-4: S-both_docs_keys, S-both_keys): a line that gives the documents or the
response under two input shapes' keys is refused, naming both, instead of judging one and dropping the other
into metadata without a word. Met through ``score`` in a subprocess, as a user meets it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import conflictscore_local
from conflictscore_local.core.errors import InputError
from conflictscore_local.formats.inputs import parse_item

PACKAGE_ROOT = Path(conflictscore_local.__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "row, says",
    [
        (
            {"id": "x", "response": "R.", "documents": ["d"], "retrieved_contexts": ["e", "f"]},
            "field 'retrieved_contexts': beside 'documents': both give the documents ('documents' of the conflictscore "
            "shape, 'retrieved_contexts' of the ragas shape), and one would be dropped; keep one of them",
        ),
        (
            {"id": "x", "response": "R one.", "actual_output": "R two.", "documents": ["d"]},
            "field 'actual_output': beside 'response': both give the response ('response' of the conflictscore shape, "
            "'actual_output' of the deepeval shape), and one would be dropped; keep one of them",
        ),
        (
            {"input": "Q?", "actual_output": "R.", "retrieval_context": ["e"], "retrieved_contexts": ["f"]},
            "field 'retrieval_context': beside 'retrieved_contexts': both give the documents",
        ),
    ],
    ids=["documents and retrieved_contexts", "response and actual_output", "two shapes' contexts"],
)
def test_a_line_with_two_shapes_fields_is_refused_naming_both(tmp_path: Path, row: dict, says: str) -> None:
    """Before: exit 0, judged against ``documents`` alone, ``retrieved_contexts`` kept as metadata."""
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"id": "ok", "response": "R.", "documents": ["d"]}) + "\n" + json.dumps(row) + "\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "conflictscore_local.cli",
            "score",
            str(inp),
            "-q",
            "--no-cache",
            "-o",
            str(tmp_path / "o.jsonl"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)},
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert f"{inp}:2: {says}" in done.stderr
    assert not (tmp_path / "o.jsonl").exists()


def test_one_shape_per_line_still_reads_and_a_shared_key_is_no_clash() -> None:
    # "response" is both this project's and RAGAS' key: one key, one meaning
    item = parse_item({"user_input": "Q?", "response": "R.", "retrieved_contexts": ["e"]}, path="f", line=1)
    assert (item.response, [d.text for d in item.documents]) == ("R.", ["e"])
    item = parse_item(
        {"input": "Q?", "actual_output": "R.", "retrieval_context": ["e"], "context": ["c"]}, path="f", line=1
    )
    assert item.response == "R." and item.meta == {"context": ["c"]}
    with pytest.raises(InputError, match="beside 'documents'"):
        parse_item({"documents": [], "retrieval_context": ["e"], "response": "R."}, path="f", line=1)
