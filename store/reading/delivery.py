"""What the person received: `delivered` and `delivered_as`, kept apart from what went wrong.

Pure (no SQL). `classify_outcome` says which channel decided the run; this module answers the other
question (negative-claims.md section 3, recording-format.md section 10, and the framework's
`src/core/agent/stages/route.ts`): an output contract unmet is delivered raw (`run()` "does NOT
throw"), a wrapped-up run delivered its wrap-up answer, a cut-short run delivered "whatever text rode
the last call". Only refusal, output denial, a permission halt, a withheld typed negative and a pause
leave the person with nothing, and only the first four are withheld answers: a paused run is still
awaiting a person.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from store.reading.outcome import RunEvents, classify_outcome
from store.reading.text import as_text, bounded
from store.vocab import DELIVERED_AS, HALTED, WITHHOLDING

#: Recorded text inside a headline is cut to this many characters (the full text stays in the run).
HEADLINE_TEXT = 300
#: The delivered fallback sentence is kept up to this many characters.
DELIVERED_TEXT = 4_000

__all__ = ["DELIVERED_AS", "WITHHOLDING", "Delivery", "decide_delivery"]


@dataclass(frozen=True)
class Delivery:
    """What the person received; `outcome` is the run's outcome with `halted` told apart."""

    outcome: str
    delivered: bool
    delivered_as: str | None
    withheld: bool
    headline: str
    #: what the person received when it is not the draft and the recording holds it (the typed
    #: state-searched sentence); None otherwise. An output fallback's value is never recorded.
    delivered_text: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "delivered": self.delivered,
            "delivered_as": self.delivered_as,
            "withheld": self.withheld,
            "headline": self.headline,
            "delivered_text": self.delivered_text,
        }


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    """Recorded text for a headline: plain, bounded (the view escapes it)."""
    return bounded(as_text(value), HEADLINE_TEXT) if value not in (None, "") else None


def decide_delivery(run: RunEvents, outcome: dict[str, Any] | None = None) -> Delivery:
    """Decide what the person received, from the run's events and its classified outcome."""
    outcome = outcome if outcome is not None else classify_outcome(run)
    kind = str(outcome.get("outcome"))
    by_type = run.by_type
    has_end = bool(by_type.get("agent.turn_end"))

    if kind == "paused":
        return Delivery("paused", False, None, False, f"paused, awaiting a person: {_question(run)}")
    halts = by_type.get("permission.halt", [])
    if halts:  # Agent.run throws PolicyHaltError whenever the halt fields are set (src/core/Agent.ts)
        p = run.payload(halts[-1])
        why = _text(p.get("reason")) or "no reason recorded"
        target = _text(p.get("target")) or "an unnamed tool"
        return Delivery(HALTED, False, None, False, f"halted by a permission policy at {target}: {why}")
    if kind == "withheld":
        return Delivery(kind, False, None, True, "WITHHELD: the typed negative was not established")
    if kind in WITHHOLDING:
        return Delivery(kind, False, None, True, f"WITHHELD: {_text(outcome.get('summary'))}")
    if by_type.get("resilience.output_canned_used"):
        return Delivery(
            kind, True, "fallback", False, "delivered the canned output fallback in place of the draft"
        )
    if by_type.get("resilience.output_fallback_triggered"):
        # runTyped() returns the fallback function's value, or throws when that fails validation and
        # no canned value is set; nothing is emitted on success, so the recording cannot tell the two.
        return Delivery(
            kind,
            True,
            "fallback",
            False,
            "delivered the output fallback in place of the draft (unless the fallback failed too: "
            "runTyped() then threw, and the recording cannot show it)",
        )
    if kind == "contract_unmet":
        return Delivery(kind, True, "raw", False, "delivered raw: failed its output contract")
    if kind == "cut_short":
        return _stopped(run, outcome)
    if kind == "incomplete" or not has_end:
        return Delivery(kind, False, None, False, "no answer recorded in this recording")
    sentence = _typed_state_searched(run)
    if sentence is not None:
        return Delivery(
            kind,
            True,
            "fallback",
            False,
            f"delivered the state-searched fallback: {_text(sentence)}",
            bounded(sentence, DELIVERED_TEXT),
        )
    return Delivery(kind, True, "drafted", False, "delivered as drafted")


def _stopped(run: RunEvents, outcome: dict[str, Any]) -> Delivery:
    """Wrapped up (the wrap-up answer IS the turn's answer) or cut short (a fragment)."""
    refs = outcome.get("refs") or [{}]
    detail = _d(refs[0])
    budget = run.by_type.get("agent.budget_exhausted", [])
    action = run.payload(budget[-1]).get("action") if budget else None
    reason = _text(detail.get("reason")) or "a budget"
    if action == "wrapped-up" or (action is None and detail.get("wrappedUp") is True):
        return Delivery("cut_short", True, "wrap-up", False, f"delivered the wrap-up answer after {reason}")
    return Delivery("cut_short", True, "fragment", False, f"delivered a fragment: cut short at {reason}")


def _question(run: RunEvents) -> str:
    pauses = run.by_type.get("pause.request", [])
    if not pauses:
        return "no question recorded"
    p = run.payload(pauses[-1])
    asked = _d(p.get("questionPayload")).get("question") or p.get("reason")
    return _text(asked) or "no question recorded"


def _typed_state_searched(run: RunEvents) -> str | None:
    """The fallback sentence a `state-searched` typed account delivered, if that is what happened."""
    ends = run.by_type.get("agent.turn_end", [])
    if not ends:
        return None
    account = _d(run.payload(ends[-1]).get("answerNegatives"))
    if account.get("delivery") != "state-searched":
        return None
    fallback = account.get("fallback")
    return (
        as_text(fallback)
        if fallback
        else "The requested complete-list claim is not established; only this absence is."
    )
