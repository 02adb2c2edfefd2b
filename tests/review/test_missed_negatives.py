"""Which clauses a reviewer marking a missed negative is offered first, and the clause and sentence jumps."""

from __future__ import annotations

from reviewer.review.missed_negatives import (
    flagged_by,
    labelled_missed,
    negative_candidates,
    sentence_spans,
)
from reviewer.review.phrase_pack import PhrasePack

ANSWER = (
    "Release check: there are no open incidents. I did not read the deploy log, but nothing is failing. "
    "The disk is 40% full. That is all of the alerts. No pods are pending."
)


def words(answer: str, span: tuple[int, int]) -> str:
    return answer[span[0] : span[1]]


def flag(phrase: str) -> dict[str, object]:
    start = ANSWER.index(phrase)
    return {"id": f"f-{start}", "span": {"start": start, "end": start + len(phrase)}, "field": None}


def test_negative_looking_clauses_first_and_flagged_ones_never() -> None:
    found = negative_candidates(ANSWER, [flag("there are no open incidents"), flag("nothing is failing")])
    offered = [words(ANSWER, (c.start, c.end)) for c in found]
    assert "The disk is 40% full." not in offered  # nothing negative in it
    assert not any("open incidents" in o or "nothing is failing" in o for o in offered)  # flagged
    # a plain absence before a disclosure ("I did not read"), completeness labelled as such
    assert offered.index("No pods are pending.") < offered.index("I did not read the deploy log,")
    complete = next(c for c in found if "all of the alerts" in words(ANSWER, (c.start, c.end)))
    assert complete.list_name == "complete"
    assert next(c for c in found if "No pods" in words(ANSWER, (c.start, c.end))).list_name == "none"


def test_labelled_missed_clauses_and_pack_phrases() -> None:
    start = ANSWER.index("No pods")
    missed = [{"span_start": start, "span_end": start + 3}]
    assert labelled_missed((start, start + 20), missed) and not labelled_missed((0, 5), missed)
    assert not any(
        "No pods" in words(ANSWER, (c.start, c.end)) for c in negative_candidates(ANSWER, missed=missed)
    )
    # a reviewer's pack adds its phrases as cues: "40% full" is not negative until a pack says it is
    pack = PhrasePack.create("mine", none=["40% full"])
    disk = [c for c in negative_candidates(ANSWER, packs=[pack]) if "disk" in words(ANSWER, (c.start, c.end))]
    assert disk and disk[0].cues == ("40% full",)


def test_flagged_by_names_the_overlapping_finding() -> None:
    f = flag("nothing is failing")
    at = ANSWER.index("failing")
    assert flagged_by((at, at + 3), [f]) == f["id"]
    assert flagged_by((0, 7), [f]) is None
    assert (
        flagged_by((at, at + 3), [{**f, "field": "$.summary"}]) is None
    )  # a typed field's span is elsewhere


def test_sentences_join_their_clauses() -> None:
    assert [words(ANSWER, s) for s in sentence_spans(ANSWER)] == [
        "Release check: there are no open incidents.",
        "I did not read the deploy log, but nothing is failing.",
        "The disk is 40% full.",
        "That is all of the alerts.",
        "No pods are pending.",
    ]
    assert [words("one\ntwo, but three", s) for s in sentence_spans("one\ntwo, but three")] == [
        "one",
        "two, but three",
    ]
