"""The lexical guard's keys on hand-written sentences."""

from __future__ import annotations

import pytest

from conflictscore_local.prune.guard import lexical_keys, shared_keys


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        ("Curie was born in Warsaw in 1867.", {"curie", "warsaw", "#1867"}),
        ("There were 3,559 people and 1,575 households.", {"#3559", "#1575"}),
        ("95.7% were white; 3.50 dollars; 07 Sept. 2020.", {"#95.7", "#3.5", "#7", "@sep", "#2020"}),
        ("However, The study in May found nothing.", {"@may"}),
        ("Curie's lab studied COVID-19 and H2O.", {"curie", "covid", "#19", "h2o"}),
        ("A B c 12,3456", {"#12", "#3456"}),
        ("scientists say it may rain in march", set()),
    ],
)
def test_lexical_keys(text: str, keys: set[str]) -> None:
    assert lexical_keys(text) == keys


@pytest.mark.parametrize(
    ("claim", "passage", "shared"),
    [
        ("The town had 1867 residents.", "In all, 1,867 people lived there.", {"#1867"}),
        ("Growth was 12 percent.", "It grew by 12.0% that year.", {"#12"}),
        ("She moved in September 1891.", "In Sept. of that year she left.", {"@sep"}),
        ("Curie won two Nobel Prizes.", "The prize went to Marie Curie's husband too.", {"curie"}),
        ("The cat sat on the mat.", "However, The dog slept.", set()),
        ("The answer is 1867.", "The answer is 1868.", set()),
    ],
)
def test_shared_keys(claim: str, passage: str, shared: set[str]) -> None:
    assert shared_keys(claim, passage) == shared


@pytest.mark.slow  # tracemalloc over a whole pruning run
def test_passage_texts_are_not_kept_alive_after_use() -> None:
    import gc
    import tracemalloc

    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        texts = [f"passage {k} " + "word " * 20_000 for k in range(100)]  # 100 texts of 100 kB, keys tiny
        assert all(lexical_keys(t) == {f"#{k}"} for k, t in enumerate(texts))
        del texts
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 1_000_000, f"{held} bytes still held after the texts were dropped"
