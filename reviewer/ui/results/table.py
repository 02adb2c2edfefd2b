"""A table of fact rows in the hinted column order and sort (`render.columns`, `render.sort`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text
from textual.widget import Widget
from textual.widgets import DataTable, Static

from .safe import as_dict, cell, is_number, line, scalar_str, show

#: Rows drawn at most; the rest are counted in a note.
MAX_ROWS = 500
#: Columns drawn at most when no hint says which.
MAX_COLUMNS = 40

_DIGITS = re.compile(r"(\d+)")


def parse_sort(spec: Any) -> list[tuple[str, bool]]:
    """`"used_pct desc, entity"` → `[("used_pct", True), ("entity", False)]` (True = descending)."""
    if not isinstance(spec, str):
        return []
    keys: list[tuple[str, bool]] = []
    for part in spec.split(","):
        words = part.split()
        if not words:
            continue
        desc = len(words) > 1 and words[-1].lower() in ("desc", "descending")
        if len(words) > 1 and words[-1].lower() in ("asc", "ascending", "desc", "descending"):
            words = words[:-1]
        keys.append((" ".join(words), desc))
    return keys


def _natural(text: str) -> tuple[tuple[int, int | str], ...]:
    return tuple((0, int(p)) if p.isdigit() else (1, p.lower()) for p in _DIGITS.split(text) if p)


def sort_key(value: Any) -> tuple[int, Any]:
    """Numbers numerically, then strings naturally ("vm-9" before "vm-10"), then anything else."""
    if is_number(value):
        return (0, float(value))
    if isinstance(value, str):
        return (1, _natural(value))
    return (2, scalar_str(value))


def _row_key(name: str) -> Callable[[dict[str, Any]], tuple[int, Any]]:
    return lambda row: sort_key(row.get(name))


def sort_rows(rows: list[dict[str, Any]], keys: list[tuple[str, bool]]) -> list[dict[str, Any]]:
    """Rows sorted by `keys` (stable, multi-key); a missing/None value always sorts last."""
    out = list(rows)
    for name, desc in reversed(keys):
        present = [r for r in out if r.get(name) is not None]
        missing = [r for r in out if r.get(name) is None]
        out = sorted(present, key=_row_key(name), reverse=desc) + missing
    return out


@dataclass
class TableModel:
    """What the table shows: columns in order, the (bounded) rows, and notes for what was left out."""

    columns: list[str]
    rows: list[list[Any]]
    notes: list[str] = field(default_factory=list)
    filter_note: str | None = None
    hidden_columns: list[str] = field(default_factory=list)
    more_rows: int = 0


def column_order(rows: list[dict[str, Any]], hinted: Any) -> tuple[list[str], list[str], list[str]]:
    """(shown, hidden, hinted-but-missing) column names. Unhinted data columns are hidden when a hint exists."""
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(str(key), None)
    data_cols = list(seen)
    if "entity" in seen:
        data_cols = ["entity"] + [c for c in data_cols if c != "entity"]
    hint = [str(c) for c in hinted] if isinstance(hinted, list) else []
    shown = [c for c in dict.fromkeys(hint) if c in seen]
    missing = [c for c in dict.fromkeys(hint) if c not in seen]
    if not shown:  # no usable hint: everything, in first-seen order
        return data_cols[:MAX_COLUMNS], data_cols[MAX_COLUMNS:], missing
    hidden = [c for c in data_cols if c not in shown]
    return shown, hidden, missing


def table_model(rows: list[Any], render: dict[str, Any] | None, *, max_rows: int = MAX_ROWS) -> TableModel:
    """Pure: the hinted columns, sorted rows, and the notes a reader needs."""
    render = as_dict(render)
    dict_rows = [r for r in rows if isinstance(r, dict)]
    shown, hidden, missing = column_order(dict_rows, render.get("columns"))
    notes: list[str] = []
    keys = parse_sort(render.get("sort"))
    known = {c for r in dict_rows for c in r}
    usable = [(k, d) for k, d in keys if k in known]
    for k, _ in keys:
        if k not in known:
            notes.append(f"sort column '{show(k)}' is not in the data: left unsorted by it")
    if usable:
        notes.append("sorted by " + ", ".join(f"{show(k)} {'desc' if d else 'asc'}" for k, d in usable))
    ordered = sort_rows(dict_rows, usable)
    for c in missing:
        notes.append(f"hinted column '{show(c)}' is not in the data")
    if hidden:
        word = "column" if len(hidden) == 1 else "columns"
        notes.append(
            f"{len(hidden)} more {word} not in the hinted order: "
            + ", ".join(show(c) for c in hidden[:12])
            + (" …" if len(hidden) > 12 else "")
            + " (press r for the raw JSON)"
        )
    skipped = len(rows) - len(dict_rows)
    if skipped:
        notes.append(f"{skipped} rows are not objects and are not shown (press r for the raw JSON)")
    more = max(0, len(ordered) - max_rows)
    if more:
        notes.append(f"{more} more rows not shown (first {max_rows} drawn)")
    body = [[r.get(c) for c in shown] for r in ordered[:max_rows]]
    fnote = render.get("filter_note")
    return TableModel(
        columns=shown,
        rows=body,
        notes=notes,
        filter_note=show(fnote, 500) if fnote not in (None, "") else None,
        hidden_columns=hidden,
        more_rows=more,
    )


class ResultTable(DataTable):
    """A bounded DataTable whose header labels and cells are plain Text (filled on mount)."""

    DEFAULT_CSS = """
    ResultTable { height: auto; max-height: 24; }
    """

    def __init__(self, model: TableModel, **kwargs: Any) -> None:
        super().__init__(zebra_stripes=True, cursor_type="row", **kwargs)
        self.model = model

    def on_mount(self) -> None:
        for index, name in enumerate(self.model.columns):
            self.add_column(Text(show(name, 60), style="bold"), key=f"c{index}")
        for number, row in enumerate(self.model.rows):
            self.add_row(*(cell(v) for v in row), key=f"r{number}")


def filter_note_widget(note: str) -> Static:
    """The render hint's filter note, drawn the same above every view."""
    return Static(line(("filter: ", "bold yellow"), show(note, 500)), classes="result-filter-note")


def table_widgets(model: TableModel) -> list[Widget]:
    """The filter note above, the table, and the notes (hidden columns, more rows) below."""
    out: list[Widget] = []
    if model.filter_note:
        out.append(filter_note_widget(model.filter_note))
    if model.columns:
        out.append(ResultTable(model, classes="result-table"))
    else:
        out.append(Static(Text("(no columns to show)", style="dim")))
    if model.notes:
        out.append(Static(Text("\n".join(model.notes), style="dim"), classes="result-table-notes"))
    return out
