"""In-app exports in a terminal: written into the downloads folder only (names sanitised), and never over an
existing file without an explicit yes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reviewer.cli.main import cli
from reviewer.ui.exporting import ConfirmOverwrite
from tests.ui.conftest import SIZE, wait_until
from tests.ui.test_app import runs_loaded


@pytest.fixture
def downloads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home" / "me" / "Downloads"
    folder.mkdir(parents=True)
    monkeypatch.setattr("reviewer.ui.exporting.downloads_folder", lambda: folder)
    return folder


async def test_an_export_over_an_existing_file_asks_first_and_no_keeps_it(
    app_factory, downloads: Path
) -> None:
    existing = downloads / "labels.json"
    existing.write_text("keep me", encoding="utf-8")
    app = app_factory(reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        await runs_loaded(pilot)
        await pilot.press("ctrl+e")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmOverwrite))
        await pilot.press("n")
        await wait_until(pilot, lambda: any("kept" in n.message for n in app._notifications))
        assert existing.read_text(encoding="utf-8") == "keep me"
        await pilot.press("ctrl+e")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmOverwrite))
        await pilot.press("y")
        await wait_until(pilot, lambda: existing.read_text(encoding="utf-8") != "keep me")
    assert isinstance(json.loads(existing.read_text(encoding="utf-8")), list)
    assert sorted(p.name for p in downloads.iterdir()) == ["labels.json"]


async def test_a_pack_named_like_a_path_is_exported_inside_the_downloads_folder(
    app_factory, ui_db: Path, downloads: Path, tmp_path: Path
) -> None:
    made = CliRunner().invoke(cli, ["pack", "new", "../../outside/escaped", "--db", str(ui_db)])
    assert made.exit_code == 0, made.output
    app = app_factory(reviewer="ann")
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
        await wait_until(pilot, lambda: any(downloads.iterdir()))
    [written] = list(downloads.iterdir())
    assert written.name == "outside_escaped-v1.json"
    assert json.loads(written.read_text(encoding="utf-8"))["phrases"] == {"none": [], "complete": []}
    assert not [p for p in tmp_path.rglob("*escaped*") if p.parent != downloads], "nothing outside the folder"
