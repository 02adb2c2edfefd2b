"""A run's content identity is taken only when another run of its run id is stored: a run read once costs no
digest of its events, and the same run read again from another file (in a later ingest or the same batch) is
still one run with both sources, while a changed recording of it stays a second run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlite_utils import Database

import store.reading.identity as identity
from store.db.ingest import ingest
from tests.conftest import FIXTURE_RECORDINGS, both_backends
from tests.test_run_sources import envelope_of

BARE = FIXTURE_RECORDINGS / "unsupported-claim-findings.json"


def _sources(db: Database) -> list[tuple[str, str | None]]:
    """(run key, content identity) of every source of every stored run."""
    return [
        (str(key), cid)
        for key, cid in db.execute(
            "SELECT run_key, content_id FROM run_sources ORDER BY run_key, recording_id"
        )
    ]


@pytest.fixture
def digests(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many event digests this process takes (the ingests below run in one process)."""
    taken: list[int] = []
    real = identity.event_digest

    def counted(event: Any) -> bytes:
        taken.append(1)
        return real(event)

    monkeypatch.setattr(identity, "event_digest", counted)
    return taken


@both_backends
def test_a_run_read_once_takes_no_digest_and_a_second_copy_of_it_is_the_same_run(
    db: Database, db_path: Path, tmp_path: Path, digests: list[int]
) -> None:
    first = ingest(db, [BARE], db_path=str(db_path), workers=1)
    assert first.stored == 1 and first.runs == 1
    assert not digests, "a run seen once needs no identity"
    [(key, identity)] = _sources(db)
    assert identity is None

    copy = envelope_of(BARE, tmp_path / "envelope.json", indent=2)
    second = ingest(db, [copy], db_path=str(db_path), workers=1)
    assert second.stored == 1 and second.merged_runs == 1
    events = len(json.loads(BARE.read_text())["events"])
    assert len(digests) == 2 * events, "both copies' identities taken, each once"
    sources = _sources(db)
    assert [k for k, _ in sources] == [key, key], "one run, read from both files"
    assert sources[0][1] is not None and sources[0][1] == sources[1][1], "the same identity kept on both"
    assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 1


@both_backends
def test_two_copies_of_a_run_in_one_batch_are_one_run(db: Database, db_path: Path, tmp_path: Path) -> None:
    folder = tmp_path / "batch"
    folder.mkdir()
    (folder / "a-bare.json").write_bytes(BARE.read_bytes())
    envelope_of(BARE, folder / "b-envelope.json", indent=4)
    report = ingest(db, [folder], db_path=str(db_path))
    assert report.stored == 2 and report.runs == 2 and report.merged_runs == 1
    assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
    assert len({cid for _, cid in _sources(db)}) == 1


@both_backends
def test_a_changed_recording_of_a_stored_run_is_a_second_run(
    db: Database, db_path: Path, tmp_path: Path
) -> None:
    ingest(db, [BARE], db_path=str(db_path))
    doc = json.loads(BARE.read_text())
    for event in doc["events"]:
        if event["type"].endswith("turn_end"):
            event["payload"]["finalContent"] = f"{event['payload'].get('finalContent')} (re-recorded)"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(doc))
    report = ingest(db, [changed], db_path=str(db_path))
    assert report.stored == 1 and report.merged_runs == 0
    sources = _sources(db)
    assert len({k for k, _ in sources}) == 2, "two runs of one run id"
    assert None not in {cid for _, cid in sources} and len({cid for _, cid in sources}) == 2


@both_backends
def test_an_identity_that_cannot_be_taken_keeps_the_two_runs_apart_and_loses_nothing(
    db: Database, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(event: Any) -> bytes:
        raise RuntimeError("no digest today")

    monkeypatch.setattr(identity, "event_digest", broken)
    copy = envelope_of(BARE, tmp_path / "envelope.json", indent=2)
    report = ingest(db, [BARE, copy], db_path=str(db_path), workers=1)
    assert report.stored == 2 and not report.quarantined and report.merged_runs == 0
    assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 2, "both kept, each with its own source"
