"""The runs list over many runs: only visible blocks are read, by keyset, and jumps stay cheap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reviewer.ui.app import make_app
from reviewer.ui.widgets.run_list import BLOCK
from store.db import open_database
from store.ui_queries import insert_synthetic_runs
from tests.ui.conftest import SIZE, wait_until

N = 5_000


async def test_blocks_load_on_demand_by_keyset(tmp_path: Path) -> None:
    path = tmp_path / "big.db"
    db = open_database(path)
    insert_synthetic_runs(db, N)
    db.close()
    app = make_app(db_path=path, keymap={})
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
        await wait_until(pilot, lambda: run_list.row_at(run_list.cursor) is not None and run_list.cursor >= BLOCK)
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
        await pilot.pause()
        assert run_list.cursor == 0 and run_list.row_at(0) is not None
