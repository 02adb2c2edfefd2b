"""The quarantine: every input that could not be ingested, with its reason (`reviewer quarantine` in the app).

Paths and reasons come from the inputs themselves (a file name, the first bytes of a file), so they are drawn
as inert text, never as markup.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Header, Static

from reviewer.ui.counts import count_text
from reviewer.ui.screens.base import BaseScreen
from reviewer.ui.widgets.footer import FittingFooter
from reviewer.ui.widgets.safe import safe_text

#: Characters of a path or reason one table cell shows (the detail below the table shows them whole).
CELL_LIMIT = 200


def reason_text(row: dict[str, Any]) -> str:
    """The reason without the path it starts with (the path has its own column)."""
    reason = str(row.get("reason") or "")
    prefix = f"{row.get('path') or ''}: "
    return reason[len(prefix) :] if prefix != ": " and reason.startswith(prefix) else reason


def quarantine_summary(total: int, shown: int) -> Text:
    """The line above the table: how many inputs are quarantined (and how many are listed)."""
    if total == 0:
        return Text("Nothing is quarantined: every input was ingested.", style="dim")
    text = Text.assemble(
        (count_text(total), "bold yellow"),
        f" input{'' if total == 1 else 's'} could not be ingested",
    )
    if shown < total:
        text.append(f" (the first {count_text(shown)} by path are listed)", style="dim")
    text.append("  ·  fix them and run reviewer ingest again", style="dim")
    return text


class QuarantineScreen(BaseScreen):
    """One row per quarantined input: file, reason code, reason, times seen, last seen."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "back", "Back", id="quarantine.back"),
        Binding("r", "reload", "Reload", id="quarantine.reload"),
    ]
    DEFAULT_CSS = """
    QuarantineScreen #quarantine-status { height: auto; margin: 1 1 0 1; }
    QuarantineScreen #quarantine-table { height: 1fr; margin: 0 1; }
    QuarantineScreen #quarantine-detail { height: auto; max-height: 12; margin: 0 1; border: round $panel-lighten-2; padding: 0 1; }
    """
    HELP: ClassVar[str] = (
        "Inputs that could not be ingested, each with the reason; `reviewer quarantine --json` lists the same rows."
    )

    def __init__(self) -> None:
        super().__init__(id="quarantine-screen")
        self.total: int | None = None
        self.rows: list[dict[str, Any]] = []

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        yield Static(Text("loading…", style="dim"), id="quarantine-status")
        table: DataTable[Text] = DataTable(id="quarantine-table", cursor_type="row", zebra_stripes=True)
        yield table
        with VerticalScroll(id="quarantine-detail"):
            yield Static(Text(""), id="quarantine-reason")
        yield FittingFooter()

    def on_mount(self) -> None:
        table: DataTable[Text] = self.query_one(DataTable)
        table.add_columns("file", "code", "reason", "times", "last seen")
        self.query_one("#quarantine-detail").border_title = "Selected input"
        table.focus()
        self.load()

    @work(exclusive=True, group="quarantine-load", exit_on_error=False)
    async def load(self) -> None:
        found = await self.service.quarantine()
        self.total, self.rows = int(found["total"]), list(found["rows"])
        self.query_one("#quarantine-status", Static).update(quarantine_summary(self.total, len(self.rows)))
        table: DataTable[Text] = self.query_one(DataTable)
        table.clear()
        for row in self.rows:
            table.add_row(
                safe_text(row.get("path"), limit=CELL_LIMIT, one_line=True),
                safe_text(row.get("code"), limit=40, one_line=True, style="bold yellow"),
                safe_text(reason_text(row), limit=CELL_LIMIT, one_line=True),
                Text(f"{int(row.get('times') or 0):,}", justify="right"),
                safe_text(row.get("last_seen"), limit=40, one_line=True, style="dim"),
            )
        self.query_one("#quarantine-detail").display = bool(self.rows)
        self._show_detail(0)

    def _show_detail(self, index: int) -> None:
        if not 0 <= index < len(self.rows):
            return
        row = self.rows[index]
        detail = Text.assemble(("file   ", "dim"), safe_text(row.get("path")), "\n")
        detail.append_text(Text.assemble(("code   ", "dim"), safe_text(row.get("code"), style="bold yellow")))
        detail.append("\n")
        detail.append_text(Text.assemble(("reason ", "dim"), safe_text(reason_text(row))))
        if row.get("sha256"):
            detail.append_text(
                Text.assemble("\n", ("sha256 ", "dim"), safe_text(row.get("sha256"), limit=80))
            )
        self.query_one("#quarantine-reason", Static).update(detail)

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._show_detail(event.cursor_row)

    def action_reload(self) -> None:
        self.load()

    def action_back(self) -> None:
        self.dismiss()
