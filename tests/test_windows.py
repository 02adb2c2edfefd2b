"""A count no tally answers reads windows of rows for a bounded time, and keeps to it when older rows read
slower than the first window's (the first window's pace once sized a window of 65,536 rows: 150 ms against
a budget of 15 at a million runs)."""

from __future__ import annotations

import time
from pathlib import Path

from sqlite_utils import Database

from store.db.connection import open_database
from store.windows import count_by_windows

BUDGET_S = 0.015


def _rows(tmp_path: Path, n: int) -> Database:
    db = open_database(tmp_path / "windows.db")
    db.execute("CREATE TABLE things (v INTEGER)")
    db.conn.executemany("INSERT INTO things (v) VALUES (?)", [(i % 7,) for i in range(n)])
    db.conn.commit()
    return db


def test_a_count_stops_near_its_budget_when_older_rows_read_ten_times_slower(tmp_path: Path) -> None:
    db = _rows(tmp_path, 400_000)
    newest = 400_000 - 2_048  # the first window: fast; each older row costs 2 us more (sleeping)

    def slower_when_older(first: int, last: int) -> tuple[str, list[int]]:
        if last <= newest:
            time.sleep((last - first + 1) * 2e-6)
        return "1", []

    started = time.perf_counter()
    counted = count_by_windows(
        db, "things", "t", ["t.v = ?"], [3], 10**9, first_width=2_048, max_width=65_536,
        budget_s=BUDGET_S, window=slower_when_older,
    )  # fmt: skip
    spent = time.perf_counter() - started
    assert not counted.exact and 0 < counted < 400_000 // 7
    assert spent < 2.5 * BUDGET_S, f"{spent * 1000:.1f} ms for a budget of {BUDGET_S * 1000:.0f} ms"


def test_a_count_that_ends_in_time_is_exact(tmp_path: Path) -> None:
    db = _rows(tmp_path, 20_000)
    counted = count_by_windows(
        db, "things", "t", ["t.v = ?"], [3], 10**9, first_width=2_048, max_width=65_536, budget_s=60.0
    )
    assert counted.exact and counted == sum(1 for i in range(20_000) if i % 7 == 3)
