"""Upgrades: an older database migrates in place with every label intact; a newer one is refused; a
corrupt file is reported and never overwritten."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from store.db.connection import open_database
from store.db.schema import migrations
from store.errors import DatabaseCorruptError, DatabaseVersionError
from tests.conftest import REPO

OLD = REPO / "tests" / "fixtures" / "schema-v2-with-labels.db"


def test_old_schema_migrates_in_place_with_labels_intact(tmp_path: Path) -> None:
    db_file = tmp_path / "old.db"
    shutil.copy(OLD, db_file)
    raw = sqlite3.connect(db_file)
    before_labels = raw.execute(
        "SELECT uid, target_id, verdict, note, reviewer FROM labels ORDER BY id"
    ).fetchall()
    applied = [r[0] for r in raw.execute("SELECT name FROM _sqlite_migrations ORDER BY id")]
    raw.close()
    assert applied == ["m001_core", "m002_labels"] and len(before_labels) == 3
    assert len(migrations._migrations) > len(applied), "the fixture must be older than this build"
    db = open_database(db_file)
    after = [r[0] for r in db.execute("SELECT name FROM _sqlite_migrations ORDER BY id")]
    assert after == [m.name for m in migrations._migrations]
    assert (
        db.execute("SELECT uid, target_id, verdict, note, reviewer FROM labels ORDER BY id").fetchall()
        == before_labels
    )
    joined = db.execute(
        "SELECT count(*) FROM current_labels l JOIN findings f ON f.id = l.target_id"
    ).fetchone()[0]
    assert joined == 3
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_newer_database_is_refused_untouched(tmp_path: Path) -> None:
    db_file = tmp_path / "newer.db"
    open_database(db_file).close()
    raw = sqlite3.connect(db_file)
    raw.execute(
        "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) VALUES (?, 'm999_from_the_future', 'x')",
        [migrations.name],
    )
    raw.commit()
    raw.close()
    before = db_file.read_bytes()
    with pytest.raises(DatabaseVersionError, match="newer footprint-reviewer"):
        open_database(db_file)
    assert db_file.read_bytes() == before


@pytest.mark.parametrize(
    "content",
    [b"not a database at all", b"SQLite format 3\x00" + b"\xff" * 5000],
    ids=["text", "damaged-header"],
)
def test_corrupt_file_is_reported_never_overwritten(tmp_path: Path, content: bytes) -> None:
    db_file = tmp_path / "corrupt.db"
    db_file.write_bytes(content)
    with pytest.raises(DatabaseCorruptError, match=str(db_file)):
        open_database(db_file)
    assert db_file.read_bytes() == content


def test_reextract_fills_what_the_person_received_on_an_old_database(tmp_path: Path) -> None:
    from store.db.reextract import reextract
    from store.runs import list_runs

    db_file = tmp_path / "old.db"
    shutil.copy(OLD, db_file)
    db = open_database(db_file)
    before = {r["run_id"]: (r["delivered"], r["delivered_as"]) for r in list_runs(db)}
    assert set(before.values()) == {(None, None)}  # not guessed from the old outcome: unknown until re-read
    done, failures = reextract(db)
    assert (done, failures) == (2, [])
    after = {r["run_id"]: (r["outcome"], r["delivered"], r["delivered_as"]) for r in list_runs(db)}
    assert after == {
        "run-1796002007389-1": ("delivered", True, "drafted"),  # unsupported-claim-findings.json
        "run-1796002023213-3": ("refused", False, None),  # evidence-gate-rails-refused.json
    }
    # the refused run keeps its withheld-answer finding, so the 'justified' label still attaches
    assert (
        db.execute("SELECT count(*) FROM current_labels l JOIN findings f ON f.id = l.target_id").fetchone()[
            0
        ]
        == 3
    )
