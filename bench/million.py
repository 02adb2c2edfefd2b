"""The 1,000,000-run store the screen-query rows of `python -m bench` are measured on, built once and cached.

    python -m bench.million [--runs 1000000] [--chunk-files 5000]

The runs are the bench corpus writer's (`bench.corpus`, the same files `corpus_by_runs` writes: 40-60 events
a run, ten runs a file) ingested by the real ingest. The 40 GB of JSON is never kept whole: files are written
a chunk at a time into a staging folder, ingested, then deleted, so the disk holds one chunk plus the database.
An interrupted build resumes: a finished chunk is noted in `<db>.chunks`, and a re-ingested file is
recognised by its hash.
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
import sys
import time
from pathlib import Path

from bench.corpus import FILES_PER_FOLDER, _write_file
from bench.ingest import CORPUS_ROOT

RUNS_PER_FILE = 10
SEED = 5


def store_path(runs: int, seed: int = SEED) -> Path:
    return CORPUS_ROOT / f"store-{runs}-s{seed}.db"


def build_store(
    runs: int = 1_000_000, *, seed: int = SEED, chunk_files: int = 5_000, gen_workers: int = 1
) -> Path:
    """The cached database of `runs` generated runs (built now if it is not complete)."""
    from store.db.connection import open_database
    from store.db.ingest import ingest

    db_path = store_path(runs, seed)
    marker = db_path.with_name(db_path.name + ".complete")
    if marker.exists():
        return db_path
    chunks_done = db_path.with_name(db_path.name + ".chunks")
    done = set(chunks_done.read_text().split()) if chunks_done.exists() else set()
    staging = CORPUS_ROOT / f"staging-{runs}-s{seed}"
    n_files = -(-runs // RUNS_PER_FILE)
    db = open_database(db_path)
    started = time.perf_counter()
    try:
        for first in range(0, n_files, chunk_files):
            if str(first) in done:
                continue
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir(parents=True)
            jobs = [
                (
                    staging,
                    seed,
                    i,
                    min(RUNS_PER_FILE, runs - i * RUNS_PER_FILE),
                    RUNS_PER_FILE,
                    True,
                    False,
                    0.3,
                )
                for i in range(first, min(first + chunk_files, n_files))
            ]
            for i in {j[2] // FILES_PER_FOLDER for j in jobs}:
                (staging / f"part-{i:04d}").mkdir(exist_ok=True)
            if gen_workers > 1:
                with multiprocessing.get_context("fork").Pool(gen_workers) as pool:
                    pool.map(_write_file, jobs, chunksize=64)
            else:
                for job in jobs:
                    _write_file(job)
            report = ingest(db, [staging], db_path=str(db_path))
            if report.quarantined:
                raise RuntimeError(f"generated files were quarantined: {report.quarantined[:3]}")
            with chunks_done.open("a") as fh:
                fh.write(f"{first}\n")
            total = db.execute("SELECT max(rowid) FROM runs").fetchone()[0]
            print(
                f"chunk {first:,}: {report.runs:,} runs in {report.seconds:.0f} s; about {total:,} rows; "
                f"{time.perf_counter() - started:.0f} s so far",
                flush=True,
            )
        shutil.rmtree(staging, ignore_errors=True)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    marker.write_text(f"{runs} runs, seed {seed}\n")
    return db_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.million", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1_000_000)
    parser.add_argument("--chunk-files", type=int, default=5_000)
    parser.add_argument("--gen-workers", type=int, default=1)
    parser.add_argument("--replicate", type=int, default=0, help="repeat the built store this many times")
    args = parser.parse_args(argv)
    built = build_store(args.runs, chunk_files=args.chunk_files, gen_workers=args.gen_workers)
    print(replicated_store(built, args.replicate) if args.replicate > 1 else built)
    return 0


def replicated_store(source: Path, copies: int) -> Path:
    """`source` (a store the real ingest built from the corpus writer's files) with its runs, findings and
    full-text documents repeated `copies` times under new keys and later start times (copy c adds `~c` to
    every key and id). Tool calls, events, coverage and evictions are not repeated: no screen counts or
    filters on them. A stand-in for the full build when the machine is too busy to ingest 40 GB in time."""
    from store.db.connection import open_database
    from store.db.schema import COLUMNS, SEARCH_DOC_BITS

    target = source.with_name(source.stem + f"-x{copies}.db")
    marker = target.with_name(target.name + ".complete")
    if marker.exists():
        return target
    for suffix in ("", "-wal", "-shm"):
        Path(str(target) + suffix).unlink(missing_ok=True)
    src = open_database(source)
    src.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    src.execute(f"VACUUM INTO '{target}'")
    src.close()
    db = open_database(target)
    lo, hi = db.execute("SELECT min(started_ms), max(started_ms) FROM runs").fetchone()
    span = int(hi - lo) + 1_000
    renamed = {"key": "key || ?2", "run_id": "run_id || ?2", "started_ms": "started_ms + ?1"}
    finding_renamed = {
        "id": "id || ?2",
        "run_key": "run_key || ?2",
        "run_id": "run_id || ?2",
        "run_started_ms": "run_started_ms + ?1",
    }
    run_cols, finding_cols = COLUMNS["runs"], COLUMNS["findings"]
    for c in range(1, copies):
        tag, shift = f"~{c}", c * span
        started = time.perf_counter()
        db.execute("BEGIN IMMEDIATE")
        db.execute(
            f"INSERT INTO runs ({', '.join(run_cols)}) SELECT "
            + ", ".join(renamed.get(col, col) for col in run_cols)
            + " FROM runs WHERE instr(key, '~') = 0",
            [shift, tag],
        )
        db.execute(
            f"INSERT INTO findings ({', '.join(finding_cols)}) SELECT "
            + ", ".join(finding_renamed.get(col, col) for col in finding_cols)
            + " FROM findings WHERE instr(id, '~') = 0",
            [shift, tag],
        )
        # document ids carry their run's rowid (schema m008): the copy's ids follow its runs' rowids
        db.execute(
            "CREATE TEMP TABLE copy_ids AS SELECT d.id AS old, (n.rowid << ?) + (d.id & ?) AS new, n.key AS key "
            "FROM search_docs d JOIN runs n ON n.key = d.run_key || ? WHERE instr(d.run_key, '~') = 0",
            [SEARCH_DOC_BITS, (1 << SEARCH_DOC_BITS) - 1, tag],
        )
        db.execute(
            "INSERT INTO search_docs (id, run_key, kind, ref) SELECT c.new, c.key, d.kind, d.ref "
            "FROM copy_ids c JOIN search_docs d ON d.id = c.old"
        )
        db.execute(
            "INSERT INTO search_text (id, text) SELECT c.new, t.text FROM copy_ids c JOIN search_text t ON t.id = c.old"
        )
        db.execute(
            "INSERT INTO search (rowid, text) SELECT c.new, t.text FROM copy_ids c JOIN search_text t ON t.id = c.new"
        )
        db.execute("DROP TABLE copy_ids")
        db.execute("COMMIT")
        print(f"copy {c}: {time.perf_counter() - started:.0f} s", flush=True)
    db.execute("INSERT INTO search (search) VALUES ('optimize')")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    marker.write_text(f"{source.name} x {copies}\n")
    return target


if __name__ == "__main__":
    sys.exit(main())
