"""Does the evidence license the wording? Table tests worked by hand from negative-claims.md section 4."""

from __future__ import annotations

from typing import Any

import pytest

from reviewer.review.licensing import Read, classify_assertion, judge, reads_from_rows

# Each row classed by reading the sentence: what does the negative predicate assert?
WORDING = [
    ("I searched the vault and the programme does not exist.", "absolute"),
    ("The programme does not exist.", "absolute"),
    ("There is no such account.", "absolute"),
    ("there are no open incidents for payments", "absolute"),
    ("None exist, I checked twice in the vault.", "absolute"),
    ("We looked everywhere; no such ticket.", "absolute"),
    ("The vault has no record of the programme.", "bounded"),
    ("The programme was not found in the vault.", "bounded"),
    ("no open incidents were found in the incident store", "bounded"),
    ("The programme does not exist in the vault.", "bounded"),
    ("There are no open incidents in the incident store.", "bounded"),
    ("The search returned no rows.", "bounded"),
    ("The programme does not exist; it was not found in the vault.", "absolute"),
    ("There\u2019s no such programme.", "absolute"),
    ("The programme doesn\u2019t exist.", "absolute"),
    ("The vault has no record of the programme, so it does not exist.", "absolute"),
    ("No such programme was found in the vault.", "bounded"),
    ("nothing is failing in eu-west-1", None),
    ("I searched the vault.", None),
    ("", None),
    (None, None),
]


@pytest.mark.parametrize(("clause", "expected"), WORDING)
def test_the_class_comes_from_the_assertion(clause: str | None, expected: str | None) -> None:
    assert classify_assertion(clause) == expected


VAULT = Read(
    "call-1", "search_vault", "r1", checked=("the vault",), gaps=("archived programmes: not indexed",)
)
VAULT_COMPLETE = Read("call-1", "search_vault", "r1", checked=("the vault",), complete="within-arguments")
OTHER = Read("call-2", "list_people", "r2", gaps=("contractors: another system",))
REF = [{"toolCallId": "call-1", "toolName": "search_vault"}]


def test_the_essays_failure_case_outruns_its_evidence() -> None:
    got = judge(
        "negative-claim", "I searched the vault and the programme does not exist.", REF, [VAULT, OTHER]
    )
    assert (got.assertion, got.licensing) == ("absolute", "outruns")
    assert got.verdict == "absolute wording, no declared completeness basis: outruns its evidence"
    assert got.evidence == (VAULT,)
    assert got.context == (OTHER,)
    assert got.gaps == ("archived programmes: not indexed",)
    assert "heuristic" in got.note


CASES = [
    # (kind, clause, refs, reads) -> (assertion, licensing, evidence call ids, gaps counted)
    (
        "absolute, a checked list only",
        "negative-claim",
        "The programme does not exist.",
        REF,
        [VAULT],
        ("absolute", "outruns", ("call-1",), 1),
    ),
    (
        "absolute, declared complete",
        "negative-claim",
        "The programme does not exist.",
        REF,
        [VAULT_COMPLETE],
        ("absolute", "licensed", ("call-1",), 0),
    ),
    (
        "completeness on an unnamed read does not count",
        "negative-claim",
        "The programme does not exist.",
        REF,
        [VAULT, Read("call-2", "x", complete="within-arguments")],
        ("absolute", "outruns", ("call-1",), 1),
    ),
    (
        "bounded",
        "negative-claim",
        "The vault has no record of it.",
        REF,
        [VAULT, OTHER],
        ("bounded", "licensed", ("call-1",), 1),
    ),
    (
        "no read named: other reads' gaps are not counted",
        "negative-claim",
        "The programme does not exist.",
        [],
        [VAULT, OTHER],
        ("absolute", "unjudgeable", (), 0),
    ),
    (
        "named by handle",
        "negative-claim",
        "The vault has no record of it.",
        [{"handle": "r2"}],
        [VAULT, OTHER],
        ("bounded", "licensed", ("call-2",), 1),
    ),
    (
        "a ref naming no read of the turn",
        "negative-claim",
        "No such thing.",
        [{"toolCallId": "gone"}],
        [VAULT],
        ("absolute", "unjudgeable", (), 0),
    ),
    (
        "unclassed wording",
        "negative-claim",
        "nothing is failing in eu-west-1",
        REF,
        [VAULT],
        (None, None, ("call-1",), 1),
    ),
    (
        "kind it does not apply to",
        "unsupported-claim",
        "The programme does not exist.",
        REF,
        [VAULT],
        ("absolute", None, (), 0),
    ),
]


@pytest.mark.parametrize(
    ("name", "kind", "clause", "refs", "reads", "expected"), CASES, ids=[c[0] for c in CASES]
)
def test_licensing_table(
    name: str,
    kind: str,
    clause: str,
    refs: list[dict[str, Any]],
    reads: list[Read],
    expected: tuple[Any, ...],
) -> None:
    got = judge(kind, clause, refs, reads)
    assert (got.assertion, got.licensing, tuple(r.call_id for r in got.evidence), len(got.gaps)) == expected


def test_reads_from_store_rows() -> None:
    calls = [{"call_id": "c1", "tool_name": "list_incidents"}, {"call_id": "c2", "tool_name": "other"}]
    coverage: list[dict[str, str | None]] = [
        {"call_id": "c1", "list": "checked", "what": "the incident store", "why": None},
        {"call_id": "c1", "list": "cannot_cover", "what": "email reports", "why": "never enter this store"},
        {
            "call_id": "c2",
            "list": "not_checked",
            "what": "archive",
            "why": None,
            "complete": "within-arguments",
        },
    ]
    first, second = reads_from_rows(calls, coverage)
    assert first == Read(
        "c1", "list_incidents", None, ("the incident store",), ("email reports: never enter this store",)
    )
    assert (second.gaps, second.complete) == (("archive",), "within-arguments")
