"""Suggestions from missed-negative labels: candidates, coverage, costs, ranking and limits."""

from __future__ import annotations

from reviewer.review.phrase_pack import PhrasePack
from reviewer.review.suggest import MissedWords, suggest_phrases

LABELS = [
    MissedWords("came up empty", "none", "k1"),
    MissedWords("the search came up empty", "none", "k2"),
    MissedWords("It came up  EMPTY again.", "none", "k3"),
    MissedWords("nothing turned up", "none", "k4"),
    MissedWords("Nothing turned up, sadly", "none", "k5"),
    MissedWords("that is the full list", "complete", "k6"),
]
FLAGGED = ["They came up short", "No incidents were found"]
FPS = ["we came up with a plan", "the bin is empty"]


def by_phrase() -> dict[str, tuple[str, int, int, int, bool]]:
    out = suggest_phrases(LABELS, flagged_clauses=FLAGGED, fp_clauses=FPS, limit=None)
    return {s.phrase: (s.list_name, s.covers, s.touches_flagged, s.touches_fp, s.from_label) for s in out}


def test_candidates_and_their_figures() -> None:
    got = by_phrase()
    # whole labels (normalised, outer punctuation stripped)
    assert got["came up empty"] == ("none", 3, 0, 0, True)  # k1, k2, k3
    assert got["it came up empty again"] == ("none", 1, 0, 0, True)
    assert got["nothing turned up, sadly"] == ("none", 1, 0, 0, True)
    assert got["that is the full list"] == ("complete", 1, 0, 0, True)
    # shared sub-phrases (>= 2 labels of the same list)
    assert got["came up"] == ("none", 3, 1, 1, False)  # flagged "came up short"; fp "came up with"
    assert got["up empty"] == ("none", 3, 0, 0, False)
    assert got["empty"] == ("none", 3, 0, 1, False)  # fp "the bin is empty"
    assert got["nothing turned up"] == ("none", 2, 0, 0, True)
    assert got["turned up"] == ("none", 2, 0, 0, False)
    assert got["nothing"] == ("none", 2, 0, 0, False)


def test_no_stopwords_short_words_or_grams_across_punctuation() -> None:
    got = by_phrase()
    assert "up" not in got and "the" not in got and "again" not in got  # single label or stopword
    assert "up sadly" not in got  # a comma separates them in the text
    assert "sadly" not in got  # only one label
    assert "the full" not in got  # only one complete label


def test_ranking_covers_then_fewer_fp_then_shorter() -> None:
    out = suggest_phrases(LABELS, flagged_clauses=FLAGGED, fp_clauses=FPS, limit=6)
    assert [s.phrase for s in out] == ["up empty", "came up empty", "came", "empty", "came up", "turned"]
    assert out[1].covered_keys == ("k1", "k2", "k3")


def test_existing_phrases_are_not_suggested() -> None:
    existing = PhrasePack.create("p", ["Came Up Empty"])
    got = {s.phrase for s in suggest_phrases(LABELS, existing=existing, limit=None)}
    assert "came up empty" not in got and "came up" in got


def test_limits_respected() -> None:
    long_words = "nothing " + "really " * 20 + "turned up here"  # whole label > 128 UTF-16 units
    labels = [
        MissedWords(long_words, "none"),
        MissedWords("nothing really turned up", "none"),
        MissedWords("none [yet]", "none"),
        MissedWords("   ", "none"),
    ]
    out = suggest_phrases(labels, limit=None)
    phrases = {s.phrase for s in out}
    assert all(0 < len(p.encode("utf-16-le")) // 2 <= 128 and p.strip() for p in phrases)
    assert long_words.strip() not in phrases and "none [yet]" not in phrases
    assert {"nothing really", "turned up", "really turned up"} <= phrases
    assert suggest_phrases([]) == []


def test_non_ascii_suggestion_still_matches_its_text() -> None:
    labels = [
        MissedWords("Keine Straße gefunden", "none"),
        MissedWords("keine straße gefunden heute", "none"),
    ]
    got = {s.phrase: s.covers for s in suggest_phrases(labels, limit=None)}
    assert got["keine straße gefunden"] == 2 and "keine strasse gefunden" not in got
