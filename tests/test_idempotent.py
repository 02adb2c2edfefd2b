"""Re-ingesting identical content is a no-op; finding ids are stable across databases and re-ingest."""

from __future__ import annotations

import shutil
from pathlib import Path

from sqlite_utils import Database

from store.db.connection import open_database
from store.db.ingest import ingest
from tests.conftest import FIXTURE_RECORDINGS, both_backends

TABLES = (
    "recordings",
    "runs",
    "tool_calls",
    "semantics",
    "coverage",
    "evictions",
    "findings",
    "events",
    "search_docs",
)


def _counts(db: Database) -> dict[str, int]:
    return {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


@both_backends
def test_reingest_changes_nothing(db: Database, db_path: Path) -> None:
    first = ingest(db, [FIXTURE_RECORDINGS], db_path=str(db_path))
    counts = _counts(db)
    second = ingest(db, [FIXTURE_RECORDINGS], db_path=str(db_path))
    assert first.stored == len(list(FIXTURE_RECORDINGS.glob("*.json")))
    assert (second.stored, second.unchanged, second.quarantined) == (0, first.stored, [])
    assert _counts(db) == counts


@both_backends
def test_same_bytes_under_another_name_is_one_recording(db: Database, db_path: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.json"
    shutil.copy(FIXTURE_RECORDINGS / "plain-tool-run.json", copy)
    ingest(db, [FIXTURE_RECORDINGS / "plain-tool-run.json", copy], db_path=str(db_path))
    assert db.execute("SELECT count(*) FROM recordings").fetchone()[0] == 1
    assert db.execute("SELECT count(*) FROM sources").fetchone()[0] == 2


def test_finding_ids_are_stable_across_fresh_databases(tmp_path: Path) -> None:
    ids = []
    for name in ("a.db", "b.db"):
        path = tmp_path / name
        db = open_database(path)
        ingest(db, [FIXTURE_RECORDINGS], db_path=str(path))
        ids.append([r[0] for r in db.execute("SELECT id FROM findings ORDER BY id")])
        db.close()
    assert ids[0] == ids[1] and len(ids[0]) > 10
    assert len(set(ids[0])) == len(ids[0])
