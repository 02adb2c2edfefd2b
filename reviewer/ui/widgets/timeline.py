"""A run's timeline on one cursor: iterations, tool calls and results, evictions, findings."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text

from reviewer.service.vocabulary import call_failed, call_status, disagreement
from reviewer.ui.widgets.cursor_list import CursorList
from reviewer.ui.widgets.safe import human_size, inert

#: Characters of recorded text a timeline row may show (a row is one line anyway).
ROW_CHARS = 300

FINDING_STYLE = "bold yellow"
ERROR_STYLE = "bold red"


def _one_line(value: Any, limit: int = ROW_CHARS) -> str:
    return inert(("" if value is None else str(value))[:limit], keep_newlines=False)


def timeline_row_text(row: dict[str, Any]) -> Text:
    """One timeline row as a single line of Text (recorded parts inert)."""
    kind = row["kind"]
    if kind == "iteration":
        it = row.get("iteration")
        return Text.assemble(
            ("▸ ", "bold cyan"),
            (f"iteration {it if it is not None else '?'}", "bold cyan"),
            "  ",
            (_one_line(row.get("text")), "italic dim"),
        )
    if kind == "tool_call":
        failed = call_failed(row.get("error"), row.get("status"))
        mark = ("✗ ", ERROR_STYLE) if failed else ("⚙ ", "bold")
        status = call_status(row.get("status"), row.get("completed"))
        flags = []
        if row.get("absent") and status != "absent":
            flags.append("absent")
        if row.get("has_semantics"):
            flags.append("semantics")
        if row.get("refused"):
            flags.append("refused")
        return Text.assemble(
            "  ",
            mark,
            (_one_line(row.get("tool_name"), 60), "bold"),
            "  ",
            (_one_line(row.get("call_id"), 40), "dim"),
            "  ",
            (_one_line(status, 20), ERROR_STYLE if failed else ""),
            ("  " + " ".join(flags)) if flags else "",
            (f"  {row['duration_ms']} ms" if row.get("duration_ms") is not None else "", "dim"),
            (f"  {human_size(row.get('result_chars'))}" if row.get("result_chars") else "", "dim"),
        )
    if kind == "eviction":
        dropped = row.get("dropped_tools") or []
        names = ", ".join(str(d) for d in dropped) if isinstance(dropped, list) else str(dropped)
        return Text.assemble(
            "  ",
            ("✂ evicted ", "magenta"),
            (_one_line(names, 120) or "context", "magenta"),
            (f"  ({_one_line(row.get('strategy'), 40)}, iteration {row.get('iteration')})", "dim"),
        )
    if kind == "finding":
        f = row["finding"]
        codes = f.get("codes") or []
        quote = f.get("span_text")
        body: Any = f"“{_one_line(quote, 160)}”" if quote else _one_line(f.get("message"), 200)
        placed = "" if f.get("span") or not f.get("field") else "  (unplaceable)"
        return Text.assemble(
            "  ",
            ("⚑ ", FINDING_STYLE),
            (_one_line(f.get("kind"), 40), FINDING_STYLE),
            (f" [{_one_line(', '.join(str(c) for c in codes), 80)}]" if codes else "", "yellow"),
            label_marks(row.get("labels") or {}),
            "  ",
            body,
            (placed, "dim"),
        )
    return Text(_one_line(row))


def label_marks(labels: dict[str, str]) -> Text:
    """`  ✓ ann:tp bob:fp` (reviewers' current verdicts), marked when they disagree."""
    if not labels:
        return Text("")
    disagree = disagreement(labels.values())
    out = Text("  ")
    out.append("≠ " if disagree else "✓ ", style="bold red" if disagree else "green")
    out.append(" ".join(f"{_one_line(who, 24)}:{verdict}" for who, verdict in labels.items()), style="green")
    return out


class Timeline(CursorList):
    """The rows of one run, in order. `finding_indices` lets the screen jump between findings."""

    HELP: ClassVar[str] = (
        "The run in order. `j`/`k` move, `[`/`]` jump between findings, `enter` focuses the detail."
    )

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.rows: list[dict[str, Any]] = []
        self._texts: dict[int, Text] = {}
        self.empty_text = Text("loading the timeline…", style="dim italic")

    def set_rows(self, rows: list[dict[str, Any]], *, cursor: int = 0) -> None:
        self.rows = rows
        self._texts.clear()
        self.empty_text = Text("nothing recorded", style="dim italic")
        self.set_row_count(len(rows), cursor=cursor)

    @property
    def finding_indices(self) -> list[int]:
        return [i for i, r in enumerate(self.rows) if r["kind"] == "finding"]

    def index_of_finding(self, finding_id: str) -> int | None:
        for i, r in enumerate(self.rows):
            if r["kind"] == "finding" and r["id"] == finding_id:
                return i
        return None

    def set_finding_labels(self, finding_id: str, labels: dict[str, str]) -> None:
        """Show a finding's new current verdicts (after a label or an undo) without reloading the run."""
        index = self.index_of_finding(finding_id)
        if index is not None:
            self.rows[index]["labels"] = labels
            self._texts.pop(index, None)
            self.refresh()

    def row_at(self, index: int) -> dict[str, Any] | None:
        return self.rows[index] if 0 <= index < len(self.rows) else None

    def render_row(self, index: int, width: int) -> Text | None:
        text = self._texts.get(index)
        if text is None:
            text = self._texts[index] = timeline_row_text(self.rows[index])
        return text
