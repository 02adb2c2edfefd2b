"""The run screen: prompt, the answer with its findings highlighted, the timeline, and a detail panel."""

from __future__ import annotations

from time import perf_counter
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Footer, Header, Static

from reviewer.service.vocabulary import is_withheld
from reviewer.ui.screens.labelling import LabellingScreen
from reviewer.ui.screens.modals import MissedChooser
from reviewer.ui.widgets.answer import AnswerView
from reviewer.ui.widgets.detail import (
    DetailPanel,
    call_heading,
    eviction_detail,
    finding_detail,
    iteration_detail,
    result_widget,
)
from reviewer.ui.widgets.evidence import evidence_text
from reviewer.ui.widgets.run_list import WITHHELD_MARK
from reviewer.ui.widgets.safe import safe_text
from reviewer.ui.widgets.timeline import Timeline

PROMPT_LIMIT = 4_000


def run_title(run: dict[str, Any]) -> Text:
    started = (run.get("started_at") or "?")[:23].replace("T", " ")
    parts: list[Any] = [
        ("run ", "dim"),
        safe_text(run.get("run_id"), limit=120, one_line=True, style="bold"),
        ("  agent ", "dim"),
        safe_text(run.get("agent_id") or "?", limit=80, one_line=True, style="bold"),
        ("  started ", "dim"),
        safe_text(started, limit=23, one_line=True),
    ]
    for label, key in (("model", "model"), ("tenant", "tenant"), ("session", "session_id")):
        if run.get(key):
            parts += [(f"  {label} ", "dim"), safe_text(run[key], limit=60, one_line=True)]
    counts = (
        f"  ·  {run.get('iterations') or 0} iterations, {run.get('tool_calls') or 0} calls, "
        f"{len(run.get('findings') or [])} findings, {run.get('coverage_gaps') or 0} gaps, "
        f"{run.get('evictions') or 0} evictions"
    )
    parts.append((counts, "dim"))
    versions = run.get("versions") or []
    if len(versions) > 1:  # a changed recording of the same run: each version keeps its own labels
        n = next(
            (i for i, v in enumerate(versions, 1) if v.get("run_key") == run.get("run_key")), len(versions)
        )
        others = sum(int(v.get("labels") or 0) for v in versions if v.get("run_key") != run.get("run_key"))
        parts.append((f"  ·  version {n} of {len(versions)}", "bold yellow"))
        if others:
            parts.append((f" ({others} label(s) on the other versions)", "yellow"))
    return Text.assemble(*parts)


def outcome_banner(run: dict[str, Any]) -> Text:
    outcome = run.get("outcome")
    detail = run.get("outcome_detail") if isinstance(run.get("outcome_detail"), dict) else {}
    summary = detail.get("summary") if detail else None
    if is_withheld(outcome):
        return Text.assemble(
            (f" {WITHHELD_MARK} WITHHELD — not delivered ", "bold white on red"),
            "  ",
            (f"outcome: {outcome}", "bold red"),
            "  ",
            safe_text(summary or "", limit=600, one_line=True),
        )
    if outcome == "incomplete":
        return Text.assemble(
            (" INCOMPLETE RECORDING ", "bold black on yellow"),
            "  ",
            safe_text(summary or "the recording ends before the answer", limit=600, one_line=True),
        )
    return Text.assemble(
        (" ✓ delivered ", "bold black on green"),
        "  ",
        safe_text(summary or "", limit=600, one_line=True, style="dim"),
    )


class RunScreen(LabellingScreen):
    """Coordinator for one run: header and answer first, the timeline right after, details on demand."""

    CSS_PATH = "../styles/run.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="run.back"),
        Binding("right_square_bracket", "next_finding", "Next finding", id="run.next-finding"),
        Binding("left_square_bracket", "prev_finding", "Prev finding", id="run.prev-finding"),
        Binding("slash", "search", "Search runs", show=False, id="run.search"),
        Binding("a", "focus_answer", "Answer", show=False, id="run.focus-answer"),
        Binding("t", "focus_timeline", "Timeline", show=False, id="run.focus-timeline"),
        Binding("d", "focus_detail", "Detail", show=False, id="run.focus-detail"),
        Binding("m", "mark_missed", "Mark missed", id="run.mark-missed"),
    ]
    HELP: ClassVar[str] = "One run: its prompt, its answer (findings highlighted), and its timeline."

    def __init__(self, ident: str, *, finding: str | None = None) -> None:
        super().__init__(id="run-screen")
        self.ident = ident
        #: the finding to put the cursor on once the run is drawn (opened from the queue)
        self.focus_finding = finding
        self.run_key: str | None = None
        self.run: dict[str, Any] | None = None
        self.current_finding: str | None = None
        #: perf_counter() marks for the benchmark: header drawn, timeline drawn
        self.marks: dict[str, float] = {"opened": perf_counter()}

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        yield Static(Text("loading…", style="dim"), id="run-title")
        yield Static(Text(""), id="outcome-banner")
        with Horizontal(id="run-main"):
            with Vertical(id="run-left"):
                yield Static(Text(""), id="prompt")
                with VerticalScroll(id="answer-scroll"):
                    yield AnswerView(id="answer")
            with Vertical(id="run-right"):
                yield Timeline(id="timeline")
                yield DetailPanel(id="detail")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#prompt").border_title = "Prompt"
        self.query_one("#answer-scroll").border_title = "Answer"
        self.query_one(Timeline).border_title = "Timeline"
        self.query_one(DetailPanel).border_title = "Detail"
        self.query_one(Timeline).focus()
        self.load_header()

    @property
    def timeline(self) -> Timeline:
        return self.query_one(Timeline)

    @property
    def answer(self) -> AnswerView:
        return self.query_one(AnswerView)

    @property
    def findings(self) -> list[dict[str, Any]]:
        return list((self.run or {}).get("findings") or [])

    # -- loading ----------------------------------------------------------------------------------------------

    @work(exclusive=True, group="run-header", exit_on_error=False)
    async def load_header(self) -> None:
        run = await self.service.run_header(self.ident)
        self.run, self.run_key = run, run["run_key"]
        self.query_one("#run-title", Static).update(run_title(run))
        banner = self.query_one("#outcome-banner", Static)
        banner.update(outcome_banner(run))
        withheld = is_withheld(run.get("outcome"))
        banner.set_class(withheld, "-withheld")
        scroll = self.query_one("#answer-scroll")
        scroll.set_class(withheld, "-withheld")
        scroll.border_title = (
            f"Answer — {WITHHELD_MARK} WITHHELD, the caller never received it ({run.get('outcome')})"
            if withheld
            else "Answer"
        )
        self.query_one("#prompt", Static).update(
            safe_text(run.get("prompt") or "(no prompt recorded)", limit=PROMPT_LIMIT)
        )
        self.answer.show(run.get("answer"), self.findings)
        self.marks["header"] = perf_counter()
        if self.focus_finding is not None:
            self._focus_finding(self.focus_finding)
        self.load_timeline()
        self.load_missed()

    @work(exclusive=True, group="run-missed", exit_on_error=False)
    async def load_missed(self) -> None:
        if self.run_key is not None:
            self.answer.set_missed(await self.service.missed_labels(self.run_key))

    @work(exclusive=True, group="run-timeline", exit_on_error=False)
    async def load_timeline(self) -> None:
        assert self.run_key is not None
        rows = await self.service.run_timeline(self.run_key, self.findings)
        # keep the finding already chosen (`]` before the timeline arrived, or opened from the queue)
        wanted = self.current_finding or self.focus_finding
        index = None
        if wanted is not None:
            index = next(
                (i for i, r in enumerate(rows) if r["kind"] == "finding" and r["id"] == wanted), None
            )
        self.timeline.set_rows(rows, cursor=index or 0)
        self.timeline.border_title = (
            f"Timeline ({len(rows)} items, {len(self.timeline.finding_indices)} findings)"
        )
        self.marks["timeline"] = perf_counter()

    @on(Timeline.Highlighted)
    def _timeline_moved(self, event: Timeline.Highlighted) -> None:
        event.stop()
        row = self.timeline.row_at(event.index)
        if row is None:
            return
        if row["kind"] == "finding":
            self._focus_finding(row["id"])
        self.show_detail(row)

    @on(Timeline.Selected)
    def _timeline_selected(self, event: Timeline.Selected) -> None:
        event.stop()
        self.query_one(DetailPanel).focus()

    @work(exclusive=True, group="run-detail", exit_on_error=False)
    async def show_detail(self, row: dict[str, Any]) -> None:
        panel = self.query_one(DetailPanel)
        kind = row["kind"]
        if kind == "finding":
            finding_id = row["id"]
            if finding_id in self.evidence:
                await self._draw_evidence(finding_id)
                return
            await panel.show_text(
                Text.assemble(finding_detail(row["finding"]), ("\nloading the evidence…", "dim")),
                key=f"finding:{finding_id}",
            )
            self.evidence[finding_id] = await self.service.finding_evidence(finding_id)
            await self._draw_evidence(finding_id)
        elif kind == "iteration":
            await panel.show_text(iteration_detail(row), key=f"iteration:{row.get('iteration')}")
        elif kind == "eviction":
            await panel.show_text(eviction_detail(row), key=f"eviction:{row.get('id')}")
        elif kind == "tool_call" and self.run_key is not None:
            await panel.show_text(
                Text.assemble(call_heading(row), ("\nloading the result…", "dim")),
                key=f"loading:{row['call_id']}",
            )
            got = await self.service.tool_call(self.run_key, row["call_id"])
            call, coverage = got["call"], got["coverage"]
            await panel.show_widgets(
                result_widget(call, coverage, now=getattr(self.app, "now", None)),
                key=f"call:{row['call_id']}",
            )

    async def _draw_evidence(self, finding_id: str) -> None:
        ev = self.evidence.get(finding_id)
        panel = self.query_one(DetailPanel)
        if ev is None:
            return
        text = evidence_text(ev, reviewer=self.reviewer, pending_note=self.pending_notes.get(finding_id))
        await panel.show_text(text, key=f"finding:{finding_id}", keep_scroll=True)

    def redraw_evidence(self, finding_id: str) -> None:
        if self.query_one(DetailPanel).showing == f"finding:{finding_id}":
            self.run_worker(self._draw_evidence(finding_id), group="run-draw", exit_on_error=False)

    # -- labelling --------------------------------------------------------------------------------------------

    def label_target(self) -> tuple[str, str | None] | None:
        """The finding under the timeline cursor; before the timeline arrives, the one `[`/`]` chose."""
        kinds = {f["id"]: f.get("kind") for f in self.findings}
        if self.timeline.rows:
            row = self.timeline.row_at(self.timeline.cursor)
            if row is None or row["kind"] != "finding":
                return None
            return row["id"], row["finding"].get("kind")
        if self.current_finding is not None and self.current_finding in kinds:
            return self.current_finding, kinds[self.current_finding]
        return None

    def _no_target(self) -> None:
        self.notify(
            "put the timeline cursor on a finding first (`]` jumps to the next one)",
            severity="warning",
            markup=False,
        )

    def after_label(self, finding_id: str, result: dict[str, Any], *, verdict: str | None) -> None:
        current = result.get("current") or {}
        self.timeline.set_finding_labels(finding_id, {who: row["verdict"] for who, row in current.items()})
        self.redraw_evidence(finding_id)
        if verdict is not None:
            self.notify(f"labelled {verdict}", markup=False, timeout=2)

    # -- missed negatives -------------------------------------------------------------------------------------

    def action_mark_missed(self) -> None:
        """Select words of the answer (from a mouse selection, else the first visible line) to label as missed."""
        answer = self.answer
        if self.run is None or not (self.run.get("answer") or ""):
            self.notify("this run has no answer to mark", severity="warning", markup=False)
            return
        if answer.selecting:
            answer.focus()
            return
        scroll = self.query_one("#answer-scroll", VerticalScroll)
        started = answer.start_selection(
            span=answer.mouse_span(), at=answer.offset_of_line(int(scroll.scroll_y))
        )
        if not started:
            self.notify("the answer has no words to select", severity="warning", markup=False)
            return
        self.clear_selection()
        scroll.border_subtitle = "selecting: h/l end · H/L start · enter label · esc cancel"
        answer.focus()

    @on(AnswerView.MissedChosen)
    def _missed_chosen(self, event: AnswerView.MissedChosen) -> None:
        event.stop()
        start, end, words = event.start, event.end, event.text

        def chosen(list_name: str | None) -> None:
            if list_name is None:
                self.answer.focus()
                return
            self._end_selection()
            self.write_missed(start, end, list_name, words)

        self.app.push_screen(MissedChooser(words), chosen)

    @on(AnswerView.SelectionEnded)
    def _selection_ended(self, event: AnswerView.SelectionEnded) -> None:
        event.stop()
        self._end_selection()

    def _end_selection(self) -> None:
        if self.answer.selecting:
            self.answer.stop_selection()
        self.query_one("#answer-scroll").border_subtitle = ""
        self.timeline.focus()

    @work(group="label-write", exclusive=False, exit_on_error=False)
    async def write_missed(self, start: int, end: int, list_name: str, words: str) -> None:
        assert self.run_key is not None
        await self.service.label_missed(self.run_key, start, end, list_name, self.reviewer)
        self.notify(f"missed “{words[:60]}” labelled as a {list_name} negative", markup=False)
        self.answer.set_missed(await self.service.missed_labels(self.run_key))

    # -- findings ---------------------------------------------------------------------------------------------

    def _focus_finding(self, finding_id: str) -> None:
        self.current_finding = finding_id
        self.answer.set_current(finding_id)
        line = self.answer.line_of(finding_id)
        if line is not None:
            scroll = self.query_one("#answer-scroll", VerticalScroll)
            scroll.scroll_to(y=max(0, line - 1), animate=False)

    def _step_finding(self, step: int) -> None:
        indices = self.timeline.finding_indices
        if indices:
            cur = self.timeline.cursor
            if step > 0:
                target = next((i for i in indices if i > cur), indices[0])
            else:
                target = next((i for i in reversed(indices) if i < cur), indices[-1])
            self.timeline.move_to(target)
            if target == cur:  # only one finding: still show it
                self._focus_finding(self.timeline.rows[target]["id"])
            return
        # the timeline is not loaded yet: walk the header's findings in the answer alone
        ids = [f["id"] for f in self.findings]
        if not ids:
            self.notify("this run has no findings", severity="information")
            return
        pos = ids.index(self.current_finding) if self.current_finding in ids else (-1 if step > 0 else 0)
        self._focus_finding(ids[(pos + step) % len(ids)])

    def action_next_finding(self) -> None:
        self._step_finding(+1)

    def action_prev_finding(self) -> None:
        self._step_finding(-1)

    # -- other actions ----------------------------------------------------------------------------------------

    def action_back(self) -> None:
        self.dismiss()

    def action_search(self) -> None:
        self.dismiss()
        self.app.call_later(self.app.action_search_runs)  # type: ignore[attr-defined]

    def action_focus_answer(self) -> None:
        self.query_one("#answer-scroll").focus()

    def action_focus_timeline(self) -> None:
        self.timeline.focus()

    def action_focus_detail(self) -> None:
        self.query_one(DetailPanel).focus()
