"""Layout snapshots at a fixed terminal size (regenerate with --snapshot-update only after looking at them).

Deterministic: a copied database named review.db, absolute UTC times only, no user keymap, a pinned "now",
the list (not a text input) focused so no cursor blinks.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.ui.conftest import SIZE, jump_to_run, runs_screen_ready, wait_until
from tests.ui.recordings import EMOJI_RUN


def test_runs_screen(snap_compare, app_factory) -> None:
    assert snap_compare(app_factory(), terminal_size=SIZE, run_before=runs_screen_ready)


def test_run_screen_findings(snap_compare, app_factory) -> None:
    async def run_before(pilot: Any) -> None:
        screen = await jump_to_run(pilot, EMOJI_RUN)
        await pilot.press("right_square_bracket", "right_square_bracket")
        await wait_until(pilot, lambda: (screen.query_one("#detail").showing or "").startswith("finding:"))

    assert snap_compare(app_factory(), terminal_size=SIZE, run_before=run_before)


def test_run_screen_withheld(snap_compare, app_factory) -> None:
    async def run_before(pilot: Any) -> None:
        screen = await jump_to_run(pilot, "run-1796002023213-3")  # evidence-gate-rails-refused.json
        await wait_until(pilot, lambda: (screen.query_one("#detail").showing or "").startswith("iteration:"))

    assert snap_compare(app_factory(), terminal_size=SIZE, run_before=run_before)


def test_queue_screen(snap_compare, app_factory, label_db) -> None:
    from reviewer.ui.screens.queue import QueueScreen

    async def run_before(pilot: Any) -> None:
        app = pilot.app
        await runs_screen_ready(pilot)
        await pilot.press("q")
        await wait_until(
            pilot,
            lambda: (
                isinstance(app.screen, QueueScreen)
                and app.screen.showing is not None
                and app.screen.query_one("#evidence").showing == f"finding:{app.screen.showing}"
            ),
        )

    assert snap_compare(
        app_factory(db_path=label_db, reviewer="ann"), terminal_size=SIZE, run_before=run_before
    )


TABLE_AND_CHART = "run-1796001963675-1"  # semantics-table-and-chart.json: port_iops draws a chart


async def _chart_selected(pilot: Any) -> None:
    screen = await jump_to_run(pilot, TABLE_AND_CHART)
    index = next(i for i, r in enumerate(screen.timeline.rows) if r.get("call_id") == "call-iops-1")
    screen.timeline.move_to(index)
    await wait_until(
        pilot,
        lambda: (
            screen.query_one("#detail").showing == "call:call-iops-1" and bool(screen.query("SeriesPlot"))
        ),
        timeout=60,
    )
    await pilot.pause(0.2)


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)], ids=["80x24", "120x40", "200x60"])
def test_run_screen_with_a_chart_selected(snap_compare, app_factory, size: tuple[int, int]) -> None:
    assert snap_compare(app_factory(), terminal_size=size, run_before=_chart_selected)
