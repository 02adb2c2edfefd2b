"""The runs list over many runs: only visible blocks are read, by keyset, and jumps stay cheap."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from bench.synthetic import insert_synthetic_runs
from reviewer.service import Settings
from reviewer.ui.app import make_app
from reviewer.ui.widgets.run_list import BLOCK
from store.db.connection import open_database
from tests.ui.conftest import SIZE, wait_until

N = 5_000


async def test_blocks_load_on_demand_by_keyset(tmp_path: Path) -> None:
    path = tmp_path / "big.db"
    db = open_database(path)
    insert_synthetic_runs(db, N)
    db.close()
    app = make_app(Settings.resolve(db_path=path), keymap={})
    calls: list[dict[str, Any]] = []
    original = app.service.runs_block

    async def spy(**kwargs: Any) -> Any:
        calls.append(kwargs)
        return await original(**kwargs)

    app.service.runs_block = spy  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: getattr(app.screen, "total", None) == N)
        run_list = app.screen.run_list
        assert run_list.row_count == N and run_list.cached_blocks == 1 and calls == []
        # paging down past the first block reads the next block after the last row seen (keyset)
        for _ in range(3):
            await pilot.press("pagedown")
        await wait_until(pilot, lambda: run_list.row_at(run_list.cursor) is not None)
        for _ in range(3):
            await pilot.press("pagedown")
        await wait_until(
            pilot, lambda: run_list.row_at(run_list.cursor) is not None and run_list.cursor >= BLOCK
        )
        assert calls and calls[0]["after"] is not None and calls[0]["offset"] == 0
        # a jump to the end reads only the blocks on screen
        await pilot.press("end")
        await wait_until(pilot, lambda: run_list.row_at(N - 1) is not None)
        assert run_list.cursor == N - 1
        assert run_list.cached_blocks <= 4
        assert len(calls) <= 4
        last = run_list.row_at(N - 1)
        drawn = [run_list.render_line(y).text for y in range(run_list.size.height)]
        assert any(last["run_id"] in line for line in drawn)
        await pilot.press("home")
        await wait_until(pilot, lambda: run_list.cursor == 0 and run_list.row_at(0) is not None)


async def test_queue_over_many_findings_reads_only_what_is_shown(ui_db: Path) -> None:
    """100k findings: the queue opens on a count and one block, and a jump to the end reads a block or two."""
    import sqlite3

    from reviewer.ui.screens.queue import QueueScreen

    conn = sqlite3.connect(ui_db)
    # spread over the runs (one run with 100k findings is another matter: its evidence reads the whole run)
    conn.execute(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 99999),"
        " r AS (SELECT key, row_number() OVER (ORDER BY key) - 1 AS k, count(*) OVER () AS m FROM runs)"
        " INSERT INTO findings (id, run_key, run_id, seq, kind, codes, message, refs, advisory, truncated)"
        " SELECT printf('f-zz%07d', i), r.key, 'run-big', 100000 + i, 'negative-claim', '[]',"
        " 'synthetic finding ' || i, '[]', 0, 0 FROM n JOIN r ON r.k = n.i % r.m"
    )
    conn.commit()
    total = conn.execute("SELECT count(*) FROM findings").fetchone()[0]
    # the queue reads by run, then position in the run: the last row is the last run's last finding
    [last] = conn.execute(
        "SELECT id FROM findings ORDER BY run_key DESC, coalesce(seq, -1) DESC, id DESC LIMIT 1"
    ).fetchone()
    conn.close()
    assert total > 100_000
    app = make_app(Settings.resolve(db_path=ui_db, reviewer="ann"), keymap={})
    calls: list[dict[str, Any]] = []
    original = app.service.queue_block

    async def spy(**kwargs: Any) -> Any:
        calls.append(kwargs)
        return await original(**kwargs)

    app.service.queue_block = spy  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await app.action_open_queue()
        await wait_until(
            pilot, lambda: isinstance(app.screen, QueueScreen) and app.screen.showing is not None
        )
        finding_list = app.screen.finding_list
        assert app.screen.total == total and finding_list.cached_blocks == 1 and calls == []
        await pilot.press("end")
        await wait_until(pilot, lambda: finding_list.row_at(finding_list.row_count - 1) is not None)
        assert finding_list.row_at(finding_list.row_count - 1)["id"] == last
        assert len(calls) <= 3 and calls[0]["after"] is None and calls[0]["offset"] > 99_000
        await wait_until(pilot, lambda: app.screen.showing == last)


def runs_in_order(path: Path) -> list[str]:
    db = open_database(path)
    keys = [r[0] for r in db.execute("SELECT key FROM runs ORDER BY started_ms DESC, key DESC")]
    db.close()
    return keys


async def test_a_count_read_only_so_far_says_so(tmp_path: Path, monkeypatch: Any) -> None:
    """A count the tallies cannot answer (a search here) is read up to a cap and shown as `N+`; one they can
    (no filter) is exact. Reading on past the cap grows the list until its end is found."""
    import store.runs
    from bench.synthetic import insert_synthetic_findings

    path = tmp_path / "big.db"
    db = open_database(path)
    insert_synthetic_runs(db, 300)
    insert_synthetic_findings(db)
    db.close()
    monkeypatch.setattr(store.runs, "COUNT_CAP", 100)
    app = make_app(Settings.resolve(db_path=path), keymap={})
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: getattr(app.screen, "total", None) == 300)
        screen = app.screen
        assert "300 runs" in str(screen.query_one("#runs-status").render())
        await pilot.press("slash", *"incidents", "enter")
        await wait_until(pilot, lambda: screen.total == 100)
        status = str(screen.query_one("#runs-status").render())
        assert "100+ runs" in status
        # reading on past the bound grows the list, and reaching its end makes the total exact
        run_list = screen.run_list
        assert run_list.row_count > 100

        async def press_end() -> bool:
            await pilot.press("end")
            await pilot.pause()
            return "300 runs" in str(screen.query_one("#runs-status").render())

        deadline = asyncio.get_running_loop().time() + 60
        while not await press_end():
            assert asyncio.get_running_loop().time() < deadline, "the end of the list was never found"
            await pilot.pause(0.05)
        assert screen.total == 300 and run_list.row_count == 300
        await wait_until(pilot, lambda: run_list.row_at(299) is not None)
        oldest = run_list.row_at(299)
        assert oldest is not None and oldest["run_key"] == runs_in_order(path)[-1]


@asynccontextmanager
async def _searched_when_counts_read_nothing(
    tmp_path: Path, monkeypatch: Any, runs: int, word: str
) -> AsyncIterator[tuple[Any, Any]]:
    """The runs screen on `runs` generated runs (with findings, whose documents say "incidents"), `word`
    searched, where a search's count reads no run in its time (`0+`); other counts as they are."""
    import store.runs
    from bench.synthetic import insert_synthetic_findings
    from store.rows import Count

    path = tmp_path / "searched.db"
    db = open_database(path)
    insert_synthetic_runs(db, runs)
    insert_synthetic_findings(db)
    db.close()
    counted = store.runs.count_runs_at_most

    def out_of_time(db: Any, **filters: Any) -> Count:
        return Count(0, exact=False) if filters.get("search") else counted(db, **filters)

    monkeypatch.setattr(store.runs, "count_runs_at_most", out_of_time)
    app = make_app(Settings.resolve(db_path=path), keymap={})
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: getattr(app.screen, "total", None) == runs)
        await pilot.press("slash", *word, "enter")
        yield pilot, app.screen


async def test_a_lower_bound_of_nothing_becomes_an_exact_zero_when_the_list_is_empty(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A count that read no run in its time says `0+`; once the list's first block comes back empty the
    screen says there are none (it said `0+` for as long as it was open)."""
    async with _searched_when_counts_read_nothing(tmp_path, monkeypatch, 30, "zzyzxnowhere") as (
        pilot,
        screen,
    ):
        await wait_until(pilot, lambda: screen.total is not None and screen.total == 0)
        await wait_until(pilot, lambda: "0 runs" in str(screen.query_one("#runs-status").render()))
        status = str(screen.query_one("#runs-status").render())
        assert getattr(screen.total, "exact", True) and status.startswith("0 runs")


async def test_a_lower_bound_is_never_below_the_runs_already_listed(tmp_path: Path, monkeypatch: Any) -> None:
    """A count cut short by its time can be below the runs the list has read (`0+` while a block of 100 is
    shown): the screen's total is then the rows it has read, still a lower bound, and it becomes exact when
    the end of the list is found."""
    async with _searched_when_counts_read_nothing(tmp_path, monkeypatch, 300, "incidents") as (pilot, screen):
        await wait_until(pilot, lambda: screen.total is not None and screen.total >= BLOCK)
        status = str(screen.query_one("#runs-status").render())
        assert not screen.total.exact and status.startswith(f"{int(screen.total):,}+ runs")

        deadline = asyncio.get_running_loop().time() + 60
        while "300 runs" not in str(screen.query_one("#runs-status").render()):
            assert asyncio.get_running_loop().time() < deadline, "the end of the list was never found"
            await pilot.press("end")
            await pilot.pause(0.05)
        assert screen.total == 300 and getattr(screen.total, "exact", True)


async def test_the_queue_under_a_lower_bound_reads_on_to_its_last_finding(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A queue count that is a lower bound (`50+` of more) sized the list to it, and the findings past it
    could not be reached. The list grows as the reader reaches its end, and the count becomes exact there."""
    import sqlite3

    import store.findings
    from bench.synthetic import insert_synthetic_findings
    from reviewer.ui.screens.queue import QueueScreen
    from store.rows import Count

    path = tmp_path / "queue.db"
    db = open_database(path)
    insert_synthetic_runs(db, 300)
    insert_synthetic_findings(db)
    db.close()
    conn = sqlite3.connect(path)
    total = conn.execute("SELECT count(*) FROM findings").fetchone()[0]
    [last] = conn.execute(
        "SELECT id FROM findings ORDER BY run_key DESC, coalesce(seq, -1) DESC, id DESC LIMIT 1"
    ).fetchone()
    conn.close()
    assert total > 3 * BLOCK
    monkeypatch.setattr(store.findings, "queue_count_at_most", lambda db, **filters: Count(50, exact=False))
    app = make_app(Settings.resolve(db_path=path, reviewer="ann"), keymap={})
    async with app.run_test(size=SIZE) as pilot:
        await app.action_open_queue()
        await wait_until(pilot, lambda: isinstance(app.screen, QueueScreen) and app.screen.total is not None)
        screen = app.screen
        finding_list = screen.finding_list
        # the first block is already more than the count said: the count says so
        await wait_until(pilot, lambda: screen.total >= BLOCK)
        assert not getattr(screen.total, "exact", True)
        deadline = asyncio.get_running_loop().time() + 60
        while not (screen.total == total and getattr(screen.total, "exact", True)):
            assert asyncio.get_running_loop().time() < deadline, f"stuck at {screen.total!r} of {total}"
            await pilot.press("end")
            await pilot.pause(0.05)
        await wait_until(pilot, lambda: finding_list.row_at(total - 1) is not None)
        assert finding_list.row_count == total and finding_list.row_at(total - 1)["id"] == last
        status = str(screen.query_one("#queue-status").render())
        assert f"showing {total:,}" in status and f"0 / {total:,} labelled" in status
        # the progress read again (after a label, say) keeps what the list has read past the store's count
        await screen.refresh_progress().wait()
        assert f"0 / {total:,} labelled" in str(screen.query_one("#queue-status").render())
