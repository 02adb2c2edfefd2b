"""The findings queue's order as a reviewer meets it: each run's findings together under the run's name, in
their order in the run; the order changed from the keyboard; opening on the first finding not labelled yet;
and after a label, the cursor moving on within the same run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reviewer.ui.app import ReviewerApp
from reviewer.ui.screens.queue import QueueScreen
from reviewer.ui.widgets.finding_list import RUN_CONTINUED, RUN_HEADING
from store import labels
from store.findings import queue_page
from tests.ui.conftest import SIZE, wait_until
from tests.ui.test_labelling import labelled, open_queue, with_db


def shown(screen: QueueScreen) -> list[str]:
    """The queue's lines as drawn."""
    fl = screen.finding_list
    return [fl.render_line(y).text for y in range(fl.size.height)]


def loaded_rows(screen: QueueScreen) -> list[dict[str, Any]]:
    fl = screen.finding_list
    return [row for i in range(fl.row_count) if (row := fl.row_at(i)) is not None]


def several_findings_run(rows: list[dict[str, Any]]) -> str:
    keys = [r["run_key"] for r in rows]
    return next(k for k in dict.fromkeys(keys) if keys.count(k) >= 3)


async def test_findings_come_by_run_each_run_named_once(app_factory, label_db: Path) -> None:
    app: ReviewerApp = app_factory(db_path=label_db, reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_queue(pilot, key=True)
        rows = loaded_rows(screen)
        assert [r["id"] for r in rows] == [r["id"] for r in with_db(label_db, queue_page, limit=len(rows))]
        keys = [r["run_key"] for r in rows]
        assert keys == sorted(keys)  # one run's findings never scattered
        assert "order: by run" in str(screen.query_one("#queue-status").render())
        lines = shown(screen)
        for n, line in enumerate(lines[: len(rows)]):
            run_column = line[2:24]
            if n == 0 or keys[n] != keys[n - 1]:
                # the run's heading: its id, on its first finding
                assert run_column.startswith(RUN_HEADING) and rows[n]["run_id"][:10] in run_column, line
            else:
                assert run_column.startswith(RUN_CONTINUED), line


async def test_the_order_changes_from_the_keyboard(app_factory, label_db: Path) -> None:
    app: ReviewerApp = app_factory(db_path=label_db, reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_queue(pilot)
        on = screen.current_row["id"]
        orders = []
        for title, check in (
            ("newest run first", None),
            ("by kind", "kind"),
            ("by tool", None),
            ("disagreements first", None),
            ("by run", None),
        ):
            await pilot.press("O")
            await wait_until(
                pilot, lambda title=title: title in str(screen.query_one("#queue-status").render())
            )
            await wait_until(pilot, lambda: screen.current_row is not None and screen.current_row["id"] == on)
            rows = loaded_rows(screen)
            orders.append([r["id"] for r in rows])
            if check:
                values = [r[check] for r in rows]
                assert values == sorted(values)
            assert screen.current_row["id"] == on  # the cursor stays on the finding it was on
        assert orders[0] != orders[-1] and orders[1] != orders[-1]
        assert sorted(orders[0]) == sorted(orders[-1])
        newest = with_db(label_db, queue_page, sort="newest", limit=len(orders[0]))
        assert orders[0] == [r["id"] for r in newest]


async def test_opens_on_the_first_unlabelled_and_labelling_stays_in_the_run(
    app_factory, label_db: Path
) -> None:
    rows = with_db(label_db, queue_page, limit=10_000)
    key = several_findings_run(rows)
    in_run = [r["id"] for r in rows if r["run_key"] == key]
    before = [r["id"] for r in rows[: rows.index(next(r for r in rows if r["id"] == in_run[0]))]]
    for fid in before:  # everything before this run is mine already
        with_db(label_db, labels.label_finding, fid, "unsure", "ann")
    app: ReviewerApp = app_factory(db_path=label_db, reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_queue(pilot, key=True)
        assert screen.current_row["id"] == in_run[0]  # not an already labelled row
        assert screen.finding_list.cursor == len(before)
        for n, fid in enumerate(in_run[:3]):
            await wait_until(pilot, lambda fid=fid: screen.showing == fid)
            await pilot.press("3")  # one key judges it
            await labelled(pilot, label_db, fid)
            if n + 1 < len(in_run):
                nxt = in_run[n + 1]
                await wait_until(pilot, lambda nxt=nxt: screen.current_row["id"] == nxt)
                assert screen.current_row["run_key"] == key  # the next finding of the same run
