"""One run, every source it was read from: the same run read from a bare recording and from its envelope (or a
bundle, an artifact) is stored once, listed once, and names both files; a changed recording of the run stays a
second version with its own source."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from sqlite_utils import Database

from reviewer.cli.main import cli
from store import labels
from store.db.ingest import ingest
from store.db.reextract import reextract
from store.reading.decode import ENVELOPE_FORMAT
from store.recordings import original_bytes
from tests.conftest import FIXTURE_RECORDINGS

BARE = FIXTURE_RECORDINGS / "capped-recording-maxEvents-150.json"
ENVELOPE = FIXTURE_RECORDINGS / "envelope-capped-recording-maxEvents-150.json"
CAPPED_RUN = "run-1796002161653-1"
CLAIMS = FIXTURE_RECORDINGS / "unsupported-claim-findings.json"


def _json(args: list[str]) -> Any:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _out(args: list[str]) -> str:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return result.stdout


def envelope_of(bare: Path, target: Path, *, indent: int | None = None) -> Path:
    """`bare` wrapped as `buildRecordingEnvelope` wraps it (keys re-serialised, optionally pretty-printed)."""
    doc = json.loads(bare.read_text())
    run_id = next(e["meta"]["runId"] for e in doc["events"] if e.get("meta", {}).get("runId"))
    envelope = {
        "format": ENVELOPE_FORMAT,
        "producer": {"agentfootprintVersion": "9.62.0", "footprintjsVersion": "9.24.0"},
        "run": {"runId": run_id, "complete": True, "droppedEvents": 0, "firstRetainedEventIndex": 0},
        "privacy": {"mode": "full", "policyId": "agentfootprint.privacy.full.v1"},
        "recording": {
            "events": doc["events"],
            "snapshot": doc.get("snapshot"),
            "structure": doc.get("structure"),
        },
    }
    target.write_text(json.dumps(envelope, indent=indent, sort_keys=True))
    return target


def rerecorded(bare: Path, target: Path) -> Path:
    """`bare` with its answer changed: a changed recording of the same run id."""
    doc = json.loads(bare.read_text())
    for e in doc["events"]:
        if e["type"].endswith("turn_end"):
            e["payload"]["finalContent"] = str(e["payload"].get("finalContent")) + " (re-recorded)"
    target.write_text(json.dumps(doc))
    return target


def test_a_recording_and_its_envelope_are_one_run_with_both_sources(db: Database, db_path: Path) -> None:
    report = ingest(db, [BARE, ENVELOPE], db_path=str(db_path))
    assert report.stored == 2 and report.runs == 2 and report.merged_runs == 1
    rows = _json(["runs", "--json", "--db", str(db_path)])
    assert [r["run_id"] for r in rows] == [CAPPED_RUN], "one run, not the same row twice"
    [run] = rows
    assert sorted(run["sources"]) == sorted([str(BARE), str(ENVELOPE)]), "both paths (in the order stored)"
    assert run["source"] == run["sources"][0], (
        "the existing field keeps its meaning: the run's first recording"
    )
    assert {"run_key", "agent_id", "outcome", "findings", "tool_calls"} <= set(run)
    # what only the envelope states (184 events dropped before the first kept one) is kept on the one run
    shown = _json(["show", CAPPED_RUN, "--json", "--db", str(db_path)])
    assert shown["dropped_events"] == 184 and shown["complete"] is True
    assert shown["started_at"] == "2026-11-30T01:29:21.653Z", "the stated start, not the first kept event"
    assert shown["sources"] == run["sources"] and len(shown["versions"]) == 1
    assert str(ENVELOPE) in _out(["show", CAPPED_RUN, "--db", str(db_path)])


def test_the_envelope_first_gives_the_same_one_run(db: Database, db_path: Path) -> None:
    ingest(db, [ENVELOPE], db_path=str(db_path))
    ingest(db, [BARE], db_path=str(db_path))
    [run] = _json(["runs", "--json", "--db", str(db_path)])
    assert run["sources"] == [str(ENVELOPE), str(BARE)]
    shown = _json(["show", CAPPED_RUN, "--json", "--db", str(db_path)])
    assert shown["dropped_events"] == 184 and shown["started_at"] == "2026-11-30T01:29:21.653Z"


def test_a_bug_report_bundle_of_the_envelope_is_the_same_run(
    db: Database, db_path: Path, tmp_path: Path
) -> None:
    import zipfile

    bundle = tmp_path / "bugreport.zip"
    pretty = json.dumps(json.loads(ENVELOPE.read_text()), indent=2)  # exportBugReport pretty-prints it
    with zipfile.ZipFile(bundle, "w") as zf:
        zf.writestr("manifest.json", json.dumps({"manifestVersion": 2}))
        zf.writestr("envelope.json", pretty)
    report = ingest(db, [BARE, bundle], db_path=str(db_path))
    assert report.stored == 2 and report.merged_runs == 1 and report.quarantined == []
    [run] = _json(["runs", "--json", "--db", str(db_path)])
    assert sorted(run["sources"]) == sorted([str(BARE), f"{bundle}!envelope.json"]), (
        "both paths (order stored)"
    )
    assert _json(["show", CAPPED_RUN, "--json", "--db", str(db_path)])["dropped_events"] == 184


def test_labels_stay_and_findings_are_not_doubled(db: Database, db_path: Path, tmp_path: Path) -> None:
    ingest(db, [CLAIMS], db_path=str(db_path))
    before = db.execute("SELECT id FROM findings ORDER BY id").fetchall()
    fid = before[0][0]
    labels.label_finding(db, fid, "tp", "ann")
    wrapped = envelope_of(CLAIMS, tmp_path / "claims-envelope.json", indent=2)
    assert ingest(db, [wrapped], db_path=str(db_path)).merged_runs == 1
    assert db.execute("SELECT id FROM findings ORDER BY id").fetchall() == before, "no second copy to judge"
    assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
    assert labels.current(db, fid) == {"ann": "tp"}
    [run] = _json(["runs", "--json", "--db", str(db_path)])
    assert run["sources"] == [str(CLAIMS), str(wrapped)]
    # a search finds the run once
    assert len(_json(["runs", "--json", "--search", "weather", "--db", str(db_path)])) <= 1


def test_re_ingest_is_idempotent_and_reextract_keeps_one_run(db: Database, db_path: Path) -> None:
    ingest(db, [BARE, ENVELOPE], db_path=str(db_path))
    first = _json(["runs", "--json", "--db", str(db_path)])
    again = ingest(db, [BARE, ENVELOPE, FIXTURE_RECORDINGS / "plain-tool-run.json"], db_path=str(db_path))
    assert again.unchanged == 2 and again.stored == 1
    rows = _json(["runs", "--json", "--db", str(db_path)])
    assert [r for r in rows if r["run_id"] == CAPPED_RUN] == first
    done, failures = reextract(db, everything=True)
    assert done == 3 and failures == []
    assert _json(["runs", "--json", "--db", str(db_path)]) == rows


def test_the_same_bytes_at_two_paths_are_two_sources(db: Database, db_path: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy-of-bare.json"
    copy.write_bytes(BARE.read_bytes())
    ingest(db, [BARE], db_path=str(db_path))
    assert ingest(db, [copy], db_path=str(db_path)).unchanged == 1
    [run] = _json(["runs", "--json", "--db", str(db_path)])
    assert run["sources"] == [str(BARE), str(copy)]


def test_a_changed_recording_stays_a_second_version_each_with_its_source(
    db: Database, db_path: Path, tmp_path: Path
) -> None:
    from reviewer.ui.screens.run import run_title
    from store.runs import run_header

    ingest(db, [CLAIMS], db_path=str(db_path))
    changed = rerecorded(CLAIMS, tmp_path / "changed.json")
    assert ingest(db, [changed], db_path=str(db_path)).merged_runs == 0
    rows = _json(["runs", "--json", "--db", str(db_path)])
    assert sorted(r["sources"][0] for r in rows) == sorted([str(CLAIMS), str(changed)])
    assert all(len(r["sources"]) == 1 for r in rows)
    run_id = rows[0]["run_id"]
    shown = _json(["show", run_id, "--json", "--db", str(db_path)])
    assert [v["sources"] for v in shown["versions"]] == [[str(CLAIMS)], [str(changed)]]
    title = run_title(run_header(db, shown["versions"][0]["run_key"])).plain
    assert "version 1 of 2" in title and f"read from {CLAIMS}" in title


def test_an_old_database_gets_each_runs_source_and_keeps_its_labels(tmp_path: Path) -> None:
    import shutil

    from store.db.connection import open_database
    from tests.test_upgrades import OLD

    db_file = tmp_path / "old.db"
    shutil.copy(OLD, db_file)
    db = open_database(db_file)  # migrates through m014_run_sources
    rows = _json(["runs", "--json", "--db", str(db_file)])
    assert rows and all(r["sources"] == [r["source"]] for r in rows)
    assert db.execute("SELECT count(*) FROM run_sources WHERE content_id IS NULL").fetchone()[0] == len(rows)
    assert reextract(db) == (2, [])  # takes each run's content identity
    assert db.execute("SELECT count(*) FROM run_sources WHERE content_id IS NULL").fetchone()[0] == 0
    # a run of it read again from another file is the same run
    bare = tmp_path / "again.json"
    sha = db.execute("SELECT sha256 FROM recordings ORDER BY id LIMIT 1").fetchone()[0]
    bare.write_bytes(original_bytes(db, sha))
    again = envelope_of(bare, tmp_path / "again-envelope.json", indent=2)
    assert ingest(db, [again], db_path=str(db_file)).merged_runs == 1
    assert len(_json(["runs", "--json", "--db", str(db_file)])) == len(rows)
    assert (
        db.execute("SELECT count(*) FROM current_labels l JOIN findings f ON f.id = l.target_id").fetchone()[
            0
        ]
        == 3
    )
    db.close()


def test_a_run_stored_twice_before_stays_two_runs_with_their_labels(
    db: Database, db_path: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    import store.db.writer as writer

    wrapped = envelope_of(CLAIMS, tmp_path / "claims-envelope.json")
    with monkeypatch.context() as m:  # as a build before m013 stored them: each recording its own run
        m.setattr(writer, "_stored_elsewhere", lambda conn, x, own: {})
        ingest(db, [CLAIMS, wrapped], db_path=str(db_path))
    db.execute("UPDATE run_sources SET content_id = NULL")  # what m013 leaves on such runs
    db.execute("UPDATE recordings SET extractor_version = 3")
    second = db.execute(
        "SELECT f.id FROM findings f JOIN runs r ON r.key = f.run_key JOIN recordings c ON c.id = r.recording_id "
        "WHERE c.source = ? ORDER BY f.id LIMIT 1",
        [str(wrapped)],
    ).fetchone()[0]
    labels.label_finding(db, second, "fp", "ann")
    assert reextract(db) == (2, [])
    assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 2, "nothing labelled is dropped"
    assert labels.current(db, second) == {"ann": "fp"}
    # a third copy read now is one more source of one of them, not a third run
    third = envelope_of(CLAIMS, tmp_path / "third.json", indent=4)
    assert ingest(db, [third], db_path=str(db_path)).merged_runs == 1
    assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 2
    assert sorted(len(r["sources"]) for r in _json(["runs", "--json", "--db", str(db_path)])) == [1, 2]
