"""What was not ingested is visible in the app: a count on the runs screen while anything is quarantined, and a
quarantine screen (K, or the palette) listing each file with its reason, drawn as inert text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.text import Text
from textual.widgets import DataTable, Static

from reviewer.cli.main import cli
from reviewer.ui.app import ReviewerApp
from reviewer.ui.screens.quarantine import QuarantineScreen
from store.db.connection import open_database
from store.db.ingest import ingest
from tests.conftest import SAMPLES
from tests.ui.conftest import SIZE, copy_db, palette_offers, runs_screen_ready, wait_until

BROKEN = SAMPLES / "broken"


@pytest.fixture(scope="module")
def quarantine_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, str]]]:
    """The sample recordings ingested: the good ones stored, the 8 broken ones quarantined (as
    `reviewer quarantine --json` lists them)."""
    path = tmp_path_factory.mktemp("quarantine") / "review.db"
    db = open_database(path)
    report = ingest(db, [str(SAMPLES)], db_path=str(path))
    db.close()
    assert len(report.quarantined) == len(list(BROKEN.iterdir())) == 8
    listed = CliRunner().invoke(cli, ["quarantine", "--json", "--db", str(path)])
    assert listed.exit_code == 0, listed.output
    return path, json.loads(listed.output)


@pytest.fixture
def quarantined_db(quarantine_template: tuple[Path, list[dict[str, str]]], tmp_path: Path) -> Path:
    return copy_db(quarantine_template[0], tmp_path / "review.db")


def _plain(widget: Static) -> str:
    rendered = widget.render()
    return rendered.plain if isinstance(rendered, Text) else str(rendered)


def _table_text(table: DataTable[Text]) -> list[list[str]]:
    return [
        [cell.plain if isinstance(cell, Text) else str(cell) for cell in table.get_row_at(i)]
        for i in range(table.row_count)
    ]


async def _count_shown(pilot: object, app: ReviewerApp) -> str:
    screen = await runs_screen_ready(pilot)
    await wait_until(pilot, lambda: screen.quarantined is not None)
    widget = screen.query_one("#runs-quarantined", Static)
    return _plain(widget) if widget.display else ""


async def test_the_runs_screen_counts_what_was_quarantined_and_k_lists_each_file_with_its_reason(
    app_factory, quarantined_db: Path, quarantine_template: tuple[Path, list[dict[str, str]]]
) -> None:
    expected = quarantine_template[1]
    app: ReviewerApp = app_factory(db_path=quarantined_db)
    async with app.run_test(size=SIZE) as pilot:
        assert await _count_shown(pilot, app) == "8 quarantined — press K"
        footer_keys = {b.id for _n, b, _e, _t in app.screen.active_bindings.values()}
        assert "runs.quarantine" in footer_keys
        await pilot.press("K")
        await wait_until(
            pilot, lambda: isinstance(app.screen, QuarantineScreen) and app.screen.total is not None
        )
        screen = app.screen
        assert isinstance(screen, QuarantineScreen)
        assert "8 inputs could not be ingested" in _plain(screen.query_one("#quarantine-status", Static))
        rows = _table_text(screen.query_one(DataTable))
        assert len(rows) == 8
        for row, want in zip(rows, expected, strict=True):
            path, code, reason, _times, _seen = row
            assert path == want["path"] and code == want["code"]
            assert want["reason"].endswith(reason) and reason  # the reason, without the path it starts with
        assert any(r[2] == "the file is empty" and r[0].endswith("empty.json") for r in rows)
        detail = _plain(screen.query_one("#quarantine-reason", Static))
        assert expected[0]["path"] in detail and "binary data (NUL bytes)" in detail
        await pilot.press("escape")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "RunsScreen")


async def test_the_palette_opens_the_quarantine(app_factory, quarantined_db: Path) -> None:
    app: ReviewerApp = app_factory(db_path=quarantined_db)
    async with app.run_test(size=SIZE) as pilot:
        await runs_screen_ready(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"quarantined inputs")
        await palette_offers(pilot, "Quarantined inputs")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, QuarantineScreen) and app.screen.total == 8)
        assert app.screen.query_one(DataTable).row_count == 8


async def test_no_count_and_no_key_when_nothing_is_quarantined(app_factory) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        assert await _count_shown(pilot, app) == ""
        assert app.screen.quarantined == 0
        assert "runs.quarantine" not in {b.id for _n, b, _e, _t in app.screen.active_bindings.values()}
        await pilot.press("K")
        await pilot.pause()
        assert type(app.screen).__name__ == "RunsScreen"
        app.action_open_quarantine()  # the palette's command still opens it, and says so
        await wait_until(pilot, lambda: isinstance(app.screen, QuarantineScreen) and app.screen.total == 0)
        assert "Nothing is quarantined" in _plain(app.screen.query_one("#quarantine-status", Static))
        assert app.screen.query_one(DataTable).row_count == 0


async def test_a_remapped_key_is_the_one_the_count_names(app_factory, quarantined_db: Path) -> None:
    app: ReviewerApp = app_factory(db_path=quarantined_db, keymap={"runs.quarantine": "ctrl+k"})
    async with app.run_test(size=SIZE) as pilot:
        assert (await _count_shown(pilot, app)).endswith("press ^k")
        await pilot.press("ctrl+k")
        await wait_until(pilot, lambda: isinstance(app.screen, QuarantineScreen))


async def test_recorded_paths_and_reasons_are_drawn_inert(app_factory, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    hostile = folder / "[reverse]x\x1b]0;pwned\x07.json"
    hostile.write_bytes(b"\x1b]52;c;aGVsbG8=\x07 not json")
    path = tmp_path / "review.db"
    db = open_database(path)
    report = ingest(db, [str(folder)], db_path=str(path))
    db.close()
    assert len(report.quarantined) == 1
    app: ReviewerApp = app_factory(db_path=path)
    async with app.run_test(size=SIZE) as pilot:
        assert (await _count_shown(pilot, app)).startswith("1 quarantined")
        await pilot.press("K")
        await wait_until(pilot, lambda: isinstance(app.screen, QuarantineScreen) and app.screen.total == 1)
        [row] = _table_text(app.screen.query_one(DataTable))
        drawn = " ".join(row) + _plain(app.screen.query_one("#quarantine-reason", Static))
        assert "[reverse]x" in drawn, "markup shown as typed, never applied"
        assert "\x1b" not in drawn and "\x07" not in drawn
