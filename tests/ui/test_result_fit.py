"""Issue 15 point 1 and the runs list at 120 columns: what the user came to see is on screen without scrolling.

At 80x24 a selected tool result (a table, a chart) is drawn inside the visible part of the detail panel, its
provenance and coverage compact above it (the full box follows the result); at 120 columns the runs list's run
column shows the end of each run id, which is what tells the sample runs apart."""

from __future__ import annotations

from typing import Any

from reviewer.ui.app import ReviewerApp
from reviewer.ui.results.chart import SeriesPlot
from reviewer.ui.results.table import ResultTable
from reviewer.ui.widgets.detail import DetailPanel
from reviewer.ui.widgets.run_list import COLUMNS
from tests.ui.conftest import jump_to_run, runs_screen_ready, wait_until

TABLE_AND_CHART = "run-1796001963675-1"  # semantics-table-and-chart.json


def screen_lines(app: Any) -> list[str]:
    return ["".join(seg.text for seg in strip) for strip in app.screen._compositor.render_strips()]


def visible_panel_text(app: Any, panel: DetailPanel) -> list[str]:
    """The lines of the detail panel's visible content area, as drawn on the screen."""
    region = panel.scrollable_content_region
    lines = screen_lines(app)
    return [lines[y][region.x : region.right] for y in range(region.y, region.bottom)]


async def select_call(pilot: Any, call_id: str) -> tuple[Any, DetailPanel]:
    screen = await jump_to_run(pilot, TABLE_AND_CHART)
    panel = screen.query_one(DetailPanel)
    index = next(i for i, r in enumerate(screen.timeline.rows) if r.get("call_id") == call_id)
    screen.timeline.move_to(index)
    await wait_until(pilot, lambda: panel.showing == f"call:{call_id}", timeout=30)
    await pilot.pause(0.2)
    return screen, panel


async def test_a_selected_table_result_shows_its_rows_at_80x24_without_scrolling(app_factory) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        _, panel = await select_call(pilot, "call-inv-1")  # volume_inventory: a table of volumes
        table = panel.query_one(ResultTable)
        await wait_until(pilot, lambda: table.row_count > 0)
        await pilot.pause()
        assert panel.scroll_y == 0
        text = "\n".join(visible_panel_text(app, panel))
        first = [str(table.get_cell_at((0, c))) for c in range(len(table.columns))]
        cells = [c for c in first if c.strip() and c != "None"][:2]
        assert cells and all(c in text for c in cells), (cells, text)
        second = str(table.get_cell_at((1, 0))) if table.row_count > 1 else None
        if second:
            assert second in text, (second, text)
        # the provenance is still on screen, compact, above the table
        assert "measured" in text or "provenance" in text, text
        assert "not covered" in text, text


async def test_a_selected_chart_result_shows_its_plot_at_80x24_without_scrolling(app_factory) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        _, panel = await select_call(pilot, "call-iops-1")  # port_iops: a chart
        await wait_until(pilot, lambda: bool(panel.query(SeriesPlot)))
        await pilot.pause(0.2)
        assert panel.scroll_y == 0
        plot = panel.query(SeriesPlot).first()
        visible = plot.region.intersection(panel.scrollable_content_region)
        assert visible == plot.region, (plot.region, panel.scrollable_content_region)  # the whole plot
        text = "\n".join(visible_panel_text(app, panel))
        assert any("\u2801" <= ch <= "\u28ff" for ch in text), text  # braille points of the plot are drawn
        assert "measured" in text and "not covered" in text, text


async def test_the_runs_list_shows_the_end_of_each_run_id_at_120_columns(app_factory) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await runs_screen_ready(pilot)
        run_list = screen.run_list
        await pilot.pause()
        offset = sum(width for _, width, _ in COLUMNS[:-1]) + len(COLUMNS) - 1
        region = run_list.scrollable_content_region
        lines = screen_lines(app)
        shown: dict[str, str] = {}
        for index in range(min(run_list.row_count, region.height)):
            row = run_list.row_at(index)
            assert row is not None
            drawn = lines[region.y + index - int(run_list.scroll_y)][region.x + offset : region.right].strip()
            shown[row["run_id"]] = drawn
        sample = {rid: cell for rid, cell in shown.items() if rid.startswith("run-1796")}
        assert len(sample) >= 2
        assert len(set(sample.values())) == len(sample), sample  # every row says something different
        for rid, drawn in sample.items():
            assert drawn.startswith("…") and rid.endswith(drawn[1:]) and len(drawn) >= 8, (rid, drawn)


def test_the_brief_caveats_keep_provenance_not_covered_and_a_clarify_question() -> None:
    from datetime import UTC, datetime

    from reviewer.ui.results.caveats import brief_caveat_lines

    sem = {
        "facts": [{"entity": "vol-1"}],
        "provenance": {"measured_at": "2026-08-19T09:00:00Z", "source": "Unisphere"},
        "not_covered": ["snapshot capacity", "host filesystems"],
        "clarify": {"question": "which array?", "candidates": ["A", "B"]},
    }
    now = datetime(2026, 8, 19, 10, 0, tzinfo=UTC)
    lines = [t.plain for t in brief_caveat_lines({"call_id": "c"}, sem, None, now=now)]
    assert len(lines) == 3, lines
    assert lines[0].startswith("measured 2026-08-19T09:00:00Z (1h 0m old)") and "Unisphere" in lines[0]
    assert lines[1].startswith("not covered (2): snapshot capacity; host filesystems")
    assert lines[2].startswith("? clarify: which array?")
    no_prov = [t.plain for t in brief_caveat_lines({"call_id": "c"}, {"facts": [{"a": 1}]}, None, now=now)]
    assert no_prov[0].startswith("provenance: not stated")


def test_a_run_id_cell_keeps_the_end_of_wide_and_control_characters_inert() -> None:
    from rich.cells import cell_len

    from reviewer.ui.widgets.run_list import tail_cell

    assert tail_cell("run-1796002044845-5", 8).plain == "…44845-5"
    assert tail_cell("short", 8).plain == "short   "
    wide = tail_cell("run-日本語日本語", 8)
    assert cell_len(wide.plain) == 8 and wide.plain.rstrip().endswith("本語")
    hostile = tail_cell("run-\x1b[31mred\x1b[0m-1", 10).plain
    assert "\x1b" not in hostile and hostile.rstrip().endswith("-1"), hostile
