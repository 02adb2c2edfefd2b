"""The packs screen's per-phrase ledger and the deployed versions measured in production, in the real app:
`f` on a ledger phrase opens its first false positive in the run screen, `f` there steps to the next one
(in another run), and the production precision is shown beside the replay's prediction."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.widgets import DataTable, Static

from reviewer.service import Settings
from reviewer.ui.app import make_app
from reviewer.ui.screens.packs import PacksScreen
from reviewer.ui.screens.run import RunScreen
from store.db.connection import open_database
from tests.test_pack_cli import run
from tests.test_packs_store import build_hand_corpus_and_r7, finding_id


async def until(pilot: Any, cond: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not cond():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached")
        await pilot.pause(0.02)


def build(db_path: Path, tmp_path: Path) -> dict[str, str]:
    """The by-hand corpus plus r7, a second run whose flagged "came up empty" is labelled fp."""
    db = open_database(db_path)
    keys = build_hand_corpus_and_r7(db, tmp_path / "recordings")
    db.close()
    run(
        db_path,
        "new",
        "ops",
        "--none",
        "nothing found",
        "--none",
        "came up empty",
        "--complete",
        "the full list",
    )
    run(db_path, "replay", "ops", "--holdout", "0")
    run(db_path, "deployed", "ops@1", "en-negatives@3")
    return keys


async def test_ledger_steps_through_a_phrase_false_positives(db_path: Path, tmp_path: Path) -> None:
    keys = build(db_path, tmp_path)
    db = open_database(db_path)
    fp_r2 = finding_id(db, keys["run-r2"], "came up empty")
    fp_r7 = finding_id(db, keys["run-r7"], "came up empty")
    db.close()
    app = make_app(Settings.resolve(db_path=db_path, reviewer="tess"), keymap={})
    async with app.run_test(size=(160, 50)) as pilot:
        app.action_open_packs()
        await until(pilot, lambda: isinstance(app.screen, PacksScreen) and bool(app.screen.ledger_rows))
        screen = app.screen
        assert isinstance(screen, PacksScreen)
        # per phrase: hits / tp / fp among labelled hits / misses covered, worked by hand:
        #   nothing found: r3 (tp); came up empty: r1 (a missed label), r2 (fp), r7 (fp) -- r5's is in code,
        #   r6's is split by a line break; the full list: r4 (fp)
        assert [
            (r["phrase"], r["hits"], r["true_positives"], r["false_positives"], r["misses_covered"])
            for r in screen.ledger_rows
        ] == [("nothing found", 1, 1, 0, 0), ("came up empty", 3, 0, 2, 1), ("the full list", 1, 0, 1, 0)]
        assert screen.query_one("#ledger", DataTable).row_count == 3
        # the version strings and production precision beside the replay's prediction
        await until(pilot, lambda: screen.versions is not None)
        shown = str(screen.query_one("#pack-versions", Static).render())
        assert "en-negatives@3  5 finding(s), 5 labelled, 5 label(s); deployed from ops@1" in shown
        # measured: r2a tp, r2b fp, r3 tp, r4 fp, r7 fp -> 2/5; the replay's claims on labelled answers:
        # r1 (missed), r2b (fp), r3 (tp), r4 (fp), r7 (fp) -> 2/5
        assert "en-negatives@3 (ops@1): measured 40% (2/5 labelled findings), replay predicted 40%" in shown

        screen.query_one("#ledger", DataTable).move_cursor(row=1)
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.current_finding == fp_r2)
        first = app.screen
        assert isinstance(first, RunScreen) and first.run_key == keys["run-r2"]
        await until(
            pilot, lambda: "false positive 1 of 2" in str(first.query_one("#answer-scroll").border_subtitle)
        )
        await pilot.press("f")
        await until(pilot, lambda: first.run_key == keys["run-r7"] and first.current_finding == fp_r7)
        assert app.screen is first and first.walk_at == 1
        await until(
            pilot, lambda: "false positive 2 of 2" in str(first.query_one("#answer-scroll").border_subtitle)
        )
        # the walk wraps, and escape goes back to the packs screen
        await pilot.press("f")
        await until(pilot, lambda: first.run_key == keys["run-r2"] and first.current_finding == fp_r2)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
    app.service.close()
