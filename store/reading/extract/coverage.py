"""Coverage ledgers (`tools.coverage_declared`): what each call says it checked, did not check, cannot cover."""

from __future__ import annotations

from typing import Any

from store.reading.extract.walk import (
    RunWalk,
    as_dict,
    as_list,
    as_str,
)
from store.reading.text import as_text


def coverage(walk: RunWalk, calls: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per item a call says it checked, did not check or cannot cover (deduplicated per call)."""
    rows: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str]] = set()

    def add(call_id: str | None, tool: str | None, lst: str, item: Any, origin: str, looked: Any) -> None:
        what: str | None
        why: str | None
        if isinstance(item, str):
            what, why = item, None
        else:
            d = as_dict(item)
            what, why = as_str(d.get("what")), as_text(d.get("why"))
        if not what:
            return
        k = (call_id or "", lst, what)
        if k in seen:
            return
        seen.add(k)
        rows.append(
            {
                "run_key": walk.key,
                "call_id": call_id,
                "tool_name": tool or (calls[call_id]["tool_name"] if call_id in calls else None),
                "list": lst,
                "what": what,
                "why": why,
                "origin": origin,
                "looked_for": as_text(looked),
            }
        )

    def add_lists(p: dict[str, Any], origin: str, camel: bool, call_id: str | None, tool: str | None) -> None:
        names = (
            ("checked", "checked"),
            ("notChecked" if camel else "not_checked", "not_checked"),
            ("cannotCover" if camel else "cannot_cover", "cannot_cover"),
        )
        looked = p.get("lookedFor") if camel else p.get("looked_for")
        for src, lst in names:
            for item in as_list(p.get(src)):
                add(call_id, tool, lst, item, origin, looked)

    # the stored call each event belongs to (a reused toolCallId names two calls: `<id>` and `<id>#2`)
    stored_call = {i: cid for cid, c in calls.items() for i in c.get("_events", ())}
    for i in walk.of_types("tools.absent", "tools.coverage_declared", "tools.semantics_declared"):
        t = walk.shorts[i]
        p = walk.payload(i)
        call_id, tool = stored_call.get(i, as_str(p.get("toolCallId"))), as_str(p.get("toolName"))
        if t == "tools.absent":
            add_lists(p, "absent", True, call_id, tool)
        elif t == "tools.coverage_declared":
            add_lists(p, "coverage", True, call_id, tool)
        elif t == "tools.semantics_declared":
            add_lists(as_dict(as_dict(p.get("semantics")).get("coverage")), "semantics", False, call_id, tool)
    for call_id, c in calls.items():  # older recordings: the model view still carries the lists
        value = c.get("_result_value")
        if isinstance(value, dict):
            if value.get("af_absent") is True:
                add_lists(value, "result", False, call_id, c["tool_name"])
            elif isinstance(value.get("af_coverage"), dict):
                add_lists(value["af_coverage"], "result", False, call_id, c["tool_name"])
    if walk.shared is not None:
        for row in as_list(walk.shared.coverageDeclared):
            r = as_dict(row)
            add_lists(r, "snapshot", True, as_str(r.get("toolCallId")), as_str(r.get("toolName")))
    walk.out.coverage.extend(rows)
    return rows
