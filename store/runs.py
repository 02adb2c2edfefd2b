"""Runs: the filters and the ONE keyset pager every list of runs reads through, one run whole or as its
screen needs it (header, timeline pieces, one tool call), and the values the run filters offer.

Lists page by keyset (`after`), never OFFSET, so the 100,000th page costs what the first does.
"""

from __future__ import annotations

import math
from typing import Any

from sqlite_utils import Database

from store.db.postgres import is_postgres
from store.errors import NotFound
from store.reading.extract.timeline import SHOWN_TYPES as TIMELINE_TYPES
from store.rows import Count, fetch_rows, finding_out, run_out
from store.search import (
    Walk,
    count_matching_runs_at_most,
    postgres_facets,
    postgres_sorted_runs,
    search_condition,
    search_windows,
)
from store.sorted_runs import BandedRuns, SortedRuns, WalkedRuns, kind_runs
from store.tallies import RUN_FILTER_FACETS, tally, tally_sum, tally_values
from store.vocab import WITHHOLDING, received_nothing_sql, withheld_sql
from store.windows import count_by_windows

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
    "delivered",
    "delivered_as",
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

#: sort name -> (key expressions on alias `r`, descending?, is the first key nullable?). Every sort ends with
#: `r.key`, so it is total. `newest`/`oldest` order on the raw `started_ms` (not `coalesce(...)`) so SQLite walks
#: the `runs_order` / `runs_outcome` / `runs_agent` indexes: 0.1 ms a page at 100,000 runs instead of a 160 ms
#: sort. NULL start times sort as SQLite sorts NULL (lowest), which is what `coalesce(started_ms, -1)` gives.
SORTS: dict[str, tuple[tuple[str, ...], bool, bool]] = {
    "newest": (("r.started_ms", "r.key"), True, True),
    "oldest": (("r.started_ms", "r.key"), False, True),
    "most-findings": (("r.findings", "coalesce(r.started_ms, -1)", "r.key"), True, False),
}

#: The index each sort walks, and the index that walks one filter's runs in a sort (schema m013, m016, m017).
SORT_INDEXES = {"newest": "runs_order", "oldest": "runs_order", "most-findings": "runs_most_findings"}
FILTER_SORT_INDEXES = {
    ("outcome", "newest"): "runs_outcome",
    ("outcome", "oldest"): "runs_outcome",
    ("outcome", "most-findings"): "runs_outcome_most_findings",
    ("agent", "newest"): "runs_agent",
    ("agent", "oldest"): "runs_agent",
    ("agent", "most-findings"): "runs_agent_most_findings",
    ("undelivered", "newest"): "runs_no_answer",
    ("undelivered", "oldest"): "runs_no_answer",
    ("undelivered", "most-findings"): "runs_no_answer_most_findings",
}

#: Every path a run (alias `r`) was read from, as a JSON array in the order first seen: all the paths of every
#: recording it was read from (a bare recording and its envelope are one run with two sources; schema m014);
#: within one ingest, the order its workers stored them.
SOURCES_SQL = (
    "(SELECT json_group_array(path) FROM (SELECT so.path AS path FROM run_sources rs "
    "JOIN sources so ON so.recording_id = rs.recording_id WHERE rs.run_key = r.key "
    "GROUP BY so.path ORDER BY min(so.seen_at), so.path))"
)

#: Longest string any page/timeline query returns for a text column (views truncate further).
PREVIEW_CHARS = 2_000


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
    undelivered: bool = False,
    walk: Walk | None = None,
) -> tuple[list[str], list[Any]]:
    """SQL conditions (on alias `r`) and parameters for the run filters the CLI and the app share.

    `walk` (for a page, not a count): how the page walks runs, so a search reads what suits it (`store.search`)."""
    where: list[str] = []
    params: list[Any] = []
    if outcome:
        where.append("r.outcome = ?")
        params.append(outcome)
    if withheld:
        where.append(withheld_sql("r.outcome"))
    if undelivered:
        where.append(received_nothing_sql("r.delivered", "r.outcome"))
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
        # a run's own findings, by the run's index (a pack version's index would read all its findings per run)
        where.append(
            "EXISTS (SELECT 1 FROM findings f INDEXED BY findings_run WHERE f.run_key = r.key AND f.pack_version = ?)"
        )
        params.append(pack_version)
    if search:
        condition, condition_params = search_condition(db, search, walk)
        where.append(condition)
        params.extend(condition_params)
    return where, params


def _page_index(db: Database, sort: str, filters: dict[str, Any], limit: int | None) -> str | None:
    """The index a filtered page walks in `sort` order, testing the filters run by run; None where SQLite's
    planner decides (no filter; a search, read as `store.search` chooses; a filter leaving few runs, read
    whole and sorted).

    The planner cannot be left to choose for the rest: its statistics are sampled, and with a million-run
    store's it sorted every run with findings for a newest-first page (3 s) and every delivered run for a
    most-findings page (1.8 s). Walking costs about `limit x runs / matching` rows, reading and sorting the
    matching runs about `matching`, so a filter walks from sqrt(limit x runs) matching runs (10,000 at a
    million runs and pages of 100); its count is the tallies' smallest (exact for one filter, an upper bound
    for several). An outcome, agent or `w` filter walks its own index in the sort's order."""
    active = _active(filters)
    if not active or "search" in active:
        return None
    counts = [n for k, v in active.items() if (n := tallied_run_count(db, **{k: v})) is not None]
    few = math.isqrt((limit or 100) * tally(db, "runs"))
    if counts and min(counts) < few:
        return None
    for name in ("outcome", "agent", "undelivered"):
        if name in active:
            return FILTER_SORT_INDEXES[(name, sort)]
    return SORT_INDEXES[sort]


def _active(filters: dict[str, Any]) -> dict[str, Any]:
    """The filters that filter (an empty value, or a flag off, is no filter)."""
    return {k: v for k, v in filters.items() if v not in (None, "", False)}


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
    limit: int | None = 100,
    with_source: bool = False,
    **filters: Any,
) -> list[dict[str, Any]]:
    """One page of runs in `sort` order. Each row carries `cursor`, the keyset token of that row.

    The one pager of runs: the app pages with it, and `list_runs` (the CLI) reads through it. Pass the
    previous page's last `cursor` as `after` (keyset); `limit=None` reads to the end; `with_source` adds
    each run's recording `source`. Without `after`, `offset` locates the page
    start by walking the sort keys only (used when a reader jumps far ahead), then the rows are read by keyset.
    """
    exprs, desc, nullable = _order(sort)
    walk = Walk(sort, None if after is None else str(after[-1]))  # every sort ends with the key
    sorted_runs = None
    if limit is not None and (after is not None or offset <= 0):
        sorted_runs = _sorted_runs(db, sort, _active(filters))
    where, params = ([], []) if sorted_runs is not None else run_filters(db, walk=walk, **filters)
    index = None if sorted_runs is not None else _page_index(db, sort, filters, limit)
    # PostgreSQL, filters on the runs' own columns and their findings (no search): the page's runs are chosen
    # by their keys first, then only their rows read. The choice reads no more than the indexes of the sort
    # and the filters (an index-only scan of runs_outcome and one of the findings' kind index for a kind and
    # an outcome); reading the rows while choosing, PostgreSQL read every run of the outcome (23,000 wide
    # rows at a million runs) to find none with the kind: 98-162 ms a page oldest first
    active = _active(filters)
    keys_first = sorted_runs is None and is_postgres(db) and bool(active) and "search" not in active
    source = "runs r" if index is None else f"runs r INDEXED BY {index}"
    if after is None and offset > 0:
        boundary = _boundary(db, exprs, desc, where, params, offset - 1, source=source)
        if boundary is None:
            return []
        after = boundary
    if after is not None and len(after) != len(exprs):
        raise ValueError("cursor does not match the sort")
    direction = " DESC" if desc else " ASC"
    cols = ", ".join("r." + c for c in RUN_LIST_COLUMNS)
    if with_source:
        cols += (
            f", (SELECT source FROM recordings WHERE id = r.recording_id) AS source, {SOURCES_SQL} AS sources"
        )
    keys = ", ".join(f"{e} AS _k{i}" for i, e in enumerate(exprs))
    out: list[dict[str, Any]] = []
    for extra, extra_params in _segments(exprs, desc, nullable, None if after is None else list(after)):
        want = None if limit is None else int(limit) - len(out)
        if want is not None and want <= 0:
            break
        conds, conds_params = [*where, *extra], [*params, *extra_params]
        if sorted_runs is not None and want is not None:  # the page's runs chosen before their rows are read
            chosen, chosen_params = sorted_runs.condition(exprs, desc, extra, extra_params, want)
            conds, conds_params = [chosen, *extra], [*chosen_params, *extra_params]
        elif keys_first and want is not None and conds:
            order = ", ".join(e + direction for e in exprs)
            chosen = f"SELECT r.key FROM {source} WHERE {' AND '.join(conds)} ORDER BY {order} LIMIT {want}"
            conds = [f"r.key = ANY(ARRAY({chosen}))"]
        sql = f"SELECT {cols}, {keys} FROM {source}"
        if conds:
            sql += " WHERE " + " AND ".join(conds)
        sql += " ORDER BY " + ", ".join(e + direction for e in exprs)
        if want is not None:
            sql += f" LIMIT {want}"
        for row in fetch_rows(db, sql, conds_params):
            row["cursor"] = [row.pop(f"_k{i}") for i in range(len(exprs))]
            out.append(run_out(row))
    return out


def _sorted_runs(
    db: Database, sort: str, active: dict[str, Any]
) -> SortedRuns | WalkedRuns | BandedRuns | None:
    """Where a page's runs are chosen before their rows are read (`store.sorted_runs`): on PostgreSQL a
    search alone or with filters `search_runs` holds (equality filters, schema m022; `f`; withheld), in any
    order, and a finding kind alone, newest or oldest first."""
    if set(active) == {"search"}:
        return postgres_sorted_runs(db, str(active["search"]))
    if "search" in active and (facets := postgres_facets(db, active)) is not None:
        return postgres_sorted_runs(db, str(active["search"]), facets)
    if set(active) == {"kind"} and is_postgres(db) and sort in ("newest", "oldest"):
        return kind_runs(str(active["kind"]))
    return None


def _boundary(
    db: Database,
    exprs: tuple[str, ...],
    desc: bool,
    where: list[str],
    params: list[Any],
    index: int,
    *,
    source: str = "runs r",
) -> list[Any] | None:
    direction = " DESC" if desc else " ASC"
    sql = f"SELECT {', '.join(exprs)} FROM {source}"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY " + ", ".join(e + direction for e in exprs) + " LIMIT 1 OFFSET ?"
    row = db.execute(sql, [*params, int(index)]).fetchone()
    return list(row) if row else None


def list_runs(
    db: Database,
    *,
    after: tuple[int | None, str] | None = None,
    limit: int | None = None,
    **filters: Any,
) -> list[dict[str, Any]]:
    """Runs, newest first, filtered, each with its `source` and `sources`; `after` is the (started_ms, key) of the last row
    already shown. The `reviewer runs --json` rows: `runs_page` without the cursor."""
    rows = runs_page(
        db,
        sort="newest",
        after=None if after is None else list(after),
        limit=limit,
        with_source=True,
        **filters,
    )
    for row in rows:
        row.pop("cursor")
    return rows


#: A count not answered by the tallies is read up to this many runs, and shown as "10,000+" beyond it.
COUNT_CAP = 10_000


def tallied_run_count(db: Database, **filters: Any) -> int | None:
    """The exact count from the tallies when the filters are none or one tallied filter (else None)."""
    active = _active(filters)
    if not active:
        return tally(db, "runs")
    if len(active) > 1:
        return None
    [(name, value)] = active.items()
    if name == "has_findings":
        return tally(db, "has_findings")
    if name == "withheld":
        return tally_sum(db, "outcome", list(WITHHOLDING), exclude=False)
    facet = RUN_FILTER_FACETS.get(name)
    return None if facet is None else tally(db, facet, str(value))


def count_runs(db: Database, **filters: Any) -> int:
    """How many runs the filters leave, exactly (a full count unless the tallies answer it)."""
    tallied = tallied_run_count(db, **filters)
    if tallied is not None:
        return tallied
    where, params = run_filters(db, **filters)
    sql = "SELECT count(*) FROM runs r" + (" WHERE " + " AND ".join(where) if where else "")
    return int(db.execute(sql, params).fetchone()[0])


def count_runs_at_most(db: Database, *, cap: int | None = None, **filters: Any) -> Count:
    """What the runs screen shows: exact from the tallies, otherwise read up to `cap` runs (`exact` False
    when there are more: the screen says "10,000+"). Bounded at any store size."""
    tallied = tallied_run_count(db, **filters)
    if tallied is not None:
        return Count(tallied)
    cap = COUNT_CAP if cap is None else int(cap)
    active = _active(filters)
    if set(active) == {"search"}:
        return count_matching_runs_at_most(db, str(active["search"]), cap, budget_s=STATEMENT_COUNT_BUDGET_S)
    facets = None if "search" not in active else postgres_facets(db, active)
    if facets is not None:
        return count_matching_runs_at_most(
            db, str(active["search"]), cap, facets, budget_s=STATEMENT_COUNT_BUDGET_S
        )
    where, params = run_filters(db, **filters)
    rows = f"SELECT 1 FROM runs r WHERE {' AND '.join(where)} LIMIT ?"
    if is_postgres(db):  # the planner drives from the most selective filter's index; read within a budget
        n, every_row = db.rows_within(  # type: ignore[attr-defined]
            rows, [*params, int(cap) + 1], STATEMENT_COUNT_BUDGET_S, planned_whole=False
        )
        return Count.read_up_to(n, cap, every_row=every_row)
    windowed = _count_in_windows(db, active, cap)
    if windowed is not None:
        return windowed
    n = int(db.execute(f"SELECT count(*) FROM ({rows})", [*params, int(cap) + 1]).fetchone()[0])
    return Count.read_up_to(n, cap)


#: A count of two or more filters reads windows of rowids, newest first: this many runs at first (to learn the
#: pace), then each as wide as the time left allows, up to COUNT_WINDOW_RUNS_MAX (a search sizes them to its
#: matches: `store.search.search_windows`)...
COUNT_WINDOW_RUNS = 2_048
COUNT_WINDOW_RUNS_MAX = 65_536
#: ...and stops after this long with what it has counted, shown as a lower bound ("4,096+"). Counting up to
#: 10,000 runs of one tenant with a kind of finding took 383 ms at a million runs, of a kind with a word 255 ms.
COUNT_BUDGET_S = 0.025
#: On PostgreSQL a count no tally answers is one statement (planned by the server, which drives it from its
#: most selective filter's index) read through a cursor (`PgDatabase.rows_within`) for at most this long,
#: then shown as a lower bound. Windows of runs, as SQLite reads them, read every run of a window to test the
#: filters: a kind and an outcome at a million runs counted 89 of 6,700 runs in their 25 ms, the statement
#: 2,500-5,200 in 35 ms (one of 500 runs: 11 against all 500, in 9 ms); up to 10,000 runs of a middling word with
#: findings read 150,000 rows of `search_runs` (46-90 ms warm, 200 ms cold).
STATEMENT_COUNT_BUDGET_S = 0.035


def _count_in_windows(db: Database, active: dict[str, Any], cap: int) -> Count | None:
    """How many runs the filters `active` leave (SQLite), counted window by window of rowids until `cap` or
    COUNT_BUDGET_S, whichever comes first (`exact` False then); None where one statement counts them (a
    single filter, from its index; a rare word's runs, read from its matches)."""
    if len(active) < 2:  # one filter alone reads its own index (`w`: schema m017)
        return None
    others = {k: v for k, v in active.items() if k != "search"}
    windows = None if "search" not in active else search_windows(db, str(active["search"]))
    if "search" in active and windows is None:
        return None
    where, params = run_filters(db, **others)
    return count_by_windows(
        db,
        "runs",
        "r",
        where,
        params,
        cap,
        first_width=COUNT_WINDOW_RUNS if windows is None else windows.width,
        max_width=COUNT_WINDOW_RUNS_MAX if windows is None else windows.width,
        budget_s=COUNT_BUDGET_S,
        window=None if windows is None else windows.condition,
    )


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
    [run] = fetch_rows(db, f"SELECT r.*, {SOURCES_SQL} AS sources FROM runs r WHERE r.key = ?", [key])
    run = run_out(run)
    run.pop("recording_id", None)
    rec = fetch_rows(
        db,
        "SELECT id, sha256, source, container, form, bytes, agentfootprint_version, footprintjs_version, "
        "envelope_run FROM recordings WHERE sha256 = ?",
        [run["recording_sha"]],
    )
    run["recording"] = rec[0] if rec else None
    semantics = {s["call_id"]: s for s in fetch_rows(db, "SELECT * FROM semantics WHERE run_key = ?", [key])}
    calls = fetch_rows(db, "SELECT * FROM tool_calls WHERE run_key = ? ORDER BY seq", [key])
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
        for c in fetch_rows(db, "SELECT * FROM coverage WHERE run_key = ? ORDER BY rowid", [key])
    ]
    run["evictions"] = [
        {k: v for k, v in e.items() if k not in ("run_key", "record")}
        for e in fetch_rows(db, "SELECT * FROM evictions WHERE run_key = ? ORDER BY ordinal", [key])
    ]
    run["findings"] = [
        finding_out(f)
        for f in fetch_rows(db, "SELECT * FROM findings WHERE run_key = ? ORDER BY seq, id", [key])
    ]
    run["versions"] = run_versions(db, run["run_id"])
    return run


def run_versions(db: Database, run_id: str | None) -> list[dict[str, Any]]:
    """Every stored recording of one run id, oldest first: a changed recording of a run is a new version
    beside the old one, and each label stays on the finding it was made on (`labels`: how many, per version;
    `sources`: every path that version was read from)."""
    if run_id is None:
        return []
    return fetch_rows(
        db,
        f"SELECT r.key AS run_key, r.recording_sha, c.ingested_at, c.source, {SOURCES_SQL} AS sources, "
        "(SELECT count(*) FROM labels l JOIN findings f ON f.id = l.target_id WHERE f.run_key = r.key) AS labels "
        "FROM runs r JOIN recordings c ON c.id = r.recording_id WHERE r.run_id = ? ORDER BY r.recording_id",
        [run_id],
    )


def run_header(db: Database, ident: str) -> dict[str, Any]:
    """What the run screen draws first: the run row (prompt, answer, outcome) and its findings.

    The answer and prompt are returned whole (the view bounds what it draws); no tool results are read.
    """
    key = resolve_run(db, ident)
    rows = fetch_rows(db, f"SELECT r.*, {SOURCES_SQL} AS sources FROM runs r WHERE r.key = ?", [key])
    if not rows:
        raise NotFound(f"no run {ident!r} in this database")
    run = run_out(rows[0])
    run.pop("recording_id", None)
    rec = fetch_rows(
        db, "SELECT source, form, container, bytes FROM recordings WHERE sha256 = ?", [run["recording_sha"]]
    )
    run["recording"] = rec[0] if rec else None
    run["findings"] = [
        finding_out(f)
        for f in fetch_rows(db, "SELECT * FROM findings WHERE run_key = ? ORDER BY seq, id", [key])
    ]
    run["versions"] = run_versions(db, run["run_id"])
    return run


def run_timeline_parts(db: Database, run_key: str, *, max_rows: int = 5_000) -> dict[str, Any]:
    """The pieces of a run's timeline, light: iterations (with the model's text), tool calls without their
    results (only sizes and previews), evictions. Each list is capped at `max_rows`."""
    cap = int(max_rows)
    iterations = fetch_rows(
        db,
        "SELECT seq, type, iteration, stage, substr(summary, 1, ?) AS summary FROM events WHERE run_key = ? "
        f"AND type IN ({', '.join('?' * len(TIMELINE_TYPES))}) ORDER BY seq LIMIT ?",
        [PREVIEW_CHARS, run_key, *TIMELINE_TYPES, cap * 2],
    )
    calls = fetch_rows(
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
        for e in fetch_rows(
            db, "SELECT * FROM evictions WHERE run_key = ? ORDER BY ordinal LIMIT ?", [run_key, cap]
        )
    ]
    total_calls = int(
        db.execute("SELECT count(*) FROM tool_calls WHERE run_key = ?", [run_key]).fetchone()[0]
    )
    return {"iterations": iterations, "tool_calls": calls, "evictions": evictions, "total_calls": total_calls}


def tool_call(db: Database, run_key: str, call_id: str) -> dict[str, Any]:
    """One tool call in the shape of `get_run(...)["tool_calls"][i]`, plus `coverage`: that call's rows."""
    rows = fetch_rows(db, "SELECT * FROM tool_calls WHERE run_key = ? AND call_id = ?", [run_key, call_id])
    if not rows:
        raise NotFound(f"no tool call {call_id!r} in run {run_key!r}")
    call = rows[0]
    call.pop("run_key", None)
    sem = fetch_rows(
        db, "SELECT render, envelope FROM semantics WHERE run_key = ? AND call_id = ?", [run_key, call_id]
    )
    call["render"] = sem[0]["render"] if sem else None
    call["semantics"] = sem[0]["envelope"] if sem else None
    for flag in ("error", "completed", "has_semantics", "absent"):
        call[flag] = bool(call[flag])
    coverage = [
        {k: v for k, v in c.items() if k != "run_key"}
        for c in fetch_rows(
            db, "SELECT * FROM coverage WHERE run_key = ? AND call_id = ? ORDER BY rowid", [run_key, call_id]
        )
    ]
    return {"call": call, "coverage": coverage}


def run_facets(db: Database, *, cap: int = 200) -> dict[str, list[str]]:
    """Distinct values the run filters offer (each list capped), read from the tallies."""
    return {
        "agents": tally_values(db, "agent", cap=cap),
        "tenants": tally_values(db, "tenant", cap=cap),
        "kinds": tally_values(db, "run_kind", cap=cap),
        "pack_versions": tally_values(db, "pack_version", cap=cap),
    }
