"""A group of recordings is written in one transaction: its runs recording by recording, its other rows table by
table once for the whole group (`rows_written_last`), all of it or nothing."""

from __future__ import annotations

import pytest
from sqlite_utils import Database

from store.db.connection import write_lock
from store.db.ingest import prepare
from store.db.postgres import COPY_MIN_ROWS
from store.db.writer import Prepared, rows_written_last, write_recording_in
from store.reading.sources import SourceItem, iter_sources
from tests.conftest import FIXTURE_RECORDINGS, both_backends

POSTGRES_ONLY = pytest.mark.parametrize("store_backend", ["postgresql"], indirect=True)


def _with_findings(count: int | None = None) -> list[Prepared]:
    """The first `count` (default: all) fixture recordings that have findings, prepared as a worker prepares
    them."""
    items = [i for i in iter_sources([FIXTURE_RECORDINGS]) if isinstance(i, SourceItem)]
    prepared = [p for p in map(prepare, items) if isinstance(p, Prepared) and p.extracted.findings]
    assert len(prepared) >= (count or 2)
    return prepared[:count]


def _count(db: Database, table: str) -> int:
    return int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


@both_backends
def test_a_groups_rows_follow_its_recordings_and_a_failed_group_leaves_nothing(db: Database) -> None:
    first, second, third = _with_findings(3)
    with write_lock(db), rows_written_last(db):
        for prepared in (first, second):
            write_recording_in(db, prepared)
        # the runs (and the documents that name them) are in; the findings and events wait for the group
        assert _count(db, "runs") == len(first.extracted.runs) + len(second.extracted.runs)
        assert _count(db, "findings") == _count(db, "events") == 0
    findings = len(first.extracted.findings) + len(second.extracted.findings)
    assert _count(db, "findings") == findings > 0
    assert _count(db, "events") > 0
    runs, events = _count(db, "runs"), _count(db, "events")

    with pytest.raises(RuntimeError, match="the group fails"), write_lock(db), rows_written_last(db):
        write_recording_in(db, third)
        raise RuntimeError("the group fails")
    assert (_count(db, "runs"), _count(db, "findings"), _count(db, "events")) == (runs, findings, events)
    assert _count(db, "recordings") == 2


@POSTGRES_ONLY
def test_postgresql_writes_a_groups_findings_in_one_statement(db: Database) -> None:
    """Each statement fires the findings' statement triggers (the codes, `run_kind`, the search facets), so
    a group's findings are one statement (a COPY), where each recording's, too few for a COPY, were a
    statement per finding."""
    db.execute("CREATE TABLE finding_statements (n INTEGER)")
    db.execute(
        "CREATE FUNCTION count_finding_statement() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "INSERT INTO finding_statements VALUES (1); RETURN NULL; END $$"
    )
    db.execute(
        "CREATE TRIGGER count_finding_statement AFTER INSERT ON findings FOR EACH STATEMENT "
        "EXECUTE FUNCTION count_finding_statement()"
    )
    group = _with_findings()
    findings = sum(len(p.extracted.findings) for p in group)
    assert findings >= COPY_MIN_ROWS and max(len(p.extracted.findings) for p in group) < COPY_MIN_ROWS
    with write_lock(db), rows_written_last(db):
        for prepared in group:
            write_recording_in(db, prepared)
    assert _count(db, "findings") == findings
    assert _count(db, "finding_statements") == 1
