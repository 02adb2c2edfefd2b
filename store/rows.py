"""How a stored row becomes the dict every reader returns: JSON columns decoded, flags as booleans, spans as
`{start, end}`. Shared by the query modules (runs, findings, labels, recordings)."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
from sqlite_utils import Database

JSON_COLUMNS = {
    "args",
    "result",
    "render",
    "grain",
    "provenance",
    "clarify",
    "codes",
    "refs",
    "dropped_tools",
    "removed_stage_ids",
    "call_ids",
    "pack_versions",
    "outcome_detail",
    "envelope",
    "payload",
    "record",
    "refused",
    "args_invalid",
    "envelope_run",
    "decisions",
    "answer_negatives",
    "disposition",
    "sources",
}


#: A run of digits long enough to be an integer past 64 bits, which orjson would read as a float (1e+25).
_LONG_DIGITS = re.compile(r"\d{19}")


def loads_json(value: Any) -> Any:
    """A JSON column's value decoded; text that is not JSON is returned as it is.

    Integers past 64 bits are kept exact (the stored JSON is what was recorded, so it is read back as such)."""
    if isinstance(value, str):
        try:
            if _LONG_DIGITS.search(value):
                return json.loads(value)
            return orjson.loads(value)
        except (orjson.JSONDecodeError, ValueError):
            return value
    return value


def fetch_rows(
    db: Database, sql: str, params: list[Any] | dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Rows of `sql` as dicts, JSON columns decoded."""
    cur = db.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [
        {n: (loads_json(v) if n in JSON_COLUMNS else v) for n, v in zip(names, row, strict=True)}
        for row in cur
    ]


def run_out(row: dict[str, Any]) -> dict[str, Any]:
    """A runs row as readers return it: `run_key` for `key`, flags as booleans."""
    row["run_key"] = row.pop("key")
    for flag in ("complete", "starts_mid_run", "delivered"):
        if row.get(flag) is not None:
            row[flag] = bool(row[flag])
    return row


def finding_out(f: dict[str, Any]) -> dict[str, Any]:
    """A findings row as readers return it: flags as booleans, spans as `{start, end}`, no payload, and not
    the copy of its run's start the queue sorts by (schema m030; the run's own is `run_started_at`)."""
    f["placeable"] = None if f["placeable"] is None else bool(f["placeable"])
    f["advisory"] = bool(f["advisory"])
    f["truncated"] = bool(f["truncated"])
    f["span"] = None if f["span_start"] is None else {"start": f["span_start"], "end": f["span_end"]}
    f["span_utf16"] = (
        None
        if f["span_start_u16"] is None and f["span_end_u16"] is None
        else {"start": f["span_start_u16"], "end": f["span_end_u16"]}
    )
    for k in ("span_start", "span_end", "span_start_u16", "span_end_u16", "payload", "run_started_ms"):
        f.pop(k, None)
    return f


class Count(int):
    """A count a screen shows; `exact` False means "at least this many" (shown as `10,000+`)."""

    exact: bool

    def __new__(cls, n: int, exact: bool = True) -> Count:
        count = super().__new__(cls, n)
        count.exact = exact
        return count

    @classmethod
    def read_up_to(cls, n: int, cap: int, *, every_row: bool = True) -> Count:
        """What a read of `cap` + 1 rows at most that found `n` shows: at most `cap`, exact when it found no
        more than `cap` and read every row it was let (`every_row` False: stopped by its time budget)."""
        return cls(min(n, int(cap)), exact=every_row and n <= cap)
