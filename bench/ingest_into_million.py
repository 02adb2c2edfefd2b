"""Ingest into a store that already holds a million runs, beside the same files into an empty store: what a
team's daily ingest meets once its store has grown (issue 16 measures ingest into empty stores only).

    python -m bench.ingest_into_million [--runs 10000] [--store PATH | postgresql://...] [--repeats 3]

Each repetition times, in turn, on the event-heavy corpus (`corpus_by_runs`, seed 6: none of its files or
runs is in the store, whose corpus has seed 5):
- `orjson.loads` of every file, one core, the collector paused (`bench.ingest.raw_parse`: the reference of
  every ingest ratio);
- the careful peer (`bench.scale.careful_peer`, batch tuned once), into an empty database;
- ours into an empty store;
- ours into a copy of the million-run store (`bench.million`'s replicated store unless `--store` names
  another), copied before the timing and deleted after; the copy's pages are in the page cache, as a
  store in daily use would be, and on disk (a fresh copy's unsynced gigabytes made the first checkpoint's
  sync wait for them).

With `--store postgresql://.../db` (`bench.postgres_million --keep --database db` builds one) the copy is
`CREATE DATABASE ... TEMPLATE db STRATEGY = FILE_COPY`, and "an empty store" is a new database on the same
server; the careful peer stays SQLite's, the issue's reference.

The million-run store holds 1,000,000 runs, their findings, tallies and full-text documents; its events,
tool calls, coverage and evictions are those of its first 100,000 runs (`bench.million.replicated_store`).
PostgreSQL's, built the same way, holds the events of its first 10,000.
Every ingest is checked to store every run of the corpus. Figures: median (min, max) of the repetitions.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from bench.__main__ import corpus_by_runs, measured_code
from bench.ingest import raw_parse
from bench.postgres import database_url, fresh_database
from bench.scale import Spread, careful_peer, tune_batch

#: The store's corpus has seed 5 (`bench.million.SEED`): this one shares none of its runs.
SEED = 6


def ingest_into(
    store: Path | str | None, paths: list[Path], expected_runs: int, *, empty_on: str = ""
) -> float:
    """Seconds our ingest (all cores) takes to write `paths` into a copy of `store` (a file, or a PostgreSQL
    database's URL), or into an empty store (None: an SQLite file; with `empty_on`, a new database on that
    PostgreSQL server)."""
    with _store_copy(store, empty_on) as target:
        return _timed_ingest(target, paths, expected_runs, counted=store is not None)


@contextmanager
def _store_copy(store: Path | str | None, empty_on: str) -> Iterator[str]:
    """Where to ingest: a copy of `store` made before the timing, or an empty store; removed after."""
    if isinstance(store, str):  # PostgreSQL: a copy of the database, file by file, checkpointed (PG 15)
        with fresh_database(
            database_url(store, "postgres"), template=urlsplit(store).path.lstrip("/"), strategy="FILE_COPY"
        ) as url:
            yield url
        return
    if empty_on:
        with fresh_database(empty_on) as url:
            yield url
        return
    with tempfile.TemporaryDirectory(prefix="bench-into-", dir=store.parent if store else None) as tmp:
        db_path = Path(tmp) / "store.db"
        if store is not None:
            shutil.copyfile(store, db_path)
            with db_path.open("rb+") as copy:  # on disk before the timing: else the ingest's first checkpoint
                os.fsync(copy.fileno())  # sync waits for the copy's gigabytes, which no store in use has
        yield str(db_path)


def _timed_ingest(target: str, paths: list[Path], expected_runs: int, *, counted: bool) -> float:
    from store.db.connection import open_database
    from store.db.ingest import ingest

    db = open_database(target)
    before = db.execute("SELECT count(*) FROM runs").fetchone()[0] if counted else 0
    started = time.perf_counter()
    report = ingest(db, paths, db_path=target)
    seconds = time.perf_counter() - started
    after = db.execute("SELECT count(*) FROM runs").fetchone()[0]
    db.close()
    if report.quarantined or after - before != expected_runs:
        raise RuntimeError(
            f"stored {after - before:,} runs of {expected_runs:,} (quarantined: {report.quarantined[:3]})"
        )
    return seconds


def spread(values: list[float], fmt: str) -> str:
    return Spread(values).text(lambda v: format(v, fmt))


def _held(store: Path | str) -> tuple[int, str]:
    """The store's runs and size, its WAL checkpointed into the file an SQLite copy copies."""
    from store.db.connection import open_database

    db = open_database(store)
    if isinstance(store, str):
        size = db.execute("SELECT pg_database_size(current_database())").fetchone()[0]
    else:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = store.stat().st_size
    runs = db.execute("SELECT count(*) FROM runs").fetchone()[0]
    db.close()
    return int(runs), f"{size / 1e9:.1f} GB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=10_000, help="runs of the corpus ingested (10 a file)")
    parser.add_argument(
        "--store",
        default=None,
        help="the million-run store: an SQLite file (default: bench.million's) or a PostgreSQL database's URL",
    )
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    from store.db.connection import postgres_url

    store: Path | str
    if args.store is None:
        from bench.million import build_store, replicated_store

        store = replicated_store(build_store(100_000), 10)
    else:
        store = postgres_url(args.store) or Path(args.store)
    server = database_url(store, "postgres") if isinstance(store, str) else ""
    stored_runs, size = _held(store)
    paths = corpus_by_runs(args.runs, SEED)
    mb = sum(p.stat().st_size for p in paths) / 1e6
    batch = tune_batch(paths)
    rows: dict[str, list[float]] = {"parse": [], "peer": [], "empty": [], "million": []}
    for _ in range(args.repeats):
        rows["parse"].append(raw_parse(paths)[0])
        rows["peer"].append(careful_peer(paths, batch))
        rows["empty"].append(ingest_into(None, paths, args.runs, empty_on=server))
        rows["million"].append(ingest_into(store, paths, args.runs))
        print("  ".join(f"{k} {v[-1]:.2f}s" for k, v in rows.items()), file=sys.stderr, flush=True)
    backend = "PostgreSQL" if server else "SQLite"
    print(
        f"{len(paths):,} files, {mb:.0f} MB, {args.runs:,} event-heavy runs; {backend}, a store of "
        f"{stored_runs:,} runs ({size}); {args.repeats} repetitions; {measured_code()}"
    )
    reps = range(args.repeats)
    for name, key in (
        ("ours, into an empty store", "empty"),
        ("ours, into the million-run store", "million"),
    ):
        seconds = rows[key]
        print(f"  {name:34s} {spread(seconds, '.2f')} s  {spread([mb / s for s in seconds], ',.0f')} MB/s")
        print(f"    x orjson (one core)  {spread([rows['parse'][i] / seconds[i] for i in reps], '.2f')}")
        print(f"    x the careful peer   {spread([rows['peer'][i] / seconds[i] for i in reps], '.2f')}")
    print(
        "  the million-run store's time over the empty one's: "
        + spread([rows["million"][i] / rows["empty"][i] for i in reps], ".2f")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
