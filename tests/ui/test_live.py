"""The open app shows what another process ingests, without a restart: a count of new runs on the runs screen
(the list and its cursor left alone until `r`), and new findings taken into the queue with the cursor kept on
the finding it was on. Every wait polls for the condition with a generous deadline (no fixed sleeps)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from reviewer.ui.app import ReviewerApp
from reviewer.ui.screens.queue import QueueScreen
from store.db.connection import open_database
from store.db.ingest import IngestReport, ingest
from tests.conftest import SAMPLES
from tests.ui.conftest import SIZE, runs_screen_ready, wait_until

#: recordings not in the UI template database, each with findings
NEW_RUN = SAMPLES / "negative-claims-prose.json"
NEW_FINDINGS = SAMPLES / "negative-claims-alt-spellings.json"


def ingest_from_elsewhere(db_path: Path, recording: Path) -> IngestReport:
    """What `reviewer watch` (or `reviewer ingest`) does beside the open app: its own connection."""
    db = open_database(db_path)
    try:
        report = ingest(db, [str(recording)], db_path=str(db_path))
    finally:
        db.close()
    assert report.stored == 1 and report.runs >= 1, report
    return report


def status(screen: Any, widget_id: str) -> str:
    return str(screen.query_one(widget_id, Static).render())


@pytest.fixture(autouse=True)
def _quick_looks(monkeypatch: pytest.MonkeyPatch) -> None:
    # Looks every 0.2 s instead of 1.5 s, so the test is short; the waits below allow 30 s all the same.
    monkeypatch.setattr(ReviewerApp, "LIVE_POLL_S", 0.2)


async def test_new_runs_are_counted_and_shown_on_r_without_moving_the_cursor(
    app_factory, ui_db: Path
) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await runs_screen_ready(pilot)
        run_list = screen.run_list
        run_list.move_to(2)
        await pilot.pause()
        judged = run_list.row_at(2)["run_key"]
        total = screen.total
        assert "new run" not in status(screen, "#runs-status")

        report = await asyncio.to_thread(ingest_from_elsewhere, ui_db, NEW_RUN)

        await wait_until(pilot, lambda: screen.new_runs == report.runs, timeout=30)
        await wait_until(pilot, lambda: "new run" in status(screen, "#runs-status"), timeout=30)
        plural = "" if report.runs == 1 else "s"
        assert f"{report.runs} new run{plural} — press r to show" in status(screen, "#runs-status")
        # Mid-judgement nothing moved: the same rows, the cursor on the same run.
        assert screen.total == total
        assert run_list.cursor == 2 and run_list.row_at(2)["run_key"] == judged

        await pilot.press("r")
        await wait_until(pilot, lambda: screen.total == total + report.runs, timeout=30)
        assert "new run" not in status(screen, "#runs-status")
        assert run_list.row_at(run_list.cursor)["run_key"] == judged
        await wait_until(
            pilot, lambda: all(run_list.row_at(i) for i in range(run_list.row_count)), timeout=30
        )
        keys = {run_list.row_at(i)["run_key"] for i in range(run_list.row_count)}
        assert len(keys) == total + report.runs  # the new runs are rows now


async def test_the_queue_grows_with_new_findings_and_keeps_its_cursor(app_factory, ui_db: Path) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await runs_screen_ready(pilot)
        await app.action_open_queue()
        await wait_until(
            pilot, lambda: isinstance(app.screen, QueueScreen) and app.screen.showing is not None, timeout=30
        )
        queue = app.screen
        findings = queue.finding_list
        findings.move_to(3)
        await wait_until(pilot, lambda: queue.showing == (queue.current_row or {}).get("id"), timeout=30)
        kept = queue.current_row["id"]
        before = queue.total
        shown_before = {findings.row_at(i)["id"] for i in range(findings.row_count)}

        await asyncio.to_thread(ingest_from_elsewhere, ui_db, NEW_FINDINGS)

        await wait_until(pilot, lambda: queue.total is not None and queue.total > before, timeout=30)
        assert f"showing {queue.total:,}" in status(queue, "#queue-status")
        await wait_until(
            pilot, lambda: all(findings.row_at(i) for i in range(findings.row_count)), timeout=30
        )
        shown_now = {findings.row_at(i)["id"] for i in range(findings.row_count)}
        assert shown_before < shown_now  # the new findings are in the list, none of the old ones lost
        assert len(shown_now) == queue.total
        # The cursor is still on the finding the reviewer was judging, and its evidence still shown.
        assert queue.current_row["id"] == kept
        assert queue.showing == kept


async def test_new_findings_come_in_the_order_the_reviewer_chose(app_factory, ui_db: Path) -> None:
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await runs_screen_ready(pilot)
        await app.action_open_queue()
        await wait_until(
            pilot, lambda: isinstance(app.screen, QueueScreen) and app.screen.showing is not None, timeout=30
        )
        queue = app.screen
        findings = queue.finding_list
        await pilot.press("O", "O")  # by run -> newest run first -> by kind
        await wait_until(pilot, lambda: queue.sort == "kind" and queue.showing is not None, timeout=30)
        before = queue.total

        await asyncio.to_thread(ingest_from_elsewhere, ui_db, NEW_FINDINGS)

        await wait_until(pilot, lambda: queue.total is not None and queue.total > before, timeout=30)
        await wait_until(
            pilot, lambda: all(findings.row_at(i) for i in range(findings.row_count)), timeout=30
        )
        kinds = [findings.row_at(i)["kind"] for i in range(findings.row_count)]
        assert kinds == sorted(kinds), "the queue taken in again by kind, as the reviewer ordered it"
        assert len(set(kinds)) > 1
        assert queue.sort == "kind" and "by kind" in status(queue, "#queue-status")
