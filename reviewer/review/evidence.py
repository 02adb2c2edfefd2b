"""The evidence beside one finding: which reads it rests on, the sentence its span sits in, the evictions
behind a dangling reference, what a withheld answer drafted. Pure: the store reads the rows, this decides
what they mean together."""

from __future__ import annotations

from typing import Any

from reviewer.review.dangling import dangling_calls, failed_passes
from store.vocab import DANGLING_REFERENCE, WITHHELD_ANSWER


def assemble_evidence(
    finding: dict[str, Any], run: dict[str, Any], history: list[dict[str, Any]]
) -> dict[str, Any]:
    """One finding with what a judge needs beside it, from the rows `store.findings.evidence_rows` reads.

    - `sentence`: the clause-bearing sentence of the answer around the span (start, end, text), if placeable;
    - `reads`: the tool calls the finding's refs name (or, for a run-level finding, every call of the run),
      each with what it checked, did not check and cannot cover;
    - `evicted`: for a dangling reference, the evictions that dropped the grounds it names;
    - `withheld`: for a withheld answer, the outcome, the drafted answer and the run's gaps;
    - `history`: every label row on it.
    """
    calls = {c["call_id"]: c for c in run["tool_calls"]}
    coverage_by_call: dict[str | None, list[dict[str, Any]]] = {}
    for c in run["coverage"]:
        coverage_by_call.setdefault(c["call_id"], []).append(c)
    ref_calls = []
    for ref in finding["refs"] or []:
        if isinstance(ref, dict):
            cid = ref.get("toolCallId")
            if cid in calls and cid not in ref_calls:
                ref_calls.append(cid)
            name = ref.get("toolName") or ref.get("id")
            for c in run["tool_calls"]:
                if name and c["tool_name"] == name and c["call_id"] not in ref_calls and not cid:
                    ref_calls.append(c["call_id"])
    if finding["call_id"] and finding["call_id"] not in ref_calls:
        ref_calls.append(finding["call_id"])
    if not ref_calls:
        ref_calls = list(calls)
    reads = []
    for cid in ref_calls:
        c = calls[cid]
        cov = coverage_by_call.get(cid, [])
        reads.append(
            {
                "call_id": cid,
                "tool_name": c["tool_name"],
                "iteration": c["iteration"],
                "status": c["status"],
                "error": c["error"],
                "absent": c["absent"],
                "args": c["args"],
                "checked": [x for x in cov if x["list"] == "checked"],
                "not_checked": [x for x in cov if x["list"] == "not_checked"],
                "cannot_cover": [x for x in cov if x["list"] == "cannot_cover"],
            }
        )
    out: dict[str, Any] = {"finding": finding, "run": _run_summary(run), "reads": reads}
    answer = run.get("answer")
    if finding["span"] and isinstance(answer, str):
        out["sentence"] = _sentence(answer, finding["span"]["start"], finding["span"]["end"])
    if finding["kind"] == DANGLING_REFERENCE:
        grounds = {r.get("id") for r in (finding["refs"] or [])[1:] if isinstance(r, dict)}
        out["evicted"] = [
            dict(e, calls=[calls[c] for c in e["call_ids"] if c in calls])
            for e in run["evictions"]
            if grounds & set(e["dropped_tools"] or [])
        ] or run["evictions"]
        out["offered_tool"] = finding["tool_name"]
        out["dangling"] = dangling_calls(
            finding, run["tool_calls"], run["evictions"], run.get("ground_results") or {}
        )
        out["dangling"]["passes"] = failed_passes(run.get("disposition"))
    if finding["kind"] == WITHHELD_ANSWER:
        out["withheld"] = {
            "outcome": run["outcome"],
            "channel": run["outcome_channel"],
            "detail": run["outcome_detail"],
            "draft": answer,
            "gaps": [c for c in run["coverage"] if c["list"] != "checked"],
        }
    out["history"] = history
    return out


def _run_summary(run: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "run_key",
        "run_id",
        "agent_id",
        "outcome",
        "outcome_channel",
        "prompt",
        "answer",
        "started_at",
        "delivered",
        "delivered_as",
        "delivery_headline",
        "starts_mid_run",
        "dropped_events",
    )
    out = {k: run.get(k) for k in keys}
    # a capped or mid-run recording lost its early events: its read ledger is incomplete
    out["ledger_incomplete"] = bool(run.get("starts_mid_run")) or bool(run.get("dropped_events"))
    return out


def _sentence(text: str, start: int, end: int) -> dict[str, Any]:
    """The sentence around [start, end): from the previous sentence end to the next one, bounded."""
    left = max(text.rfind(p, 0, start) for p in (". ", "! ", "? ", "\n"))
    s = 0 if left < 0 else left + 2 if text[left] != "\n" else left + 1
    rights = [i for i in (text.find(p, end) for p in (". ", "! ", "? ", "\n")) if i >= 0]
    e = min(rights) + 1 if rights else len(text)
    s = max(s, start - 400)
    e = min(e, end + 400)
    return {"start": s, "end": e, "text": text[s:e], "span_start": start - s, "span_end": end - s}
