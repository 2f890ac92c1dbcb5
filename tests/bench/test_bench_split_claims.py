"""The split function and the question → claim templates."""

from __future__ import annotations

from collections import Counter

import pytest

from conflictscore_local.bench import normalize_text, split_for
from conflictscore_local.bench.claims import declarative, name_entity


def test_normalize_text():
    assert normalize_text('  "Global   warming is REAL."  ') == "global warming is real"
    assert normalize_text("ﬁne—“quoted”") == "fine—“quoted"  # NFKC folds the ligature; inner punctuation stays
    assert normalize_text("...") == ""


def test_split_for_same_text_same_split_and_proportions():
    assert split_for("The Earth is warming.") == split_for("  the earth   is WARMING ")
    counts = Counter(split_for(f"claim number {i}") for i in range(6000))
    assert set(counts) == {"train", "dev", "test"}
    assert abs(counts["train"] / 6000 - 0.70) < 0.03
    assert abs(counts["dev"] / 6000 - 0.15) < 0.03
    assert abs(counts["test"] / 6000 - 0.15) < 0.03
    with pytest.raises(TypeError):
        split_for(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "question, answer, claim",
    [
        ("What is the population of Broken Bow?", "3,559 people", "The population of Broken Bow is 3,559 people."),
        ("Who is the composer of Symphony No. 38?", "Joseph Haydn", "The composer of Symphony No. 38 is Joseph Haydn."),
        ("When was Justice Ritchie born?", "June 19, 1910", "Justice Ritchie was born on June 19, 1910."),
        ("When was Rutherford High School established?", "1961", "Rutherford High School was established in 1961."),
        ("When was the Giff first held?", "1995", "The Giff was first held in 1995."),
        (
            "Where is the Larkin Covered Bridge located?",
            "Chester Springs, Pennsylvania",
            "The Larkin Covered Bridge is located in Chester Springs, Pennsylvania.",
        ),
        (
            "In which city is the Washington Street station located?",
            "Boston",
            "The Washington Street station is located in Boston.",
        ),
        (
            "What sport is Bobby Carpenter associated with?",
            "American football",
            "Bobby Carpenter is associated with American football.",
        ),
        (
            "What political party was Governor Olson a member of?",
            "Republican",
            "Governor Olson was a member of Republican.",
        ),
        ('What year was the album "Chayanne" released?', "1987", 'The album "Chayanne" was released in 1987.'),
        ("What sport does Cameron Murray play?", "Football", "Cameron Murray plays Football."),
        ("When did George Brodrick die?", "22 August 1765", "George Brodrick died on 22 August 1765."),
        ("how many seasons of the mistresses are there", "four", "There are four seasons of the mistresses."),
        (
            "which nfl team has the most super bowls",
            "Pittsburgh Steelers",
            "Pittsburgh Steelers has the most super bowls.",
        ),
        ("Who won the 5th Soccer Bowl?", "Philadelphia Atoms", "Philadelphia Atoms won the 5th Soccer Bowl."),
        (
            "What is the type of institution Fontbonne is?",
            "academy",
            "The answer to 'What is the type of institution Fontbonne is?' is academy.",
        ),
        (
            "221B Baker Street is a game for which type of medium?",
            "board game",
            "The answer to '221B Baker Street is a game for which type of medium?' is board game.",
        ),
    ],
)
def test_declarative(question, answer, claim):
    assert declarative(question, answer) == claim


def test_name_entity():
    assert (
        name_entity("The profession of Jeff Green is Writer.", "Jeff Green (writer)")
        == "The profession of Jeff Green (writer) is Writer."
    )
    assert (
        name_entity(
            "The population of Washington Township, Michigan is 909.", "Washington Township, Gratiot County, Michigan"
        )
        == "The population of Washington Township, Gratiot County, Michigan is 909."
    )
    assert (
        name_entity("Justice Ritchie was born on June 19, 1910.", "Roland Ritchie")
        == "Regarding Roland Ritchie, Justice Ritchie was born on June 19, 1910."
    )
    assert (
        name_entity("The Giff was first held in 1995.", "Geneva International Film Festival")
        == "Regarding Geneva International Film Festival, the Giff was first held in 1995."
    )


def test_name_entity_matches_whole_words_only():
    # RAMDocs: "Reg Park" (the bodybuilder) is not the "Reg Parker" of the question
    assert (
        name_entity("Reg Parker is associated with bodybuilding.", "Reg Park")
        == "Regarding Reg Park, Reg Parker is associated with bodybuilding."
    )
    assert name_entity("José Núñez was born in 1980.", "José Núñez (boxer)") == "José Núñez (boxer) was born in 1980."
    assert (
        name_entity("Josée Núñez was born in 1980.", "José Núñez")
        == "Regarding José Núñez, Josée Núñez was born in 1980."
    )
    assert (
        name_entity("The capital of ÅLAND is Mariehamn.", "Åland (islands)")
        == "The capital of Åland (islands) is Mariehamn."
    )
    assert (
        name_entity("Lahu Ke Do Rang's director is X.", "Lahu Ke Do Rang (1979 film)")
        == "Lahu Ke Do Rang (1979 film)'s director is X."
    )
