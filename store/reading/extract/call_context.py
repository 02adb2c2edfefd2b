"""What a tool call's own row cannot say: the completeness its read declared, and the decisions around it.

- `complete`: a search declaration's `complete` (negative-claims.md section 4, seed 000:
  `complete: 'within-arguments'`) where the recording carries one for the read: on `tools.absent`,
  `tools.coverage_declared`, the semantic envelope's coverage, the result's `af_absent` /
  `af_coverage` wrapper, or the snapshot's `coverageDeclared` row. A `checked` list is never a
  completeness basis, so it is not read here.
- `decisions`: the `middleware.decision` rows at the tool (`before-tool` and `after-tool` moments, by
  `toolCallId`), `checkin.*` rows (by `toolCallId`), and `permission.check` results other than `allow`
  and `permission.halt`, placed on the call in flight for their tool (recording-format.md section 17
  point 5: a denied, declined or halted call ends with neither `error` nor `status`; the decision
  lives beside it). An after-tool row with `changed` means the recorded `tool_end.result` is what the
  tool returned, not what the model read (src/core/agent/middleware/runChain.ts).
"""

from __future__ import annotations

from typing import Any

from store.reading.extract.walk import RunWalk, as_dict, as_list, as_str
from store.reading.text import bounded, dumps

#: Decision rows kept per call; recorded text in them is cut to DECISION_TEXT characters.
MAX_DECISIONS = 50
DECISION_TEXT = 500


def complete_value(value: Any) -> str | None:
    """A declared `complete` as text (`within-arguments`, `true`), or None when nothing is declared."""
    if value is True:
        return "true"
    if isinstance(value, str) and value.strip():
        return bounded(value, DECISION_TEXT)
    return None


def attach_complete(walk: RunWalk, calls: dict[str, dict[str, Any]]) -> None:
    """Set `complete` on each call whose read declared one (the first declaration wins)."""
    for c in calls.values():
        c.setdefault("complete", None)
    for i in walk.of_types("tools.absent", "tools.coverage_declared", "tools.semantics_declared"):
        p = walk.payload(i)
        call = calls.get(as_str(p.get("toolCallId")) or "")
        if call is None or call["complete"] is not None:
            continue
        if walk.shorts[i] == "tools.semantics_declared":
            declared = as_dict(as_dict(p.get("semantics")).get("coverage")).get("complete")
        else:
            declared = p.get("complete")
        call["complete"] = complete_value(declared)
    for c in calls.values():
        value = c.get("_result_value")
        if c["complete"] is None and isinstance(value, dict):
            wrapper = value if value.get("af_absent") is True else as_dict(value.get("af_coverage"))
            c["complete"] = complete_value(wrapper.get("complete"))
    if walk.shared is not None:  # the snapshot's coverage ledger (the last run only)
        for row in as_list(walk.shared.coverageDeclared):
            r = as_dict(row)
            call = calls.get(as_str(r.get("toolCallId")) or "")
            if call is not None and call["complete"] is None:
                call["complete"] = complete_value(r.get("complete"))


def _text(value: Any) -> str | None:
    text = as_str(value) if isinstance(value, str) else None
    return bounded(text, DECISION_TEXT) if text else None


def _decision(walk: RunWalk, i: int) -> dict[str, Any]:
    p = walk.payload(i)
    t = walk.shorts[i]
    row: dict[str, Any] = {"event": t, "seq": i}
    if t == "middleware.decision":
        row.update(
            by=_text(p.get("middleware")),
            moment=_text(p.get("moment")),
            outcome=_text(p.get("outcome")),
            changed=p.get("changed") is True,
            why=_text(p.get("why")),
        )
    elif t == "checkin.decision":
        row.update(
            by=_text(p.get("by")),
            outcome="approved" if p.get("approved") is True else "declined",
            why=_text(p.get("note")),
        )
    elif t == "checkin.request":
        row.update(
            outcome="asked", why=_text(p.get("request")) if isinstance(p.get("request"), str) else None
        )
    elif t == "permission.check":
        row.update(
            by=_text(p.get("policyEngine")),
            outcome=_text(p.get("result")),
            why=_text(p.get("rationale")) or _text(p.get("reason")),
            rule=_text(p.get("policyRuleId")),
        )
    else:  # permission.halt
        row.update(by=_text(p.get("checkerId")), outcome="halt", why=_text(p.get("reason")))
    return {k: v for k, v in row.items() if v is not None}


def attach_decisions(walk: RunWalk, calls: dict[str, dict[str, Any]]) -> None:
    """Set `decisions` on each call: the recorded decisions that allowed, changed, declined or stopped it."""
    found: dict[str, list[dict[str, Any]]] = {}
    in_flight: dict[str, str] = {}  # tool name -> the call id started and not yet ended
    names = {cid: c.get("tool_name") for cid, c in calls.items()}
    for i in walk.of_types(
        "stream.tool_start",
        "stream.tool_end",
        "middleware.decision",
        "checkin.",
        "permission.check",
        "permission.halt",
    ):
        t = walk.shorts[i]
        p = walk.payload(i)
        call_id = as_str(p.get("toolCallId"))
        if t == "stream.tool_start" and call_id:
            in_flight[names.get(call_id) or ""] = call_id
            continue
        if t == "stream.tool_end" and call_id:
            in_flight = {k: v for k, v in in_flight.items() if v != call_id}
            continue
        if t == "middleware.decision" and p.get("at") != "tool":
            continue
        if t.startswith("permission."):
            if t == "permission.check" and p.get("result") in (None, "allow"):
                continue
            target = as_str(p.get("target"))
            call_id = (
                call_id
                or in_flight.get(target or "")
                or (next(iter(in_flight.values())) if len(in_flight) == 1 and not target else None)
            )
        if call_id in calls:
            kept = found.setdefault(call_id, [])
            if len(kept) < MAX_DECISIONS:
                kept.append(_decision(walk, i))
    for cid, c in calls.items():
        rows = found.get(cid)
        c["decisions"] = dumps(rows) if rows else None
