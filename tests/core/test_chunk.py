"""Sentence splitting and packing documents into passages within a token budget."""

from __future__ import annotations

import re
from typing import Callable

import pytest

from conflictscore_local.core.chunk import Chunker, is_cover, split_sentences
from conflictscore_local.core.types import Document


def sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text)]


def test_sentence_boundaries() -> None:
    text = (
        'Dr. Smith moved to the U.S. in Jan. 2020. He earned 3.5 million. "Is it true?" she asked. '
        "J. R. R. Tolkien wrote it. e.g. this stays. Done!"
    )
    assert sentences(text) == [
        "Dr. Smith moved to the U.S. in Jan. 2020.",
        "He earned 3.5 million.",
        '"Is it true?" she asked.',
        "J. R. R. Tolkien wrote it. e.g. this stays.",
        "Done!",
    ]


def test_blank_lines_end_sentences() -> None:
    text = "Results\n\nthe bridge opened in 1932.\n  \nSee also: rivers\nand lakes"
    assert sentences(text) == ["Results", "the bridge opened in 1932.", "See also: rivers\nand lakes"]
    assert split_sentences("") == [] and split_sentences("  \n\n ") == []


def test_short_document_is_one_passage() -> None:
    doc = Document("d", "One sentence. Two sentences.")
    (p,) = Chunker(max_tokens=8).passages("it", doc)
    assert (p.item_id, p.doc_id, p.index, p.text, p.span) == ("it", "d", 0, doc.text, (0, len(doc.text)))


def words(k: int, tag: str) -> str:
    """A sentence of exactly ``k`` whitespace words."""
    return " ".join([tag] + ["w"] * (k - 2) + ["end."])


def test_packing_with_overlap_hand_computed() -> None:
    s = [words(4, "A"), words(4, "B"), words(3, "C"), words(5, "D"), words(2, "E")]
    doc = Document("d", " ".join(s))
    got = [p.text for p in Chunker(max_tokens=10, overlap=1).passages("it", doc)]
    # A+B (8; +C would be 11) | B+C (7; +D 12) | C+D (8; +E 10) — E fits: C+D+E = 10
    assert got == [f"{s[0]} {s[1]}", f"{s[1]} {s[2]}", f"{s[2]} {s[3]} {s[4]}"]
    no_overlap = [p.text for p in Chunker(max_tokens=10, overlap=0).passages("it", doc)]
    assert no_overlap == [f"{s[0]} {s[1]}", f"{s[2]} {s[3]} {s[4]}"]


def test_overlap_shrinks_when_it_leaves_no_room() -> None:
    s = [words(6, "A"), words(3, "B"), words(7, "C")]
    got = [p.text for p in Chunker(max_tokens=10, overlap=2).passages("it", Document("d", " ".join(s)))]
    # A+B = 9; then B (3) + C (7) = 10 fits, A+B+C does not: the overlap keeps only B
    assert got == [f"{s[0]} {s[1]}", f"{s[1]} {s[2]}"]


def test_spans_index_the_document_and_every_sentence_is_covered() -> None:
    text = "\n\n".join(" ".join(words(3 + (i * 5) % 9, f"S{i}") for i in range(p * 4, p * 4 + 4)) for p in range(6))
    doc = Document("d", text)
    ps = Chunker(max_tokens=16, overlap=1).passages("it", doc)
    assert [p.index for p in ps] == list(range(len(ps))) and len(ps) > 5
    for p in ps:
        assert text[p.span[0] : p.span[1]] == p.text and len(p.text.split()) <= 16
    covered = {m.group(0) for p in ps for m in re.finditer(r"S\d+", p.text)}
    assert covered == {f"S{i}" for i in range(24)}


def test_the_splitters_spans_are_a_cover_and_a_cut_one_is_not() -> None:
    """What a judgment cache's stored spans must be (:func:`is_cover`): the splitter's own always are."""
    texts = [
        "\n\n".join(" ".join(words(3 + (i * 5) % 9, f"S{i}") for i in range(p * 4, p * 4 + 4)) for p in range(6)),
        "  Leading blanks. " + " ".join(f"w{i}" for i in range(40)) + " " + "x" * 90 + ".  \n",
        "One.",
        "yes: 0 is even.",
    ]
    for text in texts:
        for budget, overlap in ((8, 0), (10, 1), (16, 2), (400, 1)):
            spans = Chunker(max_tokens=budget, overlap=overlap).spans(text)
            assert is_cover(text, spans), (text[:20], budget, overlap)
    text = "yes: 0 is even."
    assert is_cover(text, [(0, 15)]) and is_cover("  a b  ", [(2, 5)]) and is_cover("a b c", [(0, 3), (2, 5)])
    for bad in (
        [(0, 5)],
        [],
        [(0, 4), (6, 15)],
        [(0, 16)],
        [(0, 10), (3, 9), (9, 15)],
        [(3, 15), (0, 15)],
        [(5, 5), (0, 15)],
    ):
        assert not is_cover(text, bad), bad


def test_long_sentence_cut_at_words_and_long_word_at_characters() -> None:
    sentence = " ".join(f"w{i}" for i in range(25))
    ps = Chunker(max_tokens=10, overlap=1).passages("it", Document("d", sentence))
    assert [p.text for p in ps] == [" ".join(f"w{i}" for i in range(a, min(a + 10, 25))) for a in (0, 10, 20)]

    def chars(text: str) -> int:  # a counter under which long words are expensive
        return sum(-(-len(w) // 4) for w in text.split())

    blob = "x" * 100
    ps = Chunker(max_tokens=8, count=chars).passages("it", Document("d", f"Short start. {blob} tail."))
    assert all(chars(p.text) <= 8 for p in ps)
    assert "".join(p.text for p in ps if "x" in p.text).replace(" tail.", "").count("x") == 100


def test_real_count_is_checked_not_only_the_sum_of_sentences() -> None:
    def count(text: str) -> int:  # like byte-level BPE: the newlines between sentences cost tokens too
        return len(re.findall(r"\S+|\n", text))

    text = "\n\n\n".join(words(3, f"S{i}") for i in range(12))
    chunker = Chunker(max_tokens=10, overlap=1, count=count)
    ps = chunker.passages("it", Document("d", text))
    assert all(count(p.text) <= 10 for p in ps)
    # three sentences (9 words) would fit by their sum, but the 6 newlines between them push it to 15
    assert all(p.text.count("S") <= 2 for p in ps) and len(ps) == 11


def test_split_keeps_document_order() -> None:
    docs = [Document("a", words(12, "A") + " " + words(12, "B")), Document("b", "tiny.")]
    ps = Chunker(max_tokens=12).split("it", docs)
    assert [(p.doc_id, p.index) for p in ps] == [("a", 0), ("a", 1), ("b", 0)]


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="at least 8"):
        Chunker(max_tokens=4)
    with pytest.raises(ValueError, match="overlap must be >= 0"):
        Chunker(overlap=-1)
    with pytest.raises(ValueError, match="memo_chars must be >= 0"):
        Chunker(memo_chars=-1)


def counting_words() -> tuple[list[str], Callable[[str], int]]:
    seen: list[str] = []

    def count(text: str) -> int:
        seen.append(text)
        return len(text.split())

    return seen, count


def test_the_same_text_is_split_once_and_gives_the_same_passages_under_its_own_ids() -> None:
    seen, count = counting_words()
    text = words(12, "A") + " " + words(12, "B")
    chunker = Chunker(max_tokens=12, count=count)
    first = chunker.passages("it1", Document("a", text))
    calls = len(seen)
    again = chunker.passages("it2", Document("z", text))
    assert len(seen) == calls > 0  # no token counted the second time
    assert [(p.item_id, p.doc_id) for p in again] == [("it2", "z"), ("it2", "z")]
    assert [(p.index, p.text, p.span) for p in again] == [(p.index, p.text, p.span) for p in first]
    chunker.passages("it3", Document("a", text + " C."))  # another text is counted afresh
    assert len(seen) > calls


def test_the_memo_forgets_oldest_texts_beyond_its_size_and_can_be_off() -> None:
    seen, count = counting_words()
    chunker = Chunker(max_tokens=8, count=count, memo_chars=80)  # 80 characters in all, texts of up to 5 kept
    texts = [f"W{k:02d}." for k in range(25)]  # 4 characters each: 20 fit
    for t in texts:
        chunker.passages("i", Document("d", t))
    assert chunker.remembered() == texts[5:] and chunker.remembered_chars() == 80
    chunker.passages("i", Document("d", "Longer."))  # 7 characters: over 80 // 16, split but not kept
    assert "Longer." not in chunker.remembered() and chunker.remembered_chars() == 80
    seen.clear()
    chunker.passages("i", Document("d", texts[0]))  # forgotten: counted again, and kept in place of W05
    assert seen and chunker.remembered()[-1] == texts[0] and texts[5] not in chunker.remembered()
    off = Chunker(max_tokens=8, count=count, memo_chars=0)
    seen.clear()
    off.passages("i", Document("d", texts[0]))
    n = len(seen)
    off.passages("i", Document("d", texts[0]))
    assert len(seen) == 2 * n > 0 and off.remembered() == []


def test_counting_is_bounded_by_the_window_not_the_document() -> None:
    """A tokenizer never gets more than the window's worth of text, however long the document:
    sentences, a long run without sentence ends, and a blob without spaces."""
    given: list[int] = []

    def count(text: str) -> int:  # a tokenizer that records the largest string it was given
        given.append(len(text))
        return sum(-(-len(w) // 6) for w in text.split())

    prose = " ".join(f"Sentence {i} has exactly seven words here." for i in range(20_000))
    run_on = " ".join(f"word{i}" for i in range(40_000))
    blob = "x" * 200_000
    text = f"{prose}\n\n{run_on}\n\n{blob}\n\nThe end."
    chunker = Chunker(max_tokens=64, overlap=1, count=count)
    ps = chunker.passages("it", Document("d", text))
    assert len(text) > 1_400_000 and max(given) <= chunker.max_chars == 64 * 32
    given.clear()
    assert all(count(p.text) <= 64 for p in ps)
    covered = "".join(text[p.span[0] : p.span[1]] for p in ps)
    assert "Sentence 19999 has" in covered and "word39999" in covered and "The end." in covered
    assert sum(text[p.span[0] : p.span[1]].count("x") for p in ps) >= 200_000
    assert all(text[p.span[0] : p.span[1]] == p.text for p in ps)
