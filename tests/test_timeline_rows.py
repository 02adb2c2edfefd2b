"""A run's timeline rows are the events its timeline draws (an iteration's start, the model's text), each one
and no other: the other events reach the reviewer through their own tables and stay in the compressed
original. An older store's rows of other events are never drawn, and `reextract` drops them, labels kept."""

from __future__ import annotations

from pathlib import Path

import orjson
from sqlite_utils import Database

from store import labels
from store.db.ingest import ingest
from store.db.reextract import reextract
from store.reading.extract.timeline import SHOWN_TYPES
from store.runs import run_timeline_parts
from tests.conftest import FIXTURE_RECORDINGS, both_backends

ONE_RUN_RECORDINGS = ("plain-tool-run.json", "window-eviction-dangling-reference.json")


def _drawn_events(name: str) -> list[tuple[int, str]]:
    """(position, type) of each event of the recording, read straight from its JSON, that the timeline draws."""
    events = orjson.loads((FIXTURE_RECORDINGS / name).read_bytes())["events"]
    return [(i, e["type"]) for i, e in enumerate(events) if e.get("type") in SHOWN_TYPES]


@both_backends
def test_each_event_the_timeline_draws_has_its_row_and_no_other_event_has_one(
    db: Database, db_path: Path, tmp_path: Path
) -> None:
    for name in ONE_RUN_RECORDINGS:
        (tmp_path / name).write_bytes((FIXTURE_RECORDINGS / name).read_bytes())
    report = ingest(db, [tmp_path], db_path=str(db_path))
    assert not report.quarantined and report.runs == len(ONE_RUN_RECORDINGS)
    for name in ONE_RUN_RECORDINGS:
        (key,) = [
            r[0]
            for r in db.execute(
                "SELECT s.run_key FROM run_sources s JOIN recordings r ON r.id = s.recording_id WHERE r.source LIKE ?",
                [f"%{name}"],
            )
        ]
        rows = db.execute(
            "SELECT seq, type, summary FROM events WHERE run_key = ? ORDER BY seq", [key]
        ).fetchall()
        assert [(seq, kind) for seq, kind, _ in rows] == _drawn_events(name), name
        assert any(kind.endswith("llm_end") and summary for _, kind, summary in rows), name
        # and the run screen draws every one of them
        drawn = run_timeline_parts(db, key)["iterations"]
        assert [e["seq"] for e in drawn] == [seq for seq, _, _ in rows]


@both_backends
def test_an_older_stores_other_rows_are_never_drawn_and_reextract_drops_them(loaded: Database) -> None:
    key, recording_id = loaded.execute(
        "SELECT r.key, r.recording_id FROM runs r WHERE EXISTS (SELECT 1 FROM events e WHERE e.run_key = r.key) "
        "ORDER BY r.key LIMIT 1"
    ).fetchone()
    before = run_timeline_parts(loaded, key)["iterations"]
    (finding,) = loaded.execute("SELECT id FROM findings ORDER BY id LIMIT 1").fetchone()
    labels.label_finding(loaded, finding, "tp", "ann")
    # what extractor version 4 wrote too: a row for a narrative event no screen reads
    loaded.execute(
        "INSERT INTO events (run_key, seq, type, stage, wall_ms, iteration, call_id, summary) "
        "VALUES (?, 100000, 'agentfootprint.agent.route_decided', NULL, NULL, NULL, NULL, 'tool-calls')",
        [key],
    )
    loaded.execute("UPDATE recordings SET extractor_version = 4 WHERE id = ?", [recording_id])
    assert run_timeline_parts(loaded, key)["iterations"] == before

    done, failures = reextract(loaded)
    assert failures == [] and done == 1
    kinds = {r[0] for r in loaded.execute("SELECT DISTINCT type FROM events")}
    assert kinds and kinds <= set(SHOWN_TYPES)
    assert run_timeline_parts(loaded, key)["iterations"] == before
    assert labels.current(loaded, finding) == {"ann": "tp"}
