"""Label-write latency while a what-if replay runs, as a ratio to the idle write.

    python -m bench.write_under_replay [--answers 100000] [--repeats 5] [--db PATH]

The app's reads and writes used to share one database thread, so a label write waited for a running replay
to finish (3.8 ms idle, 834 ms behind a 40,000-answer replay). Reads then moved to read-only reader threads,
and the replay's figures now run in a worker process (`reviewer/service/replay_process.py`), so the replay's
Python loop no longer shares the GIL with the write thread. This measures, through `ReviewService` itself (the path the
app's keys take), a label write idle and then while `replay_pack` runs over the replay benchmark's
database (`bench.replay`, built once and cached under bench/corpus/).

Each repetition times several writes; the figure is the median under the replay over the median idle,
with min and max of the per-repetition medians beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

#: Writes timed per repetition, idle and under the replay.
WRITES = 12
#: Pause between two writes under the replay (spreads them over the replay; not a synchronisation).
GAP_S = 0.05


@dataclass
class WriteFigures:
    answers: int
    idle_ms: list[float]
    busy_ms: list[float]
    replays_overlapped: int

    @property
    def ratios(self) -> list[float]:
        return [b / i for b, i in zip(self.busy_ms, self.idle_ms, strict=True) if i > 0]

    @property
    def ratio(self) -> float:
        return statistics.median(self.busy_ms) / statistics.median(self.idle_ms)


def prepare(answers: int, db_path: Path | None = None) -> tuple[Path, str, list[str]]:
    """The replay benchmark's database (built if missing), its 32-phrase pack ref, finding ids to label."""
    from bench.replay import CORPUS_ROOT, build, ensure_pack
    from store.db.connection import open_database

    path = db_path or CORPUS_ROOT / f"replay-{answers}.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        build(path, answers)
    db = open_database(path)
    ref = ensure_pack(db)
    ids = [
        r[0]
        for r in db.execute("SELECT id FROM findings WHERE kind != 'withheld-answer' ORDER BY id LIMIT 200")
    ]
    db.close()
    return path, ref, ids


async def _one_repetition(service: object, ref: str, ids: list[str], turn: int) -> tuple[float, float, bool]:
    from reviewer.service import ReviewService

    assert isinstance(service, ReviewService)

    async def write(i: int) -> float:
        started = time.perf_counter()
        await service.label_finding(ids[(turn * 2 * WRITES + i) % len(ids)], "tp", "bench-latency")
        return time.perf_counter() - started

    idle: list[float] = []
    for i in range(WRITES):  # paced as the writes under the replay are, so only the replay differs
        idle.append(await write(i))
        await asyncio.sleep(GAP_S)
    replay = asyncio.ensure_future(
        service.replay_pack(ref, holdout_share=0.2, seed="bench", examples=0, progress_every=10_000)
    )
    await asyncio.sleep(GAP_S)  # let the replay start on its reader
    busy: list[float] = []
    for i in range(WRITES):
        busy.append(await write(WRITES + i))
        await asyncio.sleep(GAP_S)
    overlapped = not replay.done()  # every write was taken while the replay was still running
    await replay
    return statistics.median(idle), statistics.median(busy), overlapped


async def measure_async(path: Path, ref: str, ids: list[str], repeats: int) -> WriteFigures:
    from reviewer.service import ReviewService

    service = ReviewService(path)
    try:
        idle: list[float] = []
        busy: list[float] = []
        overlapped = 0
        for turn in range(repeats):
            i, b, o = await _one_repetition(service, ref, ids, turn)
            idle.append(i * 1000)
            busy.append(b * 1000)
            overlapped += o
    finally:
        service.close()
    return WriteFigures(0, idle, busy, overlapped)


def measure(answers: int, repeats: int = 5, db_path: Path | None = None) -> WriteFigures:
    path, ref, ids = prepare(answers, db_path)
    figures = asyncio.run(measure_async(path, ref, ids, repeats))
    figures.answers = answers
    return figures


def describe(f: WriteFigures) -> str:
    return (
        f"label write idle median {statistics.median(f.idle_ms):.2f} ms; under a {f.answers:,}-answer replay "
        f"median {statistics.median(f.busy_ms):.2f} ms (min {min(f.busy_ms):.2f}, max {max(f.busy_ms):.2f}); "
        f"ratio {f.ratio:.2f}x (per repetition min {min(f.ratios):.2f}x, max {max(f.ratios):.2f}x); "
        f"{f.replays_overlapped}/{len(f.busy_ms)} repetitions wrote entirely during the replay"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--db", type=Path, default=None)
    args = parser.parse_args(argv)
    print(describe(measure(args.answers, args.repeats, args.db)), file=sys.stdout)


if __name__ == "__main__":
    main()
