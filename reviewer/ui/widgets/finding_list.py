"""The findings queue list: every finding across runs, one line each, paged by keyset like the runs list."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text

from reviewer.service.vocabulary import DISAGREEMENT, WITHHELD_ANSWER, disagreement
from reviewer.ui.widgets.run_list import BLOCK, RunList
from reviewer.ui.widgets.safe import cell

#: the run column's width
RUN_WIDTH = 22
#: (title, width or 0 for "the rest")
COLUMNS: tuple[tuple[str, int], ...] = (
    ("", 1),
    ("run", RUN_WIDTH),
    ("kind", 16),
    ("codes", 14),
    ("tool", 12),
    ("labels", 12),
    ("clause / message", 0),
)

MARKS: dict[str, tuple[str, str]] = {
    "unlabelled": ("·", "dim"),
    "mine": ("✓", "bold green"),
    "others": ("○", "cyan"),
    "disagreement": ("≠", "bold red"),
}


def label_state(labels: dict[str, str], reviewer: str | None) -> str:
    """unlabelled | mine | others | disagreement, for the mark in a row's first column."""
    if not labels:
        return "unlabelled"
    if disagreement(labels.values()):
        return DISAGREEMENT
    return "mine" if reviewer in labels else "others"


def labels_summary(labels: dict[str, str], reviewer: str | None) -> str:
    """`you:tp bob:fp` (you first, then the others by name)."""
    parts = [f"you:{labels[reviewer]}"] if reviewer in labels else []
    parts += [f"{name}:{verdict}" for name, verdict in sorted(labels.items()) if name != reviewer]
    return " ".join(parts)


def header_text() -> Text:
    return Text(" ").join(
        Text(title if width == 0 else title.ljust(width), style="bold") for title, width in COLUMNS
    )


#: drawn in the run column on the first row of a run's findings (the run's heading) and on the others
RUN_HEADING = "▼ "
RUN_CONTINUED = "│"


def run_cell(row: dict[str, Any], heading: bool) -> Text:
    """The run column: the run id (and agent) on the first of its findings, a rule on the rest of them."""
    if not heading:
        return cell(RUN_CONTINUED, RUN_WIDTH, style="dim magenta")
    name = row.get("run_id") or row.get("run_key") or "?"
    agent = row.get("agent_id")
    return cell(f"{RUN_HEADING}{name}" + (f" · {agent}" if agent else ""), RUN_WIDTH, style="bold magenta")


def finding_row_text(row: dict[str, Any], width: int, reviewer: str | None, *, heading: bool = True) -> Text:
    """One finding as a single line of cells (every recorded string inert and cut to its column); `heading`:
    it is the first of its run's findings here (the run is named), else the run column continues its rule."""
    labels = row.get("labels") or {}
    mark, mark_style = MARKS[label_state(labels, reviewer)]
    used = sum(w for _, w in COLUMNS) + len(COLUMNS) - 1
    rest = max(8, width - used)
    quote = row.get("span_text")
    body = f"“{quote}”" if quote else (row.get("message") or "")
    withheld = row.get("kind") == WITHHELD_ANSWER
    parts = [
        Text(mark, style=mark_style, end=""),
        run_cell(row, heading),
        cell(row.get("kind") or "?", 16, style="bold red" if withheld else "bold yellow"),
        cell(", ".join(str(c) for c in row.get("codes") or []), 14, style="yellow"),
        cell(row.get("tool_name") or "", 12),
        cell(labels_summary(labels, reviewer), 12, style=mark_style if labels else "dim"),
        cell(body, rest),
    ]
    return Text(" ", end="").join(parts)


class FindingList(RunList):
    """Shows `row_count` findings in the queue's order, each run's findings under its heading (the run named
    on its first row); blocks are read on demand (`BlockNeeded`, keyset on each row's `cursor`)."""

    HELP: ClassVar[str] = (
        "Every finding, grouped by run (each run named on its first finding). `enter` opens its run; `n` jumps "
        "to the next unlabelled; `O` changes the order."
    )
    EMPTY_MATCH: ClassVar[str] = "no findings match"

    def __init__(
        self,
        *,
        reviewer: str | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.reviewer = reviewer

    def render_row(self, index: int, width: int) -> Text | None:
        row = self.row_at(index)
        if row is None:
            return super().render_row(index, width)  # asks for the block
        return finding_row_text(row, width, self.reviewer, heading=self.starts_run(index))

    def starts_run(self, index: int) -> bool:
        """Whether row `index` is the first of its run's findings here (a row before it not loaded: yes)."""
        row, before = self.row_at(index), self.row_at(index - 1) if index > 0 else None
        return row is None or before is None or before.get("run_key") != row.get("run_key")

    def index_of(self, finding_id: str) -> int | None:
        """The row index of a loaded finding (None when it is not in a loaded block)."""
        for block, rows in self._blocks.items():
            for offset, row in enumerate(rows):
                if row.get("id") == finding_id:
                    return block * BLOCK + offset
        return None

    def update_labels(self, finding_id: str, labels: dict[str, str]) -> None:
        """Redraw a loaded finding with its new current labels (the row stays where it is)."""
        index = self.index_of(finding_id)
        if index is None:
            return
        row = self.row_at(index)
        if row is not None:
            row["labels"] = dict(labels)
            self.refresh_line(index)
