"""A terminal chart of `series` (one line per entity, or per metric), with its grain beside it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static
from textual_plotext import PlotextPlot

from reviewer.review.render_hints import is_counter_looking

from .safe import as_dict, as_list, cell, is_number, line, scalar_str, show
from .table import sort_key

Point = tuple[Any, float]

#: Rows in the readable table under the chart.
MAX_TABLE_ROWS = 100
#: Points plotted per line at most.
MAX_POINTS = 2000


def parse_time(value: Any) -> datetime | None:
    """An ISO-8601 time string as an aware datetime (naive → UTC), else None."""
    if not isinstance(value, str) or len(value) < 8:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def x_value(t: Any) -> Any:
    """`t` as a datetime when it is a time, as a float when it is a number, else as shown text."""
    when = parse_time(t)
    if when is not None:
        return when
    if is_number(t):
        return float(t)
    return show(t, 60)


def per_metric(render: Any) -> bool:
    hint = as_dict(render).get("chart_hint")
    return isinstance(hint, str) and "per metric" in hint.lower()


def _labels(points: list[dict[str, Any]], by_metric: bool) -> list[str]:
    """One label per point: the primary dimension, plus the other one where it varies within a line."""
    primary = "metric" if by_metric else "entity"
    other = "entity" if by_metric else "metric"
    others: dict[str, set[str]] = {}
    for p in points:
        others.setdefault(show(p.get(primary), 60), set()).add(show(p.get(other), 60))
    out = []
    for p in points:
        key = show(p.get(primary), 60)
        out.append(f"{key} · {show(p.get(other), 60)}" if len(others[key]) > 1 else key)
    return out


def chart_series(semantics: dict[str, Any] | None) -> dict[str, list[Point]]:
    """Pure: `{label: [(x, y), ...]}` sorted by x; x is a datetime/number/text, y a float.

    Non-numeric values (null, strings, booleans) are not plotted; `skipped_points` counts them.
    """
    sem = as_dict(semantics)
    points = [p for p in as_list(sem.get("series")) if isinstance(p, dict)]
    labels = _labels(points, per_metric(sem.get("render")))
    lines: dict[str, list[Point]] = {}
    for label, p in zip(labels, points, strict=True):
        value = p.get("value")
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue
        lines.setdefault(label, []).append((x_value(p.get("t")), float(value)))
    for pts in lines.values():
        pts.sort(key=lambda xy: _x_key(xy[0]))
    return lines


def skipped_points(semantics: dict[str, Any] | None) -> int:
    return sum(
        1
        for p in as_list(as_dict(semantics).get("series"))
        if isinstance(p, dict) and not is_number(p.get("value"))
    )


def _x_key(x: Any) -> tuple[int, Any]:
    if isinstance(x, datetime):
        return (0, x.timestamp())
    return sort_key(x)


def grain_lines(grain: Any, *, has_series: bool = True) -> list[Text]:
    """Pure: the grain as readable lines; a visible warning when the values are a counter."""
    g = as_dict(grain)
    out: list[Text] = []
    if not g:
        if has_series:
            out.append(line(("grain: not stated", "bold yellow")))
        return out
    if "interval" in g:
        out.append(line(("interval: ", "bold"), show(g["interval"], 80)))
    if "aggregation" in g:
        out.append(line(("aggregation: ", "bold"), show(g["aggregation"], 80)))
    if g.get("is_counter") is True:
        out.append(line(("⚠ counter: do not sum/average raw values", "bold black on yellow")))
    elif g.get("is_counter") is False:
        out.append(line(("counter: no", "dim")))
    elif is_counter_looking(g.get("aggregation")):
        out.append(line(("⚠ is_counter not stated for a counter-looking aggregation", "bold yellow")))
    if "collapsed" in g:
        out.append(line(("collapsed: ", "bold"), show(g["collapsed"], 300)))
    for key in g:
        if key not in ("interval", "aggregation", "is_counter", "collapsed"):
            out.append(line((f"{show(key, 40)}: ", "bold"), show(g[key], 200)))
    return out


def _x_text(x: Any) -> str:
    if isinstance(x, datetime):
        return x.isoformat().replace("+00:00", "Z")
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return scalar_str(x)


def series_table(semantics: dict[str, Any] | None, *, max_rows: int = MAX_TABLE_ROWS) -> tuple[Table, int]:
    """The series pivoted: one row per `t`, one column per line; raw values (also non-numeric) shown."""
    sem = as_dict(semantics)
    points = [p for p in as_list(sem.get("series")) if isinstance(p, dict)]
    labels = _labels(points, per_metric(sem.get("render")))
    columns = list(dict.fromkeys(labels))
    grid: dict[Any, dict[str, Any]] = {}
    for label, p in zip(labels, points, strict=True):
        grid.setdefault(x_value(p.get("t")), {})[label] = p.get("value")
    xs = sorted(grid, key=_x_key)
    table = Table(show_edge=False, pad_edge=False, header_style="bold", box=None)
    table.add_column(Text("t"))
    for c in columns:
        table.add_column(Text(c), justify="right")
    for x in xs[:max_rows]:
        row = grid[x]
        table.add_row(Text(show(_x_text(x), 60)), *(cell(row[c]) if c in row else Text("") for c in columns))
    return table, max(0, len(xs) - max_rows)


def _ticks(xs: list[float], labels: list[str], count: int = 6) -> tuple[list[float], list[str]]:
    if len(xs) <= count:
        return xs, labels
    step = (len(xs) - 1) / (count - 1)
    idx = sorted({round(i * step) for i in range(count)})
    return [xs[i] for i in idx], [labels[i] for i in idx]


def plot_data(
    lines: dict[str, list[Point]],
) -> tuple[dict[str, tuple[list[float], list[float]]], list[float], list[str]]:
    """Numeric x for plotext: times as epoch seconds, text as ordinal positions; plus tick labels."""
    all_x = [x for pts in lines.values() for x, _ in pts]
    texts = sorted({x for x in all_x if isinstance(x, str)}, key=sort_key)
    position = {t: float(i) for i, t in enumerate(texts)}
    times = [x for x in all_x if isinstance(x, datetime)]
    same_day = len({t.date() for t in times}) <= 1

    def num(x: Any) -> float:
        if isinstance(x, datetime):
            return x.timestamp()
        if isinstance(x, str):
            return position[x]
        return float(x)

    def label(x: Any) -> str:
        if isinstance(x, datetime):
            return x.strftime("%H:%M" if same_day else "%m-%d %H:%M")
        return show(x, 16) if isinstance(x, str) else scalar_str(x)

    out = {
        name: ([num(x) for x, _ in pts[:MAX_POINTS]], [y for _, y in pts[:MAX_POINTS]])
        for name, pts in lines.items()
    }
    uniq = sorted(set(all_x), key=_x_key)
    ticks, tick_labels = _ticks([num(x) for x in uniq], [label(x) for x in uniq])
    return out, ticks, tick_labels


#: line colours, plotext name -> the rich colour of the same line in the legend
PALETTE: tuple[tuple[str, str], ...] = (
    ("blue", "blue"),
    ("red", "red"),
    ("green", "green"),
    ("magenta", "magenta"),
    ("cyan", "cyan"),
    ("yellow", "yellow"),
)
#: one line's largest value this many times another's: each line gets its own plot (its own y axis)
SPLIT_RATIO = 10.0
#: separate plots drawn at most (the rest are in the table)
MAX_PANELS = 6


def needs_split(lines: dict[str, list[Point]], ratio: float = SPLIT_RATIO) -> bool:
    """Pure: True when the lines' magnitudes differ so much that one y axis would flatten the small ones."""
    peaks = [max(abs(y) for _, y in pts) for pts in lines.values() if pts]
    if len(peaks) < 2:
        return False
    low, high = min(peaks), max(peaks)
    return high > 0 and (low == 0 or high / low >= ratio)


def legend_text(names: list[str]) -> Text:
    """The legend, drawn outside the plot: one coloured mark and name per line."""
    out = Text()
    for index, name in enumerate(names):
        if index:
            out.append("   ")
        out.append("━━ ", style=f"bold {PALETTE[index % len(PALETTE)][1]}")
        out.append(show(name, 80))
    return out


class SeriesPlot(PlotextPlot):
    """The plot itself, as wide as its panel; `lines` keeps what was plotted so tests (and readers) can see it.
    No legend inside the plot (it would hide points): `ChartView` draws it beside."""

    DEFAULT_CSS = """
    SeriesPlot { height: 16; width: 1fr; }
    SeriesPlot.-small { height: 9; }
    """

    def __init__(self, lines: dict[str, list[Point]], *, first_color: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.lines = lines
        data, ticks, tick_labels = plot_data(lines)
        for index, (xs, ys) in enumerate(data.values()):
            # plotext output is parsed as ANSI: names are never passed to it (no label, no title).
            color = PALETTE[(first_color + index) % len(PALETTE)][0]
            self.plt.plot(xs, ys, marker="braille", color=color)
        if ticks:
            self.plt.xticks(ticks, tick_labels)


class ChartView(Vertical):
    """The chart across the panel's width with its legend under it (one plot per line when their magnitudes
    differ by `SPLIT_RATIO` or more, each on its own y axis), then the grain, then a readable table."""

    DEFAULT_CSS = """
    ChartView { height: auto; }
    ChartView .result-legend { height: auto; margin-bottom: 1; }
    ChartView .result-grain { height: auto; }
    ChartView .result-series-table { height: auto; margin-top: 1; }
    """

    def __init__(self, semantics: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.semantics = semantics
        self.lines = chart_series(semantics)
        self.split = needs_split(self.lines)

    def _plots(self) -> ComposeResult:
        names = list(self.lines)
        if not self.split:
            yield SeriesPlot(self.lines, classes="result-plot")
            yield Static(legend_text(names), classes="result-legend")
            return
        for index, name in enumerate(names[:MAX_PANELS]):
            colored = Text.assemble(
                ("━━ ", f"bold {PALETTE[index % len(PALETTE)][1]}"),
                (show(name, 80), "bold"),
                ("  own y axis", "dim"),
            )
            yield Static(colored, classes="result-legend result-panel-title")
            yield SeriesPlot({name: self.lines[name]}, first_color=index, classes="result-plot -small")
        if len(names) > MAX_PANELS:
            yield Static(Text(f"{len(names) - MAX_PANELS} more lines: see the table", style="dim"))

    def compose(self) -> ComposeResult:
        if self.lines:
            if self.split:
                yield Static(
                    Text(
                        "the lines differ in magnitude by 10× or more: one plot each, each on its own y axis",
                        style="italic dim",
                    ),
                    classes="result-notes",
                )
            yield from self._plots()
        else:
            yield Static(Text("no numeric values to plot", style="dim"), classes="result-plot")
        side = Text()
        side.append("grain  ", style="bold underline")
        side.append_text(Text("  ·  ").join(grain_lines(self.semantics.get("grain"))))
        skipped = skipped_points(self.semantics)
        if skipped:
            side.append(f"\n{skipped} non-numeric values not plotted (see the table)", style="yellow")
        yield Static(side, classes="result-grain")
        table, more = series_table(self.semantics)
        yield Static(table, classes="result-series-table")
        if more:
            yield Static(Text(f"{more} more rows not shown", style="dim"))
