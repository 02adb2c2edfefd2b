"""Every form a recording takes ingests: bare, envelope (compact and pretty), bundle zip, nested folders."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

from sqlite_utils import Database

from store.db.ingest import ingest
from tests.conftest import FIXTURE_RECORDINGS


def _sources(db: Database) -> dict[str, str]:
    return dict(db.execute("SELECT source, form FROM recordings").fetchall())


def test_bare_and_compact_envelope(db: Database, db_path: Path) -> None:
    report = ingest(
        db,
        [FIXTURE_RECORDINGS / "plain-tool-run.json", FIXTURE_RECORDINGS / "envelope-conversation-turn1.json"],
        db_path=str(db_path),
    )
    assert (report.stored, report.quarantined) == (2, [])
    forms = _sources(db)
    assert forms[str(FIXTURE_RECORDINGS / "plain-tool-run.json")] == "bare"
    assert forms[str(FIXTURE_RECORDINGS / "envelope-conversation-turn1.json")] == "envelope"
    row = db.execute(
        "SELECT tenant, principal, session_id, complete, agent_id FROM runs WHERE run_id = ?",
        ["run-1796002044543-4"],
    ).fetchone()
    assert row == ("acme-corp", "user-4471", "sess-2f9c", 1, "support-desk")


def test_pretty_printed_envelope(db: Database, db_path: Path, tmp_path: Path) -> None:
    doc = json.loads((FIXTURE_RECORDINGS / "envelope-conversation-turn2.json").read_text())
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(doc, indent=2, ensure_ascii=False))
    report = ingest(db, [pretty], db_path=str(db_path))
    assert (report.stored, report.quarantined) == (1, [])
    assert db.execute("SELECT form, agentfootprint_version FROM recordings").fetchone() == (
        "envelope",
        "9.62.0",
    )


def test_bug_report_bundle(db: Database, db_path: Path, tmp_path: Path) -> None:
    doc = json.loads((FIXTURE_RECORDINGS / "envelope-example63-skill-graph-1.json").read_text())
    bundle = tmp_path / "bug.zip"
    with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("manifest.json", json.dumps({"manifestVersion": 2}))
        zf.writestr("envelope.json", json.dumps(doc, indent=2))
        zf.writestr("narrative.txt", "...")
    report = ingest(db, [bundle], db_path=str(db_path))
    assert (report.stored, report.quarantined) == (1, [])
    assert db.execute("SELECT source, container FROM recordings").fetchone() == (
        f"{bundle}!envelope.json",
        "bundle",
    )


def test_bundle_with_recording_json_when_run_not_complete(
    db: Database, db_path: Path, tmp_path: Path
) -> None:
    bundle = tmp_path / "bug2.zip"
    with zipfile.ZipFile(bundle, "w") as zf:
        zf.writestr("manifest.json", "{}")
        zf.write(FIXTURE_RECORDINGS / "plain-tool-run.json", "recording.json")
    report = ingest(db, [bundle], db_path=str(db_path))
    assert report.stored == 1


def test_folders_are_read_recursively(db: Database, db_path: Path, tmp_path: Path) -> None:
    nested = tmp_path / "in" / "a" / "b"
    nested.mkdir(parents=True)
    shutil.copy(FIXTURE_RECORDINGS / "plain-tool-run.json", tmp_path / "in" / "top.json")
    shutil.copy(FIXTURE_RECORDINGS / "semantics-table-and-chart.json", nested / "deep.json")
    (tmp_path / "in" / "notes.txt").write_text("not a recording, and not even looked at")
    report = ingest(db, [tmp_path / "in"], db_path=str(db_path))
    assert (report.stored, report.quarantined) == (2, [])


def test_multi_run_recording_splits_by_run_id(db: Database, db_path: Path) -> None:
    ingest(db, [FIXTURE_RECORDINGS / "multi-turn-conversation-identity.json"], db_path=str(db_path))
    rows = db.execute("SELECT run_id, prompt IS NOT NULL, tenant FROM runs ORDER BY started_ms").fetchall()
    assert [r[0] for r in rows] == ["run-1796002043456-1", "run-1796002043746-2", "run-1796002044172-3"]
    assert all(r[1] for r in rows)


def test_paused_run_keeps_its_consumer_scope_pause(db: Database, db_path: Path) -> None:
    ingest(db, [FIXTURE_RECORDINGS / "paused-awaiting-human-args-invalid.json"], db_path=str(db_path))
    assert db.execute("SELECT count(*), max(outcome), max(delivered) FROM runs").fetchone() == (
        1,
        "paused",
        0,
    )
    # a pause awaits a person: not a withheld answer; the question is in what the run says it received
    assert db.execute("SELECT count(*) FROM findings WHERE kind = 'withheld-answer'").fetchone()[0] == 0
    headline = db.execute("SELECT delivery_headline FROM runs").fetchone()[0]
    assert headline == "paused, awaiting a person: Approve refund of 80.00 on ORD-9?"


def test_parallel_workers_give_the_same_rows_as_one_process(tmp_path: Path) -> None:
    from store.db.connection import open_database

    counts = []
    for workers in (1, 2):
        path = tmp_path / f"w{workers}.db"
        db = open_database(path)
        report = ingest(db, [FIXTURE_RECORDINGS], db_path=str(path), workers=workers)
        assert report.quarantined == []
        counts.append(
            db.execute(
                "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM tool_calls), "
                "(SELECT count(*) FROM findings), (SELECT group_concat(id) FROM (SELECT id FROM findings ORDER BY id))"
            ).fetchone()
        )
        db.close()
    assert counts[0] == counts[1]
