"""`render_tool_result` and `ToolResultView`: one recorded tool call drawn by its render hints."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from reviewer.review.render_hints import filter_note

from .caveats import brief_caveat_lines, brief_caveats_widget, caveat_lines, caveats_widget
from .chart import ChartView
from .decisions import decision_widgets
from .graph import graph_widget
from .plain import absent_lines, coverage_wrapper_lines, error_lines, value_widget
from .plan import plan_views
from .prose import prose_widget
from .raw import RawView
from .safe import as_dict, as_list, is_number, line, show
from .table import filter_note_widget, table_model, table_widgets

#: A container of tool results with this class is short: each result draws its caveats in brief above the data
#: and the full box after it, so the data is on screen without scrolling.
COMPACT_RESULTS = "-compact-results"

_PART_TITLES = {"facts": "facts", "series": "series", "edges": "edges", "all": "all data"}


def header_line(call: dict[str, Any]) -> Text:
    out = line(
        (show(call.get("tool_name"), 120), "bold"), ("  ", ""), (show(call.get("call_id"), 120), "dim")
    )
    if call.get("iteration") is not None:
        out.append_text(line((f"  iteration {show(call['iteration'], 20)}", "dim")))
    if is_number(call.get("duration_ms")):
        out.append_text(line((f"  {show(call['duration_ms'], 20)} ms", "dim")))
    if call.get("status") not in (None, ""):
        out.append_text(line(("  status: ", "dim"), (show(call["status"], 40), "bold")))
    out.append("   r: raw JSON", style="dim italic")
    return out


#: characters of the arguments shown above a drawn result (the raw view, `r`, has them all)
ARGS_LIMIT = 600


def args_line(call: dict[str, Any]) -> Text:
    """What was asked: the arguments sent to the tool, one bounded line of compact JSON."""
    args = call.get("args")
    if args in (None, {}, [], ""):
        return line(("args: ", "bold"), ("(none recorded)", "dim"))
    text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, default=str)
    return line(("args: ", "bold"), show(text, ARGS_LIMIT))


def refusal_lines(call: dict[str, Any], has_semantics: bool) -> list[Text]:
    refused = as_dict(call.get("refused"))
    out = [line(("⛔ the model got a refusal, not this data", "bold white on dark_red"))]
    if refused.get("sizeChars") is not None:
        out.append(
            line(
                f"result of {show(refused.get('sizeChars'), 20)} chars is over the "
                f"{show(refused.get('maxChars'), 20)}-char ceiling"
            )
        )
    result = call.get("result")
    if isinstance(result, str):
        out.append(line(("the model read: ", "bold"), show(result, 2000)))
    if has_semantics:
        out.append(
            line(("the recording kept the full envelope (tools.semantics_declared): drawn below", "yellow"))
        )
    return out


def _view_widgets(view: str, part: str, sem: dict[str, Any], *, primary: bool) -> list[Widget]:
    """One view of the result; the filter note goes with every view, not only the primary table."""
    render = as_dict(sem.get("render"))
    note = filter_note(render)
    above: list[Widget] = [filter_note_widget(note)] if note else []
    if view == "prose":
        return above + [prose_widget(sem)]
    if view == "chart":
        return above + [ChartView(sem, classes="result-chart")]
    if view == "graph":
        return above + [graph_widget(sem.get("edges"), render.get("chart_hint") if primary else None)]
    rows = as_list(sem.get(part))
    model = table_model(rows, render if primary else None)  # a secondary table keeps its own columns
    model.filter_note = model.filter_note or (show(note, 500) if note else None)
    return table_widgets(model)


def semantic_widgets(
    call: dict[str, Any], sem: dict[str, Any], rows: list[dict[str, Any]], now: datetime | None
) -> list[Widget]:
    views, notes = plan_views(sem)
    has_chart = any(view == "chart" for view, _ in views)
    full = caveat_lines(call, sem, rows, now=now, include_grain=not has_chart)
    top = caveats_widget(full)
    top.add_class("result-caveats-top")
    out: list[Widget] = [brief_caveats_widget(brief_caveat_lines(call, sem, rows, now=now)), top]
    if notes:
        out.append(Static(Text("\n".join(notes), style="italic yellow"), classes="result-notes"))
    for index, (view, part) in enumerate(views):
        if len(views) > 1:
            out.append(
                Static(Text(_PART_TITLES.get(part, part), style="bold underline"), classes="result-heading")
            )
        out += _view_widgets(view, part, sem, primary=index == 0)
    after = caveats_widget(full)
    after.add_class("result-caveats-after")
    return out + [after]


def build_drawn(
    call: dict[str, Any], coverage: list[dict[str, Any]] | None = None, *, now: datetime | None = None
) -> list[Widget]:
    """The drawn view of one call, as a list of widgets (header, notices, caveats, data)."""
    call_id = call.get("call_id")
    rows = [r for r in coverage or [] if isinstance(r, dict) and r.get("call_id") == call_id]
    sem = call.get("semantics") if isinstance(call.get("semantics"), dict) else None
    result = call.get("result")
    out: list[Widget] = [
        Static(header_line(call), classes="result-header"),
        Static(args_line(call), classes="result-args"),
    ]
    out += decision_widgets(call)
    if call.get("refused") or (call.get("status") == "invalid" and sem is not None):
        out.append(Static(Text("\n").join(refusal_lines(call, sem is not None)), classes="result-refusal"))
    if is_number(call.get("repeated")):
        out.append(
            Static(
                line((f"repeated call: #{show(call['repeated'], 20)} with the same arguments", "yellow")),
                classes="result-notes",
            )
        )
    if call.get("error"):
        out.append(Static(Text("\n").join(error_lines(call)), classes="result-error"))
        return out
    if sem is not None:
        return out + semantic_widgets(call, sem, rows, now)
    res = as_dict(result)
    if call.get("absent") or res.get("af_absent") is True:
        out.append(Static(Text("\n").join(absent_lines(result, rows, call_id)), classes="result-absent"))
        return out
    if "af_coverage" in res:
        out.append(
            Static(Text("\n").join(coverage_wrapper_lines(res["af_coverage"])), classes="result-caveats")
        )
        out.append(value_widget(res.get("result")))
        return out
    if res.get("af_semantics") is True:
        out.append(
            Static(
                Text(
                    "carries af_semantics but the framework did not recognise it (no "
                    "tools.semantics_declared event): shown as plain data",
                    style="italic yellow",
                ),
                classes="result-notes",
            )
        )
    if rows:
        out.append(caveats_widget(caveat_lines(call, None, rows, now=now)))
    out.append(value_widget(result))
    return out


class ToolResultView(Vertical, can_focus=True):
    """One tool result: drawn by its render hints, or (press r) the exact recorded JSON."""

    BINDINGS = [Binding("r", "toggle_raw", "Raw JSON", id="result.raw")]
    #: the rules below also match on an ancestor (`COMPACT_RESULTS`); every rule names ToolResultView itself
    SCOPED_CSS = False

    DEFAULT_CSS = """
    ToolResultView { height: auto; padding: 0 1; }
    ToolResultView:focus-within { background: $boost; }
    ToolResultView .result-drawn, ToolResultView .result-raw { height: auto; }
    ToolResultView .result-caveats { border: round $warning; padding: 0 1; height: auto; }
    ToolResultView .result-refusal { border: heavy $error; padding: 0 1; height: auto; }
    ToolResultView .result-error { border: heavy $error; padding: 0 1; height: auto; }
    ToolResultView .result-decisions { border: heavy $warning; padding: 0 1; height: auto; }
    ToolResultView .result-absent { border: round $secondary; padding: 0 1; height: auto; }
    ToolResultView .result-heading { margin-top: 1; }
    ToolResultView .result-caveats-brief, ToolResultView .result-caveats-after { display: none; }
    ToolResultView .result-caveats-after { margin-top: 1; }
    .-compact-results ToolResultView .result-caveats-top { display: none; }
    .-compact-results ToolResultView .result-caveats-after { display: block; }
    .-compact-results ToolResultView .result-caveats-brief {
        display: block; height: auto; max-height: 3; border-left: outer $warning; padding: 0 0 0 1;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    .-compact-results ToolResultView .result-header, .-compact-results ToolResultView .result-args {
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    .-compact-results ChartView > .result-notes { display: none; }
    .-compact-results ChartView > .result-legend { margin-bottom: 0; }
    .-compact-results SeriesPlot { height: 9; }
    .-compact-results SeriesPlot.-small { height: 7; }
    """

    raw: reactive[bool] = reactive(False, init=False)

    def __init__(
        self,
        call: dict[str, Any],
        coverage: list[dict[str, Any]] | None = None,
        *,
        raw: bool = False,
        now: datetime | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.call = call
        self.coverage = coverage
        self.now = now
        self.set_reactive(ToolResultView.raw, raw)

    def compose(self) -> ComposeResult:
        drawn = Vertical(*build_drawn(self.call, self.coverage, now=self.now), classes="result-drawn")
        drawn.display = not self.raw
        yield drawn
        if self.raw:
            yield RawView(self.call, classes="result-raw")

    def action_toggle_raw(self) -> None:
        self.raw = not self.raw

    def watch_raw(self, raw: bool) -> None:
        self.query_one(".result-drawn").display = not raw
        existing = self.query(".result-raw")
        if existing:
            existing.first().display = raw
        elif raw:
            self.mount(RawView(self.call, classes="result-raw"))


def render_tool_result(
    call: dict[str, Any],
    coverage: list[dict[str, Any]] | None = None,
    *,
    raw: bool = False,
    now: datetime | None = None,
) -> Widget:
    """The widget for one tool call from `store.runs.get_run(...)["tool_calls"]`.

    `coverage` may be the run's whole coverage list; rows are matched by `call_id`.
    """
    return ToolResultView(call, coverage, raw=raw, now=now)
