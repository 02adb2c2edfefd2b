"""The findings queue: filters by kind, code, tool and label state; next unlabelled; evidence beside a finding."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlite_utils import Database

from reviewer.review.evidence import assemble_evidence
from store import labels
from store.db.ingest import ingest
from store.findings import evidence_rows, next_unlabelled, queue_count, queue_page
from tests.conftest import FIXTURE_RECORDINGS, both_backends


@pytest.fixture
def loaded(db: Database, db_path: Path) -> Database:
    ingest(db, [FIXTURE_RECORDINGS], db_path=str(db_path))
    return db


@both_backends
def test_filters(loaded: Database) -> None:
    total = queue_count(loaded)
    assert total == loaded.execute("SELECT count(*) FROM findings").fetchone()[0]
    assert queue_count(loaded, kind="unsupported-claim") == 3
    assert queue_count(loaded, kind="unsupported-claim", code="advisory") == 1
    assert queue_count(loaded, kind="coverage-gap", tool="flogi_lookup") == 2
    page = queue_page(loaded, limit=5)
    assert [r["id"] for r in page] == sorted(r["id"] for r in page)
    nxt = queue_page(loaded, after=page[-1]["id"], limit=5)
    assert nxt[0]["id"] > page[-1]["id"]


@both_backends
def test_label_states_and_next_unlabelled(loaded: Database) -> None:
    ids = [r["id"] for r in queue_page(loaded, limit=3)]
    labels.label_finding(loaded, ids[0], "unsure", "ann")
    assert next_unlabelled(loaded) == ids[1]
    assert next_unlabelled(loaded, reviewer="bob") == ids[0]
    assert queue_count(loaded, state="mine", reviewer="ann") == 1
    labels.label_finding(loaded, ids[0], "unsure", "bob")
    assert queue_count(loaded, state="disagreement") == 0
    kind = loaded.execute("SELECT kind FROM findings WHERE id = ?", [ids[1]]).fetchone()[0]
    first, second = ("justified", "wrong") if kind == "withheld-answer" else ("tp", "fp")
    labels.label_finding(loaded, ids[1], first, "ann")
    labels.label_finding(loaded, ids[1], second, "bob")
    assert queue_count(loaded, state="disagreement") == 1
    assert queue_page(loaded, state="disagreement")[0]["labels"] == {"ann": first, "bob": second}


@both_backends
def test_evidence_for_a_dangling_reference(loaded: Database) -> None:
    fid = loaded.execute("SELECT id FROM findings WHERE kind = 'dangling-reference'").fetchone()[0]
    ev = assemble_evidence(**evidence_rows(loaded, fid))
    assert ev["offered_tool"] == "screen_fire"
    assert ev["evicted"][0]["dropped_tools"] == ["whats_here"] and ev["evicted"][0]["iteration"] == 4
    assert [c["call_id"] for c in ev["evicted"][0]["calls"]] == ["h1"]


@both_backends
def test_evidence_for_a_withheld_answer(loaded: Database) -> None:
    fid = loaded.execute(
        "SELECT f.id FROM findings f JOIN runs r ON r.key = f.run_key WHERE f.kind = 'withheld-answer' AND r.outcome = 'refused'"
    ).fetchone()[0]
    ev = assemble_evidence(**evidence_rows(loaded, fid))
    assert ev["withheld"]["outcome"] == "refused" and ev["withheld"]["channel"] == "evidence-gate"
    assert "1500" in ev["withheld"]["draft"]
    assert "1500" in ev["finding"]["message"]


@both_backends
def test_evidence_for_a_coverage_gap_names_the_read(loaded: Database) -> None:
    fid = loaded.execute(
        "SELECT id FROM findings WHERE kind = 'coverage-gap' AND tool_name = 'flogi_lookup' AND codes LIKE '%cannot%'"
    ).fetchone()[0]
    ev = assemble_evidence(**evidence_rows(loaded, fid))
    [read] = ev["reads"]
    assert read["tool_name"] == "flogi_lookup" and read["absent"] is True
    assert [c["what"] for c in read["cannot_cover"]] == ["ports on the peer fabric"]
    assert len(read["checked"]) == 2


@both_backends
def test_queue_rows_say_what_the_person_received(loaded: Database) -> None:
    rows = queue_page(loaded, limit=10_000)
    by_outcome = {(r["outcome"], r["delivered"], r["delivered_as"]) for r in rows}
    assert ("delivered", True, "drafted") in by_outcome
    assert ("refused", False, None) in by_outcome and ("denied", False, None) in by_outcome
    # only withheld drafts are queued as withheld answers: not the contract unmet (delivered raw), not the pause
    withheld = [r for r in rows if r["kind"] == "withheld-answer"]
    assert sorted(r["outcome"] for r in withheld) == ["denied", "refused"]
    assert all(r["delivered"] is False for r in withheld)
