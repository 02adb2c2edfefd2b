"""The runs screen: every run, filtered, sorted and searched, paged from SQLite by keyset."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.timer import Timer
from textual.widgets import Checkbox, Header, Input, Select, Static

from reviewer.service import OUTCOMES, RUNS_BLOCK
from reviewer.service.vocabulary import DataVersion
from reviewer.ui.counts import count_text
from reviewer.ui.messages import OpenRun
from reviewer.ui.screens.base import BaseScreen
from reviewer.ui.screens.bounded import BoundedTotal
from reviewer.ui.screens.help import bindings_by_id, shown_keys
from reviewer.ui.widgets.footer import FittingFooter
from reviewer.ui.widgets.run_list import BLOCK, RunList, header_text
from reviewer.ui.widgets.safe import inert

assert BLOCK == RUNS_BLOCK, "the list and the service must agree on the block size"

SORT_LABELS: dict[str, str] = {
    "newest": "newest first",
    "oldest": "oldest first",
    "most-findings": "most findings",
}
#: filter name -> the Select that shows it
SELECTS: dict[str, str] = {
    "outcome": "f-outcome",
    "kind": "f-kind",
    "agent": "f-agent",
    "tenant": "f-tenant",
    "pack_version": "f-pack",
}
CHECKBOXES: dict[str, str] = {"has_findings": "f-has-findings", "undelivered": "f-undelivered"}
FILTER_NAMES = ("outcome", "has_findings", "kind", "agent", "tenant", "pack_version", "search", "undelivered")
SEARCH_DEBOUNCE_S = 0.35


class RunsScreen(BoundedTotal, BaseScreen):
    """Coordinator: filter widgets and the run list down, block requests and selections up."""

    CSS_PATH = "../styles/runs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "search", "Search", id="runs.search"),
        Binding("escape", "focus_list", "To list", show=False, id="runs.focus-list"),
        Binding("w", "toggle_filter('undelivered')", "Not delivered", id="runs.withheld"),
        Binding("f", "toggle_filter('has_findings')", "Has findings", id="runs.has-findings"),
        Binding("s", "cycle_sort", "Sort", id="runs.sort"),
        Binding("x", "clear_filters", "Clear filters", id="runs.clear"),
        Binding("r", "reload", "Reload", show=False, id="runs.reload"),
        Binding("q", "app.open_queue", "Findings queue", id="runs.queue"),
        Binding("p", "app.open_packs", "Phrase packs", id="runs.packs"),
        Binding("K", "open_quarantine", "Quarantine", id="runs.quarantine"),
    ]
    HELP: ClassVar[str] = (
        "Every run in the database. ⊘ in red: the person received nothing (withheld, refused, denied, "
        "halted); ⏸ paused, awaiting a person; ⚠ delivered with a problem (raw, a fragment, a wrap-up, a fallback)."
    )

    def __init__(self) -> None:
        super().__init__(id="runs-screen")
        self.filters: dict[str, Any] = {}
        self.sort = "newest"
        self.total: int | None = None
        self._search_timer: Timer | None = None
        self._facets_loaded = False
        #: the newest recording id when the list was read, and how many runs have been stored since
        self._seen_recording: int | None = None
        self.new_runs = 0
        #: inputs that could not be ingested (None: not read yet); the count and its key show while any exist
        self.quarantined: int | None = None

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Horizontal(id="runs-filters"):
            yield Input(placeholder="/ full-text search", id="search", compact=True)
            yield Select([(o, o) for o in OUTCOMES], prompt="outcome", id="f-outcome", compact=True)
            yield Select[str]([], prompt="finding kind", id="f-kind", compact=True)
            yield Select[str]([], prompt="agent", id="f-agent", compact=True)
            yield Select[str]([], prompt="tenant", id="f-tenant", compact=True)
            yield Select[str]([], prompt="pack version", id="f-pack", compact=True)
            yield Select(
                [(v, k) for k, v in SORT_LABELS.items()],
                allow_blank=False,
                value="newest",
                id="f-sort",
                compact=True,
            )
            yield Checkbox("findings", id="f-has-findings", compact=True)
            yield Checkbox("no answer", id="f-undelivered", compact=True)
        with Horizontal(id="runs-status-bar"):
            yield Static(Text("loading…", style="dim"), id="runs-status")
            yield Static(Text(""), id="runs-quarantined")
        yield Static(header_text(), id="runs-columns")
        yield RunList(id="runs")
        yield FittingFooter()

    def on_mount(self) -> None:
        self.query_one(RunList).focus()
        self.reload()

    @property
    def run_list(self) -> RunList:
        return self.query_one(RunList)

    # -- loading ----------------------------------------------------------------------------------------------

    def reload(self, *, keep_cursor: bool = False) -> None:
        row = self.run_list.row_at(self.run_list.cursor) if keep_cursor else None
        self.load_runs(dict(self.filters), self.sort, keep=row["run_key"] if row else None)
        self.load_quarantine_count()

    @work(exclusive=True, group="runs-quarantine", exit_on_error=False)
    async def load_quarantine_count(self) -> None:
        self.quarantined = await self.service.quarantine_count()
        self._show_quarantined()
        self.refresh_bindings()

    def _show_quarantined(self) -> None:
        """ "8 quarantined — press K" while anything is quarantined (the key as the keymap has it)."""
        widget = self.query_one("#runs-quarantined", Static)
        count = self.quarantined or 0
        widget.display = count > 0
        if count:
            widget.update(
                Text.assemble(
                    (f"{count_text(count)} quarantined", "bold yellow"),
                    (" — press ", "dim"),
                    (self.quarantine_key(), "bold"),
                )
            )

    def quarantine_key(self) -> str:
        """The key that opens the quarantine, after the user's keymap ("K" by default)."""
        keys = bindings_by_id(self.app, self).get("runs.quarantine", [])
        return shown_keys(self.app, keys) or "ctrl+p → Quarantine"

    @work(exclusive=True, group="runs-load", exit_on_error=False)
    async def load_runs(self, filters: dict[str, Any], sort: str, keep: str | None = None) -> None:
        """Read the list again; with `keep`, the cursor stays on that run when it is in the first block."""
        version = await self.service.data_version()  # before the rows: a run stored between is counted new
        total, rows = await self.service.first_block(sort=sort, limit=BLOCK, **filters)
        self.total = total
        self.reset_bounded()
        self._seen_recording, self.new_runs = version.recording, 0
        at = 0
        if keep is not None:  # beyond the first block the cursor keeps its row number
            at = next((i for i, r in enumerate(rows) if r["run_key"] == keep), self.run_list.cursor)
        self.run_list.reset(total, rows, cursor=at)
        self.grow_bounded(0, rows)
        self._show_status()
        if not self._facets_loaded:
            self._facets_loaded = True
            self.load_facets()

    def store_changed(self, version: DataVersion) -> None:
        """Something was ingested since the list was read: count the new runs (an empty list just reloads;
        a list with a cursor on it stays as it is until `r`)."""
        seen = self._seen_recording
        if seen is None or version.recording <= seen:
            return
        if not self.total:
            self.reload()
            return
        self.count_new_runs(seen)

    @work(exclusive=True, group="runs-new", exit_on_error=False)
    async def count_new_runs(self, since: int) -> None:
        found = await self.service.runs_since(since)
        if since == self._seen_recording and found != self.new_runs:
            self.new_runs = found
            self._show_status()

    @work(exclusive=True, group="runs-facets", exit_on_error=False)
    async def load_facets(self) -> None:
        facets = await self.service.facets()
        self.fill_selects(
            SELECTS,
            facets,
            {"kind": "kinds", "agent": "agents", "tenant": "tenants", "pack_version": "pack_versions"},
            self.filters,
        )

    @on(RunList.BlockNeeded)
    def _block_needed(self, event: RunList.BlockNeeded) -> None:
        event.stop()
        self.fetch_block(
            event.generation, event.block, event.after, event.offset, dict(self.filters), self.sort
        )

    @work(group="runs-block", exit_on_error=False)
    async def fetch_block(
        self,
        generation: int,
        block: int,
        after: list[Any] | None,
        offset: int,
        filters: dict[str, Any],
        sort: str,
    ) -> None:
        try:
            rows = await self.service.runs_block(
                sort=sort, after=after, offset=0 if after is not None else offset, limit=BLOCK, **filters
            )
        except BaseException:
            self.run_list.block_failed(generation, block)
            raise
        self.run_list.set_block(generation, block, rows)
        if generation == self.run_list.generation:
            self.grow_bounded(block, rows)

    def bounded_list(self) -> RunList:
        return self.run_list

    def _show_status(self) -> None:
        total = self.total
        status = Text()
        status.append(count_text(total) if total is not None else "…", style="bold")
        status.append(" run" + ("" if total == 1 else "s"))
        status.append(f"  ·  {SORT_LABELS.get(self.sort, self.sort)}", style="dim")
        active = [(k, v) for k, v in self.filters.items() if v not in (None, "", False)]
        if active:
            status.append("  ·  filtered: ", style="dim")
            for i, (name, value) in enumerate(active):
                if i:
                    status.append(", ", style="dim")
                if value is True:
                    status.append(name.replace("_", " "), style="bold cyan")
                elif name == "search":
                    status.append_text(
                        Text.assemble(
                            ("search ", "bold cyan"),
                            "“",
                            (inert(str(value)[:80], keep_newlines=False), "cyan"),
                            "”",
                        )
                    )
                else:
                    status.append_text(
                        Text.assemble(
                            (f"{name.replace('_', ' ')}=", "bold cyan"),
                            (inert(str(value)[:60], keep_newlines=False), "cyan"),
                        )
                    )
        if self.new_runs:
            status.append("  ·  ", style="dim")
            status.append(
                f"{self.new_runs:,} new run{'' if self.new_runs == 1 else 's'} — press r to show",
                style="bold yellow",
            )
        self.query_one("#runs-status", Static).update(status)

    # -- filters ----------------------------------------------------------------------------------------------

    def set_filters(self, changes: dict[str, Any], *, replace: bool = False) -> None:
        """Change filters (None/False/"" clears one), keep the widgets in step, reload if anything changed."""
        new = {} if replace else dict(self.filters)
        sort = self.sort
        for name, value in changes.items():
            if name == "sort":
                sort = value or "newest"
            elif name in FILTER_NAMES:
                if value in (None, "", False):
                    new.pop(name, None)
                else:
                    new[name] = value
            else:
                raise ValueError(f"unknown run filter {name!r}")
        if new == self.filters and sort == self.sort:
            return
        self.filters, self.sort = new, sort
        self._sync_widgets()
        self.reload()

    def _sync_widgets(self) -> None:
        self.sync_selects(SELECTS, self.filters)
        sort_select: Select[str] = self.query_one("#f-sort", Select)
        with sort_select.prevent(Select.Changed):
            sort_select.value = self.sort
        for name, widget_id in CHECKBOXES.items():
            box = self.query_one(f"#{widget_id}", Checkbox)
            with box.prevent(Checkbox.Changed):
                box.value = bool(self.filters.get(name))
        search = self.query_one("#search", Input)
        if search.value != (self.filters.get("search") or ""):
            with search.prevent(Input.Changed):
                search.value = self.filters.get("search") or ""

    @on(Select.Changed)
    def _select_changed(self, event: Select.Changed) -> None:
        event.stop()
        value = None if event.value is Select.NULL else event.value
        if event.select.id == "f-sort":
            self.set_filters({"sort": value})
            return
        for name, widget_id in SELECTS.items():
            if event.select.id == widget_id:
                self.set_filters({name: value})

    @on(Checkbox.Changed)
    def _checkbox_changed(self, event: Checkbox.Changed) -> None:
        event.stop()
        for name, widget_id in CHECKBOXES.items():
            if event.checkbox.id == widget_id:
                self.set_filters({name: event.value})

    @on(Input.Changed, "#search")
    def _search_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self._search_timer is not None:
            self._search_timer.stop()
        value = event.value
        self._search_timer = self.set_timer(
            SEARCH_DEBOUNCE_S, lambda: self.set_filters({"search": value.strip()})
        )

    @on(Input.Submitted, "#search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self._search_timer is not None:
            self._search_timer.stop()
        self.set_filters({"search": event.value.strip()})
        self.run_list.focus()

    # -- opening ----------------------------------------------------------------------------------------------

    @on(RunList.Selected)
    def _run_selected(self, event: RunList.Selected) -> None:
        event.stop()
        row = self.run_list.row_at(event.index)
        if row is not None:
            self.app.post_message(OpenRun(row["run_key"], resolved=True))

    # -- actions ----------------------------------------------------------------------------------------------

    def action_search(self) -> None:
        self.query_one("#search", Input).focus()

    def action_focus_list(self) -> None:
        self.run_list.focus()

    def action_toggle_filter(self, name: str) -> None:
        self.set_filters({name: not self.filters.get(name)})

    def action_cycle_sort(self) -> None:
        names = list(SORT_LABELS)
        self.set_filters({"sort": names[(names.index(self.sort) + 1) % len(names)]})

    def action_clear_filters(self) -> None:
        self.set_filters({"sort": self.sort}, replace=True)

    def action_reload(self) -> None:
        """Read the list again (new runs, and new agents and kinds in the filters), the cursor staying on the
        run it is on."""
        self._facets_loaded = False
        self.reload(keep_cursor=True)

    def action_open_quarantine(self) -> None:
        self.app.action_open_quarantine()  # type: ignore[attr-defined]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The quarantine key is offered (footer, key) only while something is quarantined; the palette's
        "Quarantined inputs" opens the screen whatever the count."""
        if action == "open_quarantine":
            return bool(self.quarantined)
        return super().check_action(action, parameters)
