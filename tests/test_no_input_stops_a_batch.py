"""No input stops a batch: numbers SQLite cannot hold, hostile file types, links out of a store, a full or
read-only database. Every per-file failure is a quarantine row with a specific reason; files after it ingest."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlite_utils import Database

from store.db.ingest import ingest
from tests.conftest import SHARED_RECORDINGS

PLAIN = SHARED_RECORDINGS / "plain-tool-run.json"
OTHER = SHARED_RECORDINGS / "unsupported-claim-findings.json"
ENVELOPE = SHARED_RECORDINGS / "envelope-capped-recording-maxEvents-150.json"
#: JavaScript writes 1e20 as this; one past SQLite's largest INTEGER is 2**63.
BIG = 10**20


def _events(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return doc["recording"]["events"] if "recording" in doc else doc["events"]


def _first(doc: dict[str, Any], suffix: str) -> dict[str, Any]:
    return next(e for e in _events(doc) if e["type"].endswith(suffix))


def _wall(doc: dict[str, Any]) -> None:
    _first(doc, "tool_start")["meta"]["wallClockMs"] = BIG


def _duration(doc: dict[str, Any]) -> None:
    _first(doc, "tool_end")["payload"]["durationMs"] = BIG


def _iter_index(doc: dict[str, Any]) -> None:
    _first(doc, "iteration_start")["payload"]["iterIndex"] = 2**63


def _dropped(doc: dict[str, Any]) -> None:
    doc["run"]["droppedEvents"] = BIG


def _span_end(doc: dict[str, Any]) -> None:
    meta = dict(_first(doc, "tool_start")["meta"])
    _events(doc).append(
        {
            "type": "agentfootprint.findings.negative_claim",
            "payload": {"kind": "negative-claim", "field": "answer", "span": {"start": 0, "end": BIG}},
            "meta": meta,
        }
    )


NUMBER_CASES: dict[str, tuple[Path, Callable[[dict[str, Any]], None], str]] = {
    "wallClockMs": (PLAIN, _wall, "wallClockMs"),
    "durationMs": (PLAIN, _duration, "durationMs"),
    "iterIndex": (PLAIN, _iter_index, "iterIndex"),
    "droppedEvents": (ENVELOPE, _dropped, "droppedEvents"),
    "span end": (PLAIN, _span_end, "span end"),
}


@pytest.mark.parametrize("case", sorted(NUMBER_CASES))
def test_a_number_past_64_bits_quarantines_its_file_and_the_batch_goes_on(
    db: Database, db_path: Path, tmp_path: Path, case: str
) -> None:
    source, mutate, field_words = NUMBER_CASES[case]
    doc = json.loads(source.read_text())
    mutate(doc)
    bad = tmp_path / "a-big-number.json"
    bad.write_text(json.dumps(doc))
    report = ingest(db, [bad, OTHER], db_path=str(db_path), workers=1)
    assert report.stored == 1, "the file after the bad one is still ingested"
    [(path, code, reason)] = report.quarantined
    assert (path, code) == (str(bad), "number-out-of-range")
    assert field_words in reason and "64-bit" in reason
    assert db.execute("SELECT code FROM quarantine").fetchall() == [("number-out-of-range",)]
    assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 1, "nothing half-written"
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_tool_result_and_argument_past_64_bits_are_stored_as_their_json(
    db: Database, db_path: Path, tmp_path: Path
) -> None:
    doc = json.loads(PLAIN.read_text())
    _first(doc, "tool_end")["payload"]["result"] = {"tempC": 10**25, "city": "SF"}
    _first(doc, "tool_start")["payload"]["args"] = {"seed": 2**64 + 1}
    path = tmp_path / "big-json.json"
    path.write_text(json.dumps(doc))
    assert ingest(db, [path], db_path=str(db_path)).stored == 1
    result, args = db.execute("SELECT result, args FROM tool_calls").fetchone()
    assert json.loads(result) == {"tempC": 10**25, "city": "SF"}
    assert json.loads(args) == {"seed": 2**64 + 1}
    assert "unstorable" not in result + args


def test_a_full_database_is_reported_as_full_not_a_traceback(db: Database, db_path: Path) -> None:
    from store.errors import DatabaseWriteError

    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {pages + 8}")  # room for a few pages: the disk "fills" mid-batch
    with pytest.raises(DatabaseWriteError, match="disk is full"):
        ingest(db, [SHARED_RECORDINGS], db_path=str(db_path), workers=1)
    db.execute("PRAGMA max_page_count = 1073741823")
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    report = ingest(db, [SHARED_RECORDINGS], db_path=str(db_path), workers=1)
    assert report.stored + report.unchanged == report.seen - len(report.quarantined) > 0


def _read_only_connections(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every review-database connection opened read-only, as on a read-only filesystem."""
    import store.db.connection as connection

    real = connection.connect
    monkeypatch.setattr(connection, "connect", lambda path, readonly=False: real(path, readonly=True))


def test_a_read_only_database_is_reported_as_read_only_not_damaged(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from reviewer.cli.main import cli

    runner = CliRunner()
    assert runner.invoke(cli, ["ingest", str(OTHER), "--db", str(db_path)]).exit_code == 0
    _read_only_connections(monkeypatch)
    listed = runner.invoke(cli, ["runs", "--db", str(db_path)])
    assert listed.exit_code == 0, listed.output  # reading a read-only database works
    result = runner.invoke(cli, ["ingest", str(PLAIN), "--db", str(db_path)])
    assert result.exit_code == 1
    assert "read-only" in result.output and "damaged" not in result.output
    assert isinstance(result.exception, SystemExit), "a clean exit, not a traceback"
    assert len(result.output.strip().splitlines()) == 1


def test_the_wal_is_checkpointed_and_cut_back_during_a_long_ingest(
    db: Database, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    import store.db.ingest as ingest_module

    # the same rule at a small scale: checkpoint every 32 pages, cut the WAL back to 128 KiB
    monkeypatch.setattr(ingest_module, "INGEST_WAL_PAGES", 32)
    monkeypatch.setattr(ingest_module, "WAL_SIZE_LIMIT_BYTES", 128 * 1024)
    wal = Path(f"{db_path}-wal")
    sizes: list[int] = []

    def watch(*_: int) -> None:
        sizes.append(wal.stat().st_size if wal.exists() else 0)

    report = ingest(db, [SHARED_RECORDINGS], db_path=str(db_path), workers=1, progress=watch)
    assert report.stored > 10
    database = os.path.getsize(db_path)
    assert max(sizes) < 1024 * 1024 < 2 * database, (max(sizes), database)
