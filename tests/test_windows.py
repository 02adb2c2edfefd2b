"""A count no tally answers reads windows of rows for a bounded time, and keeps to it when older rows read
slower than the first window's (the first window's pace once sized a window of 65,536 rows: 150 ms against
a budget of 15 at a million runs; on PostgreSQL, paced on all it had read, 46.6 ms against 25), on both
backends."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from sqlite_utils import Database

from store.db.postgres import is_postgres
from store.rows import Count
from store.windows import count_by_windows
from tests.conftest import both_backends

BUDGET_S = 0.015


def _rows(db: Database, n: int) -> Database:
    """A table `things` of `n` rows, `v` cycling 0-6, with rowids (PostgreSQL: a column of its own)."""
    if is_postgres(db):
        db.execute("CREATE TABLE things (rowid BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v INTEGER)")
        db.execute("INSERT INTO things (v) SELECT i % 7 FROM generate_series(0, ? - 1) AS i", [n])
        db.execute("ANALYZE things")
        return db
    db.execute("CREATE TABLE things (v INTEGER)")
    db.conn.executemany("INSERT INTO things (v) VALUES (?)", [(i % 7,) for i in range(n)])
    db.conn.commit()
    return db


def _counted_in(db: Database, window: Callable[[int, int], tuple[str, list[int]]]) -> tuple[Count, float]:
    """The count of `v = 3` under BUDGET_S, windows starting at 2,048 rows with `window`'s condition, and the
    seconds it took."""
    started = time.perf_counter()
    counted = count_by_windows(
        db, "things", "t", ["t.v = ?"], [3], 10**9, first_width=2_048, max_width=65_536,
        budget_s=BUDGET_S, window=window,
    )  # fmt: skip
    return counted, time.perf_counter() - started


@both_backends
def test_a_count_stops_near_its_budget_when_older_rows_read_ten_times_slower(db: Database) -> None:
    db = _rows(db, 400_000)
    newest = 400_000 - 2_048  # the first window: fast; each older row costs 2 us more (sleeping)

    def slower_when_older(first: int, last: int) -> tuple[str, list[int]]:
        if last <= newest:
            time.sleep((last - first + 1) * 2e-6)
        return "1 = 1", []

    counted, spent = _counted_in(db, slower_when_older)
    assert not counted.exact and 0 < counted < 400_000 // 7
    # paced on the first window it read 65,536 rows: 130 ms; 4x leaves room for a loaded CI runner
    assert spent < 4 * BUDGET_S, f"{spent * 1000:.1f} ms for a budget of {BUDGET_S * 1000:.0f} ms"


@both_backends
def test_a_count_that_ends_in_time_is_exact(db: Database) -> None:
    db = _rows(db, 20_000)
    counted = count_by_windows(
        db, "things", "t", ["t.v = ?"], [3], 10**9, first_width=2_048, max_width=65_536, budget_s=60.0
    )
    assert counted.exact and counted == sum(1 for i in range(20_000) if i % 7 == 3)


#: A condition that takes seconds to test: PostgreSQL sleeps; SQLite counts to fifty million.
STALLS = {
    True: "(SELECT pg_sleep(0.3)) IS NOT NULL",
    False: "(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 50000000) "
    "SELECT max(x) FROM c) > 0",
}


@both_backends
def test_a_window_that_outlasts_the_budget_is_stopped(db: Database) -> None:
    """A window far slower than its forecast (pages read from outside the cache: on PostgreSQL 122 ms
    against a budget of 25 at a million runs, on SQLite 242-381 ms) is stopped when the budget ends
    (PostgreSQL: a statement timeout; SQLite: its progress handler), and the count is what the windows
    before it found; the connection reads on as before."""
    db = _rows(db, 100_000)
    newest = 100_000 - 2_048

    def stalls_when_older(first: int, last: int) -> tuple[str, list[int]]:
        return (STALLS[is_postgres(db)], []) if last <= newest else ("1 = 1", [])

    counted, spent = _counted_in(db, stalls_when_older)
    assert not counted.exact and counted == sum(1 for i in range(newest, 100_000) if i % 7 == 3)
    assert spent < 0.2, f"{spent * 1000:.1f} ms for a budget of {BUDGET_S * 1000:.0f} ms"
    if is_postgres(db):
        assert db.execute("SHOW statement_timeout").fetchone()[0] in ("0", "0ms")
    assert db.execute("SELECT count(*) FROM things").fetchone()[0] == 100_000


ON_POSTGRESQL = pytest.mark.parametrize("store_backend", ["postgresql"], indirect=True)


@ON_POSTGRESQL
def test_postgresql_reads_a_statements_rows_whole_when_it_ends_in_time(db: Database) -> None:
    db = _rows(db, 20_000)
    counted, every_row = db.rows_within("SELECT 1 FROM things t WHERE t.v = ?", [3], 60.0)  # type: ignore[attr-defined]
    assert every_row and counted == sum(1 for i in range(20_000) if i % 7 == 3)


@ON_POSTGRESQL
def test_postgresql_stops_reading_a_statements_rows_when_the_budget_ends(db: Database) -> None:
    """Rows that come slowly (1 ms each) are counted until the budget ends: a lower bound, in about the
    budget's time, and the connection has no statement timeout left after it."""
    counted, spent = _timed(
        lambda: db.rows_within("SELECT pg_sleep(0.001) FROM generate_series(1, 1000)", [], 0.2)  # type: ignore[attr-defined]
    )
    assert counted[1] is False and 50 < counted[0] < 1000  # type: ignore[index]
    assert spent < 0.35, f"{spent * 1000:.1f} ms for a budget of 200 ms"
    again, spent = _timed(lambda: db.rows_within("SELECT pg_sleep(0.3)", [], 0.05))  # type: ignore[attr-defined]
    assert again == (0, False), "a row slower than the whole budget is cancelled"
    assert spent < 0.25, f"{spent * 1000:.1f} ms for a budget of 50 ms"
    assert db.execute("SHOW statement_timeout").fetchone()[0] in ("0", "0ms")


@ON_POSTGRESQL
def test_postgresql_inside_a_transaction_a_budgeted_read_leaves_no_timeout(db: Database) -> None:
    """Inside the caller's transaction no statement timeout is set (it would outlive the read and cancel
    the caller's next statements): rows are still counted until the budget ends."""
    with db.transaction():  # type: ignore[attr-defined]
        counted, every_row = db.rows_within(  # type: ignore[attr-defined]
            "SELECT pg_sleep(0.001) FROM generate_series(1, 1000)", [], 0.2
        )
        assert not every_row and 0 < counted < 1000
        assert db.execute("SHOW statement_timeout").fetchone()[0] in ("0", "0ms")
        db.execute("SELECT pg_sleep(0.1)")  # not cancelled


def _timed(call: Callable[[], object]) -> tuple[object, float]:
    started = time.perf_counter()
    result = call()
    return result, time.perf_counter() - started
