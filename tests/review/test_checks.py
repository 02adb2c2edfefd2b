"""Reading integrity.disposition rows: "0 findings" differs from "never armed" (src/integrity/disposition)."""

from __future__ import annotations

import json

import pytest

from reviewer.review.checks import check_state, check_states, checks_summary
from tests.conftest import FIXTURE_RECORDINGS


def _row(**counts: int) -> dict:
    return {"check": "dangling-reference", "seam": "compose", **counts}


@pytest.mark.parametrize(
    ("counts", "state", "text"),
    [
        (
            {"checked": 6, "findings": 6, "notApplicable": 3},
            "found",
            "ran 6 times, failed 6 times; not applicable 3 times",
        ),
        ({"checked": 3}, "ran", "ran 3 times: 0 findings"),
        ({"notApplicable": 1}, "not-applicable", "never ran: unarmed or out of scope (1 n/a)"),
        ({"unreachable": 2}, "unreachable", "never ran: unreachable 2 times (no identity edge)"),
        ({}, "never-met", "never met anything to check"),
        ({"checked": 1, "synthetic": 1}, "ran", "ran once: 0 findings; dev canary caught 1 (counted apart)"),
    ],
)
def test_each_row_reads_as_one_state(counts: dict, state: str, text: str) -> None:
    got = check_state(_row(**counts))
    assert (got.state, got.text) == (state, text)


def test_the_dev_posture_recording() -> None:
    doc = json.loads((FIXTURE_RECORDINGS / "integrity-dev-posture-disposition.json").read_text())
    [payload] = [e["payload"] for e in doc["events"] if e["type"].endswith("integrity.disposition")]
    states = check_states(payload)
    assert [s.state for s in states] == ["ran", "not-applicable", "not-applicable", "not-applicable"]
    assert all("dev canary caught 1" in s.text for s in states)
    assert checks_summary(payload).startswith("1 of 4 checks ran (invariant-violation@wire); 3 never ran")
    assert "posture dev" in checks_summary(payload)


def test_no_disposition_says_the_checks_cannot_be_told() -> None:
    assert checks_summary(None).startswith("no integrity.disposition in this recording")
    assert check_states({"rows": "not a list"}) == []
