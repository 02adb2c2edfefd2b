"""Every read the CLI and the app make, as plain dicts with stable field names.

Lists page by keyset (`after`), never OFFSET, so the 100,000th page costs what the first does.
"""

from __future__ import annotations

from typing import Any

import orjson
from sqlite_utils import Database

from store.errors import NotFound
from store.vocab import withheld_sql

RUN_LIST_COLUMNS = (
    "key",
    "run_id",
    "agent_id",
    "tenant",
    "principal",
    "session_id",
    "conversation_id",
    "started_at",
    "started_ms",
    "outcome",
    "outcome_channel",
    "tool_calls",
    "failed_calls",
    "findings",
    "negative_claims",
    "coverage_gaps",
    "evictions",
    "iterations",
    "complete",
    "dropped_events",
    "starts_mid_run",
    "model",
    "pack_versions",
)
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
}


def _loads(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def _rows(db: Database, sql: str, params: list[Any] | dict[str, Any] | None = None) -> list[dict[str, Any]]:
    cur = db.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [
        {n: (_loads(v) if n in JSON_COLUMNS else v) for n, v in zip(names, row, strict=True)} for row in cur
    ]


def _run_out(row: dict[str, Any]) -> dict[str, Any]:
    row["run_key"] = row.pop("key")
    for flag in ("complete", "starts_mid_run"):
        if row.get(flag) is not None:
            row[flag] = bool(row[flag])
    return row


def run_filters(
    db: Database,
    *,
    outcome: str | None = None,
    has_findings: bool = False,
    kind: str | None = None,
    agent: str | None = None,
    tenant: str | None = None,
    pack_version: str | None = None,
    search: str | None = None,
    withheld: bool = False,
) -> tuple[list[str], list[Any]]:
    """SQL conditions (on alias `r`) and parameters for the run filters the CLI and the app share."""
    where: list[str] = []
    params: list[Any] = []
    if outcome:
        where.append("r.outcome = ?")
        params.append(outcome)
    if withheld:
        where.append(withheld_sql("r.outcome"))
    if has_findings:
        where.append("r.findings > 0")
    if kind:
        where.append("EXISTS (SELECT 1 FROM findings f WHERE f.run_key = r.key AND f.kind = ?)")
        params.append(kind)
    if agent:
        where.append("r.agent_id = ?")
        params.append(agent)
    if tenant:
        where.append("r.tenant = ?")
        params.append(tenant)
    if pack_version:
        where.append("EXISTS (SELECT 1 FROM findings f WHERE f.run_key = r.key AND f.pack_version = ?)")
        params.append(pack_version)
    if search:
        query = fts_query(search)
        # "+r.key": walk runs in list order and test membership in the (once-built) match set, so a page of
        # a common word stops after its rows instead of fetching and sorting every matching run
        where.append(
            "+r.key IN (SELECT d.run_key FROM search s JOIN search_docs d ON d.id = s.rowid WHERE search MATCH ?)"
        )
        params.append(query)
    return where, params


def fts_query(text: str) -> str:
    """Quote user input as FTS5 phrases (every word must appear), so no syntax error reaches the user."""
    words = [w for w in text.replace('"', " ").split() if w]
    return " ".join(f'"{w}"' for w in words) or '""'


def list_runs(
    db: Database,
    *,
    after: tuple[int | None, str] | None = None,
    limit: int | None = None,
    **filters: Any,
) -> list[dict[str, Any]]:
    """Runs, newest first, filtered; `after` is the (started_ms, key) of the last row already shown."""
    where, params = run_filters(db, **filters)
    if after is not None:
        ms, key = after
        if ms is None:
            where.append("(r.started_ms IS NULL AND r.key < ?)")
            params.append(key)
        else:
            where.append("(r.started_ms < ? OR (r.started_ms = ? AND r.key < ?) OR r.started_ms IS NULL)")
            params.extend([ms, ms, key])
    sql = f"SELECT {', '.join('r.' + c for c in RUN_LIST_COLUMNS)}, "
    sql += "(SELECT source FROM recordings WHERE id = r.recording_id) AS source FROM runs r"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY r.started_ms DESC, r.key DESC"  # NULLs sort last; uses the runs_order index
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [_run_out(r) for r in _rows(db, sql, params)]


def count_runs(db: Database, **filters: Any) -> int:
    where, params = run_filters(db, **filters)
    sql = "SELECT count(*) FROM runs r" + (" WHERE " + " AND ".join(where) if where else "")
    return int(db.execute(sql, params).fetchone()[0])


def resolve_run(db: Database, ident: str) -> str:
    """A run key from a key or a run id (the most recently ingested recording wins for a bare run id)."""
    row = db.execute("SELECT key FROM runs WHERE key = ?", [ident]).fetchone()
    if row:
        return str(row[0])
    row = db.execute(
        "SELECT key FROM runs WHERE run_id = ? ORDER BY recording_id DESC LIMIT 1", [ident]
    ).fetchone()
    if row:
        return str(row[0])
    raise NotFound(f"no run {ident!r} in this database")


def get_run(db: Database, ident: str) -> dict[str, Any]:
    """One run with everything extracted from it."""
    key = resolve_run(db, ident)
    [run] = _rows(db, "SELECT * FROM runs WHERE key = ?", [key])
    run = _run_out(run)
    run.pop("recording_id", None)
    rec = _rows(
        db,
        "SELECT id, sha256, source, container, form, bytes, agentfootprint_version, footprintjs_version, "
        "envelope_run FROM recordings WHERE sha256 = ?",
        [run["recording_sha"]],
    )
    run["recording"] = rec[0] if rec else None
    semantics = {s["call_id"]: s for s in _rows(db, "SELECT * FROM semantics WHERE run_key = ?", [key])}
    calls = _rows(db, "SELECT * FROM tool_calls WHERE run_key = ? ORDER BY seq", [key])
    for c in calls:
        c.pop("run_key")
        sem = semantics.get(c["call_id"])
        c["render"] = sem["render"] if sem else None
        c["semantics"] = sem["envelope"] if sem else None
        for flag in ("error", "completed", "has_semantics", "absent"):
            c[flag] = bool(c[flag])
    run["tool_calls"] = calls
    run["coverage"] = [
        {k: v for k, v in c.items() if k != "run_key"}
        for c in _rows(db, "SELECT * FROM coverage WHERE run_key = ? ORDER BY rowid", [key])
    ]
    run["evictions"] = [
        {k: v for k, v in e.items() if k not in ("run_key", "record")}
        for e in _rows(db, "SELECT * FROM evictions WHERE run_key = ? ORDER BY ordinal", [key])
    ]
    run["findings"] = [
        _finding_out(f) for f in _rows(db, "SELECT * FROM findings WHERE run_key = ? ORDER BY seq, id", [key])
    ]
    return run


def _finding_out(f: dict[str, Any]) -> dict[str, Any]:
    f["placeable"] = None if f["placeable"] is None else bool(f["placeable"])
    f["advisory"] = bool(f["advisory"])
    f["truncated"] = bool(f["truncated"])
    f["span"] = None if f["span_start"] is None else {"start": f["span_start"], "end": f["span_end"]}
    f["span_utf16"] = (
        None
        if f["span_start_u16"] is None and f["span_end_u16"] is None
        else {"start": f["span_start_u16"], "end": f["span_end_u16"]}
    )
    for k in ("span_start", "span_end", "span_start_u16", "span_end_u16", "payload"):
        f.pop(k, None)
    return f


def list_findings(
    db: Database,
    *,
    kind: str | None = None,
    run: str | None = None,
    after: str | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """Findings across runs (or of one run), in a stable order: run start, then position in the run."""
    where: list[str] = []
    params: list[Any] = []
    if kind:
        where.append("f.kind = ?")
        params.append(kind)
    if run:
        where.append("f.run_key = ?")
        params.append(resolve_run(db, run))
    if after:
        where.append("f.id > ?")
        params.append(after)
    sql = "SELECT f.* FROM findings f" + (" WHERE " + " AND ".join(where) if where else "")
    sql += " ORDER BY f.run_key, coalesce(f.seq, 1e18), f.id" if run else " ORDER BY f.id"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [_finding_out(f) for f in _rows(db, sql, params)]


def list_quarantine(db: Database) -> list[dict[str, Any]]:
    return _rows(
        db,
        "SELECT path, code, reason, sha256, first_seen, last_seen, times FROM quarantine ORDER BY path, code",
    )


def original_bytes(db: Database, recording_sha: str) -> bytes:
    """The exact bytes that were ingested, decompressed."""
    row = db.execute(
        "SELECT o.codec, o.data FROM originals o JOIN recordings r ON r.id = o.recording_id WHERE r.sha256 = ?",
        [recording_sha],
    ).fetchone()
    if row is None:
        raise NotFound(f"no original stored for recording {recording_sha[:12]}")
    codec, data = row
    if codec == "zstd":
        import zstandard

        return zstandard.ZstdDecompressor().decompress(data)
    return bytes(data)
