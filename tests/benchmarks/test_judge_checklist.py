"""The probe generators of ``benchmarks/judge/judge_checklist.py`` (not any judge's score): near
misses really differ, reformatted values are the same, long documents hold exactly one
relevant sentence, off-topic passages never name the claim's subject, generation is
deterministic per seed, and the mined loaders read their sets' original shapes."""

from __future__ import annotations

import datetime as dt
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="module")
def P() -> Any:
    from benchmarks.judge import judge_checklist_probes

    return judge_checklist_probes


@pytest.fixture(scope="module")
def probes(P: Any) -> dict[str, list[Any]]:
    return P.templated_probes(0)


def test_deterministic_for_a_seed_and_different_across_seeds(P: Any, probes: dict[str, list[Any]]) -> None:
    again = P.templated_probes(0)
    assert {c: [p.as_json() for p in ps] for c, ps in again.items()} == {
        c: [p.as_json() for p in ps] for c, ps in probes.items()
    }
    other = P.templated_probes(1)
    for cap in P.CAPABILITIES:
        assert [p.claim for p in other[cap]] != [p.claim for p in probes[cap]], cap
    only = P.templated_probes(0, ("numbers",))  # one capability's probes do not depend on which others run
    assert [p.as_json() for p in only["numbers"]] == [p.as_json() for p in probes["numbers"]]


def test_every_direction_is_generated_and_no_constant_answer_passes(P: Any, probes: dict[str, list[Any]]) -> None:
    for cap, ps in probes.items():
        assert 80 <= len(ps) <= 200, (cap, len(ps))
        counts = {d: sum(p.direction == d for p in ps) for d in P.DIRECTIONS[cap]}
        assert all(n >= 10 for n in counts.values()), (cap, counts)
        labels = {p.label for p in ps}
        assert len(labels) >= 2, cap
        for p in ps:
            assert p.label == P.DIRECTIONS[cap][p.direction][0]
            assert p.claim.endswith(".") and p.passage.endswith(".") and p.claim != p.passage
            assert "{" not in p.claim + p.passage, p  # every slot filled
        assert len({p.id for p in ps}) == len(ps)


def test_near_misses_differ_and_keep_their_shape(P: Any) -> None:
    rng = random.Random(3)
    for _ in range(2000):
        n = rng.randint(1, 500_000)
        m = P.near_int(n, rng)
        assert m != n and m > 0 and len(str(m)) == len(str(n))
        y = rng.randint(1850, 2020)
        assert 1 <= abs(P.near_year(y, rng) - y) <= 3
        d = dt.date(rng.randint(1850, 2020), rng.randint(1, 12), rng.randint(1, 28))
        d2 = P.near_date(d, rng)
        assert d2 != d and d2.year == d.year and abs((d2 - d).days) <= 31
        x = round(rng.uniform(2.1, 78.0), 1)
        assert P.near_percent(x, rng) != x
    assert P.near_int(7, random.Random(0)) != 7


def test_dates_round_trip_in_every_style(P: Any) -> None:
    d = dt.date(1867, 11, 7)
    assert [P.fmt_date(d, s) for s in P.DATE_STYLES] == [
        "7 November 1867",
        "November 7, 1867",
        "the 7th of November 1867",
    ]
    assert P.fmt_date(dt.date(2001, 3, 22), "ordinal") == "the 22nd of March 2001"
    assert P.fmt_date(dt.date(2001, 3, 12), "ordinal") == "the 12th of March 2001"
    for s in P.DATE_STYLES:
        assert P.parse_date(P.fmt_date(d, s)) == d
    with pytest.raises(ValueError, match="date style"):
        P.fmt_date(d, "iso")


DATE_RE = re.compile(r"(?:the \d{1,2}(?:st|nd|rd|th) of \w+ \d{4}|\d{1,2} [A-Z]\w+ \d{4}|[A-Z]\w+ \d{1,2}, \d{4})")


def _numbers(text: str) -> list[int]:
    return [P_int(x) for x in re.findall(r"\d[\d,]*\d|\d", text)]


def P_int(text: str) -> int:
    return int(text.replace(",", ""))


def test_number_probes_state_the_value_they_claim(P: Any, probes: dict[str, list[Any]]) -> None:
    seen_unformatted = False
    for p in probes["numbers"]:
        kind = p.direction.split("_", 1)[1]
        same = p.label == "SUPPORT"
        if kind in ("count", "year"):
            assert (p.meta["value"] == p.meta["claimed"]) == same
            assert p.meta["claimed"] in _numbers(p.claim) and p.meta["value"] in _numbers(p.passage)
            seen_unformatted |= bool(re.search(r"\d{4,}", p.claim)) and kind == "count"
        elif kind == "date":
            (claimed,), (stated,) = DATE_RE.findall(p.claim), DATE_RE.findall(p.passage)
            assert (P.parse_date(claimed) == P.parse_date(stated)) == same
            assert claimed != stated  # always written another way
        elif kind == "unit":
            assert _numbers(p.claim)[-1] == _numbers(p.passage)[-1]  # the same number, the unit decides
            assert (p.meta["claimed_unit"] != p.meta["unit"]) and p.meta["claimed_unit"] in p.claim.replace(
                str(_numbers(p.claim)[-1]), "N"
            ).replace(f"{_numbers(p.claim)[-1]:,}", "N")
        elif kind == "percent":
            assert (p.meta["value"] == p.meta["claimed"]) == same
        elif kind == "range":
            if "range" in p.meta:
                lo, hi = p.meta["range"]
                values = range(lo, hi + 1)
            else:
                values = range(p.meta["value"], p.meta["value"] + 1)
            ok = [_within(p.meta["claimed"], v) for v in values]
            assert all(ok) if same else not any(ok), p
    assert seen_unformatted  # "3559" against "3,559"


def _within(claimed: str, v: int) -> bool:
    nums = [P_int(x) for x in re.findall(r"\d[\d,]*\d|\d", claimed)]
    if claimed.startswith("more than"):
        return v > nums[0]
    if claimed.startswith(("fewer than", "less than")):
        return v < nums[0]
    if claimed.startswith("between"):
        return nums[0] <= v <= nums[1]
    return v == nums[0]


def test_within_reads_bounds() -> None:
    assert _within("more than 3,000", 3559) and not _within("fewer than 3,500", 3559)
    assert _within("between 3,500 and 3,600", 3559) and not _within("between 3,600 and 4,000", 3559)
    assert _within("25", 25) and not _within("25", 24)


def test_negation_probes_put_the_cues_where_their_direction_says(P: Any, probes: dict[str, list[Any]]) -> None:
    neg = P.has_negation
    assert neg("It is not true.") and neg("She didn't.") and neg("No snow fell.") and not neg("Snow fell on Nov 7.")
    for p in probes["negation"]:
        d = p.direction[:1]
        if d == "a":
            assert neg(p.claim), p
        elif d == "b":
            assert not neg(p.claim), p
        elif d == "c":
            assert neg(p.claim) and not neg(p.passage), p
        elif d == "d":
            affirmed, other = re.split(r", but |, although |(?<=\.) ", p.passage, maxsplit=1)
            assert not neg(p.claim) and not neg(affirmed) and neg(other), p
        else:
            doubled = p.claim if p.claim.startswith("It is") else p.passage
            assert re.match(r"It is (not true|not the case|false) that .*\bnot\b", doubled), p


def _subject(P: Any, text: str) -> set[str]:
    names = set(
        P.PEOPLE
        + P.ORGS
        + P.PHARMA
        + P.TOWNS
        + P.STRUCTURES
        + P.VENUES
        + P.LIBRARIES
        + P.HOSPITALS
        + P.DRUGS
        + P.TRIALS
        + P.STADIUMS
        + P.EVENTS
        + P.BOOKS
        + P.FILMS
    ) | {c for c, _, _ in P.COUNTRIES}
    return {n for n in names if P.mentions(text, [n])}


def test_off_topic_passages_never_name_the_claims_subject(P: Any, probes: dict[str, list[Any]]) -> None:
    for p in probes["off_topic"]:
        shared = _subject(P, p.claim) & _subject(P, p.passage)
        if p.direction in ("same_entity_other_attribute", "control_support", "control_contradict"):
            assert shared, p
        else:
            assert not shared, p
            assert p.label == "IRRELEVANT"
        if p.direction == "same_domain_shared_words":
            assert P.content_words(p.claim) & P.content_words(p.passage) == set(p.meta["shared_words"]) != set(), p


def test_entity_swaps_keep_the_subject_and_change_the_entity(P: Any, probes: dict[str, list[Any]]) -> None:
    for p in probes["entities"]:
        claim, passage = _subject(P, p.claim), _subject(P, p.passage)
        if p.direction.endswith("role"):
            assert claim <= passage and len(passage - set(P.TOWNS)) == 2, p  # the same two parties
        elif p.label == "SUPPORT":
            assert claim <= passage | set(P.CITIES), p
        else:
            capital = any(c in p.claim and c in p.passage for c, _, _ in P.COUNTRIES)
            assert (
                capital
                or (claim & passage and claim != passage)
                or any(c in p.claim and c not in p.passage for c in P.CITIES)
            ), p


def test_long_documents_hold_exactly_one_relevant_sentence(P: Any, probes: dict[str, list[Any]]) -> None:
    for p in probes["long_document"]:
        assert p.document and p.claim not in p.passage
        sentences = [s for para in p.passage.split("\n\n") for s in re.split(r"(?<!\bSt\.)(?<=\.) (?=[A-Z0-9])", para)]
        subject = _subject(P, p.claim) - set(P.CITIES)
        about = [s for s in sentences if _subject(P, s) & subject]
        if p.direction == "none_in_long":
            assert not about, p
            assert 16 <= len(sentences) <= 24
        else:
            assert about == [p.meta["relevant"]], (p.claim, about)
            assert 17 <= len(sentences) <= 25
        countries = {c for c, _, _ in P.COUNTRIES}  # background sentences may name a country twice
        named = [n for s in sentences if s not in p.meta.get("relevant", "") for n in _subject(P, s) - countries]
        assert len(named) == len(set(named)), p  # each filler subject once: the filler never contradicts itself


def test_partial_claims_are_compounds_whose_silent_part_the_passage_never_mentions(
    P: Any, probes: dict[str, list[Any]]
) -> None:
    for p in probes["partial"]:
        assert " and " in p.claim and p.meta["silent_part"] in p.claim
        assert p.meta["silent_part"] not in p.passage


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_mined_loaders_read_the_original_shapes_and_drop_training_text(P: Any, tmp_path: Path) -> None:
    x = tmp_path / "nli_extra"
    _write(
        x / "nan-nli/data/nan.csv",
        "premise,hypothesis,label,P-Verbal\n"
        "The dog did not bark.,The dog was silent.,entailment,0\n"
        '"No one came, sadly.",Someone came.,contradiction,1\n',
    )
    anli_head = "context,statement,reason,adversary_pred,gold_label,tags\n"
    _write(
        x / "anli/anlizinganli/anli_annot_v0.2/ANLI_analysis_r1_dev.csv",
        anli_head + "The museum opened in 1901.,The museum opened in 1902.,r,e,c,\"['Numerical', 'Dates']\"\n"
        "Tom is tall.,Tom is short.,r,e,c,\"['Error']\"\n",
    )
    for r in (2, 3):
        _write(x / f"anli/anlizinganli/anli_annot_v0.2/ANLI_analysis_r{r}_dev.csv", anli_head)
    cols = "\t".join(P.TAXI_COLUMNS)
    _write(
        x / "taxinli/taxinli10k.tsv",
        f"prem\thyp\tlabel\tannotated_label\t{cols}\tgenre\n"
        f"He didn't go.\tHe stayed home.\tentailment\tentailment\t{chr(9).join('0001' + '0' * 11)}\tfiction\n"
        f"She left.\tShe stayed.\tcontradiction\tneutral\t{chr(9).join('0' * 15)}\tfiction\n",
    )
    fever = [
        {
            "claim": "Colombiana is a French film .",
            "evidence": "Colombiana is a 2011 French action film .",
            "gold_label": "SUPPORTS",
        },
        {
            "claim": "Paris is in Spain .",
            "evidence": "Paris is the capital of France -LRB- a country -RRB- .",
            "gold_label": "REFUTES",
        },
    ]
    _write(
        x / "fever-symmetric/symmetric_v0.2/fever_symmetric_test.jsonl", "".join(json.dumps(r) + "\n" for r in fever)
    )
    _write(x / "control/data/dev.jsonl", json.dumps({"premise": "p " * 200, "hypothesis": "h", "label": "n"}) + "\n")
    # training side: FEVER-Symmetric dev repeats the first test evidence; an eval-only set is never indexed
    _write(
        x / "fever-symmetric/symmetric_v0.2/fever_symmetric_dev.jsonl",
        json.dumps({"claim": "x", "evidence": "Colombiana is a 2011 French action film .", "gold_label": "SUPPORTS"})
        + "\n",
    )
    assert [r.label for r in P.load_nan_nli(x)] == ["SUPPORT", "CONTRADICT"]
    assert P.load_nan_nli(x)[1].premise == "No one came, sadly." and P.load_nan_nli(x)[1].source.endswith("row 2")
    anli = P.load_anli_dev(x)
    assert anli[0].tags == {"Numerical", "Dates"} and anli[0].label == "CONTRADICT"
    assert [r.label for r in P.load_taxinli(x)] == ["SUPPORT"]  # the disagreeing re-annotation is left out
    assert "negation_logic" in P.load_taxinli(x)[0].tags
    rows = P.load_fever_symmetric_test(x)
    assert rows[1].premise == "Paris is the capital of France (a country)." and rows[1].label == "CONTRADICT"

    index = P.training_index(tmp_path)
    assert P._leaks(index, rows[0]) and not P._leaks(index, rows[1])
    assert not index.document_leaks("The dog did not bark.")  # NaN-NLI is evaluation-only: not in the index
    mined, info = P.mined_probes(tmp_path, 0, index=index)
    assert info["dropped_shared_with_training"] == {"fever-symmetric": 1}
    numbers = mined["numbers"]
    assert [(p.claim, p.label, p.source) for p in numbers] == [
        ("The museum opened in 1902.", "CONTRADICT", "anli ANLI_analysis_r1_dev.csv row 1")
    ]
    assert {p.source for p in mined["negation"]} >= {"nan-nli data/nan.csv row 1", "taxinli taxinli10k.tsv row 1"}
    assert mined["long_document"] and all(p.document for p in mined["long_document"])
    assert mined["partial"] == []
