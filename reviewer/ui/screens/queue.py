"""The findings queue: every finding across runs, filtered, labelled with one key each, evidence beside it."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.timer import Timer
from textual.widgets import Checkbox, Header, Select, Static

from reviewer.service import RUNS_BLOCK
from reviewer.service.vocabulary import QUEUE_SORT_TITLES, DataVersion
from reviewer.ui.counts import count_text
from reviewer.ui.messages import OpenRun
from reviewer.ui.screens.bounded import BoundedTotal
from reviewer.ui.screens.labelling import LabellingScreen
from reviewer.ui.widgets.detail import DetailPanel
from reviewer.ui.widgets.evidence import evidence_text
from reviewer.ui.widgets.finding_list import BLOCK, FindingList, header_text
from reviewer.ui.widgets.footer import FittingFooter
from reviewer.ui.widgets.safe import inert

assert BLOCK == RUNS_BLOCK, "the list and the service must agree on the block size"

#: label state -> what the filter shows
STATES: dict[str, str] = {
    "any": "any label state",
    "unlabelled": "unlabelled",
    "not-mine": "not labelled by me",
    "mine": "labelled by me",
    "disagreement": "disagreement",
    "labelled": "labelled by anyone",
}
#: filter name -> the Select that shows it
SELECTS: dict[str, str] = {"kind": "q-kind", "code": "q-code", "tool": "q-tool", "pack_version": "q-pack"}
FILTER_NAMES = ("kind", "code", "tool", "pack_version", "state")
#: how long the cursor must rest before the evidence of the row under it is read
EVIDENCE_DEBOUNCE_S = 0.06


def progress_text(progress: dict[str, int] | None, shown: int | None, filters: dict[str, Any]) -> Text:
    """`37 / 120 labelled (12 by you) · 3 disagreements · showing 120` and the active filters."""
    out = Text()
    if progress is None:
        out.append("…", style="dim")
        return out
    out.append(f"{progress['labelled']:,} / {count_text(progress['total'])}", style="bold")
    out.append(" labelled")
    out.append(f" ({progress['mine']:,} by you)", style="green")
    out.append(" · ", style="dim")
    disagreements = progress["disagreements"]
    out.append(
        f"{disagreements:,} disagreement{'s' if disagreements != 1 else ''}",
        style="bold red" if disagreements else "",
    )
    if shown is not None:
        out.append(" · ", style="dim")
        out.append(f"showing {count_text(shown)}", style="bold")
    for name, value in filters.items():
        if value in (None, "", "any"):
            continue
        out.append("  ")
        out.append(f"{name.replace('_', ' ')}=", style="bold cyan")
        out.append(
            inert(str(STATES.get(value, value) if name == "state" else value)[:60], keep_newlines=False),
            style="cyan",
        )
    return out


class QueueScreen(BoundedTotal, LabellingScreen):
    """Coordinator: filter widgets and the finding list down, block requests and label keys up."""

    CSS_PATH = "../styles/queue.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "next_unlabelled", "Next unlabelled", id="queue.next-unlabelled"),
        Binding("escape", "back", "Back", id="queue.back"),
        Binding("a", "toggle_advance", "Auto-advance", show=False, id="queue.auto-advance"),
        Binding("s", "cycle_state", "Label state", show=False, id="queue.state"),
        Binding("x", "clear_filters", "Clear filters", show=False, id="queue.clear"),
        Binding("r", "reload", "Reload", show=False, id="queue.reload"),
        Binding("e", "focus_evidence", "Evidence", show=False, id="queue.focus-evidence"),
        Binding("l", "focus_list", "List", show=False, id="queue.focus-list"),
        Binding("S", "app.open_stats", "Stats", show=False, id="queue.stats"),
        Binding("O", "cycle_sort", "Order", id="queue.sort"),
    ]
    HELP: ClassVar[str] = (
        "Every finding across runs, grouped by run; label with 1/2/3 (the cursor moves on to the next "
        "unlabelled finding of the same run), `n` for the next unlabelled one, `O` to change the order."
    )

    def __init__(
        self, filters: dict[str, Any] | None = None, *, auto_advance: bool = True, sort: str = "run"
    ) -> None:
        super().__init__(id="queue-screen")
        if sort not in QUEUE_SORT_TITLES:
            raise ValueError(f"unknown queue order {sort!r}")
        #: the queue's order (`store.findings.QUEUE_SORTS`): by run and position in it unless changed
        self.sort = sort
        self.filters: dict[str, Any] = {
            k: v for k, v in (filters or {}).items() if v not in (None, "", "any")
        }
        self.auto_advance = auto_advance
        self.total: int | None = None
        self.progress: dict[str, int] | None = None
        self.showing: str | None = None
        self._evidence_timer: Timer | None = None
        self._facets_loaded = False
        #: the finding this screen labelled last (what `u` undoes once the cursor has moved on)
        self.last_labelled: str | None = None
        #: how many findings the store held when the queue was read (new ones are picked up when it grows)
        self._seen_findings: int | None = None

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Horizontal(id="queue-filters"):
            yield Select[str]([], prompt="finding kind", id="q-kind", compact=True)
            yield Select[str]([], prompt="code", id="q-code", compact=True)
            yield Select[str]([], prompt="tool", id="q-tool", compact=True)
            yield Select[str]([], prompt="pack version", id="q-pack", compact=True)
            yield Select(
                [(label, value) for value, label in STATES.items()],
                allow_blank=False,
                value=self.filters.get("state", "any"),
                id="q-state",
                compact=True,
            )
            yield Checkbox("auto-advance", value=self.auto_advance, id="q-advance", compact=True)
        yield Static(Text("loading…", style="dim"), id="queue-status")
        with Horizontal(id="queue-main"):
            with Vertical(id="queue-left"):
                yield Static(header_text(), id="queue-columns")
                yield FindingList(reviewer=self.reviewer, id="queue")
            yield DetailPanel(id="evidence")
        yield FittingFooter()

    def on_mount(self) -> None:
        self.query_one("#evidence", DetailPanel).border_title = "Evidence"
        self.finding_list.focus()
        self.reload()

    def on_screen_resume(self) -> None:
        # labels may have changed on a run screen opened from here
        if self.total is not None:
            self.refresh_progress()
            if self.showing is not None:
                self.load_evidence(self.showing)

    @property
    def finding_list(self) -> FindingList:
        return self.query_one(FindingList)

    @property
    def current_row(self) -> dict[str, Any] | None:
        return self.finding_list.row_at(self.finding_list.cursor)

    # -- loading ----------------------------------------------------------------------------------------------

    def reload(self) -> None:
        self.load_queue(dict(self.filters))

    @work(exclusive=True, group="queue-load", exit_on_error=False)
    async def load_queue(self, filters: dict[str, Any], focus: str | None = None) -> None:
        self._seen_findings = (await self.service.data_version()).findings
        first = await self.service.queue_first(reviewer=self.reviewer, limit=BLOCK, sort=self.sort, **filters)
        self.total, self.progress = first["total"], first["progress"]
        self.finding_list.reset(first["total"], first["rows"])
        self.reset_bounded()
        self.grow_bounded(0, first["rows"])
        opening = first["first_unlabelled"]
        if focus is None and opening is not None:  # open on the first finding not labelled yet
            self.finding_list.move_to(opening[1])
        self._show_status()
        if not first["rows"]:
            self.showing = None
            await self.query_one("#evidence", DetailPanel).show_text(
                Text("no findings match these filters", style="dim italic"), key=None
            )
        if not self._facets_loaded:
            self._facets_loaded = True
            self.load_facets()
        if focus is not None:
            await self.go_to(focus)

    def store_changed(self, version: DataVersion) -> None:
        """Findings were stored since the queue was read: take them in, the cursor staying on its finding."""
        if self._seen_findings is None or version.findings == self._seen_findings or self.total is None:
            return
        self.pick_up_new(version.findings)

    @work(exclusive=True, group="queue-live", exit_on_error=False)
    async def pick_up_new(self, findings: int) -> None:
        """Read the queue again under the same filters and put the cursor back on the finding it was on (its
        row in the new order); if the reviewer moved meanwhile, the next look tries again."""
        before = self._seen_findings
        self._seen_findings = findings
        row = self.current_row
        keep = row["id"] if row else None
        filters, sort = dict(self.filters), self.sort
        first = await self.service.queue_first(reviewer=self.reviewer, limit=BLOCK, sort=sort, **filters)
        position = None
        if keep is not None:
            position = await self.service.queue_position(keep, reviewer=self.reviewer, sort=sort, **filters)
        now = self.current_row
        if filters != self.filters or sort != self.sort or (now["id"] if now else None) != keep:
            self._seen_findings = before  # moved, or filtered, meanwhile: look again at the next tick
            return
        self.total, self.progress = first["total"], first["progress"]
        at = position if position is not None else self.finding_list.cursor
        self.finding_list.reset(first["total"], first["rows"], cursor=at)
        self.reset_bounded()
        self.grow_bounded(0, first["rows"])
        self._show_status()
        self.load_facets()  # a new finding may bring a new kind, code or tool to filter by

    @work(exclusive=True, group="queue-facets", exit_on_error=False)
    async def load_facets(self) -> None:
        facets = await self.service.queue_facets()
        self.fill_selects(
            SELECTS,
            facets,
            {"kind": "kinds", "code": "codes", "tool": "tools", "pack_version": "pack_versions"},
            self.filters,
        )

    @on(FindingList.BlockNeeded)
    def _block_needed(self, event: FindingList.BlockNeeded) -> None:
        event.stop()
        self.fetch_block(event.generation, event.block, event.after, event.offset, dict(self.filters))

    @work(group="queue-block", exit_on_error=False)
    async def fetch_block(
        self, generation: int, block: int, after: Any, offset: int, filters: dict[str, Any]
    ) -> None:
        try:
            rows = await self.service.queue_block(
                reviewer=self.reviewer,
                after=after,
                offset=0 if after is not None else offset,
                limit=BLOCK,
                sort=self.sort,
                **filters,
            )
        except BaseException:
            self.finding_list.block_failed(generation, block)
            raise
        self.finding_list.set_block(generation, block, rows)
        if generation == self.finding_list.generation:
            self.grow_bounded(block, rows)

    def bounded_list(self) -> FindingList:
        return self.finding_list

    def _shown_progress(self) -> dict[str, int] | None:
        """The progress as the status line shows it: its total is the list's when they count the same
        findings (no label-state filter: with one, the progress counts every finding under the other
        filters) and the progress's is a lower bound the list has read past (it said `0 / 50+ labelled`
        beside `showing 490`)."""
        progress, total = self.progress, self.total
        if (
            progress is None
            or total is None
            or "state" in self.filters
            or getattr(progress["total"], "exact", True)
            or total <= progress["total"]
        ):
            return progress
        return {**progress, "total": total}

    @work(exclusive=True, group="queue-progress", exit_on_error=False)
    async def refresh_progress(self) -> None:
        self.progress = await self.service.queue_progress(reviewer=self.reviewer, **self.filters)
        self._show_status()

    def _show_status(self) -> None:
        status = progress_text(self._shown_progress(), self.total, self.filters)
        status.append("  order: ", style="dim")
        status.append(QUEUE_SORT_TITLES[self.sort], style="bold magenta")
        if not self.auto_advance:
            status.append("  · auto-advance off", style="dim")
        self.query_one("#queue-status", Static).update(status)

    # -- evidence ---------------------------------------------------------------------------------------------

    @on(FindingList.Highlighted)
    def _moved(self, event: FindingList.Highlighted) -> None:
        event.stop()
        if self._evidence_timer is not None:
            self._evidence_timer.stop()
        row = self.finding_list.row_at(event.index)
        if row is None or row["id"] == self.showing:  # not loaded yet: `set_block` highlights it again
            return
        finding_id = row["id"]
        self._evidence_timer = self.set_timer(EVIDENCE_DEBOUNCE_S, lambda: self.load_evidence(finding_id))

    @work(exclusive=True, group="queue-evidence", exit_on_error=False)
    async def load_evidence(self, finding_id: str) -> None:
        ev = await self.service.finding_evidence(finding_id)
        self.evidence = {finding_id: ev}  # keep only what is on screen
        self.showing = finding_id
        self.finding_list.update_labels(
            finding_id, {r: c["verdict"] for r, c in ev.get("current", {}).items()}
        )
        await self._draw_evidence(finding_id)

    async def _draw_evidence(self, finding_id: str) -> None:
        ev = self.evidence.get(finding_id)
        if ev is None:
            return
        panel = self.query_one("#evidence", DetailPanel)
        await panel.show_text(
            evidence_text(
                ev,
                reviewer=self.reviewer,
                pending_note=self.pending_notes.get(finding_id),
                keys=self.label_keys(),
            ),
            key=f"finding:{finding_id}",
            keep_scroll=True,
        )

    def redraw_evidence(self, finding_id: str) -> None:
        if finding_id == self.showing:
            self.run_worker(self._draw_evidence(finding_id), group="queue-draw", exit_on_error=False)

    # -- labelling --------------------------------------------------------------------------------------------

    def label_target(self) -> tuple[str, str | None] | None:
        row = self.current_row
        if row is None:
            return None
        return row["id"], row.get("kind")

    def action_undo_label(self) -> None:
        """Undo on the finding under the cursor; when it has no label of mine, undo the one I labelled last here
        (auto-advance has moved the cursor on) and go back to it."""
        target = self.label_target()
        if target is None:
            self._no_target()
            return
        finding_id = target[0]
        mine = self.reviewer in ((self.current_row or {}).get("labels") or {}) or self.my_label(finding_id)
        if not mine and self.last_labelled not in (None, finding_id):
            finding_id = self.last_labelled
            self.run_worker(
                self.go_to(finding_id), group="queue-advance", exclusive=True, exit_on_error=False
            )
        self.undo_label(finding_id)

    def after_label(self, finding_id: str, result: dict[str, Any], *, verdict: str | None) -> None:
        if verdict is not None:
            self.last_labelled = finding_id
        self.finding_list.update_labels(finding_id, {r: c["verdict"] for r, c in result["current"].items()})
        self.redraw_evidence(finding_id)
        self.refresh_progress()
        if verdict is not None and self.auto_advance and (self.current_row or {}).get("id") == finding_id:
            self.advance(finding_id, same_run=True)

    @work(exclusive=True, group="queue-advance", exit_on_error=False)
    async def advance(self, after: str | None, *, same_run: bool = False) -> None:
        """Move to the next finding I have not labelled (after `after`, wrapping); `same_run`: one of the same
        run first (after a label), and say so when the run is done and the cursor moves to another."""
        target = await self.service.next_unlabelled(
            reviewer=self.reviewer, after=after, sort=self.sort, same_run=same_run, **self.filters
        )
        if target is None:
            self.notify("every finding here has your label", markup=False)
            return
        before = self.current_row
        await self.go_to(target)
        after_row = self.current_row
        if same_run and before and after_row and before.get("run_key") != after_row.get("run_key"):
            name = inert(str(before.get("run_id") or before.get("run_key")), keep_newlines=False)[:60]
            self.notify(f"every finding of run {name} has your label: on to the next run", markup=False)

    async def go_to(self, finding_id: str) -> None:
        """Put the cursor on `finding_id`: at once when it is loaded, else after finding its row."""
        index = self.finding_list.index_of(finding_id)
        if index is None:
            position = await self.service.queue_position(
                finding_id, reviewer=self.reviewer, sort=self.sort, **self.filters
            )
            if position is None:
                self.notify("that finding is outside the current filters", severity="warning", markup=False)
                return
            # rows loaded earlier may have left the filter (labelled since): start over so positions agree
            first = await self.service.queue_first(
                reviewer=self.reviewer, limit=BLOCK, sort=self.sort, **self.filters
            )
            self.total, self.progress = first["total"], first["progress"]
            self.finding_list.reset(first["total"], first["rows"])
            self.reset_bounded()
            self.grow_bounded(0, first["rows"])
            self._show_status()
            index = position
        self.finding_list.move_to(index)

    # -- filters ----------------------------------------------------------------------------------------------

    def set_filters(self, changes: dict[str, Any], *, replace: bool = False) -> None:
        new = {} if replace else dict(self.filters)
        for name, value in changes.items():
            if name not in FILTER_NAMES:
                raise ValueError(f"unknown queue filter {name!r}")
            if value in (None, "", False, "any"):
                new.pop(name, None)
            else:
                new[name] = value
        if new == self.filters:
            return
        self.filters = new
        self._sync_widgets()
        self.showing = None
        self.reload()

    def _sync_widgets(self) -> None:
        self.sync_selects(SELECTS, self.filters)
        state: Select[str] = self.query_one("#q-state", Select)
        with state.prevent(Select.Changed):
            state.value = self.filters.get("state", "any")

    @on(Select.Changed)
    def _select_changed(self, event: Select.Changed) -> None:
        event.stop()
        value = None if event.value is Select.NULL else event.value
        if event.select.id == "q-state":
            self.set_filters({"state": value})
            return
        for name, widget_id in SELECTS.items():
            if event.select.id == widget_id:
                self.set_filters({name: value})

    @on(Checkbox.Changed, "#q-advance")
    def _advance_changed(self, event: Checkbox.Changed) -> None:
        event.stop()
        self.auto_advance = event.value
        self._show_status()

    # -- actions ----------------------------------------------------------------------------------------------

    @on(FindingList.Selected)
    def _selected(self, event: FindingList.Selected) -> None:
        event.stop()
        row = self.finding_list.row_at(event.index)
        if row is not None:
            self.app.post_message(OpenRun(row["run_key"], resolved=True, finding=row["id"]))

    def action_next_unlabelled(self) -> None:
        row = self.current_row
        self.advance(row["id"] if row else None)

    def action_toggle_advance(self) -> None:
        box = self.query_one("#q-advance", Checkbox)
        box.value = not box.value

    def action_cycle_state(self) -> None:
        names = list(STATES)
        current = self.filters.get("state", "any")
        self.set_filters({"state": names[(names.index(current) + 1) % len(names)]})

    def action_cycle_sort(self) -> None:
        """The next order: by run, newest run first, by kind, by tool, disagreements first (then around)."""
        names = list(QUEUE_SORT_TITLES)
        self.set_sort(names[(names.index(self.sort) + 1) % len(names)])

    def set_sort(self, sort: str) -> None:
        if sort not in QUEUE_SORT_TITLES:
            raise ValueError(f"unknown queue order {sort!r}")
        if sort == self.sort:
            return
        self.sort = sort
        row = self.current_row
        self.showing = None
        self.load_queue(dict(self.filters), focus=row["id"] if row else None)  # the same finding, re-sorted

    def action_clear_filters(self) -> None:
        self.set_filters({}, replace=True)

    def action_reload(self) -> None:
        self.showing = None
        self.reload()

    def action_back(self) -> None:
        self.dismiss()

    def action_focus_evidence(self) -> None:
        self.query_one("#evidence", DetailPanel).focus()

    def action_focus_list(self) -> None:
        self.finding_list.focus()
