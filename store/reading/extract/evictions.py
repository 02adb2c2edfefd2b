"""Evictions (`context.evicted`): tool results dropped from the model's context, and what they grounded."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from store.reading.extract.walk import (
    RunWalk,
    as_dict,
    as_int,
    as_list,
    as_str,
    stable_id,
)
from store.reading.text import dumps


def evictions(walk: RunWalk, calls: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per tool result evicted from the model's context, with the calls whose results it held."""
    stage_to_calls: dict[str, list[str]] = defaultdict(list)
    for c in calls.values():
        if c["stage"]:
            stage_to_calls[c["stage"]].append(c["call_id"])
    hash_to_call: dict[str, str] = {}
    evicted_by_stage: dict[str, list[int]] = defaultdict(list)
    for i in walk.of_types("context.injected", "context.evicted"):
        t = walk.shorts[i]
        p = walk.payload(i)
        if t == "context.injected" and p.get("source") == "tool-result":
            h, sid = as_str(p.get("contentHash")), as_str(p.get("sourceId"))
            if h and sid:
                hash_to_call[h] = sid
        elif t == "context.evicted":
            evicted_by_stage[as_str(walk.meta(i).get("runtimeStageId")) or f"#{i}"].append(i)
    rows: list[dict[str, Any]] = []
    records = [as_dict(r) for r in as_list(walk.shared.compactions)] if walk.shared is not None else []
    records = [
        r for r in records if (as_int(r.get("removedMessageCount")) or 0) > 0 or r.get("droppedObservations")
    ]
    stage_groups = list(evicted_by_stage.items())
    if records:
        for n, r in enumerate(records):
            removed = [s for s in as_list(r.get("removedStageIds")) if isinstance(s, str)]
            call_ids = [cid for s in removed for cid in stage_to_calls.get(s, [])]
            group = stage_groups[n] if n < len(stage_groups) else None
            if group:
                call_ids += [
                    cid
                    for j in group[1]
                    if (cid := hash_to_call.get(as_str(walk.payload(j).get("contentHash")) or "")) is not None
                ]
            rows.append(
                eviction_row(
                    walk,
                    n,
                    iteration=as_int(r.get("iteration")),
                    strategy=as_str(r.get("strategy")),
                    dropped=[x for x in as_list(r.get("droppedObservations")) if isinstance(x, str)],
                    removed=removed,
                    call_ids=call_ids,
                    messages=as_int(r.get("removedMessageCount")),
                    stage=group[0] if group else None,
                    seq=group[1][0] if group else None,
                    origin="snapshot",
                    record=r,
                )
            )
    else:
        for n, (stage, idxs) in enumerate(stage_groups):
            call_ids = [
                cid
                for j in idxs
                if (cid := hash_to_call.get(as_str(walk.payload(j).get("contentHash")) or "")) is not None
            ]
            rows.append(
                eviction_row(
                    walk,
                    n,
                    iteration=walk.iteration_at.get(idxs[0]),
                    strategy=None,
                    dropped=sorted(
                        {calls[c]["tool_name"] for c in call_ids if c in calls and calls[c]["tool_name"]}
                    ),
                    removed=[],
                    call_ids=call_ids,
                    messages=len(idxs),
                    stage=stage,
                    seq=idxs[0],
                    origin="events",
                    record=None,
                )
            )
    walk.out.evictions.extend(rows)
    return rows


def eviction_row(walk: RunWalk, n: int, **kw: Any) -> dict[str, Any]:
    """An `evictions` row with its stable id (the n-th eviction of the run)."""
    ordered = list(dict.fromkeys(kw["call_ids"]))
    return {
        "id": stable_id("e", walk.sha, walk.run_id, n),
        "run_key": walk.key,
        "ordinal": n + 1,
        "seq": kw["seq"],
        "iteration": kw["iteration"],
        "strategy": kw["strategy"],
        "stage": kw["stage"],
        "dropped_tools": dumps(kw["dropped"]),
        "removed_stage_ids": dumps(kw["removed"]),
        "call_ids": dumps(ordered),
        "removed_messages": kw["messages"],
        "origin": kw["origin"],
        "record": dumps(kw["record"]),
    }
