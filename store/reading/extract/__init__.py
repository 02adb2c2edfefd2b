"""One decoded recording -> rows for every review table. Pure: no SQL, no I/O.

The reading follows `shared/docs/recording-format.md` (sections cited inline) and
`shared/docs/negative-claims.md`. Every key is treated as optional; an unknown event type is counted, kept
in the compressed original and never fatal. `walk` groups a recording's events into runs and indexes each
run; the other modules each turn a walked run into the rows of one table, in the order `extract` calls them.
"""

from __future__ import annotations

from store.reading.decode import Recording
from store.reading.delivery import decide_delivery
from store.reading.extract.calls import tool_calls
from store.reading.extract.coverage import coverage
from store.reading.extract.evictions import evictions
from store.reading.extract.findings import findings
from store.reading.extract.run_row import run_row
from store.reading.extract.timeline import timeline
from store.reading.extract.walk import (
    Extracted,
    RunWalk,
    as_str,
    last_real_run,
    run_groups,
)
from store.reading.outcome import classify_outcome
from store.reading.text import dumps

__all__ = ["Extracted", "extract"]


def extract(rec: Recording, *, sha256: str, origin: str, container: str, size: int) -> Extracted:
    """Every row of one recording. `sha256` names the content and seeds every stable id."""
    shorts, payloads = rec.shorts, rec.payloads
    groups = run_groups(rec)
    snapshot_run = last_real_run(groups)
    env_run = rec.envelope_run or {}
    producer = rec.producer or {}
    out = Extracted(
        recording={
            "sha256": sha256,
            "source": origin,
            "container": container,
            "form": rec.form,
            "bytes": size,
            "events": len(rec.types),
            "skipped_events": rec.skipped_events,
            "runs": len(groups),
            "has_snapshot": int(rec.has_snapshot),
            "agentfootprint_version": as_str(producer.get("agentfootprintVersion")),
            "footprintjs_version": as_str(producer.get("footprintjsVersion")),
            "envelope_run": dumps(rec.envelope_run),
        }
    )
    for run_id, indexes in groups.items():
        shared = rec.shared_state if run_id == snapshot_run else None
        run_env = env_run if (env_run and (env_run.get("runId") == run_id or len(groups) == 1)) else {}
        _extract_run(RunWalk(out, rec, run_id, indexes, shared, run_env, sha256, shorts, payloads))
    return out


def _extract_run(walk: RunWalk) -> None:
    calls = tool_calls(walk)
    ledger = coverage(walk, calls)
    dropped = evictions(walk, calls)
    outcome = classify_outcome(walk)
    delivery = decide_delivery(walk, outcome)
    # `halted` is told apart here (classify_outcome sees a halted run as one with no answer)
    outcome = dict(outcome, outcome=delivery.outcome)
    found = findings(walk, calls, ledger, outcome)
    timeline(walk)
    run_row(walk, calls, ledger, dropped, found, outcome, delivery)
    started = walk.out.runs[-1]["started_ms"]
    for finding in found:  # the queue's newest-first order reads it from the finding (schema m030)
        finding["run_started_ms"] = started
