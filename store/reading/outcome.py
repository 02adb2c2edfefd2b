"""What happened to a run's answer: delivered, or withheld by one of the framework's channels.

`turn_end.finalContent` carries the text even when the caller never received it (format doc §10,
pitfall 1), so the outcome is computed from the channels, in order of precedence, and a withheld
answer is never reported as delivered.
"""

from __future__ import annotations

from typing import Any, Protocol

from store.reading.decode import SharedState


class RunEvents(Protocol):
    by_type: dict[str, list[int]]
    shared: SharedState | None

    def payload(self, index: int) -> dict[str, Any]: ...


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def classify_outcome(run: RunEvents) -> dict[str, Any]:
    """The outcome dict: outcome, channel, summary, seq (the deciding event), refs, flags."""
    by_type, shared = run.by_type, run.shared
    turn_ends = by_type.get("agent.turn_end", [])
    end = run.payload(turn_ends[-1]) if turn_ends else None
    flagged = _gate_flagged(run)

    pauses = by_type.get("pause.request", [])
    if pauses and end is None:
        p = run.payload(pauses[-1])
        question = _d(p.get("questionPayload"))
        asked = question.get("question") or p.get("reason") or "no reason recorded"
        tool = question.get("toolName") or (shared.pausedToolName if shared else None)
        return _result(
            "paused",
            "pause",
            f"Paused awaiting a human, no answer yet: {asked}",
            pauses[-1],
            [{"toolName": tool, "toolCallId": question.get("toolCallId")}] if tool else [],
        )

    negatives = _d(end.get("answerNegatives")) if end else {}
    if negatives.get("delivery") == "withheld":
        claims = [_d(c) for c in _l(negatives.get("claims"))]
        failed = [c for c in claims if c.get("verdict") != "established"]
        reasons = ", ".join(sorted({str(c.get("reason")) for c in failed if c.get("reason")})) or "unstated"
        return _result(
            "withheld",
            "typed-negative",
            f"Typed negative withheld: {len(failed)} of {len(claims)} claim(s) not established ({reasons})",
            turn_ends[-1],
            failed,
        )

    gates = by_type.get("agent.evidence_checked", [])
    last_gate = run.payload(gates[-1]) if gates else {}
    unsupported = _d(shared.unsupportedValues) if shared else {}
    if last_gate.get("action") == "refused" or unsupported.get("refused") is True:
        values = [_d(v) for v in _l(last_gate.get("unsupported") or unsupported.get("values"))]
        shown = ", ".join(str(v.get("value")) for v in values) or "unstated values"
        return _result(
            "refused",
            "evidence-gate",
            f"Refused by the evidence gate: unsupported {shown}",
            gates[-1] if gates else None,
            values,
        )

    for index in reversed(by_type.get("middleware.decision", [])):
        p = run.payload(index)
        if p.get("phase") == "output" and p.get("outcome") == "deny":
            return _result(
                "denied",
                f"middleware:{p.get('middleware')}",
                f"Denied by output middleware {p.get('middleware')!r}: {p.get('why') or 'no reason given'}",
                index,
                [{"middleware": p.get("middleware"), "why": p.get("why")}],
            )
    if shared is not None and shared.messageDeniedReason:
        return _result(
            "denied",
            f"middleware:{shared.messageDeniedBy}",
            f"Denied by middleware {shared.messageDeniedBy!r} at {shared.messageDeniedPhase}: "
            f"{shared.messageDeniedReason}",
            None,
            [],
        )

    unmet = by_type.get("agent.output_contract_unmet", [])
    if unmet or (shared is not None and shared.outputContractUnmet):
        p = run.payload(unmet[-1]) if unmet else _d(shared.outputContractUnmet if shared else None)
        return _result(
            "contract_unmet",
            "output-contract",
            f"Output contract unmet after {p.get('attempts', '?')} attempt(s): {p.get('error') or '?'}"
            + (f" at {p['path']}" if p.get("path") else ""),
            unmet[-1] if unmet else None,
            [p],
        )

    stopped = _d(end.get("stoppedEarly")) if end else {}
    budget = by_type.get("agent.budget_exhausted", [])
    if stopped or budget:
        b = run.payload(budget[-1]) if budget else {}
        reason = stopped.get("reason") or b.get("reason") or "budget"
        action = b.get("action") or ("wrapped-up" if stopped.get("wrappedUp") else "cut-short")
        return _result(
            "cut_short",
            f"stopped-early:{reason}",
            f"Stopped early ({reason}, {action})",
            budget[-1] if budget else (turn_ends[-1] if turn_ends else None),
            [stopped or b],
        )

    if end is None:
        return _result("incomplete", None, "No answer recorded (no turn_end in this recording)", None, [])
    result = _result("delivered", None, "Delivered", turn_ends[-1], [])
    result["flagged"] = flagged
    if negatives:
        result["delivery"] = negatives.get("delivery")
    return result


def _gate_flagged(run: RunEvents) -> bool:
    gates = run.by_type.get("agent.evidence_checked", [])
    return bool(gates) and run.payload(gates[-1]).get("action") == "flagged"


def _result(
    outcome: str, channel: str | None, summary: str, seq: int | None, refs: list[Any]
) -> dict[str, Any]:
    return {"outcome": outcome, "channel": channel, "summary": summary, "seq": seq, "refs": refs}
