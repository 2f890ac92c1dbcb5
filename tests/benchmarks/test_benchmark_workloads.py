"""``benchmarks/_lib/workloads.py``, the inputs the speed scripts share, on hand-made questions: which
documents each job gives each item."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="module")
def W() -> Any:
    from benchmarks._lib import workloads

    return workloads


@pytest.fixture(scope="module")
def questions(W: Any) -> list[Any]:
    return [
        W.Question(f"q{i}", [f"claim {i}a", f"claim {i}b"], [f"doc {i}.{j}" for j in range(i + 1)]) for i in range(4)
    ]


def texts(item: Any) -> list[str]:
    return [d.text for d in item.documents]


def test_rag_job_gives_each_question_its_own_documents(W: Any, questions: list[Any]) -> None:
    items = W.rag_job(questions, 2)
    assert [(it.id, list(it.claims), texts(it)) for it in items] == [
        ("q0", ["claim 0a", "claim 0b"], ["doc 0.0"]),
        ("q1", ["claim 1a", "claim 1b"], ["doc 1.0", "doc 1.1"]),
    ]


def test_grown_job_adds_other_questions_documents_by_stride(W: Any, questions: list[Any]) -> None:
    # 2 items, the rest q2, q3: item i gets rest[(i * stride + k) % 2] for k < factor - 1
    assert [texts(it) for it in W.grown_job(questions, 2, 2)] == [
        ["doc 0.0", "doc 2.0", "doc 2.1", "doc 2.2"],
        ["doc 1.0", "doc 1.1", "doc 3.0", "doc 3.1", "doc 3.2", "doc 3.3"],
    ]
    assert [texts(it) for it in W.grown_job(questions, 2, 2, stride=2)] == [  # (1 * 2 + 0) % 2 = 0: q2 again
        ["doc 0.0", "doc 2.0", "doc 2.1", "doc 2.2"],
        ["doc 1.0", "doc 1.1", "doc 2.0", "doc 2.1", "doc 2.2"],
    ]
    assert [texts(it) for it in W.grown_job(questions, 2, 1)] == [texts(it) for it in W.rag_job(questions, 2)]


def test_pooled_job_shares_one_corpus_own_documents_round_robin_first(W: Any, questions: list[Any]) -> None:
    items = W.pooled_job(questions, 2, 4)
    assert [texts(it) for it in items] == [["doc 0.0", "doc 1.0", "doc 1.1", "doc 2.0"]] * 2
    assert [it.meta["own_documents"] for it in items] == [["c0"], ["c1", "c2"]]


def test_sweep_job_answers_each_question_with_a_non_empty_subset(W: Any, questions: list[Any]) -> None:
    items = W.sweep_job(questions, 2, 3, seed=1)
    assert [it.id for it in items] == ["q0/r0", "q0/r1", "q0/r2", "q1/r0", "q1/r1", "q1/r2"]
    assert all(it.claims and set(it.claims) <= {f"claim {it.id[1]}a", f"claim {it.id[1]}b"} for it in items)
    assert [list(it.claims) for it in items] == [list(it.claims) for it in W.sweep_job(questions, 2, 3, seed=1)]


def test_data_dir_that_is_not_a_folder_exits_naming_it(W: Any, tmp_path: Any) -> None:
    with pytest.raises(SystemExit, match=f"data directory {tmp_path / 'nope'} not found"):
        W.data_dir(str(tmp_path / "nope"))
    assert W.data_dir(str(tmp_path)) == tmp_path


def test_at_least_takes_whole_numbers_from_its_floor_and_names_it_when_refusing(W: Any) -> None:
    import argparse

    assert W.at_least(32)("32") == 32 and W.positive("1") == 1
    for text, low in (("31", 32), ("0", 1), ("-3", 1), ("2.5", 1), ("many", 1)):
        with pytest.raises(argparse.ArgumentTypeError, match=f"allowed: a whole number of at least {low}$"):
            W.at_least(low)(text)
    parser = argparse.ArgumentParser(prog="bench", exit_on_error=False)
    parser.add_argument("--rounds", type=W.positive)
    with pytest.raises(argparse.ArgumentError, match="'0' is not allowed; allowed: a whole number of at least 1"):
        parser.parse_args(["--rounds", "0"])
