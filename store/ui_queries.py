"""Reads the review app needs beyond `store.queries`: sorted keyset pages, a run's header, its timeline
pieces, one tool call, filter facets; plus a synthetic-run writer for benchmarks.

Plain functions over a sqlite-utils `Database`, returning dicts. No Textual, no `reviewer` imports.
"""

from __future__ import annotations

import random
import sqlite3
from typing import Any

import orjson
from sqlite_utils import Database

from store.db.writer import now_iso
from store.errors import NotFound
from store.queries import RUN_LIST_COLUMNS, _finding_out, _rows, _run_out, resolve_run, run_filters

#: sort name -> (key expressions on alias `r`, descending?, is the first key nullable?). Every sort ends with
#: `r.key`, so it is total. `newest`/`oldest` order on the raw `started_ms` (not `coalesce(...)`) so SQLite walks
#: the `runs_order` / `runs_outcome` / `runs_agent` indexes: 0.1 ms a page at 100,000 runs instead of a 160 ms
#: sort. NULL start times sort as SQLite sorts NULL (lowest), which is what `coalesce(started_ms, -1)` gives.
SORTS: dict[str, tuple[tuple[str, ...], bool, bool]] = {
    "newest": (("r.started_ms", "r.key"), True, True),
    "oldest": (("r.started_ms", "r.key"), False, True),
    "most-findings": (("r.findings", "coalesce(r.started_ms, -1)", "r.key"), True, False),
}
#: Longest string any page/timeline query returns for a text column (views truncate further).
PREVIEW_CHARS = 2_000


def _order(sort: str) -> tuple[tuple[str, ...], bool, bool]:
    try:
        return SORTS[sort]
    except KeyError:
        raise ValueError(f"unknown sort {sort!r}; known: {', '.join(SORTS)}") from None


def _segments(
    exprs: tuple[str, ...], desc: bool, nullable: bool, after: list[Any] | None
) -> list[tuple[list[str], list[Any]]]:
    """Extra conditions, in reading order, that together give the rows after `after`.

    A nullable first key is read as two index range scans (non-NULL rows, NULL rows) rather than one
    `OR ... IS NULL` condition, which would make SQLite scan the whole index.
    """
    op = "<" if desc else ">"
    if not nullable:
        if after is None:
            return [([], [])]
        return [([f"({', '.join(exprs)}) {op} ({', '.join('?' for _ in exprs)})"], list(after))]
    first, rest = exprs[0], exprs[1:]
    if after is None:
        non_null: tuple[list[str], list[Any]] = ([f"{first} IS NOT NULL"], [])
        nulls: tuple[list[str], list[Any]] = ([f"{first} IS NULL"], [])
        return [non_null, nulls] if desc else [nulls, non_null]
    if after[0] is None:
        inside_nulls = (
            [f"{first} IS NULL", f"({', '.join(rest)}) {op} ({', '.join('?' for _ in rest)})"],
            list(after[1:]),
        )
        return [inside_nulls] if desc else [inside_nulls, ([f"{first} IS NOT NULL"], [])]
    beyond = ([f"({', '.join(exprs)}) {op} ({', '.join('?' for _ in exprs)})"], list(after))
    return [beyond, ([f"{first} IS NULL"], [])] if desc else [beyond]


def runs_page(
    db: Database,
    *,
    sort: str = "newest",
    after: list[Any] | tuple[Any, ...] | None = None,
    offset: int = 0,
    limit: int = 100,
    **filters: Any,
) -> list[dict[str, Any]]:
    """One page of runs in `sort` order. Each row carries `cursor`, the keyset token of that row.

    Pass the previous page's last `cursor` as `after` (keyset). Without `after`, `offset` locates the page
    start by walking the sort keys only (used when a reader jumps far ahead), then the rows are read by keyset.
    """
    exprs, desc, nullable = _order(sort)
    where, params = run_filters(db, **filters)
    if after is None and offset > 0:
        boundary = _boundary(db, exprs, desc, where, params, offset - 1)
        if boundary is None:
            return []
        after = boundary
    if after is not None and len(after) != len(exprs):
        raise ValueError("cursor does not match the sort")
    direction = " DESC" if desc else " ASC"
    cols = ", ".join("r." + c for c in RUN_LIST_COLUMNS)
    keys = ", ".join(f"{e} AS _k{i}" for i, e in enumerate(exprs))
    out: list[dict[str, Any]] = []
    for extra, extra_params in _segments(exprs, desc, nullable, None if after is None else list(after)):
        want = int(limit) - len(out)
        if want <= 0:
            break
        conds = [*where, *extra]
        sql = f"SELECT {cols}, {keys} FROM runs r"
        if conds:
            sql += " WHERE " + " AND ".join(conds)
        sql += " ORDER BY " + ", ".join(e + direction for e in exprs) + f" LIMIT {want}"
        for row in _rows(db, sql, [*params, *extra_params]):
            row["cursor"] = [row.pop(f"_k{i}") for i in range(len(exprs))]
            out.append(_run_out(row))
    return out


def _boundary(
    db: Database, exprs: tuple[str, ...], desc: bool, where: list[str], params: list[Any], index: int
) -> list[Any] | None:
    direction = " DESC" if desc else " ASC"
    sql = f"SELECT {', '.join(exprs)} FROM runs r"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY " + ", ".join(e + direction for e in exprs) + " LIMIT 1 OFFSET ?"
    row = db.execute(sql, [*params, int(index)]).fetchone()
    return list(row) if row else None


def run_header(db: Database, ident: str) -> dict[str, Any]:
    """What the run screen draws first: the run row (prompt, answer, outcome) and its findings.

    The answer and prompt are returned whole (the view bounds what it draws); no tool results are read.
    """
    key = resolve_run(db, ident)
    rows = _rows(db, "SELECT * FROM runs WHERE key = ?", [key])
    if not rows:
        raise NotFound(f"no run {ident!r} in this database")
    run = _run_out(rows[0])
    run.pop("recording_id", None)
    rec = _rows(
        db, "SELECT source, form, container, bytes FROM recordings WHERE sha256 = ?", [run["recording_sha"]]
    )
    run["recording"] = rec[0] if rec else None
    run["findings"] = [
        _finding_out(f) for f in _rows(db, "SELECT * FROM findings WHERE run_key = ? ORDER BY seq, id", [key])
    ]
    return run


def run_timeline_parts(db: Database, run_key: str, *, max_rows: int = 5_000) -> dict[str, Any]:
    """The pieces of a run's timeline, light: iterations (with the model's text), tool calls without their
    results (only sizes and previews), evictions. Each list is capped at `max_rows`."""
    cap = int(max_rows)
    iterations = _rows(
        db,
        "SELECT seq, type, iteration, stage, substr(summary, 1, ?) AS summary FROM events WHERE run_key = ? AND type IN "
        "('agentfootprint.agent.iteration_start', 'agentfootprint.stream.llm_end') ORDER BY seq LIMIT ?",
        [PREVIEW_CHARS, run_key, cap * 2],
    )
    calls = _rows(
        db,
        "SELECT call_id, seq, ordinal, tool_name, substr(args, 1, ?) AS args_preview, length(args) AS args_chars, "
        "length(result) AS result_chars, substr(result, 1, ?) AS result_preview, error, status, duration_ms, "
        "iteration, completed, absent, has_semantics, refused IS NOT NULL AS refused "
        "FROM tool_calls WHERE run_key = ? ORDER BY seq LIMIT ?",
        [PREVIEW_CHARS, PREVIEW_CHARS, run_key, cap],
    )
    for c in calls:
        for flag in ("error", "completed", "absent", "has_semantics", "refused"):
            c[flag] = bool(c[flag])
    evictions = [
        {k: v for k, v in e.items() if k not in ("run_key", "record")}
        for e in _rows(
            db, "SELECT * FROM evictions WHERE run_key = ? ORDER BY ordinal LIMIT ?", [run_key, cap]
        )
    ]
    total_calls = int(
        db.execute("SELECT count(*) FROM tool_calls WHERE run_key = ?", [run_key]).fetchone()[0]
    )
    return {"iterations": iterations, "tool_calls": calls, "evictions": evictions, "total_calls": total_calls}


def tool_call(db: Database, run_key: str, call_id: str) -> dict[str, Any]:
    """One tool call in the shape of `get_run(...)["tool_calls"][i]`, plus `coverage`: that call's rows."""
    rows = _rows(db, "SELECT * FROM tool_calls WHERE run_key = ? AND call_id = ?", [run_key, call_id])
    if not rows:
        raise NotFound(f"no tool call {call_id!r} in run {run_key!r}")
    call = rows[0]
    call.pop("run_key", None)
    sem = _rows(
        db, "SELECT render, envelope FROM semantics WHERE run_key = ? AND call_id = ?", [run_key, call_id]
    )
    call["render"] = sem[0]["render"] if sem else None
    call["semantics"] = sem[0]["envelope"] if sem else None
    for flag in ("error", "completed", "has_semantics", "absent"):
        call[flag] = bool(call[flag])
    coverage = [
        {k: v for k, v in c.items() if k != "run_key"}
        for c in _rows(
            db, "SELECT * FROM coverage WHERE run_key = ? AND call_id = ? ORDER BY rowid", [run_key, call_id]
        )
    ]
    return {"call": call, "coverage": coverage}


def run_facets(db: Database, *, cap: int = 200) -> dict[str, list[str]]:
    """Distinct values the run filters offer (each list capped)."""

    def distinct(sql: str) -> list[str]:
        return [str(r[0]) for r in db.execute(sql + f" LIMIT {int(cap)}").fetchall() if r[0] is not None]

    return {
        "agents": distinct("SELECT DISTINCT agent_id FROM runs WHERE agent_id IS NOT NULL ORDER BY agent_id"),
        "tenants": distinct("SELECT DISTINCT tenant FROM runs WHERE tenant IS NOT NULL ORDER BY tenant"),
        "kinds": distinct("SELECT DISTINCT kind FROM findings ORDER BY kind"),
        "pack_versions": distinct(
            "SELECT DISTINCT pack_version FROM findings WHERE pack_version IS NOT NULL ORDER BY pack_version"
        ),
    }


def unlabelled_counts(db: Database, keys: list[str]) -> dict[str, int | None]:
    """Findings per run with no current label (same rule as `store.queue`'s "unlabelled" state).

    Before the labels migration exists every finding is unlabelled (the run's `findings` count);
    `None` means "cannot tell" (a labels schema this build does not understand).
    """
    if not keys:
        return {}
    keys = [str(k) for k in keys]
    marks = ", ".join("?" for _ in keys)
    has_view = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'view' AND name = 'current_labels'"
    ).fetchone()
    if not has_view:
        counts = dict(db.execute(f"SELECT key, findings FROM runs WHERE key IN ({marks})", keys).fetchall())
        return {k: (None if counts.get(k) is None else int(counts[k])) for k in keys}
    try:
        counts = dict(
            db.execute(
                f"SELECT f.run_key, count(*) FROM findings f WHERE f.run_key IN ({marks}) "
                "AND NOT EXISTS (SELECT 1 FROM current_labels l WHERE l.target_id = f.id) GROUP BY f.run_key",
                keys,
            ).fetchall()
        )
    except sqlite3.Error:
        return {k: None for k in keys}
    return {k: int(counts.get(k, 0)) for k in keys}


def runs_of_source(db: Database, source: str) -> dict[str, Any]:
    """The recording ingested from `source` (its events and bytes) and its run keys, most events first."""
    rec = db.execute("SELECT id, events, bytes FROM recordings WHERE source = ?", [source]).fetchone()
    if rec is None:
        raise NotFound(f"no recording ingested from {source!r}")
    keys = [
        r[0] for r in db.execute("SELECT key FROM runs WHERE recording_id = ? ORDER BY events DESC", [rec[0]])
    ]
    return {"events": rec[1], "bytes": rec[2], "keys": keys}


# --- benchmarks --------------------------------------------------------------------------------------------

_AGENTS = ("incident-desk", "oncall-assistant", "san-triage", "db-oncall", "support-desk", "billing-bot")
_TENANTS = ("acme-corp", "globex", "initech", None)
_OUTCOMES = (
    ("delivered", 80),
    ("refused", 5),
    ("denied", 4),
    ("withheld", 4),
    ("paused", 3),
    ("contract_unmet", 2),
    ("cut_short", 1),
    ("incomplete", 1),
)


def insert_synthetic_runs(
    db: Database, count: int, *, seed: int = 7, start_ms: int = 1_790_000_000_000
) -> int:
    """Insert `count` synthetic runs (one fake recording) for benchmarks. Returns the number inserted.

    Rows have plausible agents, outcomes and counts but no events, calls or findings rows; FTS is not fed.
    """
    from store.db.connection import write_lock
    from store.db.schema import COLUMNS

    rng = random.Random(seed)
    outcomes = [o for o, _ in _OUTCOMES]
    weights = [w for _, w in _OUTCOMES]
    sha = f"synthetic-{seed}-{count}"
    with write_lock(db):
        cur = db.execute(
            "INSERT INTO recordings (sha256, source, container, form, bytes, events, runs, has_snapshot, "
            "extractor_version, ingested_at) VALUES (?, ?, 'synthetic', 'bare', 0, 0, ?, 0, 0, ?)",
            [sha, f"synthetic://{seed}", count, now_iso()],
        )
        rec_id = int(cur.lastrowid or 0)
        cols = COLUMNS["runs"]
        sql = f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})"

        def rows() -> Any:
            for i in range(count):
                ms = start_ms + i * 1_000 + rng.randrange(1_000)
                outcome = rng.choices(outcomes, weights)[0]
                findings = rng.choice((0, 0, 0, 1, 2, 3, 5))
                run_id = f"run-{ms}-{i}"
                summary = "Delivered" if outcome == "delivered" else f"Synthetic {outcome}"
                values = {
                    "key": f"{run_id}@{sha[:10]}",
                    "recording_id": rec_id,
                    "recording_sha": sha,
                    "run_id": run_id,
                    "agent_id": rng.choice(_AGENTS),
                    "model": "mock-small",
                    "provider": "mock",
                    "tenant": rng.choice(_TENANTS),
                    "started_ms": ms,
                    "started_at": _iso_ms(ms),
                    "ended_ms": ms + 400,
                    "starts_mid_run": 0,
                    "events": 80,
                    "prompt": f"Synthetic prompt {i}: is anything failing for service {i % 97}?",
                    "answer": f"Synthetic answer {i}: there are no open incidents for service {i % 97}.",
                    "outcome": outcome,
                    "outcome_channel": None if outcome == "delivered" else "synthetic",
                    "outcome_detail": orjson.dumps({"outcome": outcome, "summary": summary}).decode(),
                    "iterations": rng.randint(1, 6),
                    "tokens_in": 300,
                    "tokens_out": 50,
                    "duration_ms": 400,
                    "tool_calls": rng.randint(0, 9),
                    "failed_calls": 0,
                    "findings": findings,
                    "negative_claims": findings,
                    "coverage_gaps": rng.choice((0, 0, 1, 2)),
                    "evictions": rng.choice((0, 0, 0, 1)),
                    "pack_versions": orjson.dumps(["en-negatives@3"] if findings else []).decode(),
                }
                yield [values.get(c) for c in cols]

        db.conn.executemany(sql, rows())
    return count


def _iso_ms(ms: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
