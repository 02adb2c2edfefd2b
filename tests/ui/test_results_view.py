"""Pilot tests: what a reviewer sees when a recorded tool result is drawn by its render hints."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

import pytest
from textual.app import App, ComposeResult
from textual.widgets import DataTable, Static, Tree

from reviewer.ui.results import ToolResultView, render_tool_result
from reviewer.ui.results.chart import SeriesPlot
from reviewer.ui.results.raw import RawView
from store.db.ingest import ingest
from store.runs import get_run
from tests.conftest import FIXTURE_RECORDINGS

TABLE_AND_CHART = "run-1796001963675-1"
ABSENT_ETC = "run-1796001982991-1"
NOW = datetime(2026, 8, 19, 12, 0, tzinfo=UTC)
PROV = {"measured_at": "2026-08-19T09:00:00Z", "source": "hand-built"}


@pytest.fixture
def runs(db, db_path):
    ingest(
        db,
        [
            FIXTURE_RECORDINGS / "semantics-table-and-chart.json",
            FIXTURE_RECORDINGS / "absent-coverage-clarify-ceiling.json",
        ],
        db_path=str(db_path),
        workers=1,
    )
    return {rid: get_run(db, rid) for rid in (TABLE_AND_CHART, ABSENT_ETC)}


def call_of(runs, run_id, call_id):
    run = runs[run_id]
    return next(c for c in run["tool_calls"] if c["call_id"] == call_id), run["coverage"]


def hand_call(semantics=None, result=None, **extra):
    call = {
        "call_id": "h-1",
        "tool_name": "hand_tool",
        "args": {},
        "result": result if result is not None else {},
        "error": False,
        "status": None,
        "duration_ms": 1,
        "iteration": 1,
        "refused": None,
        "args_invalid": None,
        "repeated": None,
        "absent": False,
        "has_semantics": semantics is not None,
        "render": (semantics or {}).get("render"),
        "semantics": semantics,
    }
    call.update(extra)
    return call


class ResultApp(App):
    def __init__(self, call, coverage=None):
        super().__init__()
        self.call, self.cov = call, coverage

    def compose(self) -> ComposeResult:
        yield render_tool_result(self.call, self.cov, now=NOW)


def screen_text(app) -> str:
    """Exactly the characters on the (virtual) terminal."""
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(seg.text for seg in strip) for strip in strips)


def static_text(app) -> str:
    """Every Static's content (also parts scrolled off-screen)."""
    parts = []
    for widget in app.query(Static):
        content = widget.content
        parts.append(content.plain if hasattr(content, "plain") else str(content))
    return "\n".join(parts)


async def test_volume_inventory_table_in_hinted_order_and_sort(runs):
    call, coverage = call_of(runs, TABLE_AND_CHART, "call-inv-1")
    app = ResultApp(call, coverage)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        table = app.query_one(DataTable)
        assert [c.label.plain for c in table.columns.values()] == [
            "entity",
            "size_gb",
            "used_pct",
            "tier",
            "replicated",
        ]
        rows = [[cell.plain for cell in table.get_row_at(i)] for i in range(table.row_count)]
        assert [r[0] for r in rows] == ["vol-002", "vol-001", "vol-003"]
        assert rows[0][2] == "93.2"
        seen = screen_text(app)
        assert "filter: replica-target volumes excluded" in seen
        assert "1 more column" in seen and "array" in seen
        # the caveats block: provenance, not_covered, clarify
        assert "measured_at: 2026-08-19T09:00:00Z" in seen and "1h 0m old when the tool answered" in seen
        assert "3h 0m old now" in seen
        assert "source: Unisphere REST (array VMAX-0457)" in seen and "source_export_date: 2026-08-19" in seen
        assert "snapshot capacity — snapshot API timed out — ask again" in seen
        assert "host-side filesystem usage — no agent runs on the hosts" in seen
        assert "clarify: considered, no ambiguity" in seen
        assert seen.index("measured_at") < seen.index("vol-002")


async def test_port_iops_chart_lines_per_metric_with_grain(runs):
    call, coverage = call_of(runs, TABLE_AND_CHART, "call-iops-1")
    app = ResultApp(call, coverage)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        # iops in thousands, CRC errors in units: one plot each (issue 15), each on its own y axis
        plots = list(app.query(SeriesPlot))
        assert [list(p.lines) for p in plots] == [["avg_iops"], ["crc_errors"]]
        assert [y for _, y in plots[0].lines["avg_iops"]] == [1840, 2210, 4980, 2050]
        seen = screen_text(app)
        assert "interval: 1h" in seen and "aggregation: avg" in seen and "counter: no" in seen
        assert "do not sum" not in seen
        assert "avg_iops" in seen and "crc_errors" in seen  # legend and the readable table
        assert "2026-08-19T08:00:00Z" in seen and "4980" in seen
        assert "fabric B — SANnav instance for fabric B is not connected" in seen
        assert "source: Brocade SANnav" in seen


async def test_counter_series_shows_the_warning():
    sem = {
        "af_semantics": True,
        "provenance": PROV,
        "series": [{"t": i, "entity": "port-1", "metric": "rx_bytes", "value": 1000 * i} for i in range(5)],
        "grain": {"interval": "5m", "aggregation": "counter", "is_counter": True},
        "render": {"default": "chart"},
    }
    app = ResultApp(hand_call(sem))
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        assert list(app.query_one(SeriesPlot).lines) == ["port-1"]
        assert "counter: do not sum/average raw values" in screen_text(app)


async def test_graph_edges_and_clarify(runs):
    call, coverage = call_of(runs, ABSENT_ETC, "c-wwn")
    app = ResultApp(call, coverage)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        seen = screen_text(app)
        assert "10:00:00:90:fa:12:34:56 —masked-to→ vol-001 (via view mv_prod)" in seen
        assert "10:00:00:90:fa:12:34:56 —masked-to→ vol-007" in seen
        assert "host-esx-12 —owns-initiator→ 10:00:00:90:fa:12:34:56" in seen
        assert "The WWN is masked to two volumes — which one do you mean?" in seen
        assert "candidates: vol-001, vol-007" in seen
        assert "measured_at: 2026-08-19T08:55:00Z" in seen and "source: masking views export" in seen


async def test_absent_result_shows_nothing_found_and_lists(runs):
    call, coverage = call_of(runs, ABSENT_ETC, "c-flogi")
    app = ResultApp(call, coverage)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        seen = screen_text(app)
        assert "Nothing found" in seen and "looked for: FLOGI entries on fc1/3" in seen
        assert "shq-fab-a: the live fcns database" in seen and "window: the last 24h — default window" in seen
        assert "not checked:" in seen and "the archived FLOGI history — older than the 24h window" in seen
        assert "cannot cover:" in seen and "ports on the peer fabric" in seen
        assert "try instead: Ask for a different interface" in seen


async def test_coverage_wrapper_shows_inner_result_and_lists(runs):
    call, coverage = call_of(runs, ABSENT_ETC, "c-repl")
    app = ResultApp(call, coverage)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        seen = screen_text(app)
        assert 'verdict: "healthy"' in seen and "pairs_ok: 412" in seen
        assert "NDM migration sessions — the API timed out — ask again" in seen
        assert "host-side multipathing" in seen and "SRDF pair state" in seen


async def test_ceiling_refused_still_draws_the_recorded_data(runs):
    call, coverage = call_of(runs, ABSENT_ETC, "c-dump")
    app = ResultApp(call, coverage)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        seen = screen_text(app)
        assert "the model got a refusal" in seen and "over the 800-char ceiling" in seen
        assert "Result too large: fleet_dump returned 2587 chars" in seen
        table = app.query_one(DataTable)
        assert [c.label.plain for c in table.columns.values()] == ["entity", "state", "cpu", "mem_gb"]
        assert table.row_count == 40
        assert "not covered:" in seen and "vCenter dev" in seen


async def test_unrecognised_marker_is_plain_json(runs):
    call, coverage = call_of(runs, ABSENT_ETC, "c-lat")
    app = ResultApp(call, coverage)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        seen = screen_text(app)
        assert "did not recognise it" in seen
        assert 'metric: "latency_ms"' in seen and app.query_one(Tree)


async def test_error_result_is_prominent():
    call = hand_call(
        result="refund of 250 exceeds the 100.00 self-service limit",
        error=True,
        args_invalid=[{"path": "amount", "expected": "number", "got": "string"}],
    )
    app = ResultApp(call)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        seen = screen_text(app)
        assert "the tool call failed" in seen
        assert "refund of 250 exceeds the 100.00 self-service limit" in seen
        assert "amount: expected number, got string" in seen


async def test_unknown_render_hint_falls_back_to_a_table():
    sem = {
        "af_semantics": True,
        "provenance": PROV,
        "render": {"default": "heatmap"},
        "facts": [{"entity": "rack-1", "temp_c": 31}, {"entity": "rack-2", "temp_c": 44}],
    }
    app = ResultApp(hand_call(sem))
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        assert "unknown render hint 'heatmap': shown as a table" in screen_text(app)
        table = app.query_one(DataTable)
        assert [c.label.plain for c in table.columns.values()] == ["entity", "temp_c"]
        assert table.row_count == 2


async def test_prose_hint_writes_sentences():
    sem = {
        "af_semantics": True,
        "provenance": PROV,
        "render": {"default": "prose"},
        "facts": [{"entity": "vm-7", "state": "off", "cpu": 4}],
        "clarify": None,
    }
    app = ResultApp(hand_call(sem))
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        seen = screen_text(app)
        assert "vm-7: state=off, cpu=4" in seen and "clarify: considered, no ambiguity" in seen
        assert not app.query(DataTable)


async def test_raw_toggle_shows_the_exact_json(runs):
    call, coverage = call_of(runs, TABLE_AND_CHART, "call-inv-1")
    app = ResultApp(call, coverage)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        view = app.query_one(ToolResultView)
        assert any(b.id == "result.raw" and b.key == "r" for b in view.BINDINGS)
        view.focus()
        await pilot.press("r")
        await pilot.pause()
        raw = app.query_one(RawView)
        assert raw.display and not app.query_one(".result-drawn").display
        bodies = [w.content.plain for w in raw.query(".result-raw-json")]
        assert bodies == [
            json.dumps(call["result"], indent=2, ensure_ascii=False),
            json.dumps(call["semantics"], indent=2, ensure_ascii=False),
            json.dumps(call["args"], indent=2, ensure_ascii=False),  # what was sent (issue 15)
        ]
        assert '"af_semantics": true' in screen_text(app) or '"facts": [' in screen_text(app)
        await pilot.press("r")
        await pilot.pause()
        assert not raw.display and app.query_one(".result-drawn").display
        assert "filter: replica-target volumes excluded" in screen_text(app)


async def test_raw_can_start_open():
    class RawApp(App):
        def compose(self) -> ComposeResult:
            yield render_tool_result(hand_call(result={"k": 1}), raw=True)

    app = RawApp()
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        assert '"k": 1' in screen_text(app)


HOSTILE = "[bold red]x[/] \x1b[2J"


@pytest.mark.parametrize("semantic", [False, True])
async def test_hostile_strings_stay_literal_and_inert(semantic):
    if semantic:
        sem = {
            "af_semantics": True,
            "provenance": {"measured_at": HOSTILE, "source": HOSTILE},
            "facts": [{"entity": HOSTILE, HOSTILE: HOSTILE}],
            "series": [
                {"t": 1, "entity": HOSTILE, "metric": HOSTILE, "value": 1},
                {"t": 2, "entity": HOSTILE, "metric": HOSTILE, "value": 2},
            ],
            "grain": {"interval": HOSTILE, "aggregation": "avg", "is_counter": False},
            "edges": [{"from": HOSTILE, "to": "b", "kind": HOSTILE}],
            "not_covered": [HOSTILE],
            "clarify": {"question": HOSTILE, "candidates": [HOSTILE]},
            "render": {"default": "table", "columns": ["entity", HOSTILE], "filter_note": HOSTILE},
        }
        call = hand_call(sem, result={"facts": sem["facts"]})
    else:
        call = hand_call(result={"name": HOSTILE, HOSTILE: [HOSTILE]})
    call["tool_name"] = HOSTILE
    app = ResultApp(call)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        seen = screen_text(app)
        assert "[bold red]x[/]" in seen
        assert "␛[2J" in seen
        assert "\x1b" not in seen
        assert "\x1b" not in static_text(app)
        if semantic:
            table = app.query_one(DataTable)
            assert [c.label.plain for c in table.columns.values()] == ["entity", "[bold red]x[/] ␛[2J"]
        app.query_one(ToolResultView).focus()
        await pilot.press("r")
        await pilot.pause()
        assert "[bold red]x[/]" in screen_text(app) and "\x1b" not in screen_text(app)


async def test_a_one_megabyte_result_does_not_freeze():
    result = {"rows": [{"i": i, "blob": "y" * 400} for i in range(2500)], "long": "z" * 100_000}
    assert len(json.dumps(result)) > 1_000_000
    app = ResultApp(hand_call(result=result))
    started = time.perf_counter()
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        assert "rows: [2500 items]" in screen_text(app)
        app.query_one(ToolResultView).focus()
        await pilot.press("r")
        await pilot.pause()
        body = app.query_one(".result-raw-json", Static).content.plain
        assert len(body) < 101_000 and "truncated for display" in body
    # a freeze (the whole megabyte laid out or parsed on the UI thread) takes minutes; a loaded machine, seconds
    assert time.perf_counter() - started < 60


def _series_sem(aggregation: str, **render: object) -> dict:
    return {
        "af_semantics": True,
        "provenance": PROV,
        "series": [{"t": i, "entity": "sensor-1", "metric": "temp", "value": 20 + i} for i in range(4)],
        "grain": {"interval": "1h", "aggregation": aggregation},
        "render": {"default": "chart", **render},
    }


async def test_chart_keeps_its_filter_note():
    sem = _series_sem("avg", filter_note="decommissioned sensors excluded")
    app = ResultApp(hand_call(sem))
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        assert list(app.query_one(SeriesPlot).lines) == ["sensor-1"]
        assert "filter: decommissioned sensors excluded" in screen_text(app)


async def test_graph_prose_and_secondary_table_keep_the_filter_note():
    sem = {
        "af_semantics": True,
        "provenance": PROV,
        "facts": [{"entity": "a", "state": "up"}],
        "edges": [{"from": "a", "to": "b", "kind": "zoned-to"}],
        "render": {"default": "graph", "filter_note": "lab fabric excluded"},
    }
    app = ResultApp(hand_call(sem))
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        seen = screen_text(app)
        assert seen.count("filter: lab fabric excluded") == 2  # the graph and the facts table under it


async def test_summary_of_readings_is_not_a_counter_but_sums_are():
    app = ResultApp(hand_call(_series_sem("summary of readings")))
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        seen = screen_text(app)
        assert "aggregation: summary of readings" in seen
        assert "is_counter not stated" not in seen and "aggregation: summary of readings" in seen
    app = ResultApp(hand_call(_series_sem("Sums")))
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        assert "⚠ is_counter not stated for a" in screen_text(app)


async def test_a_chart_spans_its_panel_with_the_legend_outside_the_plot():
    sem = {
        "af_semantics": True,
        "provenance": PROV,
        "series": [
            {"t": i, "entity": name, "metric": "temp", "value": base + i}
            for name, base in (("sensor-1", 20), ("sensor-2", 30))
            for i in range(6)
        ],
        "grain": {"interval": "1h", "aggregation": "avg"},
        "render": {"default": "chart"},
    }
    app = ResultApp(hand_call(sem, args={"site": "[b]north[/b]", "hours": 6}))
    async with app.run_test(size=(100, 50)) as pilot:
        await pilot.pause()
        [plot] = app.query(SeriesPlot)  # similar magnitudes: one plot, one y axis
        view = app.query_one(ToolResultView)
        assert plot.region.width >= view.region.width - 4  # nothing beside it steals its width
        legend = app.query_one(".result-legend", Static)
        assert legend.region.y >= plot.region.bottom  # under the plot, never over the points
        assert "sensor-1" in legend.content.plain and "sensor-2" in legend.content.plain
        seen = screen_text(app)
        assert 'args: {"site": "[b]north[/b]", "hours": 6}' in seen  # what was sent, literally
        assert seen.index("args:") < seen.index("sensor-1")


async def test_lines_of_very_different_magnitudes_get_a_plot_each():
    sem = {
        "af_semantics": True,
        "provenance": PROV,
        "series": [{"t": i, "entity": "a", "metric": "bytes", "value": 1_000_000 * (i + 1)} for i in range(5)]
        + [{"t": i, "entity": "b", "metric": "errors", "value": i} for i in range(5)],
        "grain": {"interval": "1h", "aggregation": "sum"},
        "render": {"default": "chart"},
    }
    app = ResultApp(hand_call(sem))
    async with app.run_test(size=(120, 60)) as pilot:
        await pilot.pause()
        plots = list(app.query(SeriesPlot))
        assert [list(p.lines) for p in plots] == [["a"], ["b"]]
        assert plots[1].region.y >= plots[0].region.bottom  # stacked, each with its own y axis
        assert "one plot each, each on its own y axis" in screen_text(app)
