"""The WAL checkpointed beside an ingest (`store.db.checkpointer`): the WAL stays bounded under a writer that
never pauses, a checkpoint that fails costs nothing stored, and the ingest's workers are still forked."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import store.db.checkpointer as checkpointer
import store.db.ingest as ingest_module
from store.db.checkpointer import Checkpointer
from store.db.connection import open_database
from store.db.ingest import ingest
from tests.corpus_util import make_copies

PAGE = 4096


def _wal_bytes(db_path: Path) -> int:
    wal = Path(f"{db_path}-wal")
    return wal.stat().st_size if wal.exists() else 0


def test_a_writer_that_never_pauses_keeps_the_wal_bounded(tmp_path: Path) -> None:
    """300 back-to-back transactions of 40 pages each (48 MB written): with the checkpointer and `bounded`
    before each one, the WAL restarts as it fills and never holds more than a few transactions past its
    bound (without `bounded` it holds nearly everything written)."""
    db_path = tmp_path / "w.db"
    db = open_database(db_path)
    db.execute("CREATE TABLE blobs (b BLOB)")
    db.execute("PRAGMA wal_autocheckpoint = 0")
    db.execute(f"PRAGMA journal_size_limit = {64 * PAGE}")
    largest = 0
    with Checkpointer(str(db_path), wal_pages=64) as checkpoints:
        for _ in range(300):
            checkpoints.bounded()
            with db.conn:
                db.conn.executemany("INSERT INTO blobs VALUES (?)", [(os.urandom(PAGE - 200),)] * 40)
            checkpoints.committed()
            largest = max(largest, _wal_bytes(db_path))
        assert checkpoints.working
    assert db.execute("SELECT count(*) FROM blobs").fetchone()[0] == 12_000
    assert largest <= (64 + 8 * 41) * (PAGE + 24), f"the WAL grew to {largest:,} bytes"
    db.close()


class _FailingCheckpoints:
    """A connection whose checkpoints fail, as on a full disk."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, *args: Any) -> Any:
        if "wal_checkpoint" in sql:
            raise sqlite3.OperationalError("disk I/O error")
        return self._conn.execute(sql, *args)

    def close(self) -> None:
        self._conn.close()


def test_a_failing_checkpoint_stores_everything_and_the_writer_checkpoints_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checkpointer's first checkpoint fails: every recording is still stored, and the writer goes back
    to checkpointing for itself, so the WAL stays near its bound (left with no checkpoint at all, it held
    every page the ingest wrote)."""
    real_connect = checkpointer.connect
    monkeypatch.setattr(checkpointer, "connect", lambda path: _FailingCheckpoints(real_connect(path)))
    monkeypatch.setattr(ingest_module, "GROUP_FILES", 4)
    monkeypatch.setattr(ingest_module, "INGEST_WAL_PAGES", 32)
    monkeypatch.setattr(ingest_module, "WAL_SIZE_LIMIT_BYTES", 32 * PAGE)
    make_copies(tmp_path / "in", 60)
    db_path = tmp_path / "s.db"
    db = open_database(db_path)
    report = ingest(db, [tmp_path / "in"], db_path=str(db_path), workers=1)
    assert not report.quarantined and report.stored == 60
    assert db.execute("SELECT count(*) FROM recordings").fetchone()[0] == 60
    # with no checkpoint after the failure the WAL held 2.4x the database's pages; checkpointed, a sixth
    assert _wal_bytes(db_path) < db_path.stat().st_size / 2, (_wal_bytes(db_path), db_path.stat().st_size)
    db.close()


def test_the_ingest_forks_its_workers_before_the_checkpointer_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers are forked only while the ingest has one thread (else they are spawned, which re-imports
    everything and made an ingest twice as slow); the checkpointer's thread starts with the first write."""
    methods: list[str | None] = []
    real = ingest_module.multiprocessing.get_context

    def recorded(method: str | None = None) -> Any:
        methods.append(method)
        return real(method)

    monkeypatch.setattr(ingest_module.multiprocessing, "get_context", recorded)
    monkeypatch.setattr(ingest_module, "GROUP_FILES", 4)
    make_copies(tmp_path / "in", 24)
    db_path = tmp_path / "s.db"
    db = open_database(db_path)
    report = ingest(db, [tmp_path / "in"], db_path=str(db_path), workers=2)
    assert not report.quarantined and report.stored == 24
    assert methods == ["fork"]
    db.close()
