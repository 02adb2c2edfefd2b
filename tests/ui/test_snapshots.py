"""Layout snapshots at a fixed terminal size (regenerate with --snapshot-update only after looking at them).

Deterministic: a copied database named review.db, absolute UTC times only, no user keymap, a pinned "now",
the list (not a text input) focused so no cursor blinks.
"""

from __future__ import annotations

from typing import Any

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
