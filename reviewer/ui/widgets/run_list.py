"""The runs list: a line-API view over keyset-paged blocks of runs, fetched on demand by its screen."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from time import perf_counter
from typing import Any, ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual.message import Message
from textual.strip import Strip

from reviewer.service.vocabulary import INCOMPLETE, PAUSED, received_nothing
from reviewer.ui.widgets.cursor_list import CursorList
from reviewer.ui.widgets.safe import cell

#: Rows per block (must match what the screen asks the service for).
BLOCK = 100
#: Blocks kept in memory; older ones are dropped and read again if scrolled back to.
MAX_BLOCKS = 64

#: (title, width or 0 for "the rest", right-aligned?)
COLUMNS: tuple[tuple[str, int, bool], ...] = (
    ("", 1, False),
    ("started (UTC)", 19, False),
    ("agent", 16, False),
    ("outcome", 28, False),
    ("calls", 5, True),
    ("finds", 5, True),
    ("gaps", 4, True),
    ("evict", 5, True),
    ("unlab", 5, True),
    ("tenant", 10, False),
    ("run", 0, False),
)

#: marks a run whose person received nothing (withheld, refused, denied, halted; paused has its own)
WITHHELD_MARK = "⊘"
PAUSED_MARK = "⏸"
#: marks a delivered answer with a problem (raw, a fragment, a wrap-up, a fallback)
PROBLEM_MARK = "⚠"
OUTCOME_STYLES = {
    "delivered": "green",
    INCOMPLETE: "yellow",
}
WITHHELD_STYLE = "bold red"
PAUSED_STYLE = "bold cyan"
PROBLEM_STYLE = "yellow"


def delivery_mark(outcome: str | None, delivered: bool | None, delivered_as: str | None) -> tuple[str, str]:
    """(mark, style) for a run: from what the person received (`delivered`), not from the outcome name."""
    if received_nothing(delivered, outcome):
        return (PAUSED_MARK, PAUSED_STYLE) if outcome == PAUSED else (WITHHELD_MARK, WITHHELD_STYLE)
    if delivered and delivered_as not in (None, "drafted"):
        return PROBLEM_MARK, PROBLEM_STYLE
    return " ", ""


def outcome_text(
    outcome: str | None, width: int, delivered: bool | None = None, delivered_as: str | None = None
) -> Text:
    name = outcome or "?"
    mark, style = delivery_mark(outcome, delivered, delivered_as)
    if mark != " ":
        shown = name if delivered_as in (None, "drafted") else f"{name} ({delivered_as})"
        return cell(f"{mark} {shown}", width, style=style)
    return cell(name, width, style=OUTCOME_STYLES.get(name, ""))


def _num(value: Any, width: int, *, alert: str = "") -> Text:
    if value is None:
        return Text("—".rjust(width), style="dim", end="")
    style = alert if alert and value else ("dim" if not value else "")
    return Text(str(value).rjust(width)[-width:], style=style, end="")


def tail_cell(value: Any, width: int, *, style: str = "") -> Text:
    """A cell cut from the LEFT with a leading "…": run ids share their start ("run-1796…"), the end tells
    them apart."""
    raw = "" if value is None else str(value)
    text = cell(raw[-(width * 4 + 8) :], width * 4 + 8, style=style)  # inert, one line
    text.rstrip()
    if text.cell_len <= width:
        return cell(raw, width, style=style)
    plain = text.plain
    kept = ""
    for ch in reversed(plain):
        if cell_len(ch + kept) > width - 1:
            break
        kept = ch + kept
    return cell("…" + kept, width, style=style)


def header_text() -> Text:
    parts = []
    for title, width, right in COLUMNS:
        if width == 0:
            parts.append(Text(title, style="bold"))
        else:
            parts.append(Text(title.rjust(width) if right else title.ljust(width), style="bold"))
    return Text(" ").join(parts)


def row_text(row: dict[str, Any], width: int) -> Text:
    """One run as a single line of cells (every recorded string inert and cut to its column)."""
    outcome, delivered, delivered_as = row.get("outcome"), row.get("delivered"), row.get("delivered_as")
    mark, mark_style = delivery_mark(outcome, delivered, delivered_as)
    started = (row.get("started_at") or "")[:19].replace("T", " ")
    used = sum(w for _, w, _ in COLUMNS) + len(COLUMNS) - 1
    rest = max(8, width - used)
    parts = [
        Text(mark, style=mark_style, end=""),
        cell(started or "?", 19),
        cell(row.get("agent_id") or "?", 16),
        outcome_text(outcome, 28, delivered, delivered_as),
        _num(row.get("tool_calls"), 5),
        _num(row.get("findings"), 5, alert="yellow"),
        _num(row.get("coverage_gaps"), 4, alert="yellow"),
        _num(row.get("evictions"), 5),
        _num(row.get("unlabelled"), 5, alert="bold"),
        cell(row.get("tenant") or "", 10, style="dim"),
        tail_cell(row.get("run_id") or row.get("run_key") or "", rest, style="dim"),
    ]
    return Text(" ", end="").join(parts)


class RunList(CursorList):
    """Shows `row_count` runs; asks for missing blocks with `BlockNeeded`; the screen answers `set_block`."""

    DEFAULT_CSS = """
    RunList { height: 1fr; }
    """
    HELP: ClassVar[str] = "The runs, newest first by default. `enter` opens one; `j`/`k` move."
    #: drawn when a loaded list is empty
    EMPTY_MATCH: ClassVar[str] = "no runs match"

    @dataclass
    class BlockNeeded(Message):
        """Block `block` (rows block*BLOCK ..) is on screen but not loaded. Read it after `after`, or at `offset`."""

        run_list: RunList
        generation: int
        block: int
        after: list[Any] | None
        offset: int

        @property
        def control(self) -> RunList:
            return self.run_list

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.generation = 0
        self._blocks: OrderedDict[int, list[dict[str, Any]]] = OrderedDict()
        self._pending: set[int] = set()
        self.loaded = False
        #: perf_counter() of the first line drawn with real data (or the loaded-empty state), for benchmarks.
        self.first_paint: float | None = None
        self.empty_text = Text("loading…", style="dim italic")

    # -- data from the screen -------------------------------------------------------------------------------

    def reset(self, total: int, first: list[dict[str, Any]], *, cursor: int = 0) -> int:
        """Start over with `total` rows and the first block, the cursor at row `cursor` (kept in view).
        Returns the new generation."""
        self.generation += 1
        self._blocks.clear()
        self._pending.clear()
        if first:
            self._blocks[0] = first
        self.loaded = True
        self.empty_text = Text(self.EMPTY_MATCH, style="dim italic")
        self.set_row_count(total, cursor=cursor)
        if self.cursor:
            self.scroll_cursor_visible()
        return self.generation

    def set_block(self, generation: int, block: int, rows: list[dict[str, Any]]) -> None:
        if generation != self.generation:
            return
        self._pending.discard(block)
        self._blocks[block] = rows
        self._blocks.move_to_end(block)
        while len(self._blocks) > MAX_BLOCKS:
            self._blocks.popitem(last=False)
        self.refresh()
        if block * BLOCK <= self.cursor < (block + 1) * BLOCK:
            self.post_message(self.Highlighted(self, self.cursor))

    def block_failed(self, generation: int, block: int) -> None:
        if generation == self.generation:
            self._pending.discard(block)

    def row_at(self, index: int) -> dict[str, Any] | None:
        block = self._blocks.get(index // BLOCK)
        if block is None:
            return None
        offset = index % BLOCK
        return block[offset] if offset < len(block) else None

    @property
    def cached_blocks(self) -> int:
        return len(self._blocks)

    # -- drawing ----------------------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        if self.first_paint is None and self.loaded:
            self.first_paint = perf_counter()
        return strip

    def render_row(self, index: int, width: int) -> Text | None:
        block = index // BLOCK
        rows = self._blocks.get(block)
        if rows is None:
            self._request(block)
            return None
        offset = index % BLOCK
        if offset >= len(rows):
            return None
        return self.format_row(rows[offset], width)

    def format_row(self, row: dict[str, Any], width: int) -> Text:
        """One loaded row as a line of Text (subclasses draw other kinds of rows)."""
        return row_text(row, width)

    def _request(self, block: int) -> None:
        if block in self._pending:
            return
        self._pending.add(block)
        previous = self._blocks.get(block - 1)
        after = previous[-1]["cursor"] if previous and len(previous) == BLOCK else None
        self.post_message(self.BlockNeeded(self, self.generation, block, after, block * BLOCK))
