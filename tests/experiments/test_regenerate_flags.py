"""``regenerate --questions N`` (was ``--sample N``, which still works one release with a warning)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .test_regenerate_loop import _regenerate, right_first_option, write_csv  # noqa: F401  (a fixture)


@pytest.mark.parametrize("flag", ["--questions", "--sample"])
def test_questions_asks_a_fixed_sample_of_n(
    tmp_path: Path,
    right_first_option: Any,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    flag: str,
) -> None:
    write_csv(tmp_path)
    summary = tmp_path / "s.json"
    rc, err = _regenerate(
        capsys, tmp_path, right_first_option, flag, "3", "-o", str(tmp_path / "t.jsonl"), "--summary", str(summary)
    )
    assert rc == 0
    assert err == (
        ""
        if flag == "--questions"
        else "warning: --sample is deprecated and will be removed in the next release: use --questions\n"
    )
    s = json.loads(summary.read_text())
    assert (s["config"]["n_questions"], s["config"]["sample"]) == (3, 3)
    assert s["conditions"]["closed-book"]["n"] == 3
    assert len(right_first_option.posts()) == 3
