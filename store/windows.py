"""Counting rows under filters no tally answers, window by window of rowids (newest first), for a bounded
time: exact when the windows reach the end in time, otherwise what they found so far, a lower bound the
screens show as `1,234+`. Reading every matching row of a million-run store took 130 ms to 1.5 s."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from typing import Any

from sqlite_utils import Database

from store.db.postgres import PostgresError, is_postgres
from store.rows import Count

#: An extra condition for the window `first`-`last` of rowids, and its parameters (a search's matches).
WindowCondition = Callable[[int, int], tuple[str, list[Any]]]


def rowid_bounds(db: Database, table: str) -> tuple[int, int] | None:
    """The least and greatest rowid of `table` (None: no rows)."""
    # two subqueries: SQLite reads one min() or max() from the rowid's end, but scans for both in one (443 ms
    # for runs at a million)
    lo, hi = db.execute(
        f"SELECT (SELECT min(rowid) FROM {table}), (SELECT max(rowid) FROM {table})"
    ).fetchone()
    return None if lo is None else (int(lo), int(hi))


def count_by_windows(
    db: Database,
    table: str,
    alias: str,
    where: list[str],
    params: list[Any],
    cap: int,
    *,
    first_width: int,
    max_width: int,
    budget_s: float,
    window: WindowCondition | None = None,
    own_btree: bool = False,
) -> Count:
    """How many rows of `table` (as `alias`) meet `where`, up to `cap`: windows of its rowids from the
    greatest down, the first `first_width` wide (to learn the pace), each next as wide as the time left
    of `budget_s` allows at the pace so far, up to `max_width`; `exact` False when `cap` or the time runs
    out. The pace is the last window's and a window at most twice the last: paced on the first window
    alone, a window of rows whose cached newest pages read 10 times faster than older ones was followed by
    one of 65,536 rows (150 ms against a budget of 15 at a million runs). A window's pace may triple the one
    before (PostgreSQL, each window a statement planned for its width; a kind and an outcome at a million
    runs: 1.6, 0.9, then 3.2 us a run; paced on all read so far, 46.6 ms against a budget of 25), and a
    window still reading when the budget ends is stopped and its rows lost, so a window is sized for half
    the time left.

    `own_btree` (SQLite): read each window from the table's own b-tree, never from an index of a filter
    (the queue's kind index made each window of findings read every finding of the kind: 61 ms for 2,048)."""
    bounds = rowid_bounds(db, table)
    if bounds is None:
        return Count(0)
    lo, top = bounds
    source = f"{table} AS {alias}" + (" NOT INDEXED" if own_btree and not is_postgres(db) else "")
    width, started, n = first_width, time.perf_counter(), 0
    while top >= lo:
        window_started = time.perf_counter()
        first = max(lo, top - width + 1)
        conds, cond_params = [f"{alias}.rowid BETWEEN ? AND ?"], [first, top]
        if window is not None:
            extra, extra_params = window(first, top)
            conds.append(extra)
            cond_params += extra_params
        sql = f"SELECT count(*) FROM {source} WHERE {' AND '.join([*conds, *where])}"
        left = None if top == bounds[1] else budget_s - (time.perf_counter() - started)
        counted = _count_within(db, sql, [*cond_params, *params], left)
        if counted is None:  # the window was stopped at the end of the budget
            return Count(n, exact=False)
        n += counted
        pace = (time.perf_counter() - window_started) / (top - first + 1)
        top = first - 1
        if n > cap:
            return Count(cap, exact=False)
        spent = time.perf_counter() - started
        if top >= lo and spent > budget_s:
            return Count(n, exact=False)
        left = (budget_s - spent) / 2
        width = max(1, min(int(left / max(pace, 1e-9)), 2 * width, max_width))
    return Count(n)


def _count_within(db: Database, sql: str, params: list[Any], left_s: float | None) -> int | None:
    """The count `sql` reads, or None where it was stopped after `left_s` (the budget's rest; None: no
    limit, the first window): paced on the windows before it, a window that reads pages from outside the
    cache can take ten times its forecast (PostgreSQL, a kind and an outcome at a million runs: 26 ms at
    best, 122 ms at worst, against a budget of 25; SQLite, a word within a kind: 242-381 ms). PostgreSQL
    cancels it by a statement timeout, SQLite by its progress handler. A count inside a transaction is
    never stopped (on PostgreSQL it would end the transaction)."""
    if left_s is None or db.conn.in_transaction:  # sqlite3's, or PostgreSQL's `PgConn`
        return int(db.execute(sql, params).fetchone()[0])
    if not is_postgres(db):
        return _sqlite_count_within(db, sql, params, left_s)
    db.execute(f"SET statement_timeout = {max(1, int(left_s * 1000))}")
    try:
        return int(db.execute(sql, params).fetchone()[0])
    except PostgresError as exc:
        if "statement timeout" in str(exc):
            return None
        raise
    finally:
        db.execute("RESET statement_timeout")


#: SQLite asks the progress handler whether to stop every this many virtual machine steps (about 50 us of
#: a window's reading).
PROGRESS_STEPS = 1_000


def _sqlite_count_within(db: Database, sql: str, params: list[Any], left_s: float) -> int | None:
    """SQLite: the count `sql` reads, or None where its progress handler stopped it after `left_s`."""
    deadline = time.perf_counter() + left_s
    db.conn.set_progress_handler(lambda: time.perf_counter() > deadline, PROGRESS_STEPS)
    try:
        return int(db.execute(sql, params).fetchone()[0])
    except sqlite3.OperationalError as exc:
        if "interrupted" in str(exc):
            return None
        raise
    finally:
        db.conn.set_progress_handler(None, 0)
