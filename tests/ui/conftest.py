"""UI test fixtures: one template database (the shared recordings plus tiny hand-built ones) built once per
session and copied for each test; no user keymap; helpers to wait for the app's workers."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from reviewer.service import Settings
from reviewer.ui.app import ReviewerApp, make_app
from store.db.connection import open_database
from store.db.ingest import ingest
from tests.conftest import FIXTURE_RECORDINGS, SAMPLES
from tests.ui.recordings import write_tiny_recordings

#: "now" for views that show ages, so snapshots never depend on the clock
FIXED_NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
SIZE = (160, 50)


@pytest.fixture(autouse=True)
def _no_user_keymap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("REVIEWER_KEYMAP", str(tmp_path / "no-keymap.toml"))


@pytest.fixture(scope="session")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ui-template")
    tiny = write_tiny_recordings(root / "tiny")
    path = root / "template.db"
    db = open_database(path)
    report = ingest(db, [str(FIXTURE_RECORDINGS), *map(str, tiny)], db_path=str(path))
    assert not report.quarantined, report.quarantined
    db.close()
    return path


#: sample recordings added to the labelling tests' database (flagged clauses with reads, a typed withheld answer)
LABEL_SAMPLES = ("negative-claims-prose.json", "typed-negatives-withheld.json")


@pytest.fixture(scope="session")
def label_template_db(template_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The UI template plus the sample recordings with negative claims (kept apart so the runs-screen tests and
    snapshots see the same runs as before)."""
    path = copy_db(template_db, tmp_path_factory.mktemp("label-template") / "template.db")
    db = open_database(path)
    report = ingest(db, [str(SAMPLES / name) for name in LABEL_SAMPLES], db_path=str(path))
    assert not report.quarantined, report.quarantined
    db.close()
    return path


@pytest.fixture
def label_db(label_template_db: Path, tmp_path: Path) -> Path:
    return copy_db(label_template_db, tmp_path / "review.db")


def copy_db(src: Path, dst: Path) -> Path:
    with sqlite3.connect(src) as a, sqlite3.connect(dst) as b:
        a.backup(b)
    a.close()
    b.close()
    return dst


@pytest.fixture
def ui_db(template_db: Path, tmp_path: Path) -> Path:
    """A fresh copy of the template database, named review.db (the name shows in the app's header)."""
    return copy_db(template_db, tmp_path / "review.db")


@pytest.fixture
def app_factory(ui_db: Path) -> Iterator[Callable[..., ReviewerApp]]:
    apps: list[ReviewerApp] = []

    def build(*, db_path: Path = ui_db, reviewer: str | None = None, **kwargs: Any) -> ReviewerApp:
        kwargs.setdefault("now", FIXED_NOW)
        served_tab = bool(kwargs.get("ask_reviewer"))  # as `reviewer serve` builds each tab's settings
        app = make_app(Settings.resolve(db_path=db_path, reviewer=reviewer, served_tab=served_tab), **kwargs)
        apps.append(app)
        return app

    yield build
    for app in apps:
        app.service.close()


async def wait_until(pilot: Any, predicate: Callable[[], bool], *, timeout: float = 60.0) -> None:
    """Let the app run until `predicate()` holds (workers done, widgets updated). The deadline is generous: on
    a loaded 2-core machine a worker can take seconds, and a passing wait returns as soon as it holds."""
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("timed out waiting for the app")
        await pilot.pause(0.02)
    await pilot.pause()


async def palette_offers(pilot: Any, text: str) -> None:
    """Wait until the open command palette highlights a hit whose prompt contains `text`: each key typed starts a
    new search, and Enter before the last one has gathered its hits would pick an older (or no) hit."""
    from textual.command import CommandList, CommandPalette

    def ready() -> bool:
        screen = pilot.app.screen
        if not isinstance(screen, CommandPalette):
            return False
        hits = screen.query_one(CommandList)
        if hits.highlighted is None or hits.option_count == 0:
            return False
        prompt = hits.get_option_at_index(hits.highlighted).prompt
        return text in getattr(prompt, "plain", str(prompt))

    await wait_until(pilot, ready)


async def runs_screen_ready(pilot: Any) -> Any:
    """Wait for the runs screen with its first block of rows; returns it."""
    from reviewer.ui.screens.runs import RunsScreen

    app = pilot.app
    await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.run_list.loaded)
    return app.screen


async def run_screen_ready(pilot: Any) -> Any:
    """Wait for an opened run screen with its header and timeline drawn; returns it."""
    from reviewer.ui.screens.run import RunScreen

    app = pilot.app
    await wait_until(
        pilot,
        lambda: (
            isinstance(app.screen, RunScreen)
            and app.screen.run is not None
            and bool(app.screen.timeline.rows)
        ),
    )
    return app.screen


async def jump_to_run(pilot: Any, ident: str) -> Any:
    """Open a run directly (as the palette's "jump to run" does), once the runs screen is up."""
    await runs_screen_ready(pilot)
    pilot.app.open_run(ident)
    return await run_screen_ready(pilot)
