"""Layout snapshots at a fixed terminal size (regenerate with --snapshot-update only after looking at them).

Deterministic: a copied database named review.db, absolute UTC times only, no user keymap, a pinned "now",
the list (not a text input) focused so no cursor blinks.
"""

from __future__ import annotations

from typing import Any

from reviewer.ui.screens.run import RunScreen
from reviewer.ui.screens.runs import RunsScreen
from tests.ui.conftest import SIZE, wait_until
from tests.ui.recordings import EMOJI_RUN


async def _runs_ready(pilot: Any) -> None:
    app = pilot.app
    await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.run_list.loaded)


async def _open(pilot: Any, ident: str) -> RunScreen:
    app = pilot.app
    await _runs_ready(pilot)
    app.open_run(ident)
    await wait_until(
        pilot,
        lambda: (
            isinstance(app.screen, RunScreen)
            and app.screen.run is not None
            and bool(app.screen.timeline.rows)
        ),
    )
    return app.screen


def test_runs_screen(snap_compare, app_factory) -> None:
    assert snap_compare(app_factory(), terminal_size=SIZE, run_before=_runs_ready)


def test_run_screen_findings(snap_compare, app_factory) -> None:
    async def run_before(pilot: Any) -> None:
        screen = await _open(pilot, EMOJI_RUN)
        await pilot.press("right_square_bracket", "right_square_bracket")
        await wait_until(pilot, lambda: (screen.query_one("#detail").showing or "").startswith("finding:"))

    assert snap_compare(app_factory(), terminal_size=SIZE, run_before=run_before)


def test_run_screen_withheld(snap_compare, app_factory) -> None:
    async def run_before(pilot: Any) -> None:
        screen = await _open(pilot, "run-1796002023213-3")  # evidence-gate-rails-refused.json
        await wait_until(pilot, lambda: (screen.query_one("#detail").showing or "").startswith("iteration:"))

    assert snap_compare(app_factory(), terminal_size=SIZE, run_before=run_before)


def test_queue_screen(snap_compare, app_factory, label_db) -> None:
    from reviewer.ui.screens.queue import QueueScreen

    async def run_before(pilot: Any) -> None:
        app = pilot.app
        await _runs_ready(pilot)
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
