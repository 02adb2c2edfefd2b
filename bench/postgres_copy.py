"""executemany beside COPY for the writer's batches on PostgreSQL: where COPY starts to pay
(`store.db.postgres.COPY_MIN_ROWS`).

    python -m bench.postgres_copy [--server URL] [--runs 200] [--sizes 1,2,4,8,16,32,128] [--rounds 5]
    python -m bench.postgres_copy --ingest [--thresholds 4,8,16,32,never] [--runs 1000] [--rounds 4]

The rows are real: a generated corpus (bench.corpus, `--runs` runs, ten a file) extracted as ingest
extracts it. By batch size (the default): a measurement writes ROWS rows of one table as batches of N rows
through the writer's own statement (the first column of each row made unique, so every batch is new
rows), in one transaction as a group commit is (its commit not timed); both ways in each round, in alternating order; printed:
microseconds a batch, median (min-max) over the rounds, and COPY / executemany. With `--ingest`: the whole
corpus ingested into a fresh database at each COPY_MIN_ROWS (`never`: executemany alone), the thresholds
in alternating order each round; printed: wall seconds and CPU seconds (this process plus its PostgreSQL
backend, when the server runs here), median (min-max). On a shared machine the CPU figure is the steadier.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.postgres import DEFAULT_SERVER, fresh_database, ingest_seconds, spread

#: Rows each measurement writes (as ROWS // N batches of N).
ROWS = 512
TABLES = ("events", "findings", "tool_calls", "runs", "search_text")
_unique = itertools.count()


def make_corpus(runs: int, tmp: Path) -> list[Path]:
    from bench.corpus import generate_corpus

    return generate_corpus(tmp / "corpus", runs=runs, runs_per_file=10, snapshot_heavy=False, workers=1).paths


def corpus_rows(paths: list[Path]) -> dict[str, list[tuple[Any, ...]]]:
    """Each table's rows, as the writer gets them, from the recordings at `paths`."""
    from store.db.writer import to_tuples
    from store.reading.decode import decode_recording
    from store.reading.extract import extract

    rows: dict[str, list[tuple[Any, ...]]] = {t: [] for t in TABLES}
    for path in paths:
        data = path.read_bytes()
        x = extract(
            decode_recording(data, str(path)),
            sha256=path.name,
            origin=str(path),
            container="file",
            size=len(data),
        )
        for table, table_rows in to_tuples(x).items():
            if table in rows:
                rows[table] += table_rows
        rows["search_text"] += [(0, d["text"]) for d in x.search]
    return rows


def statement(table: str) -> str:
    """The writer's statement for `table` (`store.db.writer.insert_rows`)."""
    from store.db.schema import COLUMNS

    if table == "search_text":
        return "INSERT INTO search_text (id, text) VALUES (?, ?)"
    cols = COLUMNS[table]
    return f"INSERT OR REPLACE INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})"


def batches(rows: list[tuple[Any, ...]], size: int, recording_id: int, table: str) -> Iterator[list[Any]]:
    """ROWS // size batches of `size` rows whose first column (a key's first part) is new."""
    from store.db.schema import COLUMNS

    at = COLUMNS["runs"].index("recording_id") if table == "runs" else -1
    cycle = itertools.cycle(rows)
    for _ in range(max(1, ROWS // size)):
        batch = []
        for row in itertools.islice(cycle, size):
            n = next(_unique)
            first = row[0] + n if isinstance(row[0], int) else f"{row[0]}~{n}"
            cells = [first, *row[1:]]
            if at >= 0:
                cells[at] = recording_id
            batch.append(cells)
        yield batch


def seconds_a_batch(db: Any, table: str, rows: list[tuple[Any, ...]], size: int, recording_id: int) -> float:
    todo = list(batches(rows, size, recording_id, table))
    sql = statement(table)
    with db.transaction():  # the commit (a WAL flush, the same either way) is left out
        started = time.perf_counter()
        for batch in todo:
            db.conn.executemany(sql, batch)
        seconds = time.perf_counter() - started
    return seconds / len(todo)


def by_batch_size(server: str, rows: dict[str, list[tuple[Any, ...]]], sizes: list[int], rounds: int) -> None:
    from store.db import postgres
    from store.db.connection import open_database

    ways = {"executemany": 10**9, "copy": 1}  # COPY_MIN_ROWS that forces each way
    with fresh_database(server) as url:
        db = open_database(url)
        recording_id = (
            db.execute(
                "INSERT INTO recordings (sha256, source, container, form, bytes, events, runs, has_snapshot, "
                "extractor_version, ingested_at) VALUES ('bench', 'bench', 'bench', 'bare', 0, 0, 0, 0, 0, '')"
            ).lastrowid
            or 0
        )
        for table in TABLES:
            for size in sizes:
                times: dict[str, list[float]] = {w: [] for w in ways}
                for n in range(rounds):
                    for way in list(ways)[:: 1 if n % 2 else -1]:
                        postgres.COPY_MIN_ROWS = ways[way]
                        times[way].append(seconds_a_batch(db, table, rows[table], size, recording_id) * 1e6)
                many, copy = (statistics.median(times[w]) for w in ways)
                shown = "   ".join(f"{w} {spread(t)} us" for w, t in times.items())
                print(f"{table:>11} x{size:<4} {shown}   copy/executemany = {copy / many:.2f}x")
        db.close()


def by_threshold(server: str, corpus: Path, thresholds: list[str], rounds: int) -> None:
    from store.db import postgres

    figures: dict[str, tuple[list[float], list[float]]] = {t: ([], []) for t in thresholds}
    for n in range(rounds):
        for threshold in thresholds if n % 2 == 0 else thresholds[::-1]:
            postgres.COPY_MIN_ROWS = 10**9 if threshold == "never" else int(threshold)
            with fresh_database(server) as url:
                wall, cpu = ingest_seconds(url, corpus)
            figures[threshold][0].append(wall)
            figures[threshold][1].append(cpu)
    for threshold, (walls, cpus) in figures.items():
        print(f"COPY_MIN_ROWS {threshold:>5}: wall {spread(walls)} s   cpu {spread(cpus)} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--server", default=os.environ.get("REVIEWER_TEST_POSTGRES") or DEFAULT_SERVER)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--sizes", default="1,2,4,8,16,32,128")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ingest", action="store_true", help="time whole ingests at each threshold")
    parser.add_argument("--thresholds", default="4,8,16,32,never")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-pg-copy-") as tmp_name:
        paths = make_corpus(args.runs, Path(tmp_name))
        print(f"corpus: {args.runs} runs in {len(paths)} files; {args.rounds} rounds (median, min-max)")
        if args.ingest:
            by_threshold(args.server, Path(tmp_name) / "corpus", args.thresholds.split(","), args.rounds)
        else:
            rows = corpus_rows(paths)
            print({t: len(r) for t, r in rows.items()}, f"rows; {ROWS} rows a measurement")
            by_batch_size(args.server, rows, [int(s) for s in args.sizes.split(",")], args.rounds)
        print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
