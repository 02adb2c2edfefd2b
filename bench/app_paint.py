"""Time to first paint of the review app, as a ratio to its own empty start-up in the same process.

    python -m bench.app_paint [--runs 100000] [--repeat 5] [--keep DIR]

Measures, headless at 160x50 (`App.run_test`), the median of `--repeat` runs after one warm-up:

* empty start-up: `make_app` on an empty database -> first frame with the (empty) runs list drawn;
* runs screen, 100,000 runs: `make_app` -> first frame with rows drawn (synthetic rows, `bench.synthetic`);
* jump to the last of 100,000 runs: `end` -> first frame with the last row drawn;
* run screen, largest real recording (/work/shared/recordings): `enter` -> first frame with the answer
  drawn, and -> first frame with the timeline drawn;
* run screen, a 1,200-event recording from `bench.corpus` (about 8 MB): the same two figures.

A "frame" is a call of `App._display` with a composited update (what a terminal would be sent).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import orjson

from bench.synthetic import insert_synthetic_runs
from reviewer.service import Settings
from reviewer.ui.app import ReviewerApp, make_app
from reviewer.ui.screens.run import RunScreen
from reviewer.ui.screens.runs import RunsScreen
from store.db.connection import open_database
from store.db.ingest import ingest
from store.recordings import runs_of_source

SHARED = Path("/work/shared/recordings")
SIZE = (160, 50)


class FrameClock:
    """Timestamps of every composited frame the app produced."""

    def __init__(self, app: ReviewerApp) -> None:
        self.frames: list[float] = []
        original = app._display

        def display(screen: Any, renderable: Any) -> None:
            if renderable is not None:
                self.frames.append(time.perf_counter())
            original(screen, renderable)

        app._display = display  # type: ignore[method-assign]

    def first_after(self, mark: float) -> float | None:
        return next((t for t in self.frames if t >= mark), None)


async def _until(pilot: Any, predicate: Callable[[], Any], timeout: float = 30.0) -> None:
    deadline = time.perf_counter() + timeout
    while not predicate():
        if time.perf_counter() > deadline:
            raise TimeoutError("the app did not get there in time")
        await asyncio.sleep(0.001)


async def _frame_after(pilot: Any, clock: FrameClock, mark: float) -> float:
    await _until(pilot, lambda: clock.first_after(mark) is not None)
    got = clock.first_after(mark)
    assert got is not None
    return got


async def startup(db: Path) -> dict[str, float]:
    """make_app -> first frame with the runs list drawn (rows or its empty state); plus a jump to the end."""
    t0 = time.perf_counter()
    app = make_app(Settings.resolve(db_path=db), keymap={})
    clock = FrameClock(app)
    out: dict[str, float] = {}
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.run_list.first_paint)
        run_list = app.screen.run_list
        out["paint"] = await _frame_after(pilot, clock, run_list.first_paint) - t0
        if run_list.row_count > 1:
            loaded: list[float] = []
            set_block = run_list.set_block

            def timed_set_block(*args: Any) -> None:
                set_block(*args)
                loaded.append(time.perf_counter())

            run_list.set_block = timed_set_block  # type: ignore[method-assign]
            t1 = time.perf_counter()
            await pilot.press("end")
            last = run_list.row_count - 1
            await _until(pilot, lambda: run_list.row_at(last) is not None and run_list.cursor == last)
            out["jump_end"] = await _frame_after(pilot, clock, max(loaded)) - t1
    return out


async def open_run(db: Path, run_key: str) -> dict[str, float]:
    """On a ready runs screen: `enter` on `run_key` -> first frame with the answer, and with the timeline."""
    app = make_app(Settings.resolve(db_path=db), keymap={})
    clock = FrameClock(app)
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.run_list.loaded)
        runs = app.screen
        index = next(
            i for i in range(runs.run_list.row_count) if runs.run_list.row_at(i)["run_key"] == run_key
        )
        runs.run_list.move_to(index)
        await pilot.pause()
        t0 = time.perf_counter()
        await pilot.press("enter")
        await _until(pilot, lambda: isinstance(app.screen, RunScreen) and "header" in app.screen.marks)
        screen = app.screen
        answer = await _frame_after(pilot, clock, screen.marks["header"]) - t0
        await _until(pilot, lambda: "timeline" in screen.marks)
        timeline = await _frame_after(pilot, clock, screen.marks["timeline"]) - t0
        rows = screen.timeline.row_count
    return {"answer": answer, "timeline": timeline, "rows": rows}


def median_of(repeat: int, make: Callable[[], Coroutine[Any, Any, dict[str, float]]]) -> dict[str, float]:
    asyncio.run(make())  # warm-up (first-use caches)
    runs: list[dict[str, float]] = [asyncio.run(make()) for _ in range(repeat)]
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def build(work: Path, n_runs: int) -> tuple[Path, Path, Path, dict[str, Any]]:
    empty = work / "empty.db"
    open_database(empty).close()

    big = work / "runs.db"
    t = time.perf_counter()
    db = open_database(big)
    insert_synthetic_runs(db, n_runs)
    db.close()
    built_big = time.perf_counter() - t

    real = work / "real.db"
    largest = max(SHARED.glob("*.json"), key=lambda p: p.stat().st_size)
    paths = [str(largest)]
    info: dict[str, Any] = {"largest": largest, "built_big_s": built_big}
    try:
        from bench.corpus import make_recording

        rec = make_recording(random.Random(1200), 0, events=1200)
        corpus_file = work / "corpus-1200-events.json"
        corpus_file.write_bytes(orjson.dumps(rec))
        paths.append(str(corpus_file))
        info["corpus"] = corpus_file
    except ImportError:  # the corpus generator is optional
        info["corpus"] = None
    db = open_database(real)
    ingest(db, paths, db_path=str(real))
    info["sources"] = {src: runs_of_source(db, src) for src in paths}
    db.close()
    return empty, big, real, info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, default=None, help="build the databases here and keep them")
    args = parser.parse_args(argv)

    work = args.keep or Path(tempfile.mkdtemp(prefix="app-paint-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        empty, big, real, info = build(work, args.runs)
        base = median_of(args.repeat, lambda: startup(empty))["paint"]
        opens = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            open_database(big).close()
            opens.append(time.perf_counter() - t)
        many = median_of(args.repeat, lambda: startup(big))
        rows: list[tuple[str, float]] = [
            ("empty start-up -> runs screen painted", base),
            (f"{args.runs:,} runs: start-up -> runs screen painted", many["paint"]),
            (f"{args.runs:,} runs: `end` -> last row painted", many["jump_end"]),
            (
                f"{args.runs:,} runs: store.db.connection.open_database alone (quick_check)",
                statistics.median(opens),
            ),
        ]
        for src, got_source in info["sources"].items():
            keys, events, size = got_source["keys"], got_source["events"], got_source["bytes"]
            if not keys:
                continue
            label = f"{Path(src).name} ({size / 1e6:.1f} MB, {events} events)"
            got = median_of(args.repeat, lambda keys=keys: open_run(real, keys[0]))
            rows.append((f"{label}: enter -> answer painted", got["answer"]))
            rows.append((f"{label}: enter -> timeline painted ({int(got['rows'])} rows)", got["timeline"]))
        width = max(len(name) for name, _ in rows)
        print(
            f"built {args.runs:,} synthetic runs in {info['built_big_s']:.1f} s; "
            f"median of {args.repeat} runs after a warm-up; headless {SIZE[0]}x{SIZE[1]}"
        )
        print(f"{'measurement'.ljust(width)}  {'ms':>8}  {'x empty':>8}")
        print(f"{'-' * width}  {'-' * 8}  {'-' * 8}")
        for name, seconds in rows:
            print(f"{name.ljust(width)}  {seconds * 1000:8.1f}  {seconds / base:8.2f}")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
