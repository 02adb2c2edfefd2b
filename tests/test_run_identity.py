"""A run's content identity: the same run read again from another file (later, or in the same batch) is one
run with both sources and one identity kept on both; a changed recording of it is a second run; a store
whose identities are of the older form (schema m032 forgets them) still recognises a run read again, its
identity taken from the stored original; an identity that cannot be taken keeps two runs apart and loses
nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlite_utils import Database

import store.reading.identity as identity
from store.db.ingest import ingest
from store.db.schema import m032_run_identities_of_one_digest
from tests.conftest import FIXTURE_RECORDINGS, both_backends
from tests.test_run_sources import envelope_of, rerecorded

BARE = FIXTURE_RECORDINGS / "unsupported-claim-findings.json"


def _sources(db: Database) -> list[tuple[str, str | None]]:
    """(run key, content identity) of every source of every stored run."""
    return [
        (str(key), cid)
        for key, cid in db.execute(
            "SELECT run_key, content_id FROM run_sources ORDER BY run_key, recording_id"
        )
    ]


@both_backends
def test_a_second_copy_of_a_run_read_later_is_the_same_run_with_one_identity(
    db: Database, db_path: Path, tmp_path: Path
) -> None:
    first = ingest(db, [BARE], db_path=str(db_path))
    assert first.stored == 1 and first.runs == 1
    [(key, kept)] = _sources(db)
    assert kept is not None and kept.startswith(identity.PREFIX)

    copy = envelope_of(BARE, tmp_path / "envelope.json", indent=2)
    second = ingest(db, [copy], db_path=str(db_path))
    assert second.stored == 1 and second.merged_runs == 1
    assert _sources(db) == [(key, kept), (key, kept)], "one run, read from both files, one identity"
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
    changed = rerecorded(BARE, tmp_path / "changed.json")
    report = ingest(db, [changed], db_path=str(db_path))
    assert report.stored == 1 and report.merged_runs == 0
    sources = _sources(db)
    assert len({k for k, _ in sources}) == 2, "two runs of one run id"
    assert None not in {cid for _, cid in sources} and len({cid for _, cid in sources}) == 2


@both_backends
def test_a_store_with_identities_of_the_older_form_still_knows_a_run_read_again(
    db: Database, db_path: Path, tmp_path: Path
) -> None:
    ingest(db, [BARE], db_path=str(db_path))
    [(key, kept)] = _sources(db)
    db.execute("UPDATE run_sources SET content_id = 'rc-0123456789abcdef0123456789abcdef'")  # the old form
    m032_run_identities_of_one_digest(db)
    assert _sources(db) == [(key, None)]

    copy = envelope_of(BARE, tmp_path / "envelope.json", indent=2)
    assert ingest(db, [copy], db_path=str(db_path)).merged_runs == 1
    assert _sources(db) == [(key, kept), (key, kept)], (
        "the stored run's identity taken from its original, kept"
    )


@both_backends
def test_an_identity_that_cannot_be_taken_keeps_the_two_runs_apart_and_loses_nothing(
    db: Database, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: Any) -> str:
        raise RuntimeError("no identity today")

    monkeypatch.setattr(identity, "run_content_id", broken)
    copy = envelope_of(BARE, tmp_path / "envelope.json", indent=2)
    report = ingest(db, [BARE, copy], db_path=str(db_path), workers=1)
    assert report.stored == 2 and not report.quarantined and report.merged_runs == 0
    assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 2, "both kept, each with its own source"
    assert {cid for _, cid in _sources(db)} == {None}
