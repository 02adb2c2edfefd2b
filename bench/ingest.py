"""Ingest benchmark: end-to-end MB/s and events/s, beside the raw limits measured in the same run.

    python -m bench.ingest [--mb 200] [--workers N]

References, each measured here on the same bytes:
- raw parse: `orjson.loads` of every file, one core (the JSON parse limit);
- raw insert: `executemany` of the same extracted rows into bare tables, one transaction (the SQLite limit);
- naive pipeline: what a user would write instead: each recording's `events` inserted with sqlite-utils
  `insert_all` (one row per event, payload as JSON).
Absolute times on these machines are noisy; read the ratios.
"""

from __future__ import annotations

import argparse
import gc
import os
import sqlite3
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

from store.db.writer import ROW_TABLES

CORPUS_ROOT = Path(__file__).resolve().parent / "corpus"
#: The tables an ingest fills with rows (the extracted rows plus the full-text documents).
TABLES = (*ROW_TABLES, "search_docs")


@dataclass
class Figure:
    name: str
    seconds: float
    mb: float
    events: int
    reference: str = ""
    ratio: float | None = None

    @property
    def mb_s(self) -> float:
        return self.mb / self.seconds if self.seconds else 0.0

    @property
    def events_s(self) -> float:
        return self.events / self.seconds if self.seconds else 0.0


def corpus(mb: int, seed: int = 7) -> tuple[list[Path], int]:
    """The generated corpus of at least `mb` MB, cached under bench/corpus/ (deterministic)."""
    from bench.corpus import generate_corpus

    folder = CORPUS_ROOT / f"ingest-{mb}mb-s{seed}"
    marker = folder / ".complete"
    if not marker.exists():
        if folder.exists():
            for p in folder.rglob("*.json"):
                p.unlink()
        folder.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        info = generate_corpus(folder, target_bytes=mb * 1_000_000, seed=seed)
        marker.write_text(f"{info.files} files, {info.bytes} bytes, {time.perf_counter() - started:.1f}s\n")
    paths = sorted(folder.rglob("*.json"))
    return paths, sum(p.stat().st_size for p in paths)


def raw_parse(paths: list[Path]) -> tuple[float, int]:
    """orjson.loads of every file on one core, GC paused as a careful user would; returns (s, events)."""
    events = 0
    total = 0.0
    for p in paths:
        data = p.read_bytes()
        gc.disable()
        t = time.perf_counter()
        doc = orjson.loads(data)
        total += time.perf_counter() - t
        gc.enable()
        rec = doc.get("recording", doc)
        events += len(rec.get("events", []))
        del doc
    return total, events


def our_ingest(paths: list[Path], workers: int | None) -> tuple[float, int, Path, int]:
    """The product's ingest into a fresh database; returns (s, events, db path, rows written)."""
    from store.db.connection import open_database
    from store.db.ingest import ingest

    tmp = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    db_path = tmp / "bench.db"
    db = open_database(db_path)
    t = time.perf_counter()
    report = ingest(db, paths, db_path=str(db_path), workers=workers)
    seconds = time.perf_counter() - t
    assert not report.quarantined, report.quarantined[:3]
    rows = sum(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in TABLES)
    db.close()
    return seconds, report.events, db_path, rows


def raw_insert(db_path: Path) -> tuple[float, int]:
    """executemany of the very rows our ingest wrote, into bare tables in one transaction: rows/s limit."""
    src = sqlite3.connect(db_path)
    tables = TABLES
    data = {t: src.execute(f"SELECT * FROM {t}").fetchall() for t in tables}
    cols = {t: [d[1] for d in src.execute(f"PRAGMA table_info({t})")] for t in tables}
    src.close()
    with tempfile.TemporaryDirectory() as tmp:
        conn = sqlite3.connect(Path(tmp) / "raw.db", isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        for t in tables:
            conn.execute(f"CREATE TABLE {t} ({', '.join(cols[t])})")
        rows = sum(len(v) for v in data.values())
        t0 = time.perf_counter()
        conn.execute("BEGIN")
        for t in tables:
            conn.executemany(f"INSERT INTO {t} VALUES ({', '.join('?' for _ in cols[t])})", data[t])
        conn.execute("COMMIT")
        seconds = time.perf_counter() - t0
        conn.close()
    return seconds, rows


def naive_pipeline(paths: list[Path]) -> tuple[float, int]:
    """What a user would write instead: parse each file, insert its events with sqlite-utils insert_all."""
    import sqlite_utils

    with tempfile.TemporaryDirectory() as tmp:
        db = sqlite_utils.Database(Path(tmp) / "naive.db")
        t = time.perf_counter()
        events = 0
        for p in paths:
            doc = orjson.loads(p.read_bytes())
            rec = doc.get("recording", doc)
            rows = [
                {
                    "file": p.name,
                    "seq": i,
                    "type": e.get("type"),
                    "run_id": (e.get("meta") or {}).get("runId"),
                    "payload": orjson.dumps(e.get("payload")).decode(),
                }
                for i, e in enumerate(rec.get("events", []))
            ]
            db["events"].insert_all(rows)
            events += len(rows)
        seconds = time.perf_counter() - t
        db.close()
    return seconds, events


def run(mb: int, workers: int | None) -> list[Figure]:
    paths, total = corpus(mb)
    size_mb = total / 1e6
    parse_s, parse_events = raw_parse(paths)
    ours_s, ours_events, db_path, rows = our_ingest(paths, workers)
    insert_s, insert_rows = raw_insert(db_path)
    naive_s, naive_events = naive_pipeline(paths)
    db_bytes = sum(f.stat().st_size for f in db_path.parent.iterdir())
    parse = Figure("raw parse (orjson.loads, 1 core)", parse_s, size_mb, parse_events)
    ours = Figure("footprint-reviewer ingest", ours_s, size_mb, ours_events)
    ours.reference, ours.ratio = "raw parse", ours.mb_s / parse.mb_s
    naive = Figure("naive sqlite-utils pipeline", naive_s, size_mb, naive_events)
    naive.reference, naive.ratio = "ours", naive.mb_s / ours.mb_s
    print(
        f"corpus: {len(paths)} files, {size_mb:.1f} MB, {ours_events:,} events; workers={workers or 'auto'}; "
        f"cpus={os.cpu_count()}"
    )
    print(f"{'figure':40} {'s':>8} {'MB/s':>9} {'events/s':>11} {'ratio':>22}")
    for f in (parse, ours, naive):
        ratio = f"{f.ratio:.2f}x {f.reference}" if f.ratio is not None else ""
        print(f"{f.name:40} {f.seconds:8.2f} {f.mb_s:9.1f} {f.events_s:11,.0f} {ratio:>22}")
    ours_rows_s = rows / ours_s
    insert_rows_s = insert_rows / insert_s
    print(
        f"{'rows written by ingest':40} {ours_s:8.2f} {'':9} {ours_rows_s:11,.0f} rows/s "
        f"{ours_rows_s / insert_rows_s:.2f}x raw executemany ({insert_rows_s:,.0f} rows/s)"
    )
    print(f"{'database size':40} {db_bytes / 1e6:8.1f} MB  = {db_bytes / total:.3f} bytes per input byte")
    print(f"{'speed-up over naive pipeline':40} {naive_s / ours_s:8.2f}x (extracting far more)")
    target = 50.0
    print(
        f"target: >= {target:.0f} MB/s end to end -> {'MET' if ours.mb_s >= target else 'NOT MET'} ({ours.mb_s:.1f} MB/s)"
    )
    return [parse, ours, naive]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=int, default=200, help="corpus size in MB (default 200)")
    parser.add_argument("--workers", type=int, default=None, help="parser processes (default: one per core)")
    args = parser.parse_args()
    run(args.mb, args.workers)


if __name__ == "__main__":
    main()
