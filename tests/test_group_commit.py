"""Ingest writes several recordings per transaction, each group whole or not at all; a recording that cannot
be stored is retried alone and quarantined alone, and the rest of its group is stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlite_utils import Database

import store.db.ingest as ingest_module
from store.db.connection import write_lock
from store.db.ingest import GROUP_FILES, ingest
from tests.conftest import FIXTURE_RECORDINGS

RECORDINGS = sorted(p for p in FIXTURE_RECORDINGS.glob("*.json"))


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
