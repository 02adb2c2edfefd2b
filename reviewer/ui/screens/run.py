"""The run screen: prompt, the answer with its findings highlighted, the timeline, and a detail panel."""

from __future__ import annotations

from collections.abc import Sequence
from time import perf_counter
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Header, Static

from reviewer.review.missed_negatives import flagged_by, labelled_missed
from reviewer.service.vocabulary import is_withheld
from reviewer.ui.results import ToolResultView
from reviewer.ui.screens.labelling import LabellingScreen
from reviewer.ui.widgets.answer import MISSED_STYLE, AnswerView
from reviewer.ui.widgets.banners import answer_title, checks_text, outcome_banner, recording_banner
from reviewer.ui.widgets.detail import (
    DetailPanel,
    call_heading,
    eviction_detail,
    finding_detail,
    iteration_detail,
    result_widget,
)
from reviewer.ui.widgets.evidence import evidence_text
from reviewer.ui.widgets.footer import FittingFooter
from reviewer.ui.widgets.inline_prompts import MissedBar
from reviewer.ui.widgets.safe import pretty_json, safe_text
from reviewer.ui.widgets.timeline import Timeline
from reviewer.ui.widgets.typed_negatives import typed_negatives_for

PROMPT_LIMIT = 4_000
#: answer : timeline-and-detail widths that `<` and `>` step through
PANE_SPLITS: tuple[tuple[int, int], ...] = ((1, 5), (1, 3), (1, 2), (1, 1), (2, 1), (3, 1))


def run_title(run: dict[str, Any]) -> Text:
    """Two lines that never wrap (cut with … on a narrow terminal): who and when, then what it did; a third
    names the sources when the run was read from more than one file or has other versions."""
    started = (run.get("started_at") or "?")[:23].replace("T", " ")
    parts: list[Any] = [
        ("run ", "dim"),
        safe_text(run.get("run_id"), limit=120, one_line=True, style="bold"),
        ("  agent ", "dim"),
        safe_text(run.get("agent_id") or "?", limit=80, one_line=True, style="bold"),
        ("  started ", "dim"),
        safe_text(started, limit=23, one_line=True),
        "\n",
    ]
    counts = (
        f"{run.get('iterations') or 0} iterations, {run.get('tool_calls') or 0} calls, "
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
    for label, key in (("model", "model"), ("tenant", "tenant"), ("session", "session_id")):
        if run.get(key):
            parts += [(f"  {label} ", "dim"), safe_text(run[key], limit=60, one_line=True)]
    sources = [str(s) for s in run.get("sources") or []]
    if len(sources) > 1 or len(versions) > 1:
        parts.append(
            ("\nread from ", "dim") if len(sources) < 2 else (f"\nread from {len(sources)} sources: ", "dim")
        )
        for n, source in enumerate(sources):
            if n:
                parts.append((" · ", "dim"))
            parts.append(safe_text(source, limit=200, one_line=True))
    return Text.assemble(*parts, no_wrap=True, overflow="ellipsis")


#: how a missed-negative label is drawn in the list under the answer (as in the answer itself)
MISSED_MARK_STYLE = MISSED_STYLE


def missed_text(missed: list[dict[str, Any]], reviewer: str | None) -> Text:
    """The missed-negative labels on this answer, one a line (each underlined in the answer above)."""
    out = Text()
    out.append("MISSED NEGATIVES", style="bold underline")
    out.append("  labelled by reviewers, underlined in the answer (not flagged by the detector)", style="dim")
    for row in missed:
        who = row.get("reviewer") or "?"
        out.append("\n  ✎ ", style=MISSED_MARK_STYLE)
        out.append("“")
        out.append_text(
            safe_text(row.get("span_text") or "", limit=200, one_line=True, style=MISSED_MARK_STYLE)
        )
        out.append("”  ")
        out.append(str(row.get("list") or "?"), style="bold")
        out.append(" · ")
        out.append_text(safe_text("you" if who == reviewer else who, limit=40, one_line=True, style="dim"))
    return out


def _no_prompt(run: dict[str, Any]) -> str:
    if run.get("starts_mid_run") or run.get("dropped_events"):
        return "(no prompt in this recording: it starts mid-run, after the turn's start was dropped)"
    return "(no prompt recorded)"


class AnswerScroll(VerticalScroll):
    """The answer's scrolling panel; it may be maximized (z, or the palette's Maximize) like any panel."""

    ALLOW_MAXIMIZE = True


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
        Binding("f", "next_walk", "Next false positive", id="run.next-fp"),
        Binding("r", "raw", "Raw JSON", id="run.raw"),
        Binding(
            "less_than_sign", "resize_panes(-1)", "Narrower answer", show=False, id="run.answer-narrower"
        ),
        Binding("greater_than_sign", "resize_panes(1)", "Wider answer", show=False, id="run.answer-wider"),
    ]
    HELP: ClassVar[str] = "One run: its prompt, its answer (findings highlighted), and its timeline."

    def __init__(
        self,
        ident: str,
        *,
        finding: str | None = None,
        walk: Sequence[tuple[str, str]] = (),
        walk_at: int = 0,
        walk_title: str = "",
    ) -> None:
        super().__init__()  # no fixed id: a jump replaces one run screen by another (two at once, briefly)
        self.ident = ident
        #: the finding to put the cursor on once the run is drawn (opened from the queue)
        self.focus_finding = finding
        #: (run key, finding id) stops `f` steps through (one phrase's false positives, from the packs
        #: screen), this screen showing stop `walk_at`; empty when the run was opened any other way
        self.walk = tuple(walk)
        self.walk_at = walk_at
        self.walk_title = walk_title
        self.run_key: str | None = None
        self.run: dict[str, Any] | None = None
        self.current_finding: str | None = None
        #: perf_counter() marks for the benchmark: header drawn, timeline drawn
        self.marks: dict[str, float] = {"opened": perf_counter()}
        #: index in PANE_SPLITS once the reviewer has resized the panes with < / > (None: the layout's own)
        self.pane_split: int | None = None

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        yield Static(Text("loading…", style="dim"), id="run-title")
        yield Static(Text(""), id="outcome-banner")
        yield Static(Text(""), id="recording-banner")
        with Horizontal(id="run-main"):
            with Vertical(id="run-left"):
                yield Static(Text(""), id="prompt")
                with AnswerScroll(id="answer-scroll"):
                    yield AnswerView(id="answer")
                    yield Static(Text(""), id="missed-negatives")
                    yield Static(Text(""), id="typed-negatives")
                yield Static(Text(""), id="checks")
            with Vertical(id="run-right"):
                yield Timeline(id="timeline")
                yield DetailPanel(id="detail")
        yield FittingFooter()

    def on_mount(self) -> None:
        self.query_one("#prompt").border_title = "Prompt"
        self.query_one("#answer-scroll").border_title = "Answer"
        self.query_one("#checks").border_title = "Checks (integrity.disposition)"
        self.query_one("#recording-banner").display = False
        self.query_one("#missed-negatives").display = False
        self.query_one(Timeline).border_title = "Timeline"
        self.query_one(DetailPanel).border_title = "Detail"
        self.query_one(DetailPanel).border_subtitle = "z maximize · r raw JSON"
        self.query_one(Timeline).focus()
        self.load_header()

    @property
    def default_panel(self) -> DetailPanel:
        """What z (or the palette's Maximize) fills the screen with when nothing has the focus."""
        return self.query_one(DetailPanel)

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
        scroll.border_title = answer_title(run)
        partial = recording_banner(run)
        recording = self.query_one("#recording-banner", Static)
        recording.update(partial or Text(""))
        recording.display = partial is not None
        self.query_one("#checks", Static).update(checks_text(run.get("disposition")))
        self.query_one("#prompt", Static).update(
            safe_text(run.get("prompt") or _no_prompt(run), limit=PROMPT_LIMIT)
        )
        self.answer.show(run.get("answer"), self.findings)
        typed = typed_negatives_for(run.get("answer_negatives"))
        account = self.query_one("#typed-negatives", Static)
        account.update(typed if typed is not None else Text(""))
        account.display = typed is not None
        if self.walk:
            scroll.border_subtitle = self.walk_subtitle()
        self.marks["header"] = perf_counter()
        if self.focus_finding is not None:
            self._focus_finding(self.focus_finding)
        self.load_timeline()
        self.load_missed()

    @work(exclusive=True, group="run-missed", exit_on_error=False)
    async def load_missed(self) -> None:
        if self.run_key is not None:
            self.show_missed(await self.service.missed_labels(self.run_key))

    def show_missed(self, missed: list[dict[str, Any]]) -> None:
        """Missed-negative labels on this answer: underlined in it, and listed under it."""
        self.answer.set_missed(missed)
        box = self.query_one("#missed-negatives", Static)
        box.update(missed_text(missed, self.reviewer))
        box.display = bool(missed)

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
        # a tool result needs the room: the detail grows, the answer narrows (see run.tcss)
        self.set_class(kind == "tool_call", "-result")
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
        text = evidence_text(
            ev,
            reviewer=self.reviewer,
            pending_note=self.pending_notes.get(finding_id),
            keys=self.label_keys(),
        )
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
            f"put the timeline cursor on a finding first "
            f"({self.shown_key('run.next-finding', 'right_square_bracket')} jumps to the next one)",
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
        key = self.shown_key
        offered = len(answer.candidates)
        scroll.border_subtitle = (
            "selecting: "
            + (f"{key('answer.offer-next', 'tab')} next of {offered} negative-looking · " if offered else "")
            + f"{key('answer.clause-prev', '{')}/{key('answer.clause-next', '}')} clause · "
            f"{key('answer.sentence-prev', '(')}/{key('answer.sentence-next', ')')} sentence · "
            f"{key('answer.shrink', 'h')}/{key('answer.extend', 'l')} end · "
            f"{key('answer.start-left', 'H')}/{key('answer.start-right', 'L')} start · "
            f"{key('answer.choose', 'enter')} label · {key('answer.cancel', 'escape')} cancel"
        )
        answer.focus()

    @on(AnswerView.MissedChosen)
    def _missed_chosen(self, event: AnswerView.MissedChosen) -> None:
        event.stop()
        start, end, words = event.start, event.end, event.text
        flagged = flagged_by((start, end), self.findings)
        if flagged is not None:
            finding = next((f for f in self.findings if f.get("id") == flagged), {})
            self.notify(
                f"“{words[:60]}” is flagged already ({finding.get('kind') or 'a finding'}): judge that finding "
                "instead (`]` walks to it), or choose other words",
                severity="warning",
                markup=False,
            )
            return
        if labelled_missed((start, end), self.answer.missed):
            self.notify(
                f"“{words[:60]}” is already labelled as a missed negative", severity="warning", markup=False
            )
            return

        def chosen(list_name: str | None) -> None:
            if list_name is None:
                self.answer.focus()
                return
            self._end_selection()
            self.write_missed(start, end, list_name, words)

        for stale in self.query(MissedBar):
            stale.remove()
        # below the panels: the answer stays in view
        self.mount(MissedBar(words, suggested=event.suggested, on_done=chosen))

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
        self.show_missed(await self.service.missed_labels(self.run_key))

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

    # -- a walk through one phrase's false positives (opened from the packs screen) --------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "next_walk":
            return bool(self.walk)
        return super().check_action(action, parameters)

    def walk_subtitle(self) -> str:
        return f"{self.walk_title}: false positive {self.walk_at + 1} of {len(self.walk)} (f: next)"

    def action_next_walk(self) -> None:
        """The next stop of the walk: the next finding here, or the run that holds it (loaded in place)."""
        if not self.walk:
            return
        at = (self.walk_at + 1) % len(self.walk)
        run_key, finding = self.walk[at]
        if run_key == self.run_key:
            self.walk_at = at
            self.query_one("#answer-scroll").border_subtitle = self.walk_subtitle()
            index = next(
                (
                    i
                    for i, r in enumerate(self.timeline.rows)
                    if r["kind"] == "finding" and r["id"] == finding
                ),
                None,
            )
            if index is not None:
                self.timeline.move_to(index)
            self._focus_finding(finding)
            return
        # the stop is in another run: this screen loads that run in place
        self.ident, self.focus_finding, self.current_finding, self.walk_at = run_key, finding, None, at
        self.load_header()

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

    def action_raw(self) -> None:
        """The recorded JSON of the selected timeline item (and back), wherever the focus is on this screen."""
        views = self.query_one(DetailPanel).query(ToolResultView)
        if views:
            views.first().action_toggle_raw()
            return
        row = self.timeline.row_at(self.timeline.cursor) if self.timeline.rows else None
        if row is None:
            self.notify("nothing selected: move the timeline cursor first", severity="warning", markup=False)
            return
        self.toggle_row_raw(row)

    @work(exclusive=True, group="run-detail", exit_on_error=False)
    async def toggle_row_raw(self, row: dict[str, Any]) -> None:
        panel = self.query_one(DetailPanel)
        key = f"raw:{row['kind']}:{row.get('id') or row.get('call_id') or row.get('iteration')}"
        if panel.showing == key:
            self.show_detail(row)
            return
        data = row.get("finding") if row["kind"] == "finding" else row
        heading = Text(f"raw JSON of this {row['kind'].replace('_', ' ')} (r: back)\n", style="dim italic")
        await panel.show_text(Text.assemble(heading, pretty_json(data, limit=20_000)), key=key)

    def action_resize_panes(self, step: int) -> None:
        """`<` / `>`: give the answer less or more of the width (the timeline and detail get the rest); the
        reviewer's choice then holds whatever is selected."""
        left, right = self.query_one("#run-left"), self.query_one("#run-right")
        if self.pane_split is None:
            self.pane_split = PANE_SPLITS.index((1, 3) if self.has_class("-result") else (1, 1))
        self.pane_split = max(0, min(len(PANE_SPLITS) - 1, self.pane_split + step))
        answer_fr, rest_fr = PANE_SPLITS[self.pane_split]
        left.styles.width = f"{answer_fr}fr"
        right.styles.width = f"{rest_fr}fr"

    def action_focus_detail(self) -> None:
        self.query_one(DetailPanel).focus()
