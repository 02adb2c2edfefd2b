"""Findings: the list the CLI prints, and the findings queue (filtered by kind, code, tool, pack version and
label state, paged by keyset on id, with progress and facets); plus the rows a finding's evidence rests on
(assembled into evidence by `reviewer.review.evidence`)."""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from store import runs
from store.errors import NotFound
from store.labels import current_by_target, history, state_condition
from store.rows import Count, fetch_rows, finding_out
from store.runs import resolve_run
from store.tallies import FINDING_FILTER_FACETS, tally, tally_values
from store.vocab import DANGLING_REFERENCE, DISAGREEMENT, disagreement_sql


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
    return [finding_out(f) for f in fetch_rows(db, sql, params)]


def _filters(
    *,
    kind: str | None = None,
    code: str | None = None,
    tool: str | None = None,
    pack_version: str | None = None,
    state: str = "any",
    reviewer: str | None = None,
    run_key: str | None = None,
) -> tuple[list[str], list[Any]]:
    where: list[str] = []
    params: list[Any] = []
    if kind:
        where.append("f.kind = ?")
        params.append(kind)
    if code:
        where.append("EXISTS (SELECT 1 FROM json_each(f.codes) WHERE json_each.value = ?)")
        params.append(code)
    if tool:
        where.append(
            "(f.tool_name = ? OR EXISTS (SELECT 1 FROM json_each(f.refs) WHERE "
            "json_extract(json_each.value, '$.toolName') = ? OR json_extract(json_each.value, '$.id') = ?))"
        )
        params.extend([tool, tool, tool])
    if pack_version:
        where.append("f.pack_version = ?")
        params.append(pack_version)
    if run_key:
        where.append("f.run_key = ?")
        params.append(run_key)
    condition = state_condition(state, reviewer)
    if condition is not None:
        where.append(condition[0])
        params.extend(condition[1])
    return where, params


def queue_page(
    db: Database, *, after: str | None = None, limit: int = 200, **filters: Any
) -> list[dict[str, Any]]:
    """A page of the queue in finding-id order (stable, keyset on id), with each finding's current labels."""
    where, params = _filters(**filters)
    if after:
        where.append("f.id > ?")
        params.append(after)
    sql = (
        "SELECT f.*, r.run_id AS run_id_, r.agent_id, r.outcome, r.delivered, r.delivered_as "
        "FROM findings f JOIN runs r ON r.key = f.run_key"
        + (" WHERE " + " AND ".join(where) if where else "")
        + f" ORDER BY f.id LIMIT {int(limit)}"
    )
    rows = [finding_out(f) for f in fetch_rows(db, sql, params)]
    ids = [r["id"] for r in rows]
    current = current_by_target(db, ids)
    for r in rows:
        r.pop("run_id_", None)
        r["delivered"] = None if r["delivered"] is None else bool(r["delivered"])
        r["labels"] = current.get(r["id"], {})
    return rows


#: Label states counted from the labels themselves (cheap while few of many findings are labelled).
_LABELLED_STATES = ("labelled", "mine", DISAGREEMENT)
#: Label states counted as the findings less those of a labelled state.
_COMPLEMENT_STATES = {"unlabelled": "labelled", "not-mine": "mine"}


def _tallied_findings(db: Database, filters: dict[str, Any]) -> int | None:
    """The exact count of findings under `filters` (label state aside) from the tallies, or None."""
    active = {
        k: v for k, v in filters.items() if k not in ("state", "reviewer") and v not in (None, "", False)
    }
    if not active:
        return tally(db, "findings")
    if len(active) > 1:
        return None
    [(name, value)] = active.items()
    facet = FINDING_FILTER_FACETS.get(name)
    return None if facet is None else tally(db, facet, str(value))


def _labelled_count(db: Database, state: str, filters: dict[str, Any]) -> int:
    """Findings under `filters` in a labelled state, read from the current labels (not from every finding)."""
    reviewer = filters.get("reviewer")
    where, params = _filters(**{k: v for k, v in filters.items() if k not in ("state", "reviewer")})
    if state == "mine":
        where.append("l.reviewer = ?")
        params.append(reviewer or "")
    having = f" HAVING {disagreement_sql('l.verdict')}" if state == DISAGREEMENT else ""
    sql = (
        "SELECT count(*) FROM (SELECT l.target_id FROM current_labels l JOIN findings f ON f.id = l.target_id"
        + (" WHERE " + " AND ".join(where) if where else "")
        + f" GROUP BY l.target_id{having})"
    )
    return int(db.execute(sql, params).fetchone()[0])


def queue_count(db: Database, **filters: Any) -> int:
    """How many findings the queue filters leave, exactly (tallies and labels when they answer it)."""
    counted = _counted(db, filters)
    if counted is not None:
        return counted
    where, params = _filters(**filters)
    sql = "SELECT count(*) FROM findings f" + (" WHERE " + " AND ".join(where) if where else "")
    return int(db.execute(sql, params).fetchone()[0])


def _counted(db: Database, filters: dict[str, Any]) -> int | None:
    state = filters.get("state") or "any"
    if state in _LABELLED_STATES:
        return _labelled_count(db, state, filters)
    total = _tallied_findings(db, filters)
    if total is None:
        return None
    if state == "any":
        return total
    if state in _COMPLEMENT_STATES:
        return total - _labelled_count(db, _COMPLEMENT_STATES[state], filters)
    return None


def queue_count_at_most(db: Database, *, cap: int | None = None, **filters: Any) -> Count:
    """What the queue shows: exact when the tallies and labels answer it, else read up to `cap` findings
    (`exact` False beyond: the screen says "10,000+")."""
    counted = _counted(db, filters)
    if counted is not None:
        return Count(counted)
    cap = runs.COUNT_CAP if cap is None else int(cap)
    where, params = _filters(**filters)
    sql = (
        "SELECT count(*) FROM (SELECT 1 FROM findings f"
        + (" WHERE " + " AND ".join(where) if where else "")
        + " LIMIT ?)"
    )
    n = int(db.execute(sql, [*params, int(cap) + 1]).fetchone()[0])
    return Count(min(n, int(cap)), exact=n <= cap)


def next_unlabelled(
    db: Database, *, after: str | None = None, reviewer: str | None = None, **filters: Any
) -> str | None:
    """The next finding (after `after`, wrapping to the start) with no label (by anyone, or by `reviewer`)."""
    state = "not-mine" if reviewer else "unlabelled"
    for start in (after, None) if after else (None,):
        where, params = _filters(state=state, reviewer=reviewer, **filters)
        if start:
            where.append("f.id > ?")
            params.append(start)
        row = db.execute(
            "SELECT f.id FROM findings f WHERE " + " AND ".join(where) + " ORDER BY f.id LIMIT 1", params
        ).fetchone()
        if row:
            return str(row[0])
    return None


def queue_page_at(db: Database, *, offset: int, limit: int = 200, **filters: Any) -> list[dict[str, Any]]:
    """A page of the queue starting at row `offset` (for jumps; sequential paging uses `queue_page(after=)`)."""
    if offset <= 0:
        return queue_page(db, limit=limit, **filters)
    where, params = _filters(**filters)
    row = db.execute(
        "SELECT f.id FROM findings f"
        + (" WHERE " + " AND ".join(where) if where else "")
        + " ORDER BY f.id LIMIT 1 OFFSET ?",
        [*params, int(offset) - 1],
    ).fetchone()
    if row is None:
        return []
    return queue_page(db, after=str(row[0]), limit=limit, **filters)


def queue_position(db: Database, finding_id: str, **filters: Any) -> int | None:
    """The 0-based row of `finding_id` in the filtered queue, or None when the filters leave it out."""
    where, params = _filters(**filters)
    present = db.execute(
        "SELECT 1 FROM findings f WHERE " + " AND ".join([*where, "f.id = ?"]), [*params, finding_id]
    ).fetchone()
    if present is None:
        return None
    return int(
        db.execute(
            "SELECT count(*) FROM findings f WHERE " + " AND ".join([*where, "f.id < ?"]),
            [*params, finding_id],
        ).fetchone()[0]
    )


def queue_progress(db: Database, *, reviewer: str | None = None, **filters: Any) -> dict[str, int]:
    """How far labelling has come over the findings matching `filters` (the label-state filter is ignored):
    `total`, `labelled` (by anyone), `mine` (by `reviewer`) and `disagreements` (reviewers' current verdicts
    differ). Driven from the labels, so it stays cheap when few of many findings are labelled."""
    filters = {k: v for k, v in filters.items() if k not in ("state",)}
    total = queue_count(db, **filters)
    where, params = _filters(**filters)
    row = db.execute(
        "SELECT count(*), coalesce(sum(mine), 0), coalesce(sum(disagree), 0) FROM ("
        f" SELECT l.target_id, max(l.reviewer = ?) AS mine, {disagreement_sql('l.verdict')} AS disagree"
        " FROM current_labels l JOIN findings f ON f.id = l.target_id"
        + (" WHERE " + " AND ".join(where) if where else "")
        + " GROUP BY l.target_id)",
        [reviewer or "", *params],
    ).fetchone()
    return {"total": total, "labelled": int(row[0]), "mine": int(row[1]), "disagreements": int(row[2])}


def queue_facets(db: Database, *, cap: int = 500) -> dict[str, list[str]]:
    """Values the queue filters offer: finding kinds, codes, tools and phrase-pack versions (each capped),
    read from the tallies."""
    return {
        "kinds": tally_values(db, "kind", cap=cap),
        "codes": tally_values(db, "code", cap=cap),
        "tools": tally_values(db, "tool", cap=cap),
        "pack_versions": tally_values(db, "pack_version", cap=cap),
    }


def evidence_rows(db: Database, finding_id: str) -> dict[str, Any]:
    """What the evidence beside a finding rests on: the finding, its run (light: no tool results) and every
    label row on it, as `{finding, run, history}` for `reviewer.review.evidence.assemble_evidence`."""
    rows = fetch_rows(db, "SELECT * FROM findings WHERE id = ?", [finding_id])
    if not rows:
        raise NotFound(f"no finding {finding_id!r} in this database")
    finding = finding_out(rows[0])
    run = _evidence_run(db, finding["run_key"])
    if finding["kind"] == DANGLING_REFERENCE:
        run["ground_results"] = _evicted_results(db, finding["run_key"], run["evictions"])
    return {
        "finding": finding,
        "run": run,
        "history": history(db, finding_id),
    }


#: An evicted result is read up to this many characters to tell remembered argument values from seen ones.
GROUND_CHARS = 200_000


def _evicted_results(
    db: Database, run_key: str, evictions: list[dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """call id -> {result, chars, cut} for every call whose result an eviction removed (bounded)."""
    ids = sorted({c for e in evictions for c in e.get("call_ids") or []})
    if not ids:
        return {}
    marks = ", ".join("?" for _ in ids)
    rows = db.execute(
        f"SELECT call_id, substr(result, 1, ?), length(result) FROM tool_calls WHERE run_key = ? "
        f"AND call_id IN ({marks})",
        [GROUND_CHARS, run_key, *ids],
    ).fetchall()
    return {
        cid: {"result": text or "", "chars": n or 0, "cut": (n or 0) > GROUND_CHARS} for cid, text, n in rows
    }


#: Arguments shown beside a read are cut to this many characters (a read's result is not needed here).
ARGS_PREVIEW = 2_000


def _evidence_run(db: Database, run_key: str) -> dict[str, Any]:
    """What the evidence beside a finding needs of its run, light: no tool results, envelopes or payloads,
    so a run with thousands of findings or megabyte results costs what a small one does."""
    [run] = fetch_rows(
        db,
        "SELECT key AS run_key, run_id, agent_id, outcome, outcome_channel, outcome_detail, prompt, answer, "
        "started_at, delivered, delivered_as, delivery_headline, delivered_text, complete, dropped_events, "
        "starts_mid_run, disposition FROM runs WHERE key = ?",
        [run_key],
    )
    calls = fetch_rows(
        db,
        "SELECT call_id, seq, tool_name, iteration, status, error, absent, complete, substr(args, 1, ?) AS args "
        "FROM tool_calls WHERE run_key = ? ORDER BY seq",
        [ARGS_PREVIEW, run_key],
    )
    for c in calls:
        c["error"], c["absent"] = bool(c["error"]), bool(c["absent"])
    run["tool_calls"] = calls
    run["coverage"] = fetch_rows(
        db,
        "SELECT call_id, tool_name, list, what, why, origin, looked_for FROM coverage WHERE run_key = ? "
        "ORDER BY rowid",
        [run_key],
    )
    run["evictions"] = [
        {k: v for k, v in e.items() if k not in ("run_key", "record")}
        for e in fetch_rows(db, "SELECT * FROM evictions WHERE run_key = ? ORDER BY ordinal", [run_key])
    ]
    return run


def licensing_runs(db: Database, run_keys: list[str]) -> dict[str, dict[str, Any]]:
    """Per run key, what judging its findings' wording needs: `answer`, `tool_calls` (with the declared
    `complete`) and `coverage`. Light: no results, arguments or envelopes."""
    out: dict[str, dict[str, Any]] = {}
    for key in dict.fromkeys(run_keys):
        answer = db.execute("SELECT answer FROM runs WHERE key = ?", [key]).fetchone()
        out[key] = {
            "answer": answer[0] if answer else None,
            "tool_calls": fetch_rows(
                db,
                "SELECT call_id, tool_name, complete FROM tool_calls WHERE run_key = ? ORDER BY seq",
                [key],
            ),
            "coverage": fetch_rows(
                db,
                "SELECT call_id, list, what, why FROM coverage WHERE run_key = ? ORDER BY rowid",
                [key],
            ),
        }
    return out
