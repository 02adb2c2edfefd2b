"""The runs screen's and the queue's queries at 1,000,000 runs on PostgreSQL (issue #17 point 6; target: each
under 50 ms), timed through the store's own query functions (the ones `ReviewService` calls).

    python -m bench.postgres_million [--server postgresql://postgres@127.0.0.1:5432/postgres]
                                     [--base-runs 10000] [--copies 100] [--keep]

The store is built as `bench.million.replicated_store` builds the SQLite one: a base corpus (bench.corpus,
`--base-runs` runs of 40-60 events, ten a file) ingested through the real ingest into a fresh database of its
own, then its runs, findings and full-text documents repeated `--copies` times in SQL under new keys (copy c
adds `~c` to every key and id and shifts start times past the base's span; a document's id carries its new
run's rowid, as schema m011 wants; `search_runs` is filled by its triggers, `run_kinds` refilled from the
findings after). Tool calls, events, coverage and evictions are not repeated: no screen
counts or filters on them. During the copy the tally triggers are disabled and the secondary indexes dropped;
afterwards the indexes are recreated from their own definitions and the tallies recounted from the rows
(`store.tallies.rebuild_tallies`, as the migrations do), checked against count(*), then VACUUM ANALYZE.
Each query: one warm-up, then the median, min and max of `--repeats` (at least 5).
The database is dropped at the end unless `--keep` (or `--reuse`: a store timed again is kept).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.postgres import database_url, drop_database
from bench.scale import BUDGET_S, label_share, ms, pick_words, render, repeat, screen_cases, shown

DEFAULT_SERVER = "postgresql://postgres@127.0.0.1:5432/postgres"
DATABASE = "bench_million"
#: The tables the copy writes, whose secondary indexes are dropped during it and rebuilt after.
COPIED = ("runs", "findings", "search_docs", "search_text", "search_runs")


def recreate_database(server: str, name: str) -> str:
    import psycopg

    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    return database_url(server, name)


def ingest_base(url: str, base_runs: int) -> float:
    from bench.corpus import generate_corpus
    from store.db.connection import open_database
    from store.db.ingest import ingest

    with tempfile.TemporaryDirectory(prefix="bench-pgm-") as tmp:
        corpus = Path(tmp) / "corpus"
        started = time.perf_counter()
        generate_corpus(corpus, runs=base_runs, runs_per_file=10, snapshot_heavy=False, seed=5, workers=2)
        print(f"corpus of {base_runs:,} runs written in {time.perf_counter() - started:.0f} s", flush=True)
        db = open_database(url)
        started = time.perf_counter()
        report = ingest(db, [corpus], db_path=url, workers=1)
        seconds = time.perf_counter() - started
        db.close()
    if report.quarantined:
        raise RuntimeError(f"generated files were quarantined: {report.quarantined[:3]}")
    print(f"ingested {report.runs:,} runs in {seconds:.0f} s", flush=True)
    return seconds


def words(conn: Any) -> dict[str, str]:
    """`bench.scale.pick_words` of the runs a word is in (`ts_stat` of the base's rows of `search_runs`, schema
    m018), times the copies (a copy's documents are the base's text), about the bound in runs between a
    PostgreSQL page's two reads."""
    from store.search import PG_RARE_RUNS

    stat = "ts_stat('SELECT tokens FROM search_runs WHERE strpos(key, ''~'') = 0')"
    base, total = conn.execute(
        "SELECT count(*) FILTER (WHERE strpos(key, '~') = 0), count(*) FROM search_runs"
    ).fetchone()
    copies = max(1, round(total / max(1, base)))
    counts = [  # not the filters' lexemes beside the tokens (schema m022), which start with a space
        (str(w), int(n) * copies)
        for w, n in conn.execute(f"SELECT word, ndoc FROM {stat} WHERE left(word, 1) <> ' '")
    ]
    return pick_words(counts, PG_RARE_RUNS)


def replicate(url: str, copies: int) -> float:
    """Repeat the base's runs, findings and documents `copies` times in all (see the module docstring)."""
    import psycopg

    from store.db.schema import COLUMNS, SEARCH_DOC_BITS
    from store.db.schema_pg import RUN_KINDS_ROWS

    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        bounds = conn.execute("SELECT min(started_ms), max(started_ms) FROM runs").fetchone()
        assert bounds is not None
        span = int(bounds[1] - bounds[0]) + 1_000
        indexes = conn.execute(
            "SELECT i.indexname, i.indexdef FROM pg_indexes i WHERE i.schemaname = current_schema() "
            "AND i.tablename = ANY(%s) AND NOT EXISTS (SELECT 1 FROM pg_constraint c "
            "WHERE c.conname = i.indexname)",
            [list(COPIED)],
        ).fetchall()
        with conn.transaction():
            for table in ("runs", "findings"):
                conn.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
            for name, _ in indexes:
                conn.execute(f'DROP INDEX "{name}"')
            tag = "'~' || c"
            copies_sql = f"generate_series(1, {int(copies) - 1}) AS c"
            renamed = {
                "key": f"key || {tag}",
                "run_id": f"run_id || {tag}",
                "started_ms": f"started_ms + c::bigint * {span}",  # int4 c times a span overflows past ~20 copies
            }
            run_cols = COLUMNS["runs"]
            conn.execute(
                f"INSERT INTO runs ({', '.join(run_cols)}) SELECT "
                + ", ".join(renamed.get(col, col) for col in run_cols)
                + f" FROM runs CROSS JOIN {copies_sql} WHERE strpos(key, '~') = 0"
            )
            print(f"runs copied: {time.perf_counter() - started:.0f} s", flush=True)
            f_renamed = {
                "id": f"id || {tag}",
                "run_key": f"run_key || {tag}",
                "run_id": f"run_id || {tag}",
                "run_started_ms": f"run_started_ms + c::bigint * {span}",
            }
            f_cols = COLUMNS["findings"]
            conn.execute(
                f"INSERT INTO findings ({', '.join(f_cols)}) SELECT "
                + ", ".join(f_renamed.get(col, col) for col in f_cols)
                + f" FROM findings CROSS JOIN {copies_sql} WHERE strpos(id, '~') = 0"
            )
            print(f"findings copied: {time.perf_counter() - started:.0f} s", flush=True)
            mask = (1 << SEARCH_DOC_BITS) - 1
            conn.execute(
                "CREATE TEMP TABLE copy_ids ON COMMIT DROP AS SELECT d.id AS old, "
                f"(n.rowid << {SEARCH_DOC_BITS}) + (d.id & {mask}) AS new, n.key AS key "
                f"FROM search_docs d CROSS JOIN {copies_sql} JOIN runs n ON n.key = d.run_key || {tag} "
                "WHERE strpos(d.run_key, '~') = 0"
            )
            # the runs' and findings' indexes first: `search_text`'s triggers read each copied run's findings
            # for its facets (schema m022), which without the findings' run index is a scan of every finding
            # per run (the documents' copy ran for over 25 minutes before it was stopped); the documents'
            # own indexes after them (a GIN index kept row by row during the copy is far slower to fill)
            first = [(n, d) for n, d in indexes if re.search(r" ON (\w+\.)?(runs|findings) ", d)]
            for name, definition in first:
                conn.execute(definition)
                print(f"index {name} rebuilt: {time.perf_counter() - started:.0f} s", flush=True)
            conn.execute(
                "INSERT INTO search_docs (id, run_key, kind, ref) SELECT c.new, c.key, d.kind, d.ref "
                "FROM copy_ids c JOIN search_docs d ON d.id = c.old"
            )
            conn.execute(
                "INSERT INTO search_text (id, text) SELECT c.new, t.text FROM copy_ids c "
                "JOIN search_text t ON t.id = c.old"
            )
            print(f"search documents copied: {time.perf_counter() - started:.0f} s", flush=True)
            for name, definition in indexes:
                if (name, definition) not in first:
                    conn.execute(definition)
                    print(f"index {name} rebuilt: {time.perf_counter() - started:.0f} s", flush=True)
            for table in ("runs", "findings"):
                conn.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")
            # the copied findings' (kind, run) pairs, which run_kinds' triggers (disabled with the tallies') missed
            conn.execute("TRUNCATE run_kinds")
            conn.execute(
                f"INSERT INTO run_kinds (kind, key, started_ms) {RUN_KINDS_ROWS.format(rows='findings')}"
            )
    finish(url)
    seconds = time.perf_counter() - started
    print(
        f"replicated x{copies}, indexes rebuilt, tallies recounted, VACUUM ANALYZE: {seconds:.0f} s",
        flush=True,
    )
    return seconds


def finish(url: str) -> None:
    """Recount the tallies from the rows (as the migrations do), check them against count(*), check that
    `search_runs` and `run_kinds` hold a row per run (and kind) with the run's sort keys, VACUUM ANALYZE."""
    import psycopg

    from store.db.connection import open_database
    from store.db.schema import SEARCH_DOC_BITS
    from store.tallies import rebuild_tallies

    started = time.perf_counter()
    db = open_database(url, migrate=False)
    with db.transaction():  # type: ignore[attr-defined]
        rebuild_tallies(db)
    checks = {
        "runs": "SELECT count(*) FROM runs",
        "findings": "SELECT count(*) FROM findings",
        "has_findings": "SELECT count(*) FROM runs WHERE findings > 0",
    }
    for facet, sql in checks.items():
        tallied = db.execute("SELECT n FROM tallies WHERE facet = ? AND value = ''", [facet]).fetchone()
        counted = db.execute(sql).fetchone()[0]
        if tallied is None or int(tallied[0]) != int(counted):
            raise RuntimeError(f"tally {facet} {tallied} != {counted}")
    kept = {  # the tables the screens read instead of scanning findings or documents (schema m018, m019)
        "search_runs": (
            "SELECT count(*) FROM search_runs w JOIN runs r ON r.rowid = w.run AND r.key = w.key "
            "AND r.started_ms IS NOT DISTINCT FROM w.started_ms",
            f"SELECT count(DISTINCT id >> {SEARCH_DOC_BITS}) FROM search_text",
        ),
        "run_kinds": (
            "SELECT count(*) FROM run_kinds k JOIN runs r ON r.key = k.key "
            "AND r.started_ms IS NOT DISTINCT FROM k.started_ms",
            "SELECT count(*) FROM (SELECT DISTINCT kind, run_key FROM findings WHERE kind IS NOT NULL) p",
        ),
    }
    for table, (rows, expected) in kept.items():
        got, want = (int(db.execute(sql).fetchone()[0]) for sql in (rows, expected))
        if got != want:
            raise RuntimeError(f"{table}: {got} rows agreeing with runs, {want} expected")
    db.close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
    print(
        f"tallies recounted and checked, search_runs and run_kinds checked, VACUUM ANALYZE: {time.perf_counter() - started:.0f} s",
        flush=True,
    )


def screen_rows(
    url: str, words: dict[str, str], repeats: int, only: list[str] | None = None
) -> list[list[str]]:
    from store import runs
    from store.db.connection import open_database

    db = open_database(url)
    label_share(db, 1_000)
    n_runs = runs.count_runs(db)
    rows = []
    for name, fn in screen_cases(db, words):
        if only and not any(part in name for part in only):
            continue
        spread = repeat(fn, max(repeats, 5))
        met = "yes" if spread.median < BUDGET_S else "NO"
        rows.append(
            [
                "postgresql",
                f"{name} ({n_runs:,} runs{shown(spread.last)})",
                spread.text(ms),
                "50 ms",
                f"{spread.median / BUDGET_S:.2f}x of budget",
                "< 50 ms",
                met,
            ]
        )
        print(rows[-1][1], rows[-1][2], met, file=sys.stderr, flush=True)
    db.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--server", default=os.environ.get("REVIEWER_BENCH_POSTGRES") or DEFAULT_SERVER)
    parser.add_argument(
        "--database", default=DATABASE, help="the database built (dropped first if it exists)"
    )
    parser.add_argument("--base-runs", type=int, default=10_000)
    parser.add_argument("--copies", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="an already replicated --database: recount its tallies, VACUUM ANALYZE and time it (kept)",
    )
    parser.add_argument(
        "--only", action="append", help="time only the cases whose name holds this text (repeatable)"
    )
    parser.add_argument(
        "--no-finish", action="store_true", help="with --reuse: time it as it is (no recount, no VACUUM)"
    )
    args = parser.parse_args(argv)
    import psycopg

    started = time.perf_counter()
    url = database_url(args.server, args.database)
    try:
        if not args.reuse:
            recreate_database(args.server, args.database)
            ingest_base(url, args.base_runs)
            replicate(url, args.copies)
        elif not args.no_finish:
            finish(url)
        with psycopg.connect(url, autocommit=True) as conn:
            chosen = words(conn)
        print(f"words: {chosen}; load {os.getloadavg()}", flush=True)
        rows = screen_rows(url, chosen, args.repeats, args.only)
    finally:
        if not (args.keep or args.reuse):  # a reused store took minutes to build: never dropped
            drop_database(args.server, args.database)
    print(render(rows))
    print(f"load average {os.getloadavg()}; total {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
