"""Literal matcher: case, whitespace, word boundaries, one clause, code skipped, original indices."""

from __future__ import annotations

import pytest

from reviewer.review.matching import clause_at, clauses, find_phrase_hits
from reviewer.review.phrase_pack import PhrasePack

PACK = PhrasePack.create(
    "t", ["no incidents", "came up empty", "no open incidents", "open incidents"], ["the full list"]
)


def spans(text: str, pack: PhrasePack = PACK) -> list[tuple[str, str]]:
    return [(h.phrase, text[h.start : h.end]) for h in find_phrase_hits(text, pack)]


def test_case_insensitive_and_whitespace_tolerant() -> None:
    assert spans("There are NO   Incidents today") == [("no incidents", "NO   Incidents")]
    assert spans("It came\tup  empty") == [("came up empty", "came\tup  empty")]


@pytest.mark.parametrize("text", ["no incidentsX", "sono incidents", "no incidents_2", "no incidents9"])
def test_word_boundaries(text: str) -> None:
    assert spans(text) == []


def test_punctuation_is_a_boundary() -> None:
    assert spans("(no incidents)") == [("no incidents", "no incidents")]


def test_inline_code_is_skipped() -> None:
    text = "Run `no incidents` to check. Also no incidents"
    hits = find_phrase_hits(text, PACK)
    assert [(h.start, h.end) for h in hits] == [(34, 46)]


def test_fenced_code_block_is_skipped() -> None:
    assert spans("```\nno incidents here\n```\nAll clear.") == []
    assert spans("Before\n```text\nthe full list\n``` and no incidents after") == [
        ("no incidents", "no incidents")
    ]


def test_unclosed_fence_runs_to_the_end() -> None:
    assert spans("Look:\n```\nno incidents") == []


@pytest.mark.parametrize(
    "text",
    [
        "We saw no. Incidents later",
        "We saw no! Incidents later",
        "We saw no; incidents later",
        "We saw no: incidents later",
        "We saw no\nincidents later",
        "It came up, but empty",
    ],
)
def test_phrase_split_across_clauses_does_not_match(text: str) -> None:
    assert spans(text) == []


def test_contrastive_conjunction_splits_clauses() -> None:
    text = "We had no open incidents, but the full list is long"
    hits = find_phrase_hits(text, PACK)
    assert [(h.phrase, text[h.clause_start : h.clause_end]) for h in hits] == [
        ("no open incidents", "We had no open incidents,"),
        ("open incidents", "We had no open incidents,"),
        ("the full list", "but the full list is long"),
    ]


def test_overlapping_phrases_all_reported() -> None:
    assert [p for p, _ in spans("no open incidents")] == ["no open incidents", "open incidents"]


def test_astral_characters_before_the_hit_give_python_indices() -> None:
    text = "\U0001f6a8\U0001f6a8 ALERT \U0001f6a8 no  incidents."
    [hit] = find_phrase_hits(text, PACK)
    assert (hit.start, hit.end) == (11, 24)  # 3 astral chars before: 6 UTF-16 units but 3 indices
    assert text[hit.start : hit.end] == "no  incidents"
    assert text[hit.clause_start : hit.clause_end] == text


def test_non_ascii_text_and_phrases() -> None:
    pack = PhrasePack.create("fr", ["rien trouvé"], ["LISTE COMPLÈTE"])
    text = "Straße: RIEN Trouvé. C'est la liste complète."
    assert spans(text, pack) == [("rien trouvé", "RIEN Trouvé"), ("LISTE COMPLÈTE", "liste complète")]


def test_hit_reports_list_and_clause() -> None:
    text = "Checked it. The search came up empty; done"
    [hit] = find_phrase_hits(text, PACK)
    assert hit.list_name == "none"
    assert text[hit.clause_start : hit.clause_end] == "The search came up empty;"


def test_phrase_with_final_punctuation() -> None:
    pack = PhrasePack.create("p", ["came up empty."])
    assert spans("It came up empty. Next", pack) == [("came up empty.", "came up empty.")]


def test_empty_pack_matches_nothing() -> None:
    assert find_phrase_hits("no incidents", PhrasePack.create("empty")) == []


def test_clause_at_and_clauses() -> None:
    text = "One. Two! Three; four: five, but six\nseven 3.5 x"
    assert [text[s:e] for s, e in clauses(text)] == [
        "One.",
        "Two!",
        "Three;",
        "four:",
        "five,",
        "but six",
        "seven 3.5 x",
    ]
    assert clause_at(text, 6) == (5, 9)
    assert clause_at(text, len(text)) == (37, len(text))
    assert clause_at("", 0) == (0, 0)


def test_punctuation_inside_inline_code_does_not_cut() -> None:
    text = "Ran `a. b` and no incidents"
    assert clauses(text) == [(0, len(text))]


def test_candidate_starts_hold_every_occurrence_and_nothing_else_is_needed() -> None:
    from reviewer.review.matching import compile_pack

    compiled = compile_pack(PACK)
    text = "No open incidents. `came up empty` here; 🚀 NO  INCIDENTS, nor the full listing."
    starts = compiled.candidate_starts(text)
    # "No open incidents" starts both "no open incidents" and (at "open") "open incidents"; the code span's
    # phrase and the emoji-prefixed one count too (rules are applied later); "the full listing" does not
    assert [text[s : s + 7].lower() for s in starts] == ["no open", "open in", "came up", "no  inc"]
    assert all(h.start in starts for h in compiled.hits(text))
    assert compiled.candidate_starts("nothing to see") == []
