"""executemany beside COPY for the writer's batches on PostgreSQL, by batch size: where COPY starts to pay
(`store.db.postgres.COPY_MIN_ROWS`).

    python -m bench.postgres_copy [--server URL] [--runs 200] [--sizes 1,2,4,8,16,32,128] [--rounds 5]

The rows are real: a generated corpus (bench.corpus, `--runs` runs) extracted as ingest extracts it. A
measurement writes ROWS rows of one table as batches of N rows through the writer's own statement (the
first column of each row made unique, so every batch is new rows), in one transaction as a group commit
is; both ways in each round, in alternating order. Printed: microseconds a batch, median (min-max) over
the rounds, and COPY / executemany.
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

from bench.postgres import DEFAULT_SERVER, fresh_database

#: Rows each measurement writes (as ROWS // N batches of N).
ROWS = 512
TABLES = ("events", "findings", "tool_calls", "runs", "search_text")
_unique = itertools.count()


def corpus_rows(runs: int, tmp: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Each table's rows, as the writer gets them, from a generated corpus of `runs` runs."""
    from bench.corpus import generate_corpus
    from store.db.writer import to_tuples
    from store.reading.decode import decode_recording
    from store.reading.extract import extract

    info = generate_corpus(tmp / "corpus", runs=runs, runs_per_file=10, snapshot_heavy=False, workers=1)
    rows: dict[str, list[tuple[Any, ...]]] = {t: [] for t in TABLES}
    for path in info.paths:
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
    started = time.perf_counter()
    with db.transaction():
        for batch in todo:
            db.conn.executemany(sql, batch)
    return (time.perf_counter() - started) / len(todo)


def main(argv: list[str] | None = None) -> int:
    from store.db import postgres
    from store.db.connection import open_database

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--server", default=os.environ.get("REVIEWER_TEST_POSTGRES") or DEFAULT_SERVER)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--sizes", default="1,2,4,8,16,32,128")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    ways = {"executemany": 10**9, "copy": 1}  # COPY_MIN_ROWS that forces each way
    with tempfile.TemporaryDirectory(prefix="bench-pg-copy-") as tmp_name:
        rows = corpus_rows(args.runs, Path(tmp_name))
        print({t: len(r) for t, r in rows.items()}, f"rows; {ROWS} rows a measurement, {args.rounds} rounds")
        with fresh_database(args.server) as url:
            db = open_database(url)
            recording_id = db.execute(
                "INSERT INTO recordings (sha256, source, container, form, bytes, events, runs, has_snapshot, "
                "extractor_version, ingested_at) VALUES ('bench', 'bench', 'bench', 'bare', 0, 0, 0, 0, 0, '')"
            ).lastrowid
            for table in TABLES:
                for size in sizes:
                    times: dict[str, list[float]] = {w: [] for w in ways}
                    for n in range(args.rounds):
                        for way in list(ways)[:: 1 if n % 2 else -1]:
                            postgres.COPY_MIN_ROWS = ways[way]
                            times[way].append(seconds_a_batch(db, table, rows[table], size, recording_id))
                    many, copy = (statistics.median(times[w]) * 1e6 for w in ways)
                    shown = "   ".join(
                        f"{w} {statistics.median(t) * 1e6:8.0f} us ({min(t) * 1e6:.0f}-{max(t) * 1e6:.0f})"
                        for w, t in times.items()
                    )
                    print(f"{table:>11} x{size:<4} {shown}   copy/executemany = {copy / many:.2f}x")
            db.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
