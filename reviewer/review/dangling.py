"""What happened while a dangling reference stayed dangling (recording-format.md section 8).

The framework files one `dangling-reference` event per run per defect, but the offered tool may be
called many times after its ground left the window, each time with values the model can only have
remembered. This lists those calls (of the offered tool, after the first eviction of a ground, until a
ground tool is called again), marks each argument value that appears nowhere in the evicted result
(a remembered or invented id), and says how many passes the check failed (the disposition ledger counts
every failing pass; the event is deduplicated). Pure: the store reads the rows.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

#: at most this many calls are listed
MAX_CALLS = 50


def _leaves(value: Any, path: str = "") -> list[tuple[str, Any]]:
    """(path, scalar) for every leaf of a JSON value (arguments are small)."""
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, f"{path}.{k}" if path else str(k))]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, f"{path}[{i}]")]
    return [(path, value)]


def _literal(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # an integer past 64 bits
        return json.dumps(value, ensure_ascii=False)


def _in_result(value: Any, result_texts: list[str]) -> bool:
    """Does the value appear in an evicted result as the JSON literal it would be there (a string with its
    quotes, so "scr-900" is not found inside "scr-9000")?"""
    literal = _literal(value)
    return any(literal in text for text in result_texts)


def dangling_calls(
    finding: dict[str, Any],
    calls: list[dict[str, Any]],
    evictions: list[dict[str, Any]],
    ground_results: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """The calls made on the evicted ground while it stayed dangling, each argument marked.

    `calls` are the run's calls in order (`call_id`, `seq`, `tool_name`, `iteration`, `args`);
    `ground_results` maps a ground call id to `{result, chars, cut}` (the result text, its full length,
    whether it was cut for reading). Returns `{offered, grounds, since_seq, reestablished_by, calls,
    results_cut}`.
    """
    refs = [r for r in finding.get("refs") or [] if isinstance(r, dict)]
    offered = finding.get("tool_name") or (refs[0].get("id") if refs else None)
    grounds = {str(r.get("id")) for r in refs[1:] if r.get("id")}
    dropping = [
        e for e in evictions if grounds & set(e.get("dropped_tools") or []) and e.get("seq") is not None
    ]
    out: dict[str, Any] = {
        "offered": offered,
        "grounds": sorted(grounds),
        "since_seq": None,
        "reestablished_by": None,
        "calls": [],
        "results_cut": False,
    }
    if not dropping or not offered:
        return out
    first = min(dropping, key=lambda e: e["seq"])
    since = int(first["seq"])
    out["since_seq"] = since
    evicted_ids = [c for e in dropping for c in e.get("call_ids") or []]
    texts = [str(ground_results[c]["result"]) for c in evicted_ids if c in ground_results]
    out["results_cut"] = any(ground_results[c].get("cut") for c in evicted_ids if c in ground_results)
    listed: list[dict[str, Any]] = []
    for call in sorted(calls, key=lambda c: (c.get("seq") is None, c.get("seq") or 0)):
        seq = call.get("seq")
        if seq is None or seq <= since:
            continue
        if call.get("tool_name") in grounds:
            out["reestablished_by"] = call.get("call_id")
            break
        if call.get("tool_name") != offered:
            continue
        args = call.get("args")
        if isinstance(args, str):
            try:
                args = orjson.loads(args)
            except orjson.JSONDecodeError:
                args = {"(args)": args}
        values = [
            {"path": path, "value": value, "in_evicted_result": _in_result(value, texts) if texts else None}
            for path, value in _leaves(args)
            if path and value is not None
        ]
        listed.append(
            {
                "call_id": call.get("call_id"),
                "iteration": call.get("iteration"),
                "args": values,
            }
        )
    out["calls"] = listed[:MAX_CALLS]
    out["calls_total"] = len(listed)
    return out


def failed_passes(
    disposition: dict[str, Any] | None, check: str = "dangling-reference"
) -> dict[str, int] | None:
    """`{checked, findings}` of the disposition row of `check` (every pass, not the one deduplicated event)."""
    rows = (disposition or {}).get("rows")
    if not isinstance(rows, list):
        return None
    for row in rows:
        if isinstance(row, dict) and row.get("check") == check:
            return {"checked": int(row.get("checked") or 0), "findings": int(row.get("findings") or 0)}
    return None
