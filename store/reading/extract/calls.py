"""Tool calls (recording-format section 5): `stream.tool_*`, `tools.*` and `validation.args_invalid`
events joined on `toolCallId` into one row per call, and the semantic envelopes they declared."""

from __future__ import annotations

from typing import Any

from store.reading.extract.call_context import attach_complete, attach_decisions
from store.reading.extract.walk import (
    RunWalk,
    as_dict,
    as_int,
    as_list,
    as_str,
)
from store.reading.text import as_text, dumps


def tool_calls(walk: RunWalk) -> dict[str, dict[str, Any]]:
    """One row per tool call (section 5), joined on `toolCallId`; keyed by call id for the later parts."""
    calls: dict[str, dict[str, Any]] = {}
    #: recorded toolCallId -> the stored call id its events now belong to: a recorded id used again by a
    #: second `tool_start` starts a new call (`<id>#2`, `#3`, ...) instead of merging two calls into one
    current: dict[str, str] = {}
    order = 0

    def call_for(recorded: str, index: int, *, starts: bool = False) -> dict[str, Any]:
        nonlocal order
        call_id = current.get(recorded, recorded)
        if starts and call_id in calls and calls[call_id]["_started"]:
            n = 2
            while f"{recorded}#{n}" in calls:
                n += 1
            call_id = f"{recorded}#{n}"
        current[recorded] = call_id
        if call_id not in calls:
            order += 1
            calls[call_id] = {
                "run_key": walk.key,
                "call_id": call_id,
                "seq": index,
                "ordinal": order,
                "tool_name": None,
                "args": None,
                "result": None,
                "error": 0,
                "status": None,
                "duration_ms": None,
                "iteration": walk.iteration_at.get(index),
                "stage": as_str(walk.meta(index).get("runtimeStageId")),
                "parallel_count": None,
                "completed": 0,
                "refused": None,
                "args_invalid": None,
                "repeated": None,
                "has_semantics": 0,
                "absent": 0,
                "_result_value": None,
                "_started": False,
                "_events": [],
            }
        calls[call_id]["_events"].append(index)
        return calls[call_id]

    for i in walk.of_types("stream.tool_", "tools.", "validation.args_invalid"):
        t = walk.shorts[i]
        p = walk.payload(i)
        call_id = as_str(p.get("toolCallId"))
        if call_id is None:
            continue
        if t == "stream.tool_start":
            c = call_for(call_id, i, starts=True)
            c["_started"] = True
            c["tool_name"] = as_str(p.get("toolName")) or c["tool_name"]
            c["args"] = dumps(p.get("args"))
            c["parallel_count"] = as_int(p.get("parallelCount"))
            c["seq"] = min(c["seq"], i)
        elif t == "stream.tool_end":
            c = call_for(call_id, i)
            c["completed"] = 1
            c["_result_value"] = p.get("result")
            c["result"] = dumps(p.get("result"))
            c["error"] = 1 if p.get("error") is True else 0
            c["status"] = as_str(p.get("status"))
            c["duration_ms"] = as_int(p.get("durationMs"))
            if c["stage"] is None:
                c["stage"] = as_str(walk.meta(i).get("runtimeStageId"))
        elif t in ("stream.tool_progress",):
            continue
        else:
            c = call_for(call_id, i)
            c["tool_name"] = c["tool_name"] or as_str(p.get("toolName"))
            it = as_int(p.get("iteration"))
            if it is not None:
                c["iteration"] = it
            if t == "tools.result_refused":
                c["refused"] = dumps({k: v for k, v in p.items() if k not in ("toolName", "toolCallId")})
            elif t == "validation.args_invalid":
                c["args_invalid"] = dumps(p.get("issues"))
            elif t == "tools.repeated_call":
                c["repeated"] = as_int(p.get("occurrences")) or 2
            elif t == "tools.semantics_declared":
                c["has_semantics"] = 1
                semantics_row(walk, c["call_id"], c, p, i)
            elif t == "tools.absent":
                c["absent"] = 1
    for c in calls.values():
        value = c["_result_value"]
        if c["status"] == "absent" or (isinstance(value, dict) and value.get("af_absent") is True):
            c["absent"] = 1
    attach_complete(walk, calls)
    attach_decisions(walk, calls)
    walk.out.tool_calls.extend({k: v for k, v in c.items() if not k.startswith("_")} for c in calls.values())
    for c in calls.values():
        text = as_text(c["_result_value"])
        if text:
            walk.search("result", c["call_id"], text)
    return calls


def semantics_row(walk: RunWalk, call_id: str, call: dict[str, Any], p: dict[str, Any], index: int) -> None:
    """The semantic envelope a call declared (render hint, grain, provenance), as a `semantics` row."""
    sem = as_dict(p.get("semantics"))
    render = as_dict(sem.get("render"))
    walk.out.semantics.append(
        {
            "run_key": walk.key,
            "call_id": call_id,
            "seq": index,
            "tool_name": as_str(p.get("toolName")),
            "render_default": as_str(render.get("default")),
            "render": dumps(render) if render else None,
            "grain": dumps(sem.get("grain")),
            "provenance": dumps(sem.get("provenance")),
            "clarify": dumps(sem.get("clarify")) if "clarify" in sem else None,
            "clarify_considered": int("clarify" in sem),
            "facts_count": len(as_list(sem.get("facts"))),
            "series_count": len(as_list(sem.get("series"))),
            "edges_count": len(as_list(sem.get("edges"))),
            "envelope": dumps(sem),
        }
    )
