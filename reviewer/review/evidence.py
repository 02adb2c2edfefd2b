"""The evidence beside one finding: which reads it rests on, the sentence its span sits in, the evictions
behind a dangling reference, what a withheld answer drafted. Pure: the store reads the rows, this decides
what they mean together."""

from __future__ import annotations

from typing import Any

from reviewer.review.claim_licensing import flagged_text, license_finding
from reviewer.review.dangling import dangling_calls, failed_passes
from reviewer.review.licensing import APPLIES_TO
from store.vocab import DANGLING_REFERENCE, WITHHELD_ANSWER

#: Said of a `no-read` note: what it means, and what it cannot mean (negative-claims.md section 4).
NO_READ = "no-read: no read was recorded for this turn"
LEDGER_INCOMPLETE = (
    "this recording is capped or starts mid-run, so the ledger is incomplete: "
    "no-read does not prove that no read occurred"
)


def assemble_evidence(
    finding: dict[str, Any], run: dict[str, Any], history: list[dict[str, Any]]
) -> dict[str, Any]:
    """One finding with what a judge needs beside it, from the rows `store.findings.evidence_rows` reads.

    - `sentence`: the clause-bearing sentence around the span (start, end, text), if placeable: in the
      answer, or for a typed answer in the string value of the finding's `field` (then `field` is set);
    - `reads`: the tool calls the finding's refs name (or, for a run-level finding, every call of the run),
      each with what it checked, did not check and cannot cover, and its declared `complete`;
    - for a negative claim, `licensing` (`reviewer.review.licensing`: the assertion class, the verdict,
      the gaps of the named reads) and `context_reads`: the turn's other reads, never evidence;
    - for a `no-read` note, `no_read`: what it says, and whether the ledger is incomplete;
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
    licensed = finding["kind"] in APPLIES_TO
    if not ref_calls and not licensed:
        ref_calls = list(calls)

    def read(cid: Any) -> dict[str, Any]:
        c = calls[cid]
        cov = coverage_by_call.get(cid, [])
        return {
            "call_id": cid,
            "tool_name": c["tool_name"],
            "iteration": c["iteration"],
            "status": c["status"],
            "error": c["error"],
            "absent": c["absent"],
            "args": c["args"],
            "complete": c.get("complete"),
            "checked": [x for x in cov if x["list"] == "checked"],
            "not_checked": [x for x in cov if x["list"] == "not_checked"],
            "cannot_cover": [x for x in cov if x["list"] == "cannot_cover"],
        }

    answer = run.get("answer")
    _clause, sentence = flagged_text(finding, answer)
    out: dict[str, Any] = {"finding": finding, "run": _run_summary(run)}
    if sentence is not None:
        out["sentence"] = sentence
    if licensed:
        judged = license_finding(finding, run, sentence)
        named = [r.call_id for r in judged.evidence if r.call_id is not None and r.call_id in calls]
        out["reads"] = [read(cid) for cid in named]
        out["context_reads"] = [read(cid) for cid in calls if cid not in named]
        out["licensing"] = {**judged.as_dict(), "note": judged.note, "gaps": list(judged.gaps)}
    else:
        out["reads"] = [read(cid) for cid in ref_calls]
    if finding["kind"] == "negative-claim-note" and "no-read" in (finding.get("codes") or []):
        out["no_read"] = {
            "text": NO_READ,
            "ledger_incomplete": bool(run.get("starts_mid_run")) or bool(run.get("dropped_events")),
            "caveat": LEDGER_INCOMPLETE,
        }
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
