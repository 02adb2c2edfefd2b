"""Regenerate the README's tour: one screenshot per screen of the app, taken from the sample recordings.

Run from the repository root:  python tools/tour_screenshots.py [--out docs/tour] [--png]

It ingests `sample_recordings/` into a temporary database, drives the app with Textual's Pilot (120x40 cells)
to each screen, waits until the screen's workers are done, and saves an SVG screenshot per screen
(`runs.svg`, `run.svg`, ...). `--png` also converts each SVG to PNG with headless Chromium when one is
installed. The clock and the reviewer are fixed, and no user keymap or theme is read, so two runs draw the
same screens. tests/test_tour.py runs `take_tour` into a temporary folder and checks every screen is there.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # run as a script from a checkout

SAMPLES = REPO / "sample_recordings"
SIZE = (120, 40)
#: the clock the app shows ages against (shortly after the samples were recorded)
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
#: the sample whose run the run screen shows (an answer with flagged clauses and the reads behind them)
RUN_SAMPLE = "negative-claims-prose.json"


@dataclass(frozen=True)
class Stop:
    """One screen of the tour: its file name, the heading that shows it is that screen, what it is for."""

    name: str
    heading: str
    caption: str


STOPS = (
    Stop("runs", "started (UTC)", "Runs: every run with its outcome and counts; filters, sort and search"),
    Stop("run", "Timeline (", "A run: the answer with its flagged spans, the timeline, the selected finding"),
    Stop("queue", "Evidence", "The findings queue (q): every finding across runs, labelled with one key"),
    Stop("stats", "Findings per kind and label state", "Label stats: counts per kind and reviewer agreement"),
    Stop("packs", "What-if replay", "Phrase packs (p): suggestions, the phrase ledger and the replay"),
    Stop("help", "binding id (for keymap.toml)", "Help (?): every key of the screen and its binding id"),
    Stop("quarantine", "could not be ingested", "Quarantine (K): each input that was not ingested, and why"),
)


def build_database(folder: Path) -> Path:
    """The samples ingested into `folder/tour.db` (the broken ones are quarantined, as in real use)."""
    from store.db.connection import open_database
    from store.db.ingest import ingest

    path = folder / "tour.db"
    db = open_database(path)
    try:
        with contextlib.chdir(REPO):  # paths as a user in a checkout types them, not this machine's
            ingest(db, [SAMPLES.name], db_path=str(path))
    finally:
        db.close()
    return path


def _run_key(db_path: Path, sample: str) -> str:
    from store.db.connection import open_database
    from store.runs import list_runs

    db = open_database(db_path)
    try:
        runs = list_runs(db)
    finally:
        db.close()
    for run in runs:
        sources = [run.get("source"), *(run.get("sources") or [])]
        if any(str(source or "").endswith(sample) for source in sources):
            return str(run["run_key"])
    raise LookupError(f"no run from {sample} in {db_path}")


async def _settle(pilot: Any, ready: Callable[[], bool], timeout: float = 20.0) -> None:
    """Until `ready()` holds and no worker of the app runs any more (then one more refresh)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    app = pilot.app
    while not (ready() and not any(w.is_running for w in app.workers)):
        if loop.time() > deadline:
            raise TimeoutError(f"the {type(app.screen).__name__} never settled")
        await pilot.pause(0.05)
    await pilot.pause()


async def take_tour(out: Path, *, db_path: Path | None = None) -> dict[str, Path]:
    """Save one SVG per stop into `out`; returns {stop name: file}. Builds its own database unless given."""
    from reviewer.service import Settings
    from reviewer.ui.app import make_app
    from reviewer.ui.screens.help import HelpScreen
    from reviewer.ui.screens.packs import PacksScreen
    from reviewer.ui.screens.quarantine import QuarantineScreen
    from reviewer.ui.screens.queue import QueueScreen
    from reviewer.ui.screens.run import RunScreen
    from reviewer.ui.screens.runs import RunsScreen
    from reviewer.ui.screens.stats import StatsScreen

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tour-") as tmp:
        db = db_path or build_database(Path(tmp))
        run_key = _run_key(db, RUN_SAMPLE)
        settings = Settings.resolve(db_path=db, reviewer="tour", keymap_path=Path(tmp) / "none.toml")
        app = make_app(settings.model_copy(update={"theme": None}), keymap={}, now=NOW)
        saved: dict[str, Path] = {}

        def save(name: str) -> None:
            path = out / f"{name}.svg"
            path.write_text(app.export_screenshot(title=f"footprint-reviewer: {name}"), encoding="utf-8")
            saved[name] = path

        def back_to_runs() -> None:
            while not isinstance(app.screen, RunsScreen):
                app.pop_screen()

        try:
            async with app.run_test(size=SIZE) as pilot:
                screen: Any = None

                def on_runs() -> bool:
                    return isinstance(app.screen, RunsScreen) and bool(app.screen.run_list.loaded)

                await _settle(pilot, on_runs)
                save("runs")

                await pilot.press("K")
                await _settle(
                    pilot, lambda: isinstance(app.screen, QuarantineScreen) and bool(app.screen.rows)
                )
                save("quarantine")
                back_to_runs()

                await pilot.press("question_mark")
                await _settle(pilot, lambda: isinstance(app.screen, HelpScreen) and bool(app.screen.rows))
                save("help")
                back_to_runs()

                app.open_run(run_key)
                await _settle(
                    pilot,
                    lambda: (
                        isinstance(app.screen, RunScreen)
                        and app.screen.run is not None
                        and bool(app.screen.timeline.rows)
                    ),
                )
                for _ in range(3):  # the third finding (a negative claim), with its evidence
                    await pilot.press("right_square_bracket")
                    await _settle(pilot, lambda: True)
                save("run")
                back_to_runs()

                await _settle(pilot, on_runs)
                await pilot.press("q")
                await _settle(
                    pilot,
                    lambda: (
                        isinstance(app.screen, QueueScreen)
                        and app.screen.total is not None
                        and app.screen.showing is not None
                    ),
                )
                for key in ("1", "2", "3"):  # label three findings (each key labels and moves on)
                    labelled = app.screen.progress
                    await pilot.press(key)
                    await _settle(pilot, lambda before=labelled: app.screen.progress != before)
                save("queue")

                app.action_open_stats()
                await _settle(
                    pilot, lambda: isinstance(app.screen, StatsScreen) and app.screen.stats is not None
                )
                save("stats")
                back_to_runs()

                await _settle(pilot, on_runs)
                await pilot.press("p")
                await _settle(pilot, lambda: isinstance(app.screen, PacksScreen))
                screen = app.screen
                await _settle(pilot, lambda: screen.stored is not None or "No pack" in _report(screen))
                save("packs")
        finally:
            app.service.close()
    return saved


def _report(screen: Any) -> str:
    from textual.widgets import Static

    return str(screen.query_one("#replay-report", Static).render())


def svg_text(path: Path) -> str:
    """The text an SVG screenshot shows (its text runs joined, entities and no-break spaces undone)."""
    import html

    runs = re.findall(r"<text[^>]*>(.*?)</text>", path.read_text(encoding="utf-8"), flags=re.DOTALL)
    return html.unescape("".join(runs)).replace("\xa0", " ")


def to_png(svg: Path) -> Path | None:
    """`svg` as a PNG beside it, by headless Chromium (None when there is no Chromium)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        return None
    found = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg.read_text(encoding="utf-8"))
    width, height = (round(float(v)) for v in found.groups()) if found else (1500, 1000)
    png = svg.with_suffix(".png")
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--screenshot={png}",
            f"--window-size={width},{height}",
            svg.resolve().as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return png


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "tour", help="where the images go")
    parser.add_argument("--png", action="store_true", help="also write PNGs (needs Chromium)")
    args = parser.parse_args(argv)
    saved = asyncio.run(take_tour(args.out))
    for name, path in saved.items():
        print(f"{name:6} {path}")
        if args.png:
            png = to_png(path)
            print(f"{'':6} {png}" if png else f"{'':6} (no Chromium: no PNG)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
