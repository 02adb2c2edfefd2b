"""Ingest writes several recordings per transaction, each group whole or not at all; a recording that cannot
be stored is retried alone and quarantined alone, and the rest of its group is stored. A group's runs are
written recording by recording, its other rows table by table once for the whole group."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from sqlite_utils import Database

import store.db.ingest as ingest_module
from store import runs
from store.db.connection import write_lock
from store.db.ingest import GROUP_FILES, ingest, prepare
from store.db.postgres import COPY_MIN_ROWS
from store.db.writer import Prepared, group_written_last, write_recording_in
from store.reading.sources import SourceItem, iter_sources
from tests.conftest import FIXTURE_RECORDINGS, both_backends
from tests.test_search_facets import _scan

RECORDINGS = sorted(p for p in FIXTURE_RECORDINGS.glob("*.json"))
POSTGRES_ONLY = pytest.mark.parametrize("store_backend", ["postgresql"], indirect=True)


def _complete(db: Database) -> list[str]:
    """Sources whose every run is stored (recordings.runs stored runs it is a source of: its own, or the same
    run stored from another recording, as a bare recording and its envelope are)."""
    return [
        r[0]
        for r in db.execute(
            "SELECT r.source FROM recordings r WHERE r.runs = "
            "(SELECT count(*) FROM run_sources s JOIN runs u ON u.key = s.run_key WHERE s.recording_id = r.id) "
            "ORDER BY r.source"
        )
    ]


def test_recordings_are_committed_in_groups(db: Database, db_path: Path) -> None:
    commits: list[str] = []
    db.conn.set_trace_callback(lambda sql: commits.append(sql) if sql.strip().upper() == "COMMIT" else None)
    report = ingest(db, RECORDINGS, db_path=str(db_path), workers=1)
    db.conn.set_trace_callback(None)
    stored = db.execute("SELECT count(*) FROM recordings").fetchone()[0]
    assert report.stored == stored > GROUP_FILES // 4
    assert len(_complete(db)) == stored
    groups = -(-len(RECORDINGS) // GROUP_FILES)
    assert len(commits) <= groups + 1 < stored  # one per group (+ at most the statistics), not one per file


def test_the_writer_keeps_its_statement_journal_in_memory_and_gives_the_setting_back(
    db: Database, db_path: Path
) -> None:
    """Each run and finding the writer inserts fires the tally triggers, so SQLite journals what each such insert
    changes; in a temporary file, past 64 KiB, that journal was over a quarter of the write's time. Ingest
    keeps it in memory (`temp_store`) while it writes, and leaves the connection's own setting as it found it."""
    db.execute("PRAGMA temp_store = FILE")
    during: list[int] = []
    report = ingest(
        db,
        RECORDINGS,
        db_path=str(db_path),
        workers=1,
        progress=lambda *_: during.append(db.execute("PRAGMA temp_store").fetchone()[0]),
    )
    assert report.stored > 1 and set(during) == {2}  # 2: MEMORY
    assert db.execute("PRAGMA temp_store").fetchone()[0] == 1  # FILE, as before


def test_reextract_keeps_the_journal_in_memory_too_but_not_for_its_tally_rebuild(
    db: Database, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`reextract` rewrites every recording's rows through the same triggers, so it writes with the same
    settings; its tally rebuild, one statement over the whole store, runs with the connection's own."""
    import store.db.reextract as reextract_module

    ingest(db, RECORDINGS, db_path=str(db_path), workers=1)
    during: list[int] = []
    rebuilt_with: list[int] = []
    real_rebuild = reextract_module.rebuild_tallies

    def rebuild(database: Database) -> None:
        rebuilt_with.append(database.execute("PRAGMA temp_store").fetchone()[0])
        real_rebuild(database)

    monkeypatch.setattr(reextract_module, "rebuild_tallies", rebuild)
    done, failures = reextract_module.reextract(
        db, everything=True, progress=lambda *_: during.append(db.execute("PRAGMA temp_store").fetchone()[0])
    )
    assert done == len(RECORDINGS) and not failures
    assert set(during) == {2} and rebuilt_with == [0]
    assert db.execute("PRAGMA temp_store").fetchone()[0] == 0


def test_a_recording_that_cannot_be_stored_is_quarantined_alone(
    db: Database, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = RECORDINGS[len(RECORDINGS) // 2]
    real = ingest_module.write_recording_in

    def failing(database: Database, prepared: Any) -> tuple[int, bool]:
        result = real(database, prepared)  # its rows are written, then the write fails: all must roll back
        if prepared.extracted.recording["source"].endswith(bad.name):
            raise OSError("disk said no")
        return result

    def failing_alone(database: Database, prepared: Any) -> tuple[int, bool]:
        with write_lock(database):
            return failing(database, prepared)

    monkeypatch.setattr(ingest_module, "write_recording_in", failing)
    monkeypatch.setattr(ingest_module, "write_recording", failing_alone)
    report = ingest(db, RECORDINGS, db_path=str(db_path), workers=1)
    assert [(Path(p).name, code) for p, code, _ in report.quarantined] == [(bad.name, "unwritable-recording")]
    assert "disk said no" in report.quarantined[0][2]
    sources = [Path(s).name for s in _complete(db)]
    assert bad.name not in sources
    assert db.execute("SELECT count(*) FROM recordings").fetchone()[0] == len(sources) == report.stored
    assert report.stored + report.unchanged + 1 == len(RECORDINGS)
    row = db.execute("SELECT code FROM quarantine WHERE path LIKE ?", [f"%{bad.name}"]).fetchone()
    assert row == ("unwritable-recording",)


def _segments(db: Database) -> int:
    """How many segments the full-text index holds: its structure record (id 10 of `search_data`) is a
    4-byte cookie, then varints: the number of levels, then of segments."""
    block = db.execute("SELECT block FROM search_data WHERE id = 10").fetchone()[0]
    at, numbers = 4, []
    while len(numbers) < 2:
        value = 0
        while True:
            byte = block[at]
            at += 1
            value = (value << 7) | (byte & 0x7F)
            if byte < 0x80:
                break
        numbers.append(value)
    return numbers[1]


def test_a_group_indexes_its_documents_once(db: Database, db_path: Path) -> None:
    """A group's full-text documents are indexed after all its rows, as one segment; indexed after each
    recording's rows, each recording's became a segment of its own (the tally triggers' statement journal
    makes FTS5 write out its buffer), 12% of the group write."""
    db.execute("INSERT INTO search (search, rank) VALUES ('automerge', 0)")  # keep every segment as written
    report = ingest(db, RECORDINGS, db_path=str(db_path), workers=1)
    items = [i for i in iter_sources(RECORDINGS) if isinstance(i, SourceItem)]
    groups = len(list(ingest_module.group_items(items)))
    assert report.stored > groups
    assert db.execute("SELECT count(*) FROM search_docs").fetchone()[0] > report.stored
    assert _segments(db) == groups


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
    with write_lock(db), group_written_last(db):
        for prepared in (first, second):
            write_recording_in(db, prepared)
        # the runs (and the documents that name them) are in; the findings and events wait for the group
        assert _count(db, "runs") == len(first.extracted.runs) + len(second.extracted.runs)
        assert _count(db, "findings") == _count(db, "events") == 0
    findings = len(first.extracted.findings) + len(second.extracted.findings)
    assert _count(db, "findings") == findings > 0
    assert _count(db, "events") > 0
    stored_runs, events = _count(db, "runs"), _count(db, "events")

    with pytest.raises(RuntimeError, match="the group fails"), write_lock(db), group_written_last(db):
        write_recording_in(db, third)
        raise RuntimeError("the group fails")
    assert (_count(db, "runs"), _count(db, "findings"), _count(db, "events")) == (
        stored_runs,
        findings,
        events,
    )
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
    with write_lock(db), group_written_last(db):
        for prepared in group:
            write_recording_in(db, prepared)
    assert _count(db, "findings") == findings
    assert _count(db, "finding_statements") == 1


@POSTGRES_ONLY
def test_postgresql_a_grouped_ingest_keeps_each_runs_search_filters(loaded: Database) -> None:
    """A group writes its runs' documents before its findings: the filters PostgreSQL keeps beside each run's
    search tokens (the findings' kinds, pack versions, has-findings) still follow the findings, so a word
    within a filter counts as a scan of the rows does."""
    texts = [str(t or "") for (t,) in loaded.execute("SELECT text FROM search_text")]
    words = Counter(w for text in texts for w in set(re.findall(r"[a-z]{5,}", text.lower())))
    kinds = [str(k) for (k,) in loaded.execute("SELECT DISTINCT kind FROM findings WHERE kind IS NOT NULL")]
    packs = [
        str(p)
        for (p,) in loaded.execute(
            "SELECT DISTINCT pack_version FROM findings WHERE pack_version IS NOT NULL"
        )
    ]
    checked = 0
    for word, _ in words.most_common(3):
        for filters in (
            [{"kind": k} for k in kinds] + [{"pack_version": p} for p in packs] + [{"has_findings": True}]
        ):
            expected = _scan(loaded, word, filters)
            counted = runs.count_runs_at_most(loaded, search=word, **filters)
            assert (int(counted), counted.exact) == (len(expected), True), (word, filters)
            checked += len(expected)
    assert checked > 0
