"""Planner statistics kept current: SQLite picks a query's driving index from `sqlite_stat1`, and with none
(nothing ever ran ANALYZE) it guessed the runs screen's kind filter through every finding of that kind for
every run. `refresh_statistics` re-analyses, sampled so it costs milliseconds at a million runs, whenever
the tables have grown or shrunk well past what the statistics describe."""

from __future__ import annotations

import contextlib
import sqlite3

from sqlite_utils import Database

#: Rows ANALYZE samples per index (`PRAGMA analysis_limit`): enough for the planner, constant in the size.
ANALYSIS_LIMIT = 2_000
#: Statistics are stale when a table holds this many times more (or fewer) rows than they describe.
STALE_FACTOR = 2.0
#: Below this many rows no plan can go badly wrong; the first analysis waits for a store this big.
MIN_ROWS = 200
WATCHED = ("runs", "findings")
#: `label_latest` (schema m029) fills as reviewers label, mostly after the last ANALYZE, and ANALYZE writes no
#: statistics for an empty table. With none SQLite takes a table for a million rows: it built a Bloom
#: filter over every finding of a kind to join a few thousand current labels (370 ms for the queue's
#: unlabelled count under a kind at a million runs, 3 ms driven by the labels). Taken for far fewer rows
#: than there are findings of a kind, the labels drive that join; taken for too few (100 at a million
#: runs), SQLite read every current label to find a page's 100. So where it has none it is taken for this
#: share of the findings (at least LABELS_PLANTED_AT_LEAST rows), until a later ANALYZE counts it.
LABELS_PLANTED_SHARE = 100
LABELS_PLANTED_AT_LEAST = 100


def _described(db: Database, table: str) -> int | None:
    """How many rows the statistics say `table` has (None: never analysed): the table's own row (idx NULL),
    which `refresh_statistics` writes with the count, else the first index's (a sampled ANALYZE estimates
    those per index, differently for each)."""
    try:
        row = db.execute(
            "SELECT stat FROM sqlite_stat1 WHERE tbl = ? ORDER BY idx IS NOT NULL LIMIT 1", [table]
        ).fetchone()
    except sqlite3.OperationalError:  # no sqlite_stat1 table yet
        return None
    if row is None or not row[0]:
        return None
    return int(str(row[0]).split()[0])


def _rows_about(db: Database, table: str) -> int:
    """About how many rows `table` holds, in constant time (its largest rowid)."""
    return int(db.execute(f"SELECT coalesce(max(rowid), 0) FROM {table}").fetchone()[0])


def statistics_stale(db: Database) -> bool:
    """True when a watched table has no statistics or has changed size by more than STALE_FACTOR."""
    for table in WATCHED:
        rows = _rows_about(db, table)
        described = _described(db, table)
        if described is None:
            if rows >= MIN_ROWS:
                return True
            continue
        if rows > described * STALE_FACTOR or rows * STALE_FACTOR < described:
            return True
    return False


#: PostgreSQL: a table whose heap has grown past this many times its pages at the last analysis (and past
#: PG_MIN_PAGES) is analysed after an ingest. Autovacuum does that on its own, when the server runs it; this
#: project's server runs none, and a store ingested there had no statistics at all.
PG_STALE_FACTOR = 2
PG_MIN_PAGES = 8
#: The tables of the store's schema grown past their statistics (`pg_class.relpages` is what the last
#: ANALYZE, VACUUM or CREATE INDEX saw; `pg_relation_size` is now), by name.
PG_STALE_TABLES = (
    "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE n.nspname = current_schema() AND c.relkind = 'r' "
    "AND pg_relation_size(c.oid) / current_setting('block_size')::bigint > greatest(?, ? * c.relpages) "
    "ORDER BY c.relname"
)


def refresh_statistics(db: Database, *, force: bool = False, written: bool = False) -> bool:
    """Re-analyse (sampled) when the statistics are stale, or always with `force`. Returns whether it ran.
    PostgreSQL re-analyses only when asked (`force`), or after a write (`written`: an ingest) the tables
    that grew past their statistics; opening a store leaves it to the server's autovacuum."""
    from store.db.postgres import is_postgres

    if is_postgres(db):
        if force:
            db.execute("ANALYZE")
            return True
        return written and analyze_grown_tables(db)
    if not force and not statistics_stale(db):
        # a table left with no statistics by an earlier build's ANALYZE (busy or read-only: the next open)
        with contextlib.suppress(sqlite3.OperationalError):
            planted_where_none(db)
        return False
    try:
        db.execute(f"PRAGMA analysis_limit = {ANALYSIS_LIMIT}")
        db.execute("ANALYZE")  # its own transaction (connections are in autocommit mode)
        with (
            db.conn
        ):  # the size analysed, for `statistics_stale` (SQLite reads such a row as the table's size)
            for table in WATCHED:
                db.execute("DELETE FROM sqlite_stat1 WHERE tbl = ? AND idx IS NULL", [table])
                db.execute(
                    "INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, NULL, ?)",
                    [table, str(_rows_about(db, table))],
                )
        planted_where_none(db)
    except sqlite3.OperationalError:  # busy past the timeout, or read-only: the next open tries again
        return False
    return True


def analyze_grown_tables(db: Database) -> bool:
    """PostgreSQL: ANALYZE the tables that grew past their statistics (PG_STALE_TABLES), if any. Returns
    whether it ran."""
    stale = [str(name) for (name,) in db.execute(PG_STALE_TABLES, [PG_MIN_PAGES, PG_STALE_FACTOR]).fetchall()]
    if stale:
        db.execute(f"ANALYZE {', '.join(_quoted(name) for name in stale)}")
    return bool(stale)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def planted_where_none(db: Database) -> None:
    """Give `label_latest`, when it has no statistics, planted ones (LABELS_PLANTED_SHARE), and make this
    connection read them."""
    if _described(db, "label_latest") is not None:
        return
    n = max(LABELS_PLANTED_AT_LEAST, _rows_about(db, "findings") // LABELS_PLANTED_SHARE)
    for index, stat in (
        ("sqlite_autoindex_label_latest_1", f"{n} 1 1"),
        ("label_latest_reviewer", f"{n} {max(1, n // 10)} 1"),
    ):
        db.execute(
            "INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, ?, ?)", ["label_latest", index, stat]
        )
    db.execute("ANALYZE sqlite_schema")  # the connection reloads the statistics
