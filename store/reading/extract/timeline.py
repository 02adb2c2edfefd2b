"""The run's narrative timeline: one bounded row per event a reviewer reads (high-volume events left out)."""

from __future__ import annotations

from typing import Any

from store.reading.extract.walk import RunWalk
from store.reading.text import as_text, bounded

#: Timeline rows keep a short summary; the full payload stays in the compressed original.
SUMMARY_CHARS = 160
#: High-volume events the timeline table leaves out: their content is in tool_calls, coverage, semantics
#: and evictions, or is mechanical (tokens, context composition). Every event stays in the original.
NOT_IN_TIMELINE = frozenset(
    {
        "stream.token",
        "stream.tool_start",
        "stream.tool_end",
        "stream.tool_progress",
        "context.injected",
        "context.slot_composed",
        "context.evaluated",
        "tools.semantics_declared",
        "tools.coverage_declared",
        "stream.thinking_delta",
    }
)


#: The payload field a timeline summary shows, by event type (otherwise: the first keys).
SUMMARY_FIELD = {
    "agent.turn_start": "userPrompt",
    "agent.turn_end": "finalContent",
    "stream.llm_end": "content",
    "stream.tool_start": "toolName",
    "stream.tool_end": "result",
    "agent.route_decided": "chosen",
    "integrity.context_error": "message",
    "pause.request": "reason",
    "middleware.decision": "outcome",
    "agent.evidence_checked": "action",
    "context.evicted": "contentHash",
    "tools.absent": "lookedFor",
}


def timeline(walk: RunWalk, calls: dict[str, dict[str, Any]]) -> None:
    """One bounded row per narrative event (see NOT_IN_TIMELINE for what is left out, and why)."""
    shorts, types, metas, payloads = walk.shorts, walk.rec.types, walk.rec.metas, walk.payloads
    key, iteration_at, rows = walk.key, walk.iteration_at.get, walk.out.events
    for i in walk.indexes:
        t = shorts[i]
        if t in NOT_IN_TIMELINE:
            continue
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
                "summary": _summary(t, p),
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
