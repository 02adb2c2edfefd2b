"""What the person received, for every real recording, against a plain-json reading of the file.

The expected values come from two places that do not call the store: a table written from INDEX.md
and recording-format.md section 10, and `plain_reading`, which applies the section's rules to the
file with `json` alone. Both must agree with `decide_delivery` run by run.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from store.reading.decode import decode_recording
from store.reading.delivery import decide_delivery
from store.reading.extract.walk import CONSUMER_SCOPE, group_runs, short_type
from tests.conftest import FIXTURE_RECORDINGS, SAMPLES

FILES = sorted(FIXTURE_RECORDINGS.glob("*.json"))
NOTHING = (False, None)
DRAFTED = (True, "drafted")

# One entry per run, in first-seen order. Only the files named here differ from "delivered as drafted".
EXPECTED = {
    "answer-withheld-by-output-middleware.json": [NOTHING],
    "evidence-gate-rails-refused.json": [NOTHING],
    "output-schema-retry-then-contract-unmet.json": [(True, "raw")],
    "paused-awaiting-human-args-invalid.json": [NOTHING],
    "multi-turn-conversation-identity.json": [DRAFTED, DRAFTED, DRAFTED],
}


class _Run:
    """The minimal RunEvents view `classify_outcome` and `decide_delivery` read."""

    def __init__(self, events: list[dict[str, Any]], indexes: list[int], shared: Any) -> None:
        self._events = events
        self.shared = shared
        self.by_type: dict[str, list[int]] = defaultdict(list)
        for i in indexes:
            self.by_type[short_type(events[i]["type"])].append(i)

    def payload(self, index: int) -> dict[str, Any]:
        p = self._events[index].get("payload")
        return p if isinstance(p, dict) else {}


def store_reading(path: Path) -> list[tuple[bool, str | None]]:
    rec = decode_recording(path.read_bytes(), str(path))
    groups = group_runs(rec.metas)
    events = [{"type": t, "payload": p} for t, p in zip(rec.types, rec.payloads, strict=True)]
    last = max((idx[-1], rid) for rid, idx in groups.items() if rid != CONSUMER_SCOPE)[1]
    out = []
    for run_id, indexes in groups.items():
        shared = rec.shared_state if run_id == last else None
        d = decide_delivery(_Run(events, indexes, shared))
        out.append((d.delivered, d.delivered_as))
    return out


def plain_reading(path: Path) -> list[tuple[bool, str | None]]:
    doc = json.loads(path.read_text())
    events = (doc["recording"] if "format" in doc else doc)["events"]
    runs: dict[str, list[dict[str, Any]]] = {}
    current = None
    for e in events:
        rid = (e.get("meta") or {}).get("runId")
        if rid and rid != "consumer-scope":
            current = rid
            runs.setdefault(rid, [])
        if current is not None:
            runs[current].append(e)
    return [received(evs) for evs in runs.values()]


def received(evs: list[dict[str, Any]]) -> tuple[bool, str | None]:
    """(delivered, delivered_as) of one run's events, by recording-format.md section 10, with `json` alone."""

    def of(t: str) -> list[dict[str, Any]]:
        return [e.get("payload") or {} for e in evs if e["type"] == "agentfootprint." + t]

    ends = of("agent.turn_end")
    if of("pause.request") and not ends or of("permission.halt"):
        return NOTHING
    gates = of("agent.evidence_checked")
    if gates and gates[-1].get("action") == "refused":
        return NOTHING
    if any(m.get("phase") == "output" and m.get("outcome") == "deny" for m in of("middleware.decision")):
        return NOTHING
    if ends and (ends[-1].get("answerNegatives") or {}).get("delivery") == "withheld":
        return NOTHING
    if (
        of("resilience.output_fallback_triggered")
        or of("resilience.output_canned_used")
        or (ends and (ends[-1].get("answerNegatives") or {}).get("delivery") == "state-searched")
    ):
        return (True, "fallback")
    if of("agent.output_contract_unmet"):
        return (True, "raw")
    budget = of("agent.budget_exhausted")
    stopped = (ends[-1].get("stoppedEarly") if ends else None) or {}
    if budget or stopped:
        wrapped = budget[-1].get("action") == "wrapped-up" if budget else bool(stopped.get("wrappedUp"))
        return (True, "wrap-up" if wrapped else "fragment")
    return DRAFTED if ends else NOTHING


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_real_recording_says_what_the_personreceived(path: Path) -> None:
    got = store_reading(path)
    expected = EXPECTED.get(path.name, [DRAFTED] * len(got))
    assert got == expected
    assert got == plain_reading(path)


@pytest.mark.parametrize(
    "name", ["typed-negatives-withheld.json", "envelope-typed-negatives-as-checked.json"]
)
def test_typed_samples(name: str) -> None:
    path = SAMPLES / name
    expected = NOTHING if "withheld" in name else DRAFTED
    assert store_reading(path) == [expected] == plain_reading(path)


def _ev(t: str, **payload: Any) -> dict[str, Any]:
    return {"type": "agentfootprint." + t, "payload": payload, "meta": {"runId": "run-1"}}


END = _ev("agent.turn_end", finalContent="the answer")

# Cases no real 9.62.0 recording holds, written from route.ts, payloads.ts and outputFallback.ts.
CASES = {
    "wrapped up": (
        [_ev("agent.budget_exhausted", reason="max-iterations", action="wrapped-up"), END],
        ("cut_short", True, "wrap-up", False),
    ),
    "cut short": (
        [_ev("agent.budget_exhausted", reason="cost-budget", action="cut-short"), END],
        ("cut_short", True, "fragment", False),
    ),
    "stoppedEarly only, wrapped": (
        [_ev("agent.turn_end", stoppedEarly={"reason": "max-iterations", "wrappedUp": True})],
        ("cut_short", True, "wrap-up", False),
    ),
    "halted by a permission policy": (
        [_ev("permission.halt", target="wire_money", reason="over limit")],
        ("halted", False, None, False),
    ),
    "output fallback after an unmet contract": (
        [_ev("agent.output_contract_unmet", attempts=2), END, _ev("resilience.output_fallback_triggered")],
        ("contract_unmet", True, "fallback", False),
    ),
    "canned output fallback": (
        [_ev("agent.output_contract_unmet"), END, _ev("resilience.output_canned_used")],
        ("contract_unmet", True, "fallback", False),
    ),
    "state-searched typed fallback": (
        [_ev("agent.turn_end", answerNegatives={"delivery": "state-searched"})],
        ("delivered", True, "fallback", False),
    ),
    "paused": (
        [_ev("pause.request", questionPayload={"question": "Approve the refund?"})],
        ("paused", False, None, False),
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_delivery_cases(name: str) -> None:
    events, (outcome, delivered, delivered_as, withheld) = CASES[name]
    d = decide_delivery(_Run(events, list(range(len(events))), None))
    assert (d.outcome, d.delivered, d.delivered_as, d.withheld) == (
        outcome,
        delivered,
        delivered_as,
        withheld,
    )
    assert received(events) == (delivered, delivered_as)


def test_banners_name_the_problem_not_withholding() -> None:
    def headline(events: list[dict[str, Any]]) -> str:
        return decide_delivery(_Run(events, list(range(len(events))), None)).headline

    assert headline(CASES["cut short"][0]) == "delivered a fragment: cut short at cost-budget"
    assert headline(CASES["paused"][0]) == "paused, awaiting a person: Approve the refund?"
    assert headline([_ev("agent.output_contract_unmet"), END]) == "delivered raw: failed its output contract"
    assert "WITHHELD" not in headline(CASES["wrapped up"][0])


def test_headlines_bound_recorded_text() -> None:
    events = [_ev("pause.request", questionPayload={"question": "[b]approve?[/b]" * 1000})]
    headline = decide_delivery(_Run(events, [0], None)).headline
    assert headline.startswith("paused, awaiting a person: [b]approve?[/b]")
    assert len(headline) < 400
