"""Pilot: a run read from a recording and from its envelope is one row on the runs screen, and its header names
both files; each version of a changed recording names its own."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from reviewer.ui.app import ReviewerApp
from tests.conftest import FIXTURE_RECORDINGS
from tests.ui.conftest import SIZE, jump_to_run, runs_screen_ready

CAPPED_RUN = "run-1796002161653-1"  # capped-recording-maxEvents-150.json and its envelope
FILES = ("capped-recording-maxEvents-150.json", "envelope-capped-recording-maxEvents-150.json")


async def test_the_runs_list_has_one_row_for_a_run_read_twice(app_factory) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await runs_screen_ready(pilot)
        run_list = screen.run_list
        ids = [(run_list.row_at(i) or {}).get("run_id") for i in range(run_list.row_count)]
        assert ids.count(CAPPED_RUN) == 1
        assert ids.count("run-1796002146940-1") == 1 and ids.count("run-1796002044845-5") == 1
        assert len(ids) == len(set(ids)), "no run appears twice"


async def test_the_run_header_names_every_source(app_factory, ui_db: Path) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=(200, 40)) as pilot:
        screen = await jump_to_run(pilot, CAPPED_RUN)
        title = screen.query_one("#run-title", Static)
        text = str(title.render())
        assert "read from 2 sources" in text
        for name in FILES:
            assert str(FIXTURE_RECORDINGS / name) in text
        assert title.size.height == 3, "the sources line is drawn, not cut off"


async def test_each_version_of_a_changed_recording_names_its_own_source(
    app_factory, ui_db: Path, tmp_path: Path
) -> None:
    import json

    from store.db.connection import open_database
    from store.db.ingest import ingest

    original = FIXTURE_RECORDINGS / "unsupported-claim-findings.json"
    doc = json.loads(original.read_text())
    for e in doc["events"]:
        if e["type"].endswith("turn_end"):
            e["payload"]["finalContent"] = str(e["payload"].get("finalContent")) + " (re-recorded)"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(doc))
    db = open_database(ui_db)
    ingest(db, [changed], db_path=str(ui_db))
    keys = [
        r[0] for r in db.execute("SELECT key FROM runs WHERE run_id = 'run-1796002007389-1' ORDER BY rowid")
    ]
    db.close()
    assert len(keys) == 2
    app: ReviewerApp = app_factory()
    async with app.run_test(size=(200, 40)) as pilot:
        screen = await jump_to_run(pilot, keys[0])
        text = str(screen.query_one("#run-title", Static).render())
        assert "version 1 of 2" in text and f"read from {original}" in text and str(changed) not in text
        pilot.app.pop_screen()
        screen = await jump_to_run(pilot, keys[1])
        text = str(screen.query_one("#run-title", Static).render())
        assert "version 2 of 2" in text and f"read from {changed}" in text
