"""SQLite beside PostgreSQL, printed as ratios (median, min and max of 3 rounds):

- ingest: the same generated corpus (bench.corpus, `--runs` small runs) into a fresh SQLite file and into a
  fresh PostgreSQL database, seconds end to end (one process each, as `reviewer ingest` runs it), and the
  CPU seconds it took (this process, plus its PostgreSQL backend when the server is on this machine):
  on a machine others load, CPU time says what wall time cannot;
- label writes/s with 8 concurrent reviewers: 8 processes, each appending `--labels` labels on its own
  connection (SQLite: one WAL file; PostgreSQL: one database), wall time from the start signal.

    python -m bench.postgres [--server postgresql://postgres@127.0.0.1:5432/test] [--runs 2000] [--labels 200]
                             [--no-labels]

The backends alternate within each round (SQLite first in odd rounds, PostgreSQL in even ones) and each
ratio is taken within a round, so a load that changes while the benchmark runs moves both sides. The
server defaults to $REVIEWER_TEST_POSTGRES, else the local one; each round uses a database of its own,
dropped after. The runs page and queue at 1,000,000 runs on PostgreSQL: `python -m bench.postgres_million`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from bench.__main__ import measured_code

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SERVER = "postgresql://postgres@127.0.0.1:5432/test"
ROUNDS = 3
BACKENDS = ("sqlite", "postgresql")
REVIEWERS = 8

LABELLER = """
import sys, time
from store import labels
from store.db.connection import open_database
db_target, reviewer, n, start_at = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
db = open_database(db_target, migrate=False)
ids = [r[0] for r in db.execute("SELECT id FROM findings WHERE kind != 'withheld-answer' ORDER BY id LIMIT 500")]
while time.time() < start_at:
    time.sleep(0.001)
for i in range(n):
    labels.label_finding(db, ids[i % len(ids)], "tp" if i % 2 else "fp", reviewer)
print(time.time(), flush=True)
"""


def database_url(server: str, name: str) -> str:
    """The URL of database `name` on the server `server` names."""
    parts = urlsplit(server)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def drop_database(server: str, name: str) -> None:
    import psycopg

    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def fresh_database(
    server: str,
    prefix: str = "reviewer_bench",
    *,
    template: str | None = None,
    strategy: str | None = None,
) -> Iterator[str]:
    """A new database on `server` (its URL): empty, or a copy of the database `template` (which nobody may be
    connected to; `strategy` "FILE_COPY" copies a large one file by file instead of through the WAL);
    dropped when the block ends (the tests' too)."""
    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:16]}"
    copied = f' TEMPLATE "{template}"' if template else ""
    if template and strategy:
        copied += f" STRATEGY = {strategy}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"{copied}')
    try:
        yield database_url(server, name)
    finally:
        drop_database(server, name)


@contextmanager
def fresh_target(backend: str, server: str, tmp: Path) -> Iterator[str]:
    if backend == "sqlite":
        yield str(tmp / f"{uuid.uuid4().hex[:8]}.db")
        return
    with fresh_database(server) as url:
        yield url


def _backend_pid(db: Any) -> int | None:
    """The PostgreSQL backend serving `db` when it runs on this machine (its CPU time is then readable)."""
    from store.db.postgres import is_postgres

    if not is_postgres(db):
        return None
    pid = int(db.execute("SELECT pg_backend_pid()").fetchone()[0])
    comm = Path(f"/proc/{pid}/comm")
    return pid if comm.exists() and comm.read_text().strip() == "postgres" else None


def _cpu_seconds(pid: int | None) -> float:
    """CPU seconds (user + system) of this process, plus those of process `pid`."""
    own = time.process_time()
    if pid is None:
        return own
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return own + (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ingest_seconds(target: str, corpus: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one ingest of `corpus` into `target`."""
    from store.db.connection import open_database
    from store.db.ingest import ingest

    db = open_database(target)
    backend = _backend_pid(db)
    started, cpu = time.perf_counter(), _cpu_seconds(backend)
    report = ingest(db, [corpus], db_path=target, workers=1)
    seconds, cpu = time.perf_counter() - started, _cpu_seconds(backend) - cpu
    db.close()
    assert report.stored > 0 and not report.quarantined, report
    return seconds, cpu


def label_rate(target: str, corpus: Path, per_reviewer: int) -> float:
    """Labels per second, 8 reviewer processes writing at once."""
    from store.db.connection import open_database
    from store.db.ingest import ingest

    db = open_database(target)
    ingest(db, [corpus], db_path=target, workers=1)
    db.close()
    start_at = time.time() + 3.0  # every process connected and waiting
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", LABELLER, target, f"bench-{n}", str(per_reviewer), str(start_at)],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for n in range(REVIEWERS)
    ]
    ends = []
    for p in procs:
        out, _ = p.communicate(timeout=600)
        assert p.returncode == 0
        ends.append(float(out.strip().splitlines()[-1]))
    return REVIEWERS * per_reviewer / (max(ends) - start_at)


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):9.2f} ({min(values):.2f}-{max(values):.2f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--server", default=os.environ.get("REVIEWER_TEST_POSTGRES") or DEFAULT_SERVER)
    parser.add_argument("--runs", type=int, default=2000, help="runs in the generated corpus")
    parser.add_argument("--labels", type=int, default=200, help="labels each of the 8 reviewers writes")
    parser.add_argument("--no-labels", action="store_true", help="time ingest alone")
    args = parser.parse_args(argv)
    from bench.corpus import generate_corpus

    with tempfile.TemporaryDirectory(prefix="bench-pg-") as tmp_name:
        tmp = Path(tmp_name)
        corpus = tmp / "corpus"
        info = generate_corpus(corpus, runs=args.runs, runs_per_file=10, snapshot_heavy=False, workers=1)
        print(f"corpus: {args.runs} runs, {info.bytes / 1e6:.1f} MB; {ROUNDS} rounds each (median, min-max)")
        names = {"ingest_s": "s", "ingest_cpu_s": "s"} | (
            {} if args.no_labels else {"labels_per_s": "labels/s"}
        )
        figures: dict[str, dict[str, list[float]]] = {b: {name: [] for name in names} for b in BACKENDS}
        for n in range(ROUNDS):
            for backend in BACKENDS if n % 2 == 0 else BACKENDS[::-1]:
                with fresh_target(backend, args.server, tmp) as target:
                    wall, cpu = ingest_seconds(target, corpus)
                figures[backend]["ingest_s"].append(wall)
                figures[backend]["ingest_cpu_s"].append(cpu)
                if not args.no_labels:
                    with fresh_target(backend, args.server, tmp) as target:
                        figures[backend]["labels_per_s"].append(label_rate(target, corpus, args.labels))
        for name, unit in names.items():
            lite, pg = figures["sqlite"][name], figures["postgresql"][name]
            ratios = [p / q for p, q in zip(pg, lite, strict=True)]
            print(
                f"{name:>13}: sqlite {spread(lite)} {unit}   postgresql {spread(pg)} {unit}   "
                f"postgresql/sqlite = {statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f}, "
                "within each round)"
            )
        print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}; {measured_code()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
