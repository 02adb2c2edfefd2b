"""The per-phrase ledger on a small labelled corpus, every figure worked by hand."""

from __future__ import annotations

from reviewer.review.phrase_ledger import PhraseLedgerRow, phrase_ledger
from reviewer.review.phrase_pack import PhrasePack
from reviewer.review.replay import FindingLabel, MissedLabel

PACK = PhrasePack.create("p", ["no incidents", "came up empty"], ["the full list"])
A1 = "There are no incidents. No incidents for billing, no incidents at all."
A2 = "The search came up empty. That is the full list."
A3 = "No incidents in `no incidents` code. The scan came up empty"


def at(text: str, words: str, nth: int = 0) -> tuple[int, int]:
    start = -1
    for _ in range(nth + 1):
        start = text.index(words, start + 1)
    return start, start + len(words)


def test_hits_true_and_false_positives_and_misses_covered_per_phrase() -> None:
    findings = [
        FindingLabel("a1", *at(A1, "no incidents"), "tp"),  # clause 1: tp
        FindingLabel("a1", *at(A1, "No incidents for billing"), "fp"),  # clause 2 (holds two hits): fp
        FindingLabel("a2", *at(A2, "the full list"), "fp"),
        FindingLabel("a3", *at(A3, "No incidents"), "unsure"),  # counts neither way
    ]
    misses = [
        MissedLabel("a2", *at(A2, "came up empty"), "none"),
        MissedLabel("a3", *at(A3, "came up empty"), "none"),
        MissedLabel("a3", *at(A3, "The scan"), "none"),  # same clause: a second miss covered
        MissedLabel("a1", *at(A1, "There are"), "none"),  # covered by "no incidents" clause 1
    ]
    ledger = phrase_ledger(PACK, [("a1", A1), ("a2", A2), ("a3", A3)], findings, misses)
    clause2 = at(A1, "No incidents for billing, no incidents at all.")
    full_list = at(A2, "That is the full list.")
    assert ledger == [
        # a1: 2 clauses (the second holds two hits: counted once); a3: 1 clause (the code one is skipped)
        PhraseLedgerRow("no incidents", "none", 3, 1, 1, 1, (("a1", *clause2),)),
        # a2 clause 1 and a3 clause 2; three misses overlap those clauses
        PhraseLedgerRow("came up empty", "none", 2, 0, 0, 3, ()),
        PhraseLedgerRow("the full list", "complete", 1, 0, 1, 0, (("a2", *full_list),)),
    ]
    assert ledger[0].precision == 0.5 and ledger[1].precision is None and ledger[2].precision == 0.0


def test_a_phrase_with_no_hits_is_listed_with_zeros() -> None:
    assert phrase_ledger(PACK, [("x", "All clear.")]) == [
        PhraseLedgerRow("no incidents", "none"),
        PhraseLedgerRow("came up empty", "none"),
        PhraseLedgerRow("the full list", "complete"),
    ]
