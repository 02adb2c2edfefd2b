"""A run's timeline as one ordered list of rows: iterations, tool calls, evictions and findings merged."""

from __future__ import annotations

from typing import Any

#: Most timeline rows built for one run (each kind is capped at this in the store too).
TIMELINE_CAP = 5_000


def build_timeline(parts: dict[str, Any], findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Merge a run's pieces into one ordered list of rows `{kind, seq, iteration, ...}`.

    Rows with an event position (`seq`) sort by it. A finding without one follows the tool call it names, or
    its iteration's start; anything else goes last, in its original order.
    """
    rows: list[dict[str, Any]] = []
    iter_seq: dict[int, int] = {}
    thoughts: dict[int, str] = {}
    for ev in parts.get("iterations", []):
        if ev["type"].endswith("stream.llm_end") and ev.get("iteration") is not None:
            thoughts.setdefault(int(ev["iteration"]), ev.get("summary") or "")
    for ev in parts.get("iterations", []):
        if ev["type"].endswith("iteration_start"):
            it = ev.get("iteration")
            if it is not None:
                iter_seq.setdefault(int(it), ev["seq"])
            rows.append(
                {
                    "kind": "iteration",
                    "seq": ev["seq"],
                    "iteration": it,
                    "text": thoughts.get(int(it), "") if it is not None else "",
                    "stage": ev.get("stage"),
                }
            )
    call_seq: dict[str, int] = {}
    for c in parts.get("tool_calls", []):
        if c.get("seq") is not None:
            call_seq[c["call_id"]] = c["seq"]
        rows.append({"kind": "tool_call", **c})
    for e in parts.get("evictions", []):
        rows.append({"kind": "eviction", **e})
    for f in findings:
        rows.append(
            {
                "kind": "finding",
                "finding": f,
                "seq": f.get("seq"),
                "iteration": f.get("iteration"),
                "id": f["id"],
            }
        )

    big = float("inf")

    def position(index_row: tuple[int, dict[str, Any]]) -> tuple[float, float, int]:
        index, row = index_row
        seq = row.get("seq")
        if seq is not None:
            return (float(seq), 0.0, index)
        call_id = row.get("call_id") or (row.get("finding") or {}).get("call_id")
        if call_id in call_seq:
            return (float(call_seq[call_id]), 0.5, index)
        it = row.get("iteration")
        if it is not None and int(it) in iter_seq:
            return (float(iter_seq[int(it)]), 0.5, index)
        return (big, 0.0, index)

    ordered = [row for _, row in sorted(enumerate(rows), key=position)]
    return ordered[: TIMELINE_CAP * 4]
