"""A drawn tool result says what was sent and what stopped or changed the call (issue 12 point 6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.widgets import Static

from reviewer.ui.app import ReviewerApp
from reviewer.ui.results import ToolResultView
from reviewer.ui.widgets.detail import DetailPanel
from store.db.connection import open_database
from store.db.ingest import ingest
from tests.decision_recordings import RUN, decisions_recording
from tests.ui.conftest import SIZE, jump_to_run, wait_until

AFTER_TOOL = "the recorded tool_end result is what the tool returned, not what the model read"


async def drawn_call(pilot: Any, screen: Any, call_id: str) -> str:
    """Put the timeline cursor on a tool call and wait for its drawn result; returns its text."""
    rows = screen.timeline.rows
    screen.timeline.move_to(
        next(i for i, r in enumerate(rows) if r.get("call_id") == call_id and r["kind"] == "tool_call")
    )
    panel = screen.query_one(DetailPanel)
    await wait_until(
        pilot, lambda: panel.showing == f"call:{call_id}" and bool(panel.query(ToolResultView)), timeout=60
    )
    view = panel.query_one(ToolResultView)
    return "\n".join(str(w.content) for w in view.query(Static) if w.display)


async def test_each_call_shows_its_arguments_and_the_decision_that_stopped_or_changed_it(
    app_factory, tmp_path: Path
) -> None:
    path = tmp_path / "decisions.json"
    path.write_text(json.dumps(decisions_recording()), encoding="utf-8")
    db_path = tmp_path / "review.db"
    db = open_database(db_path)
    assert not ingest(db, [str(path)], db_path=str(db_path)).quarantined
    db.close()
    app: ReviewerApp = app_factory(db_path=db_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await jump_to_run(pilot, RUN)

        text = await drawn_call(pilot, screen, "c-search")
        assert 'args: {"id": "c-search"}' in text and "not run" not in text and AFTER_TOOL not in text

        text = await drawn_call(pilot, screen, "c-denied")
        assert 'args: {"id": "c-denied"}' in text
        assert " ⛔ denied, not run  middleware refund-guard denied this call: over the limit" in text

        text = await drawn_call(pilot, screen, "c-redacted")
        assert "✎ middleware redactor changed this result: bearer token" in text
        assert AFTER_TOOL in text

        text = await drawn_call(pilot, screen, "c-hidden")
        assert (
            " ⛔ the model did not read this result  middleware pii-guard denied it after the tool ran"
            in text
        )
        assert "payroll is private" in text and AFTER_TOOL.split(",")[0] in text

        text = await drawn_call(pilot, screen, "c-declined")
        assert " ⛔ declined, not run  the check-in (ops-lead) declined this call: not today" in text

        text = await drawn_call(pilot, screen, "c-halted")
        assert " ⛔ halted, not run  permission policy (rule no-wires) halted this call" in text
        assert "a permission policy halted this call: wires need a human" in text
