"""Each finding carries its run's start (schema m030), which PostgreSQL reads the queue newest first by: the
migration fills it from the runs on a store that had none, the ingest writes it with the run, and on
PostgreSQL a newest-first page is one read of the findings' own newest-first index, where it walked the
runs a chunk at a time (55-105 ms a page at a million runs, a kind read whole and sorted 82 ms)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlite_utils import Database

from store import labels
from store.db.connection import open_database
from store.db.postgres import is_postgres
from store.findings import queue_page
from tests.conftest import both_backends, record_statements

M030 = "m030_findings_know_their_runs_start"
#: findings whose start is not their run's (none, where the column is kept)
_ASTRAY = (
    "SELECT count(*) FROM findings f JOIN runs r ON r.key = f.run_key "
    "WHERE f.run_started_ms IS DISTINCT FROM r.started_ms"
)


def _astray(db: Database) -> int:
    sql = _ASTRAY if is_postgres(db) else _ASTRAY.replace("IS DISTINCT FROM", "IS NOT")
    return int(db.execute(sql).fetchone()[0])


@both_backends
def test_ingest_writes_each_finding_with_its_runs_start(loaded: Database) -> None:
    started = loaded.execute("SELECT count(*) FROM findings WHERE run_started_ms IS NOT NULL").fetchone()[0]
    assert started > 0 and _astray(loaded) == 0


@both_backends
def test_m030_fills_a_store_written_before_it(loaded: Database, db_path: Path) -> None:
    """A store whose findings had no start (as every store before m030): opened again, the migration fills
    each from its run, and on PostgreSQL the findings are vacuumed after it (their pages all-visible again
    for the queue's index-only reads)."""
    before = [r["id"] for r in queue_page(loaded, sort="newest", limit=10_000)]
    postgres = is_postgres(loaded)
    table = "_reviewer_migrations" if postgres else "_sqlite_migrations"
    loaded.execute("ALTER TABLE findings DROP COLUMN run_started_ms")  # PostgreSQL drops its indexes too
    loaded.execute(f"DELETE FROM {table} WHERE name = ?", [M030])
    loaded.close()
    db = open_database(db_path)
    try:
        assert db.execute(f"SELECT count(*) FROM {table} WHERE name = ?", [M030]).fetchone()[0] == 1
        assert db.execute("SELECT count(run_started_ms) FROM findings").fetchone()[0] > 0
        assert _astray(db) == 0
        assert [r["id"] for r in queue_page(db, sort="newest", limit=10_000)] == before
        if postgres:
            vacuumed = db.execute(
                "SELECT last_vacuum IS NOT NULL FROM pg_stat_user_tables WHERE relname = 'findings'"
            ).fetchone()[0]
            assert vacuumed
    finally:
        db.close()


def _plan_indexes(db: Any, sql: str, params: list[Any]) -> set[str]:
    """The indexes PostgreSQL's plan for `sql` reads where it may neither scan a table nor sort (so any
    index the statement's ORDER BY matches is taken): what the statement can be read by at any size."""
    from store.db.postgres import translate

    text, _ = translate(sql)
    assert text is not None
    conn = db._conn
    with conn.transaction():
        conn.execute("SET LOCAL enable_seqscan = off")
        conn.execute("SET LOCAL enable_sort = off")
        conn.execute("SET LOCAL enable_incremental_sort = off")
        plan = conn.execute("EXPLAIN (FORMAT JSON) " + text, params).fetchone()[0][0]["Plan"]
    found: set[str] = set()
    stack = [plan]
    while stack:
        node = stack.pop()
        stack.extend(node.get("Plans", []))
        if "Index Name" in node and node.get("Relation Name") == "findings":
            found.add(str(node["Index Name"]))
    return found


@pytest.mark.parametrize("store_backend", ["postgresql"], indirect=True)
@pytest.mark.parametrize(
    ("filters", "index"),
    [({}, "findings_newest_order"), ({"state": "unlabelled"}, "findings_newest_order")]
    + [({"kind": "coverage-gap"}, "findings_kind_newest_order")],
)
def test_postgresql_reads_newest_first_from_the_findings_own_index(
    loaded: Database, monkeypatch: pytest.MonkeyPatch, filters: dict[str, Any], index: str
) -> None:
    """On PostgreSQL a newest-first page after a cursor is one statement over the findings in their index's
    order (no chunk of runs walked). (SQLite walks the runs, which costs it less: `store.findings._runs_walked`.)"""
    first = queue_page(loaded, sort="newest", limit=3, **filters)
    labels.label_finding(loaded, first[0]["id"], "unsure", "ann")
    statements = record_statements(loaded, monkeypatch)
    page = queue_page(loaded, sort="newest", limit=3, after=first[-1]["cursor"], **filters)
    assert page, "the fixture must have more than one page"
    assert not [sql for sql, _ in statements if "runs_newest_first" in sql], "the runs were walked"
    reads = [(sql, p) for sql, p in statements if "ORDER BY -coalesce(f.run_started_ms, -1)" in sql]
    assert len(reads) == 1, [sql for sql, _ in statements]
    assert index in _plan_indexes(loaded, *reads[0])
