"""A code's findings read whole with their queue keys (schema m031): on PostgreSQL `finding_codes` carries
each finding's keys, kept by its triggers as findings are written, changed and removed, filled by the
migration on a store written before it, and a page under a code reads them from the view
`finding_code_keys` (no probe of the findings by id: a code of 14,600 findings 56-73 -> 15-22 ms a page at
a million runs), in the same order as a walk of the sort's index; SQLite reads its keys index as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlite_utils import Database

from store import findings as queue
from store import labels
from store.db.connection import open_database
from store.db.postgres import is_postgres
from store.tallies import rebuild_tallies
from tests.conftest import both_backends, record_statements

POSTGRES_ONLY = pytest.mark.parametrize("store_backend", ["postgresql"], indirect=True)
#: pairs whose keys are not their finding's (none, where the triggers keep them)
_ASTRAY = (
    "SELECT count(*) FROM finding_codes c JOIN findings f ON f.id = c.finding WHERE "
    "(c.frowid, c.run_key, c.seq, c.kind, c.tool_name, c.pack_version, c.run_started_ms) IS DISTINCT FROM "
    "(f.rowid, f.run_key, f.seq, f.kind, f.tool_name, f.pack_version, f.run_started_ms)"
)


def _astray(db: Any) -> int:
    return int(db._conn.execute(_ASTRAY).fetchone()[0])  # raw: the store's SQL reads no row comparison so


def _codes(db: Database) -> list[str]:
    return [str(r[0]) for r in db.execute("SELECT DISTINCT code FROM finding_codes ORDER BY code")]


@both_backends
@pytest.mark.parametrize("sort", list(queue.QUEUE_SORTS))
def test_a_code_read_whole_pages_as_the_walk_does(
    loaded: Database, sort: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every code, alone and unlabelled, in `sort`: the rows and cursors read whole equal a walk's, page by
    page after each cursor."""
    for code in _codes(loaded)[:3]:  # a few labelled, so that "unlabelled" leaves some out
        labelled = queue.queue_page(loaded, limit=1, code=code)[0]["id"]
        labels.label_finding(loaded, labelled, "unsure", "ann")
    for code in _codes(loaded):
        for filters in ({"code": code}, {"code": code, "state": "unlabelled"}):
            read = queue.queue_page(loaded, sort=sort, limit=1_000, **filters)
            paged, after = [], None
            while page := queue.queue_page(loaded, sort=sort, limit=2, after=after, **filters):
                paged += page
                after = page[-1]["cursor"]
            with monkeypatch.context() as walking:
                walking.setattr(queue, "_driver", lambda *a, **k: None)
                walked = queue.queue_page(loaded, sort=sort, limit=1_000, **filters)
            assert [(r["id"], r["cursor"]) for r in read] == [(r["id"], r["cursor"]) for r in walked], filters
            assert [r["id"] for r in paged] == [r["id"] for r in read], filters
            # jumps and positions read the same set the same way
            for n in {0, len(read) // 2, len(read) - 1} if read else ():
                assert queue.queue_position(loaded, read[n]["id"], sort=sort, **filters) == n, filters
                jumped = queue.queue_page_at(loaded, sort=sort, offset=n, limit=2, **filters)
                assert [r["id"] for r in jumped] == [r["id"] for r in read[n : n + 2]], filters


@POSTGRES_ONLY
def test_postgresql_reads_a_codes_findings_with_their_keys(
    loaded: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = _codes(loaded)[0]
    driver = queue._driver(loaded, {"code": code}, "run")
    assert driver is not None and driver.index == queue.CODE_KEYS_SOURCE
    statements = record_statements(loaded, monkeypatch)
    rows = queue.queue_page(loaded, sort="newest", limit=5, code=code)
    assert rows
    reads = [sql for sql, _ in statements if "finding_code_keys f" in sql]
    assert reads and not [sql for sql, _ in statements if "findings_keys" in sql or "ANY(ARRAY" in sql]


@POSTGRES_ONLY
def test_the_keys_follow_the_findings(loaded: Database) -> None:
    """Written, changed (a pack version, a kind, the codes themselves), removed and recounted: every pair
    keeps its finding's keys."""
    assert loaded.execute("SELECT count(*) FROM finding_codes").fetchone()[0] > 0
    assert _astray(loaded) == 0
    some = [r["id"] for r in queue.queue_page(loaded, limit=4)]
    loaded.execute("UPDATE findings SET pack_version = 'en@9', kind = 'moved' WHERE id = ?", [some[0]])
    loaded.execute("UPDATE findings SET codes = '[\"fresh\"]' WHERE id = ?", [some[1]])
    assert _astray(loaded) == 0
    kinds = {r[0] for r in loaded.execute("SELECT kind FROM finding_codes WHERE finding = ?", [some[0]])}
    assert kinds <= {"moved"}
    assert loaded.execute("SELECT code FROM finding_codes WHERE finding = ?", [some[1]]).fetchall() == [
        ("fresh",)
    ]
    loaded.execute("DELETE FROM findings WHERE id = ?", [some[2]])
    assert not loaded.execute("SELECT 1 FROM finding_codes WHERE finding = ?", [some[2]]).fetchall()
    rebuild_tallies(loaded)
    assert _astray(loaded) == 0


@POSTGRES_ONLY
def test_m031_fills_a_store_written_before_it(loaded: Database, db_path: Path) -> None:
    before = {
        c: [r["id"] for r in queue.queue_page(loaded, sort="kind", limit=1_000, code=c)]
        for c in _codes(loaded)
    }
    loaded.execute("DROP VIEW finding_code_keys")
    for column in ("frowid", "run_key", "seq", "kind", "tool_name", "pack_version", "run_started_ms"):
        loaded.execute(f"ALTER TABLE finding_codes DROP COLUMN {column}")  # the index goes with them
    loaded.execute("DELETE FROM _reviewer_migrations WHERE name = 'm031_code_keys'")
    loaded.close()
    db = open_database(db_path)
    try:
        assert is_postgres(db) and _astray(db) == 0
        assert db.execute("SELECT count(kind) FROM finding_codes").fetchone()[0] > 0
        after = {
            c: [r["id"] for r in queue.queue_page(db, sort="kind", limit=1_000, code=c)] for c in _codes(db)
        }
        assert after == before
    finally:
        db.close()
