"""In-app exports in a terminal: a bar under the panels asks for the path (the current folder and a sanitised
name by default), the file goes exactly there, an existing file is replaced only after `y`, a missing folder is
reported and never made, and the toast names the absolute path. (Served in a browser: tests/ui/test_export.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from textual.widgets import Input

from reviewer.cli.main import cli
from reviewer.ui.app import ReviewerApp
from reviewer.ui.exporting import ExportPathBar, ReplaceBar, target_path
from reviewer.ui.screens.run import RunScreen
from reviewer.ui.screens.runs import RunsScreen
from tests.ui.conftest import SIZE, jump_to_run, wait_until
from tests.ui.test_app import runs_loaded


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def _messages(app: ReviewerApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def _asked(pilot: Any) -> ExportPathBar:
    app = pilot.app
    await wait_until(pilot, lambda: bool(app.screen.query(ExportPathBar)))
    bar = app.screen.query_one(ExportPathBar)
    await wait_until(pilot, lambda: app.screen.focused is bar.query_one(Input))
    return bar


async def _answer(pilot: Any, path: Path | str) -> None:
    bar = await _asked(pilot)
    bar.query_one(Input).value = str(path)
    await pilot.press("enter")


async def test_the_default_is_the_sanitised_name_in_the_current_folder_and_the_toast_says_where(
    app_factory, cwd: Path
) -> None:
    app: ReviewerApp = app_factory(reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        await runs_loaded(pilot)
        await pilot.press("ctrl+e")
        bar = await _asked(pilot)
        assert bar.query_one(Input).value == str(cwd / "labels.json")
        assert isinstance(app.screen, RunsScreen), "a bar in the screen, not a screen over it"
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("exported to" in m for m in _messages(app)))
        assert not app.screen.query(ExportPathBar)
    written = cwd / "labels.json"
    assert isinstance(json.loads(written.read_text(encoding="utf-8")), list)
    assert any(m.endswith(f"exported to {written}") for m in _messages(app))
    assert sorted(p.name for p in cwd.iterdir()) == ["labels.json"]


async def test_the_export_goes_to_the_typed_path_and_a_typed_folder_gets_the_name(
    app_factory, cwd: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    app: ReviewerApp = app_factory(reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        await runs_loaded(pilot)
        await pilot.press("ctrl+e")
        await _answer(pilot, out / "mine.json")
        await wait_until(pilot, lambda: (out / "mine.json").exists())
        await wait_until(
            pilot, lambda: any(m.endswith(f"exported to {out / 'mine.json'}") for m in _messages(app))
        )
        app.action_export_labels("csv")
        await _answer(pilot, "../out")  # relative to the current folder; an existing folder
        await wait_until(pilot, lambda: (out / "labels.csv").exists())
        await wait_until(
            pilot, lambda: any(m.endswith(f"exported to {out / 'labels.csv'}") for m in _messages(app))
        )
    assert (out / "labels.csv").read_text(encoding="utf-8").startswith("uid,target_id")
    assert list(cwd.iterdir()) == []


async def test_an_existing_file_is_replaced_only_after_yes(app_factory, cwd: Path) -> None:
    existing = cwd / "labels.json"
    existing.write_text("keep me", encoding="utf-8")
    app: ReviewerApp = app_factory(reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        await runs_loaded(pilot)
        await pilot.press("ctrl+e")
        await pilot.press("enter")  # the default: the existing file
        await wait_until(pilot, lambda: bool(app.screen.query(ReplaceBar)))
        assert isinstance(app.screen, RunsScreen)
        await pilot.press("q", "w")  # the screen's keys (queue, a filter) wait while the question is open
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen) and app.screen.filters == {}
        assert app.screen.query(ReplaceBar)
        await pilot.press("n")
        await wait_until(pilot, lambda: any("was kept as it was" in m for m in _messages(app)))
        assert existing.read_text(encoding="utf-8") == "keep me"
        assert not any("exported to" in m for m in _messages(app))
        await pilot.press("ctrl+e")
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(app.screen.query(ReplaceBar)))
        await pilot.press("y")
        await wait_until(pilot, lambda: existing.read_text(encoding="utf-8") != "keep me")
        await wait_until(pilot, lambda: any(m.endswith(f"exported to {existing}") for m in _messages(app)))
    assert isinstance(json.loads(existing.read_text(encoding="utf-8")), list)
    assert sorted(p.name for p in cwd.iterdir()) == ["labels.json"]


async def test_a_missing_folder_is_reported_never_made_and_nothing_is_claimed(
    app_factory, cwd: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-folder" / "deeper"
    app: ReviewerApp = app_factory(reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        await runs_loaded(pilot)
        await pilot.press("ctrl+e")
        await _answer(pilot, missing / "labels.json")
        await wait_until(pilot, lambda: any("does not exist" in m for m in _messages(app)))
        [error] = [n for n in app._notifications if "does not exist" in str(n.message)]
        assert error.severity == "error" and str(missing) in str(error.message)
        assert not any("exported to" in m for m in _messages(app))
    assert not (tmp_path / "no-such-folder").exists()
    assert list(cwd.iterdir()) == []


async def test_escape_cancels_and_writes_nothing(app_factory, cwd: Path) -> None:
    app: ReviewerApp = app_factory(reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        await runs_loaded(pilot)
        await pilot.press("ctrl+e")
        await _asked(pilot)
        await pilot.press("escape")
        await wait_until(pilot, lambda: any("cancelled" in m for m in _messages(app)))
        assert not app.screen.query(ExportPathBar)
    assert list(cwd.iterdir()) == []


async def test_the_path_bar_leaves_the_run_screen_in_view(app_factory, cwd: Path) -> None:
    app: ReviewerApp = app_factory(reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await jump_to_run(pilot, "run-1796001963675-1")
        await pilot.press("ctrl+e")
        bar = await _asked(pilot)
        assert app.screen is screen and isinstance(screen, RunScreen) and bar in screen.walk_children()
        assert screen.timeline.region.height > 0 and screen.timeline.display
        await pilot.press("enter")
        await wait_until(pilot, lambda: (cwd / "labels.json").exists())


async def test_a_pack_named_like_a_path_defaults_to_a_plain_name_in_the_current_folder(
    app_factory, ui_db: Path, cwd: Path, tmp_path: Path
) -> None:
    made = CliRunner().invoke(cli, ["pack", "new", "../../outside/escaped", "--db", str(ui_db)])
    assert made.exit_code == 0, made.output
    app: ReviewerApp = app_factory(reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        await runs_loaded(pilot)
        await pilot.press("p")
        await wait_until(
            pilot,
            lambda: (
                type(app.screen).__name__ == "PacksScreen" and getattr(app.screen, "stored", None) is not None
            ),
        )
        await pilot.press("e")
        bar = await _asked(pilot)
        assert bar.query_one(Input).value == str(cwd / "outside_escaped-v1.json")
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(cwd.iterdir()))
    [written] = list(cwd.iterdir())
    assert written.name == "outside_escaped-v1.json"
    assert json.loads(written.read_text(encoding="utf-8"))["phrases"] == {"none": [], "complete": []}
    assert not [p for p in tmp_path.rglob("*escaped*") if p.parent != cwd], "nothing outside the folder"


async def test_the_packs_screen_export_replaces_an_existing_file_only_after_yes(
    app_factory, ui_db: Path, cwd: Path
) -> None:
    made = CliRunner().invoke(cli, ["pack", "new", "ops", "--none", "came up empty", "--db", str(ui_db)])
    assert made.exit_code == 0, made.output
    existing = cwd / "ops-v1.json"
    existing.write_text("keep me", encoding="utf-8")
    app: ReviewerApp = app_factory(reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        await runs_loaded(pilot)
        await pilot.press("p")
        await wait_until(
            pilot,
            lambda: (
                type(app.screen).__name__ == "PacksScreen" and getattr(app.screen, "stored", None) is not None
            ),
        )
        await pilot.press("e")
        bar = await _asked(pilot)
        assert bar.query_one(Input).value == str(existing)
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(app.screen.query(ReplaceBar)))
        await pilot.press("n")
        await wait_until(pilot, lambda: any("was kept as it was" in m for m in _messages(app)))
        assert existing.read_text(encoding="utf-8") == "keep me"
        await pilot.press("e")
        await _asked(pilot)
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(app.screen.query(ReplaceBar)))
        await pilot.press("y")
        await wait_until(pilot, lambda: existing.read_text(encoding="utf-8") != "keep me")
    assert json.loads(existing.read_text(encoding="utf-8"))["phrases"]["none"] == ["came up empty"]
    assert sorted(p.name for p in cwd.iterdir()) == ["ops-v1.json"]


def test_a_typed_path_is_made_absolute_and_folded(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    assert target_path("x.json", "labels.json", tmp_path) == tmp_path / "x.json"
    assert target_path("dir", "labels.json", tmp_path) == tmp_path / "dir" / "labels.json"
    assert target_path("new/", "labels.json", tmp_path) == tmp_path / "new" / "labels.json"
    assert target_path("dir/../y.json", "labels.json", tmp_path) == tmp_path / "y.json"
    assert target_path(str(tmp_path / "z.json"), "labels.json", Path("/")) == tmp_path / "z.json"
