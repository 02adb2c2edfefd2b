"""PacksScreen with a real database: accept and reject suggestions from the keyboard, replay, export."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App
from textual.widgets import DataTable, Static

from reviewer.ui.screens.packs import DEFAULT_PACK, PacksScreen
from store import packs as store_packs
from store.db.connection import open_database
from tests.test_packs_store import build_hand_corpus
from tests.ui.conftest import wait_until


class Host(App[None]):
    def __init__(self, db_path: Path, pack_name: str | None = None) -> None:
        super().__init__()
        self.screen_under_test = PacksScreen(db_path, reviewer="tess", pack_name=pack_name)
        self.delivered: list[tuple[str, dict[str, Any]]] = []

    def on_mount(self) -> None:
        self.push_screen(self.screen_under_test)

    @property
    def is_web(self) -> bool:
        """Served in a browser: exports are downloads (a terminal asks for a path: test_export_files.py)."""
        return True

    def deliver_text(self, path_or_file: Any, **kw: Any) -> str | None:  # type: ignore[override]
        self.delivered.append(
            (path_or_file.read() if isinstance(path_or_file, io.StringIO) else str(path_or_file), kw)
        )
        return None


async def until(pilot: Any, cond: Callable[[], bool]) -> None:
    """Poll against the clock (a count of short pauses ran out in about 4 s on a loaded machine)."""
    await wait_until(pilot, cond)


def _report_text(screen: PacksScreen) -> str:
    return str(screen.query_one("#replay-report", Static).render())


async def test_accept_and_reject_suggestions_from_the_keyboard(db_path: Path, tmp_path: Path) -> None:
    db = open_database(db_path)
    build_hand_corpus(db, tmp_path / "recordings")
    db.close()
    app = Host(db_path)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen_under_test
        await until(pilot, lambda: bool(screen.suggestion_rows))
        table = screen.query_one("#suggestions", DataTable)
        assert screen.stored is None and table.row_count == len(screen.suggestion_rows)
        assert "covers only the literal phrase" in str(screen.query_one("#replay-caveat", Static).render())
        first = screen.suggestion_rows[0]
        await pilot.press("a")
        await until(pilot, lambda: screen.stored is not None and screen.report is not None)

        check = open_database(db_path)
        stored = store_packs.latest_pack(check, DEFAULT_PACK)
        assert stored is not None and stored.version == 1 and stored.created_by == "tess"
        assert (stored.none if first["list"] == "none" else stored.complete) == (first["phrase"],)
        decisions = store_packs.list_decisions(check, DEFAULT_PACK)
        assert [(d["phrase"], d["decision"], d["reviewer"]) for d in decisions] == [
            (first["phrase"], "accepted", "tess")
        ]

        # the replay of the new pack (against the empty pack) is shown beside the suggestions, with its trial
        assert screen.report["candidate"]["ref"] == f"{DEFAULT_PACK}@1" and screen.report["answers"] == 6
        assert "variant 1 tried against these labels" in _report_text(screen)
        # the caveat is shown once: above the report, never repeated inside it
        caveat = str(screen.query_one("#replay-caveat", Static).render())
        assert (
            "cannot: the framework's own English grammar" in caveat
            and "reproduces: one no-read note" in caveat
        )
        assert "cannot:" not in _report_text(screen) and "covers only" not in _report_text(screen)
        assert first["phrase"] not in {s["phrase"] for s in screen.suggestion_rows}

        # reject the next one: recorded, no new version, no longer suggested
        await until(pilot, lambda: not table.loading)
        rejected = screen.suggestion_rows[table.cursor_row]
        await pilot.press("x")
        await until(pilot, lambda: len(store_packs.list_decisions(check, DEFAULT_PACK)) == 2)
        await until(pilot, lambda: rejected["phrase"] not in {s["phrase"] for s in screen.suggestion_rows})
        assert store_packs.latest_pack(check, DEFAULT_PACK) == stored

        # accept again: a second version whose parent is the first
        await until(pilot, lambda: not table.loading)
        second = screen.suggestion_rows[table.cursor_row]
        await pilot.press("a")
        await until(
            pilot, lambda: (p := store_packs.latest_pack(check, DEFAULT_PACK)) is not None and p.version == 2
        )
        v2 = store_packs.latest_pack(check, DEFAULT_PACK)
        assert v2 is not None and v2.parent_hash == stored.content_hash
        assert second["phrase"] in v2.none + v2.complete

        # R re-runs the replay: a second trial of the same candidate, still one variant per candidate
        await until(pilot, lambda: screen.stored is not None and screen.stored.version == 2 and screen.report is not None
                    and screen.report["candidate"]["ref"] == f"{DEFAULT_PACK}@2")  # fmt: skip
        trials_before = screen.report["trial"]["trials"]
        await pilot.press("R")
        await until(
            pilot, lambda: screen.report is not None and screen.report["trial"]["trials"] == trials_before + 1
        )
        assert screen.report["baseline"]["ref"] == f"{DEFAULT_PACK}@1"

        # e / t deliver the export through App.deliver_text
        await pilot.press("e")
        await pilot.press("t")
        assert [kw["save_filename"] for _, kw in app.delivered] == [
            f"{DEFAULT_PACK}-v2.json",
            f"{DEFAULT_PACK}-v2.ts",
        ]
        assert (
            '"prose": true' in app.delivered[0][0]
            and "satisfies NegativeClaimsOptions" in app.delivered[1][0]
        )
        check.close()


async def test_a_broken_limit_is_shown_not_saved(db_path: Path, tmp_path: Path) -> None:
    db = open_database(db_path)
    build_hand_corpus(db, tmp_path / "recordings")
    from reviewer.service.pack_ops import create_pack

    create_pack(db, "full", [f"filler phrase {i}" for i in range(32)])
    db.close()
    app = Host(db_path, pack_name="full")
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen_under_test
        await until(pilot, lambda: bool(screen.suggestion_rows))
        await pilot.press("a")
        await until(
            pilot, lambda: any("the limit is 32 in total" in str(n.message) for n in app._notifications)
        )
        check = open_database(db_path)
        latest = store_packs.latest_pack(check, "full")
        assert latest is not None and latest.version == 1
        assert store_packs.list_decisions(check, "full") == []
        check.close()


async def test_no_idle_progress_bar_and_the_caveat_once(db_path: Path, tmp_path: Path) -> None:
    from textual.widgets import ProgressBar

    db = open_database(db_path)
    build_hand_corpus(db, tmp_path / "recordings")
    db.close()
    app = Host(db_path)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen_under_test
        await until(pilot, lambda: bool(screen.suggestion_rows))
        bar = screen.query_one("#replay-progress", ProgressBar)
        assert not bar.display  # no pack yet: nothing to replay, no bar
        await pilot.press("a")
        await until(pilot, lambda: screen.report is not None)
        await pilot.pause()
        assert not bar.display  # the replay is done
        shown = "\n".join(str(w.render()) for w in screen.query(Static) if w.display)
        assert shown.count("covers only the literal phrase") == 1  # the caveat, once (above the report)
        assert "answers replayed" in _report_text(screen)


async def test_n_makes_a_pack_by_name_and_accepted_suggestions_go_to_it(
    db_path: Path, tmp_path: Path
) -> None:
    from textual.widgets import Input

    db = open_database(db_path)
    build_hand_corpus(db, tmp_path / "recordings")
    db.close()
    app = Host(db_path)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen_under_test
        await until(pilot, lambda: bool(screen.suggestion_rows))
        title = screen.query_one("#packs-title", Static)
        assert "n makes one by name" in str(title.render())
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.focused, Input))
        assert screen.query_one("#suggestions", DataTable).region.height > 5  # the panes stay in view
        await pilot.press(*"triage", "enter")
        await until(pilot, lambda: screen.stored is not None and screen.stored.name == "triage")
        assert "triage@1" in str(title.render())
        first = screen.suggestion_rows[0]
        await pilot.press("a")  # the focus is back on the suggestions: a accepts into the chosen pack
        check = open_database(db_path)
        await until(
            pilot, lambda: (p := store_packs.latest_pack(check, "triage")) is not None and p.version == 2
        )
        latest = store_packs.latest_pack(check, "triage")
        assert latest is not None and first["phrase"] in latest.none + latest.complete
        assert latest.created_by == "tess"
        assert store_packs.latest_pack(check, DEFAULT_PACK) is None  # nothing went to 'default'

        # a taken name is refused with the reason, and nothing is written
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.focused, Input))
        await pilot.press(*"triage", "enter")
        await until(pilot, lambda: any("exists" in str(n.message) for n in app._notifications))
        assert store_packs.latest_pack(check, "triage") == latest
        # escape cancels the bar without leaving the screen
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.focused, Input))
        await pilot.press("escape")
        await until(pilot, lambda: not screen.query("#pack-name-bar"))
        assert app.screen is screen
        check.close()
