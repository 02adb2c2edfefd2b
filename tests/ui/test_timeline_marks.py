"""The run's timeline shows each finding's current verdicts, and follows a label or an undo at once."""

from __future__ import annotations

from store import labels
from store.db.connection import open_database
from tests.ui.conftest import SIZE, wait_until
from tests.ui.recordings import EMOJI_RUN
from tests.ui.test_app import open_run


async def test_timeline_marks_follow_labels(app_factory, ui_db) -> None:
    db = open_database(ui_db)
    _key, first = db.execute(
        "SELECT r.key, f.id FROM findings f JOIN runs r ON r.key = f.run_key WHERE r.run_id = ? "
        "ORDER BY f.seq, f.id LIMIT 1",
        [EMOJI_RUN],
    ).fetchone()
    labels.label_finding(db, first, "fp", "bob")
    db.close()
    app = app_factory(reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_run(pilot, EMOJI_RUN)
        timeline = screen.timeline
        row = timeline.index_of_finding(first)
        assert row is not None
        assert "bob:fp" in timeline.render_row(row, 160).plain  # a label made elsewhere shows on load
        timeline.move_to(row)
        await pilot.pause()
        await pilot.press("1")
        await wait_until(pilot, lambda: "ann:tp" in timeline.render_row(row, 160).plain)
        assert "≠" in timeline.render_row(row, 160).plain  # ann and bob disagree
        await pilot.press("u")
        await wait_until(pilot, lambda: "ann:" not in timeline.render_row(row, 160).plain)
        assert "bob:fp" in timeline.render_row(row, 160).plain
