"""Pure helpers of reviewer.ui.results: no running app needed."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from reviewer.ui.results import chart_series
from reviewer.ui.results.caveats import (
    caveat_lines,
    clarify_lines,
    coverage_from_rows,
    coverage_lists,
    format_age,
    provenance_lines,
)
from reviewer.ui.results.chart import grain_lines, skipped_points
from reviewer.ui.results.graph import adjacency, edge_line
from reviewer.ui.results.plain import absent_lines, fold_json
from reviewer.ui.results.plan import plan_views
from reviewer.ui.results.prose import fact_sentence, prose_lines
from reviewer.ui.results.raw import raw_json, raw_sections
from reviewer.ui.results.safe import cell, show
from reviewer.ui.results.table import parse_sort, sort_rows, table_model

FACTS = [
    {"entity": "vol-001", "array": "A", "size_gb": 512, "used_pct": 71.5, "tier": "gold", "replicated": True},
    {
        "entity": "vol-002",
        "array": "A",
        "size_gb": 1024,
        "used_pct": 93.2,
        "tier": "silver",
        "replicated": False,
    },
    {"entity": "vol-003", "array": "A", "size_gb": 256, "used_pct": 12, "tier": "gold", "replicated": True},
]
RENDER = {
    "default": "table",
    "columns": ["entity", "size_gb", "used_pct", "tier", "replicated"],
    "sort": "used_pct desc",
    "filter_note": "replica-target volumes excluded",
}


def _plain(texts):
    return "\n".join(t.plain for t in texts)


def test_parse_sort():
    assert parse_sort("used_pct desc") == [("used_pct", True)]
    assert parse_sort("t asc") == [("t", False)]
    assert parse_sort("entity") == [("entity", False)]
    assert parse_sort("a desc, b") == [("a", True), ("b", False)]
    assert parse_sort(None) == [] and parse_sort(3) == []


def test_sort_rows_numeric_natural_and_none_last():
    rows = [{"v": 10}, {"v": None}, {"v": 9.5}, {}, {"v": 100}]
    assert [r.get("v") for r in sort_rows(rows, [("v", True)])] == [100, 10, 9.5, None, None]
    assert [r.get("v") for r in sort_rows(rows, [("v", False)])] == [9.5, 10, 100, None, None]
    names = [{"n": "vm-10"}, {"n": "vm-9"}, {"n": "vm-100"}]
    assert [r["n"] for r in sort_rows(names, [("n", False)])] == ["vm-9", "vm-10", "vm-100"]


def test_table_model_hinted_columns_sort_filter_and_hidden_columns():
    model = table_model(FACTS, RENDER)
    assert model.columns == ["entity", "size_gb", "used_pct", "tier", "replicated"]
    assert [r[0] for r in model.rows] == ["vol-002", "vol-001", "vol-003"]
    assert model.filter_note == "replica-target volumes excluded"
    assert model.hidden_columns == ["array"]
    assert any("1 more column" in n and "array" in n for n in model.notes)


def test_table_model_without_hint_shows_all_columns_entity_first():
    model = table_model([{"b": 1, "entity": "x", "a": 2}], None)
    assert model.columns == ["entity", "b", "a"]
    assert model.hidden_columns == []


def test_table_model_caps_rows():
    rows = [{"entity": f"e{i}", "n": i} for i in range(1200)]
    model = table_model(rows, {"sort": "n desc"}, max_rows=500)
    assert len(model.rows) == 500 and model.more_rows == 700
    assert model.rows[0] == ["e1199", 1199]
    assert any("700 more rows" in n for n in model.notes)


def test_table_model_notes_missing_sort_and_column():
    model = table_model(FACTS, {"columns": ["entity", "nope"], "sort": "ghost desc"})
    assert model.columns == ["entity"]
    assert any("ghost" in n for n in model.notes) and any("'nope'" in n for n in model.notes)


def test_chart_series_line_per_metric():
    sem = {
        "series": [
            {"t": "2026-08-19T07:00:00Z", "entity": "fc1/3", "metric": "avg_iops", "value": 2210},
            {"t": "2026-08-19T06:00:00Z", "entity": "fc1/3", "metric": "avg_iops", "value": 1840},
            {"t": "2026-08-19T06:00:00Z", "entity": "fc1/3", "metric": "crc_errors", "value": 0},
        ],
        "render": {"default": "chart", "chart_hint": "line per metric"},
    }
    lines = chart_series(sem)
    assert list(lines) == ["avg_iops", "crc_errors"]
    assert lines["avg_iops"] == [
        (datetime(2026, 8, 19, 6, tzinfo=UTC), 1840.0),
        (datetime(2026, 8, 19, 7, tzinfo=UTC), 2210.0),
    ]
    assert lines["crc_errors"] == [(datetime(2026, 8, 19, 6, tzinfo=UTC), 0.0)]


def test_chart_series_line_per_entity_numeric_t_and_non_numeric_skipped():
    sem = {
        "series": [
            {"t": 2, "entity": "a", "metric": "m", "value": 5},
            {"t": 1, "entity": "a", "metric": "m", "value": 4},
            {"t": 1, "entity": "b", "metric": "m", "value": None},
            {"t": 2, "entity": "b", "metric": "m", "value": "x"},
            {"t": 3, "entity": "b", "metric": "m", "value": True},
            {"t": 4, "entity": "b", "metric": "m", "value": 1},
        ]
    }
    assert chart_series(sem) == {"a": [(1.0, 4.0), (2.0, 5.0)], "b": [(4.0, 1.0)]}
    assert skipped_points(sem) == 3


def test_chart_series_adds_the_other_dimension_when_it_varies():
    sem = {
        "series": [
            {"t": 1, "entity": "a", "metric": "x", "value": 1},
            {"t": 1, "entity": "a", "metric": "y", "value": 2},
        ]
    }
    assert set(chart_series(sem)) == {"a · x", "a · y"}


def test_grain_lines_counter_warning():
    text = _plain(grain_lines({"interval": "5m", "aggregation": "sum", "is_counter": True}))
    assert "interval: 5m" in text and "aggregation: sum" in text
    assert "counter: do not sum/average raw values" in text
    assert "counter: no" in _plain(grain_lines({"interval": "1h", "aggregation": "avg", "is_counter": False}))
    assert "is_counter not stated" in _plain(grain_lines({"aggregation": "total"}))
    assert "grain: not stated" in _plain(grain_lines(None, has_series=True))


def test_format_age_and_provenance():
    assert format_age(3600) == "1h 0m"
    assert format_age(300) == "5m 0s"
    assert format_age(42) == "42s"
    assert format_age(90061) == "1d 1h"
    prov = {
        "measured_at": "2026-08-19T09:00:00Z",
        "age_seconds": 3600,
        "source": "Unisphere REST",
        "source_export_date": "2026-08-19",
    }
    text = _plain(provenance_lines(prov, datetime(2026, 8, 19, 11, tzinfo=UTC), has_data=True))
    assert "measured_at: 2026-08-19T09:00:00Z" in text
    assert "1h 0m old when the tool answered" in text and "2h 0m old now" in text
    assert "source: Unisphere REST" in text and "source_export_date: 2026-08-19" in text
    unparsed = _plain(
        provenance_lines({"measured_at": "last year, roughly", "source": "s"}, None, has_data=True)
    )
    assert "last year, roughly" in unparsed and "old now" not in unparsed
    assert "provenance: not stated" in _plain(provenance_lines(None, None, has_data=True))


def test_coverage_lists_prefer_envelope_then_rows():
    sem = {
        "coverage": {"checked": [{"what": "all volumes"}]},
        "not_covered": ["snapshot capacity — timed out"],
    }
    assert coverage_lists(sem, None, "c1") == (["all volumes"], ["snapshot capacity — timed out"])
    rows = [
        {"call_id": "c1", "list": "not_checked", "what": "dev", "why": None},
        {"call_id": "c1", "list": "cannot_cover", "what": "hosts", "why": "no agent"},
        {"call_id": "c2", "list": "checked", "what": "other call", "why": None},
    ]
    assert coverage_lists({}, rows, "c1") == ([], ["dev", "hosts — no agent"])
    assert coverage_from_rows(rows, "c2")["checked"] == ["other call"]


def test_clarify_lines():
    assert _plain(clarify_lines({"clarify": None})) == "clarify: considered, no ambiguity"
    assert clarify_lines({}) == []
    text = _plain(
        clarify_lines({"clarify": {"question": "which one?", "candidates": ["vol-001", "vol-007"]}})
    )
    assert "which one?" in text and "vol-001, vol-007" in text


def test_caveat_lines_collects_everything():
    sem = {
        "provenance": {"measured_at": "x", "source": "src"},
        "not_covered": ["gap — why"],
        "clarify": None,
        "grain": {"collapsed": "per-LUN"},
    }
    text = _plain(caveat_lines({"call_id": "c"}, sem, None))
    for needle in (
        "measured_at: x",
        "source: src",
        "not covered:",
        "gap — why",
        "collapsed: per-LUN",
        "clarify: considered, no ambiguity",
    ):
        assert needle in text


def test_edges_and_prose():
    edge = {"from": "10:00:00:90:fa:12:34:56", "to": "vol-001", "kind": "masked-to", "via": "view mv_prod"}
    assert edge_line(edge) == "10:00:00:90:fa:12:34:56 —masked-to→ vol-001 (via view mv_prod)"
    assert edge_line({"from": "a", "to": "b"}) == "a → b"
    assert list(adjacency([edge, {"from": "h", "to": "x"}])) == ["10:00:00:90:fa:12:34:56", "h"]
    assert fact_sentence({"entity": "vm-1", "cpu": 4, "on": True}) == "vm-1: cpu=4, on=true"
    assert prose_lines({"note": "just words"}) == ["just words"]
    assert prose_lines({"facts": [{"entity": "a", "k": 1}], "edges": [edge]})[1].startswith("10:00")


def test_plan_views():
    views, notes = plan_views({"facts": [{"entity": "a"}], "render": {"default": "heatmap"}})
    assert views == [("table", "facts")]
    assert notes == ["unknown render hint 'heatmap': shown as a table"]
    views, notes = plan_views({"facts": [{"entity": "a"}], "render": {"default": "chart"}})
    assert views == [("table", "facts")] and "no series" in notes[0]
    views, _ = plan_views({"facts": [{"entity": "a"}], "series": [{"t": 1}], "edges": [{"from": "a"}]})
    assert views == [("table", "facts"), ("chart", "series"), ("graph", "edges")]
    views, notes = plan_views({"clarify": {"question": "q"}})
    assert views == [] and "question" in notes[0]


def test_absent_lines_from_rows_only():
    rows = [
        {"call_id": "c", "list": "checked", "what": "db", "why": None, "origin": "absent", "looked_for": "X"},
        {
            "call_id": "c",
            "list": "not_checked",
            "what": "archive",
            "why": "old",
            "origin": "absent",
            "looked_for": "X",
        },
    ]
    text = _plain(absent_lines(None, rows, "c"))
    assert "Nothing found" in text and "looked for: X" in text and "db" in text and "archive — old" in text


def test_fold_json_is_bounded_for_a_huge_result():
    huge = {"rows": [{"i": i, "blob": "y" * 500} for i in range(2000)], "long": "z" * 1_000_000}
    root = fold_json(huge)

    def count(node):
        return 1 + sum(count(c) for c in node.children or [])

    assert count(root) < 2500
    labels = [c.label for c in root.children]
    assert any("… 999840 more chars" in label for label in labels)
    rows = root.children[0]
    assert rows.label == "rows: [2000 items]"
    assert "1900 more items" in rows.children[-1].label
    deep: object = 1
    for _ in range(50):
        deep = [deep]
    node = fold_json(deep)
    depth = 0
    while node.children:
        node, depth = node.children[0], depth + 1
    assert depth <= 12 and "deeper levels" in node.label


def test_raw_json_exact_and_bounded():
    result = {"a": [1, 2], "ünï": "x"}
    assert raw_json(result) == json.dumps(result, indent=2, ensure_ascii=False)
    big = raw_json({"s": "q" * 300_000}, limit=1000)
    assert len(big) < 1100 and "more chars (truncated for display)" in big
    sections = raw_sections({"result": "refused", "semantics": {"af_semantics": True}})
    assert [h.split(" ")[0] for h, _ in sections] == ["result", "semantics"]
    assert sections[0][1] == '"refused"'


def test_recorded_text_is_made_inert():
    hostile = "[bold red]x[/]\x1b[2J\u202e"
    assert show(hostile) == "[bold red]x[/]␛[2J\\u202e"
    assert cell(hostile).plain == "[bold red]x[/]␛[2J\\u202e"
    assert "\x1b" not in raw_json({"k": "\x1b[2J\u0085"})
