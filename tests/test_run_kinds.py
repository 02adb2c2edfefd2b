"""The runs screen filtered by a finding kind, newest or oldest first: on PostgreSQL the page's runs are chosen
from `run_kinds` (schema m019: every (kind, run) pair beside the run's start time), so a page reads only its
own runs' rows, gives the pages SQLite gives, and follows findings and runs as they change.

A generated store of 1,000 runs with findings (`bench.synthetic`) on each backend."""

from __future__ import annotations

from typing import Any

import pytest

from bench.synthetic import insert_synthetic_findings, insert_synthetic_runs
from store import runs
from store.db.connection import open_database
from store.vocab import DANGLING_REFERENCE, NEGATIVE_CLAIM, WITHHELD_ANSWER
from tests.conftest import (
    SYNTHETIC_RUNS,
    fresh_postgres_database,
    keyset_run_keys,
    postgresql_plan_nodes,
    runs_rows_read,
)

RUNS = SYNTHETIC_RUNS
KINDS = (NEGATIVE_CLAIM, DANGLING_REFERENCE, WITHHELD_ANSWER)


def _keyset_pages(db: Any, kind: str, sort: str) -> list[str]:
    return keyset_run_keys(db, kind=kind, sort=sort, limit=30, pages=4)


@pytest.mark.parametrize("sort", ["newest", "oldest"])
@pytest.mark.parametrize("kind", KINDS)
def test_pages_of_a_kind_are_the_same_on_both_backends(
    synthetic_sqlite_store: Any, synthetic_postgresql_store: Any, kind: str, sort: str
) -> None:
    expected = _keyset_pages(synthetic_sqlite_store, kind, sort)
    assert len(expected) > 10
    assert _keyset_pages(synthetic_postgresql_store, kind, sort) == expected


@pytest.mark.parametrize("kind", KINDS)
def test_a_postgresql_page_of_a_kind_reads_only_its_own_runs_rows(
    synthetic_postgresql_store: Any, runs_statements: list[tuple[str, list[Any]]], kind: str
) -> None:
    """Walking runs newest first and seeking a finding of the kind for each read every run walked past: 6,900
    for a page of 100 of a kind in 1.5% of a million runs."""
    statements = runs_statements
    for sort in ("newest", "oldest"):
        statements.clear()
        assert len(runs.runs_page(synthetic_postgresql_store, kind=kind, sort=sort, limit=10)) == 10
        assert runs_rows_read(synthetic_postgresql_store, statements) <= 10, sort


def test_postgresql_keeps_each_runs_kinds_as_findings_and_runs_change() -> None:
    with fresh_postgres_database() as url:
        db = open_database(url)
        try:
            insert_synthetic_runs(db, 40)
            insert_synthetic_findings(db)

            def kinds_of(key: str) -> set[str]:
                rows = db.execute("SELECT kind FROM run_kinds WHERE key = ?", [key]).fetchall()
                return {r[0] for r in rows}

            def found(key: str) -> set[str]:
                rows = db.execute("SELECT DISTINCT kind FROM findings WHERE run_key = ?", [key]).fetchall()
                return {r[0] for r in rows}

            key, fid = db.execute("SELECT run_key, id FROM findings ORDER BY id LIMIT 1").fetchone()
            other = db.execute("SELECT key FROM runs WHERE key <> ? ORDER BY key LIMIT 1", [key]).fetchone()[
                0
            ]
            assert kinds_of(key) == found(key) != set()
            db.execute("UPDATE findings SET kind = 'a-new-kind', run_key = ? WHERE id = ?", [other, fid])
            assert (kinds_of(key), kinds_of(other)) == (found(key), found(other))
            assert "a-new-kind" in kinds_of(other)
            assert [r["run_key"] for r in runs.runs_page(db, kind="a-new-kind")] == [other]
            db.execute("DELETE FROM findings WHERE run_key = ?", [other])
            assert kinds_of(other) == set()
            assert runs.runs_page(db, kind="a-new-kind") == []
            kind = NEGATIVE_CLAIM
            newest = [r["run_key"] for r in runs.runs_page(db, kind=kind, limit=3)]
            db.execute("UPDATE runs SET started_ms = 1 WHERE key = ?", [newest[0]])  # now the oldest
            assert [r["run_key"] for r in runs.runs_page(db, kind=kind, sort="oldest", limit=1)] == newest[:1]
            db.execute("TRUNCATE findings")
            assert db.execute("SELECT count(*) FROM run_kinds").fetchone()[0] == 0
        finally:
            db.close()


def _runs_heap_rows_read(db: Any, statements: list[tuple[str, list[Any]]]) -> int:
    """The rows of `runs` the statements read from the table itself (an index-only scan reads none but the
    pages the visibility map does not vouch for)."""
    return sum(
        int(n.get("Heap Fetches", 0))
        if n["Node Type"] == "Index Only Scan"
        else int(n["Actual Rows"]) * int(n.get("Actual Loops", 1))
        for n in postgresql_plan_nodes(db, statements)
        if n.get("Relation Name") == "runs"
    )


def _outcomes(db: Any) -> list[str]:
    return [
        r[0] for r in db.execute("SELECT DISTINCT outcome FROM runs WHERE outcome IS NOT NULL ORDER BY 1")
    ]


@pytest.mark.parametrize("sort", ["newest", "oldest", "most-findings"])
def test_pages_of_a_kind_and_an_outcome_are_the_same_on_both_backends(
    synthetic_sqlite_store: Any, synthetic_postgresql_store: Any, sort: str
) -> None:
    seen = 0
    for kind in KINDS:
        for outcome in _outcomes(synthetic_sqlite_store):
            expected = keyset_run_keys(
                synthetic_sqlite_store, kind=kind, outcome=outcome, sort=sort, limit=7, pages=3
            )
            got = keyset_run_keys(
                synthetic_postgresql_store, kind=kind, outcome=outcome, sort=sort, limit=7, pages=3
            )
            assert got == expected, (kind, outcome)
            seen += len(expected)
    assert seen > 30


@pytest.mark.parametrize("sort", ["newest", "oldest"])
def test_a_postgresql_page_of_a_kind_and_an_outcome_reads_only_its_own_runs_rows(
    synthetic_postgresql_store: Any, runs_statements: list[tuple[str, list[Any]]], sort: str
) -> None:
    """The page's runs are chosen by their keys from the indexes first, then their rows read: reading the
    rows while choosing, PostgreSQL read every run of the outcome to find a few (or none) with the kind,
    98-162 ms a page oldest first at a million runs."""
    db = synthetic_postgresql_store
    db._conn.execute("VACUUM runs")  # what autovacuum does: the visibility map vouches for the pages
    for kind in KINDS:
        for outcome in _outcomes(db):
            runs_statements.clear()
            page = runs.runs_page(db, kind=kind, outcome=outcome, sort=sort, limit=10)
            assert _runs_heap_rows_read(db, runs_statements) <= len(page), (kind, outcome)
