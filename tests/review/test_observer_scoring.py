"""Precision and recall on the prediction shape, on a three-answer corpus worked by hand."""

from __future__ import annotations

from reviewer.review.matching import compile_pack
from reviewer.review.observer.no_read import DispatchedRead
from reviewer.review.observer.predict import observe_answer
from reviewer.review.observer.scoring import ObserverScore, score_predictions
from reviewer.review.phrase_pack import PhrasePack
from reviewer.review.replay import FindingLabel, MissedLabel

PACK = compile_pack(PhrasePack.create("p", ["no incidents", "came up empty"]))
A1 = "There are no incidents. The search came up empty. Billing is slow."  # read in turn 0
A2 = "Payments has no incidents."  # no read: one no-read note
A3 = "None. Nothing else to report."  # filtered, and a miss the pack does not cover


def at(text: str, words: str) -> tuple[int, int]:
    start = text.index(words)
    return start, start + len(words)


def test_claims_are_scored_and_whole_answer_notes_counted_apart() -> None:
    preds = [
        *(("a1", p) for p in observe_answer([("answer", A1)], PACK, reads=[DispatchedRead(0)])),
        *(("a2", p) for p in observe_answer([("answer", A2)], PACK)),
        *(("a3", p) for p in observe_answer([("answer", A3)], PACK)),
    ]
    findings = [
        FindingLabel("a1", *at(A1, "no incidents"), "tp"),
        FindingLabel("a1", *at(A1, "came up empty"), "fp"),
    ]
    misses = [
        MissedLabel("a1", *at(A1, "came up empty"), "none"),  # a1 clause 2 is also a labelled miss
        MissedLabel("a2", *at(A2, "no incidents"), "none"),  # only a whole-answer note in a2
        MissedLabel("a3", *at(A3, "Nothing else"), "none"),  # not covered at all
    ]
    got = score_predictions(preds, findings, misses)
    # a1: 2 claims, both labelled; clause 1 tp, clause 2 fp and a miss (confirmed and fp)
    assert got == ObserverScore(
        claims=2,
        labelled_claims=2,
        confirmed_claims=2,
        fp_claims=1,
        misses=3,
        misses_covered=1,
        misses_in_noted_answers=1,
        notes={"no-read": 1},
    )
    assert got.precision == 1.0 and got.recall == 1 / 3
