"""The run's timeline rows: one bounded row per event the run screen's timeline draws, no other."""

from __future__ import annotations

from typing import Any

from store.reading.decode import PREFIX
from store.reading.extract.walk import RunWalk
from store.reading.text import as_text, bounded

#: Timeline rows keep a short summary; the full payload stays in the compressed original.
SUMMARY_CHARS = 160
#: The events the run screen's timeline draws (an iteration's start, and the model's text that ends it),
#: and so the only ones given a row. Every other event reaches the reviewer through its own table (tool
#: calls, coverage, semantics, evictions, findings, the run's outcome and delivery) or is mechanical
#: (tokens, context composition, route bookkeeping); all of them stay in the compressed original. A row
#: per narrative event cost 7-11% of the ingest's CPU and was never read (issue 16, bench/RESULTS.md).
SHOWN = ("agent.iteration_start", "stream.llm_end")
#: the same, as recorded (what the store's timeline query selects)
SHOWN_TYPES = tuple(f"{PREFIX}{t}" for t in SHOWN)
#: The payload field a row's summary shows, by event type (otherwise: the first keys).
SUMMARY_FIELD = {"stream.llm_end": "content"}


def timeline(walk: RunWalk) -> None:
    """One bounded row per event the timeline draws (SHOWN), in the run's order."""
    types, metas, payloads = walk.rec.types, walk.rec.metas, walk.payloads
    key, iteration_at, rows = walk.key, walk.iteration_at.get, walk.out.events
    for i in sorted(i for t in SHOWN for i in walk.by_type.get(t, ())):
        m = metas[i]
        p = payloads[i]
        stage, wall, call_id = m.runtimeStageId, m.wallClockMs, p.get("toolCallId")
        rows.append(
            {
                "run_key": key,
                "seq": i,
                "type": types[i],
                "stage": stage if isinstance(stage, str) else None,
                "wall_ms": wall if type(wall) is int else None,  # as_int: a JSON integer, not a bool
                "iteration": iteration_at(i),
                "call_id": call_id if isinstance(call_id, str) else None,
                "summary": _summary(walk.shorts[i], p),
            }
        )


def _summary(t: str, p: dict[str, Any]) -> str | None:
    """A one-line, bounded description of an event for the timeline."""
    pick = SUMMARY_FIELD.get(t)
    value = p.get(pick) if pick else None
    if value is None:
        keys = ", ".join(list(p)[:6])
        return bounded(keys, SUMMARY_CHARS) if keys else None
    text = as_text(value) or ""
    if len(text) > SUMMARY_CHARS * 8:  # squeeze only a prefix: splitting 20 MB of words took 10x its size
        head = " ".join(text[: SUMMARY_CHARS * 8].split())
        return head[:SUMMARY_CHARS] + f"… [{len(text) - SUMMARY_CHARS:,} more characters]"
    return bounded(" ".join(text.split()), SUMMARY_CHARS)
