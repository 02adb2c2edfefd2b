"""The packs screen: curate a phrase pack from labels, with suggestions and the what-if replay side by side.

Standalone: `PacksScreen(service_or_db_path)` needs only a database path (it then starts its own
`ReviewService`). Every database call is a service method (reads on a reader thread, writes on the write
thread), so the UI never waits on SQLite. Recorded text is always drawn as `rich.text.Text`, never as markup.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, OptionList, ProgressBar, Static
from textual.widgets.option_list import Option
from textual.worker import Worker

from reviewer.review.inert import inert
from reviewer.review.pack_replay import (
    CAVEAT_LEAD,
    CAVEATS,
    DEFAULT_HOLDOUT,
    caveat_json,
    caveat_lines,
    report_lines,
)
from reviewer.review.production import production_line
from reviewer.review.replay import DEFAULT_SEED
from reviewer.service import ReviewService, StoredPack
from reviewer.service.pack_ops import export_text, to_domain
from reviewer.ui.screens.run import RunScreen
from reviewer.ui.widgets.footer import FittingFooter
from reviewer.ui.widgets.inline_prompts import PackNameBar

#: The pack an accepted suggestion goes to when no pack exists yet.
DEFAULT_PACK = "default"


#: The replay's caveat, shown once at the top of the replay pane (the report below leaves it out).
_CAVEAT_TEXT = "\n".join(
    [
        CAVEAT_LEAD[0].upper() + CAVEAT_LEAD[1:],
        *caveat_lines(caveat_json(c) for c in CAVEATS),
    ]
)


def _text(value: object, style: str = "") -> Text:
    """Recorded or user text, inert and never parsed as markup."""
    return Text(inert(str(value)), style=style)


class PackData:
    """The service the packs screen talks to: the app's (a ReviewService), or, given a path (the screen on
    its own, in tests), one it starts and owns."""

    def __init__(self, source: ReviewService | str | Path) -> None:
        self._owned = not isinstance(source, ReviewService)
        self.service = source if isinstance(source, ReviewService) else ReviewService(Path(source))

    def close(self) -> None:
        if self._owned:
            self.service.close()


class _Cancelled(Exception):
    pass


class PacksScreen(Screen[None]):
    """Pick a pack on the left, accept (`a`) or reject (`x`) suggestions in the middle, read the replay of
    the pack against its previous version on the right (`R` re-runs it)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "new_pack", "New pack", id="packs.new"),
        Binding("a", "accept", "Accept", id="packs.accept"),
        Binding("x", "reject", "Reject", id="packs.reject"),
        Binding("d", "remove_phrase", "Remove phrase", id="packs.remove"),
        Binding("R", "replay", "Re-run replay", id="packs.replay"),
        Binding("e", "export('json')", "Export JSON", id="packs.export"),
        Binding("t", "export('ts')", "Export TS", id="packs.export-ts"),
        Binding("f", "walk_false_positives", "Step through FPs", id="packs.fp-walk"),
        Binding("escape", "close", "Back", id="packs.close"),
    ]

    DEFAULT_CSS = """
    PacksScreen { layout: vertical; }
    PacksScreen #packs-title { height: auto; padding: 0 1; background: $boost; }
    PacksScreen #packs-body { height: 1fr; }
    PacksScreen #packs-left { width: 30; border-right: solid $primary-background; }
    PacksScreen #packs-mid { width: 1fr; }
    PacksScreen #packs-right { width: 1fr; border-left: solid $primary-background; padding: 0 1; }
    PacksScreen .pane-title { height: auto; padding: 0 1; text-style: bold; }
    PacksScreen #pack-names { height: auto; max-height: 40%; }
    PacksScreen #pack-phrases { height: 1fr; }
    PacksScreen #suggestions { height: 1fr; }
    PacksScreen #ledger { height: 1fr; }
    PacksScreen #pack-versions { height: auto; margin-top: 1; }
    PacksScreen #replay-caveat { color: $warning; height: auto; margin-bottom: 1; }
    PacksScreen #replay-progress { height: auto; }
    PacksScreen #replay-report { height: auto; }
    """

    def __init__(
        self,
        service_or_db_path: ReviewService | str | Path,
        *,
        pack_name: str | None = None,
        reviewer: str | None = None,
        holdout_share: float = DEFAULT_HOLDOUT,
        seed: str = DEFAULT_SEED,
        name: str | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id)
        self.data = PackData(service_or_db_path)
        self.pack_name = pack_name
        self._reviewer = reviewer
        self.holdout_share = holdout_share
        self.seed = seed
        self.stored: StoredPack | None = None
        self.suggestion_rows: list[dict[str, Any]] = []
        self.ledger_rows: list[dict[str, Any]] = []
        self.versions: list[dict[str, Any]] | None = None
        self.report: dict[str, Any] | None = None
        self._cancel = threading.Event()

    # -- layout -----------------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(Text("Phrase packs"), id="packs-title")
        with Horizontal(id="packs-body"):
            with Vertical(id="packs-left"):
                yield Static(Text("Packs"), classes="pane-title")
                yield OptionList(id="pack-names")
                yield Static(Text("Phrases (d removes)"), classes="pane-title")
                yield OptionList(id="pack-phrases")
            with Vertical(id="packs-mid"):
                yield Static(Text("Suggestions"), id="suggest-head", classes="pane-title")
                yield DataTable(id="suggestions", cursor_type="row", zebra_stripes=True)
                yield Static(Text("Phrase ledger"), id="ledger-head", classes="pane-title")
                yield DataTable(id="ledger", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="packs-right"):
                yield Static(Text("What-if replay", style="bold"))
                yield Static(Text(_CAVEAT_TEXT), id="replay-caveat")
                yield ProgressBar(id="replay-progress", show_eta=False)
                yield Static(Text("No replay yet."), id="replay-report")
                yield Static(Text(""), id="pack-versions")
        yield FittingFooter()

    def on_mount(self) -> None:
        table = self.query_one("#suggestions", DataTable)
        table.add_columns("phrase", "list", "covers", "flagged", "fp")
        self.query_one("#ledger", DataTable).add_columns("phrase", "list", "hits", "tp", "fp", "misses")
        table.focus()
        self.query_one("#replay-progress").display = False  # shown only while a replay runs
        self.reload(replay=True)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A failure the workers below do not catch goes to the app's one handler (when there is one)."""
        report = getattr(self.app, "report_worker", None)
        if report is not None:
            report(event)

    def on_unmount(self) -> None:
        self._cancel.set()
        self.data.close()

    @property
    def reviewer(self) -> str:
        from reviewer.service.settings import resolve_reviewer

        return resolve_reviewer(self._reviewer or getattr(self.app, "reviewer_name", None))

    # -- loading ----------------------------------------------------------------------------------------------

    @work(exclusive=True, group="packs-load", exit_on_error=False)
    async def reload(self, replay: bool = False) -> None:
        table = self.query_one("#suggestions", DataTable)
        table.loading = True
        try:
            view = await self.data.service.packs_overview(self.pack_name, self.holdout_share, self.seed)
        except Exception as exc:  # noqa: BLE001 - shown, the screen stays usable
            self.notify(str(exc)[:500], title="packs", severity="error", markup=False)
            return
        finally:
            table.loading = False
        self.pack_name = view["name"]
        self.stored = view["stored"]
        self._show_packs(view["packs"])
        self._show_pack()
        self._show_suggestions(view["suggestions"])
        self.load_ledger()
        self.load_versions()
        if replay:
            self.action_replay()

    @work(exclusive=True, group="packs-ledger", exit_on_error=False)
    async def load_ledger(self) -> None:
        """The per-phrase ledger of the chosen pack (a pass over the stored answers, off the UI thread)."""
        table = self.query_one("#ledger", DataTable)
        stored = self.stored
        if stored is None:
            self.ledger_rows = []
            table.clear()
            return
        try:
            data = await self.data.service.phrase_ledger(stored.ref)
        except Exception as exc:  # noqa: BLE001 - shown, the screen stays usable
            self.notify(str(exc)[:500], title="phrase ledger", severity="error", markup=False)
            return
        self.ledger_rows = list(data["phrases"])
        row = table.cursor_row
        table.clear()
        for r in self.ledger_rows:
            table.add_row(
                _text(r["phrase"]),
                Text(r["list"]),
                Text(str(r["hits"]), justify="right"),
                Text(str(r["true_positives"]), justify="right"),
                Text(str(r["false_positives"]), justify="right", style="red" if r["false_positives"] else ""),
                Text(str(r["misses_covered"]), justify="right"),
            )
        if self.ledger_rows:
            table.move_cursor(row=min(max(row, 0), len(self.ledger_rows) - 1))
        head = Text("Phrase ledger ", style="bold")
        head.append(
            "hits, tp / fp among labelled hits, misses covered; f steps through a phrase's FPs", style="dim"
        )
        self.query_one("#ledger-head", Static).update(head)

    @work(exclusive=True, group="packs-versions", exit_on_error=False)
    async def load_versions(self) -> None:
        """The phrasePackVersion strings findings carry, and each deployed one measured in production."""
        try:
            versions = await self.data.service.pack_versions()
            production = await self.data.service.pack_production()
        except Exception as exc:  # noqa: BLE001
            self.notify(str(exc)[:500], title="pack versions", severity="error", markup=False)
            return
        out = Text("phrasePackVersion strings in stored findings\n", style="bold")
        if not versions:
            out.append("none yet\n", style="dim")
        for v in versions:
            link = v["deployed_from"]
            out.append_text(_text(v["version"]))
            out.append(
                f"  {v['findings']} finding(s), {v['labelled_findings']} labelled, {v['labels']} label(s); ",
                style="dim",
            )
            out.append_text(_text(f"deployed from {link['pack']}" if link else "no stored pack linked"))
            out.append("\n")
        if production:
            out.append("Measured in production, beside the replay's prediction\n", style="bold")
            for row in production:
                out.append_text(_text(production_line(row)))
                out.append("\n")
        self.versions = versions
        self.query_one("#pack-versions", Static).update(out)

    def action_walk_false_positives(self) -> None:
        """Open the run of the highlighted ledger phrase's first false positive; `f` there steps on."""
        table = self.query_one("#ledger", DataTable)
        if not self.ledger_rows or not 0 <= table.cursor_row < len(self.ledger_rows):
            self.notify("no phrase in the ledger yet", severity="warning", markup=False)
            return
        row = self.ledger_rows[table.cursor_row]
        walk = [(fp["run_key"], fp["finding_id"]) for fp in row["false_positives_at"] if fp["finding_id"]]
        if not walk:
            self.notify(
                f"no false positive labelled for {row['phrase']!r}", severity="information", markup=False
            )
            return
        run_key, finding = walk[0]
        self.app.push_screen(RunScreen(run_key, finding=finding, walk=walk, walk_title=inert(row["phrase"])))

    def _show_packs(self, packs: list[dict[str, Any]]) -> None:
        names = self.query_one("#pack-names", OptionList)
        names.clear_options()
        for p in packs:
            prompt = _text(p["name"])
            prompt.append(f"  v{p['versions']} · {p['phrases']}", style="dim")
            names.add_option(Option(prompt, id=f"pack:{p['name']}"))
        for i, p in enumerate(packs):
            if p["name"] == self.pack_name:
                names.highlighted = i

    def _show_pack(self) -> None:
        title = Text("Phrase packs  ", style="bold")
        phrases = self.query_one("#pack-phrases", OptionList)
        phrases.clear_options()
        stored = self.stored
        if stored is None:
            title.append(
                f"no pack yet: n makes one by name, or accepting a suggestion creates pack {DEFAULT_PACK!r}",
                style="dim",
            )
        else:
            title.append_text(_text(stored.ref))
            title.append(f"  content id {stored.content_hash[:12]}", style="dim")
            title.append(f"  parent {stored.parent_hash[:12] if stored.parent_hash else '-'}", style="dim")
            title.append(f"  {len(stored.none) + len(stored.complete)}/32 phrases")
            for list_name, plist in (("none", stored.none), ("complete", stored.complete)):
                for p in plist:
                    prompt = Text(f"{list_name:8} ", style="dim")
                    prompt.append_text(_text(p))
                    phrases.add_option(Option(prompt))
        self.query_one("#packs-title", Static).update(title)

    def _show_suggestions(self, data: dict[str, Any]) -> None:
        self.suggestion_rows = list(data["suggestions"])
        used = data["used"]
        head = Text("Suggestions ", style="bold")
        head.append(
            f"from {used['missed_labels_used']} missed-negative label(s), {used['missed_labels_held_out']} held out "
            f"(never seen); a accepts, x rejects",
            style="dim",
        )
        self.query_one("#suggest-head", Static).update(head)
        table = self.query_one("#suggestions", DataTable)
        row = table.cursor_row
        table.clear()
        for s in self.suggestion_rows:
            table.add_row(
                _text(s["phrase"]),
                Text(s["list"]),
                Text(str(s["covers"]), justify="right"),
                Text(str(s["touches_flagged"]), justify="right"),
                Text(str(s["touches_fp"]), justify="right", style="red" if s["touches_fp"] else ""),
            )
        if self.suggestion_rows:
            table.move_cursor(row=min(row, len(self.suggestion_rows) - 1))

    # -- replay -----------------------------------------------------------------------------------------------

    def action_replay(self) -> None:
        """Re-run the replay of the current pack against its baseline (cancels a running one)."""
        self._cancel.set()
        self._replay()

    @work(exclusive=True, group="packs-replay", exit_on_error=False)
    async def _replay(self) -> None:
        report = self.query_one("#replay-report", Static)
        bar = self.query_one("#replay-progress", ProgressBar)
        stored = self.stored
        if stored is None:
            report.update(Text("No pack to replay yet."))
            return
        loop = asyncio.get_running_loop()
        cancel = threading.Event()
        self._cancel = cancel
        bar.update(total=None, progress=0)
        bar.display = True
        report.update(Text(f"Replaying {stored.ref} over every stored answer…", style="dim"))

        def progress(done: int, total: int) -> None:
            if cancel.is_set():
                raise _Cancelled
            loop.call_soon_threadsafe(lambda: bar.update(total=max(total, 1), progress=done))

        try:
            data = await self.data.service.replay_pack(
                stored.ref,
                holdout_share=self.holdout_share,
                seed=self.seed,
                examples=10,
                progress=progress,
                progress_every=2_000,
            )
        except _Cancelled:
            return
        except Exception as exc:  # noqa: BLE001 - shown, the screen stays usable
            report.update(Text(f"Replay failed: {inert(str(exc))}", style="red"))
            return
        finally:
            if cancel is self._cancel:  # a newer replay keeps its bar
                bar.display = False
        self.report = data
        lines = report_lines(data, examples=10, with_caveats=False)
        out = Text()
        for line in lines:
            out.append_text(_text(line))
            out.append("\n")
        report.update(out)

    # -- actions ----------------------------------------------------------------------------------------------

    def _selected_suggestion(self) -> dict[str, Any] | None:
        table = self.query_one("#suggestions", DataTable)
        if not self.suggestion_rows or table.cursor_row < 0 or table.cursor_row >= len(self.suggestion_rows):
            self.notify("no suggestion selected", severity="warning", markup=False)
            return None
        return self.suggestion_rows[table.cursor_row]

    def action_accept(self) -> None:
        suggestion = self._selected_suggestion()
        if suggestion is not None:
            self._decide(suggestion, "accepted")

    def action_reject(self) -> None:
        suggestion = self._selected_suggestion()
        if suggestion is not None:
            self._decide(suggestion, "rejected")

    @work(group="packs-decide", exit_on_error=False)
    async def _decide(self, suggestion: dict[str, Any], decision: str) -> None:
        name = self.pack_name or DEFAULT_PACK
        try:
            result = await self.data.service.decide_suggestion(
                name, suggestion["phrase"], suggestion["list"], decision, self.reviewer
            )
        except Exception as exc:  # noqa: BLE001 - a broken limit is shown verbatim
            self.notify(str(exc)[:500], title="not accepted", severity="error", markup=False)
            return
        self.pack_name = name
        if result["pack"] is not None:
            self.notify(f"{suggestion['phrase']!r} added: {result['pack']['ref']}", markup=False)
        else:
            self.notify(f"{suggestion['phrase']!r} rejected", markup=False)
        self.reload(replay=result["pack"] is not None)

    def action_new_pack(self) -> None:
        """Ask for a name in a bar under the panes; the new pack (version 1, empty) becomes the chosen one, so
        accepted suggestions go to it."""
        if self.query(PackNameBar):
            return

        def done(value: str | None) -> None:
            if value is not None and value.strip():
                self._create(value)

        self.mount(PackNameBar(on_done=done))

    @work(group="packs-decide", exit_on_error=False)
    async def _create(self, name: str) -> None:
        try:
            stored = await self.data.service.create_pack(name, self.reviewer, note="made in the app")
        except Exception as exc:  # noqa: BLE001 - a bad or taken name is shown verbatim
            self.notify(str(exc)[:500], title="no pack made", severity="error", markup=False)
            return
        self.pack_name = stored.name
        self.notify(f"made pack {stored.ref}: accepted suggestions now go to it", markup=False)
        self.reload(replay=True)

    def action_remove_phrase(self) -> None:
        stored = self.stored
        phrases = self.query_one("#pack-phrases", OptionList)
        if stored is None or phrases.highlighted is None:
            self.notify("highlight a phrase of the pack first", severity="warning", markup=False)
            return
        everything = list(stored.none) + list(stored.complete)
        if 0 <= phrases.highlighted < len(everything):
            self._remove(everything[phrases.highlighted])

    @work(group="packs-decide", exit_on_error=False)
    async def _remove(self, phrase: str) -> None:
        assert self.pack_name is not None
        try:
            await self.data.service.remove_phrase(
                self.pack_name, phrase, who=self.reviewer, note="removed in the app"
            )
        except Exception as exc:  # noqa: BLE001
            self.notify(str(exc)[:500], title="not removed", severity="error", markup=False)
            return
        self.reload(replay=True)

    def action_export(self, kind: str) -> None:
        """The pack as JSON or TypeScript: a browser download when served, else a file where the reviewer says."""
        stored = self.stored
        if stored is None:
            self.notify("no pack to export yet", severity="warning", markup=False)
            return
        self._export(stored, kind == "ts")

    @work(group="packs-export", exit_on_error=False)
    async def _export(self, stored: Any, ts: bool) -> None:
        from reviewer.ui.exporting import deliver_export

        text = export_text(stored, ts=ts)
        filename = f"{stored.name}-v{stored.version}.{'ts' if ts else 'json'}"
        mime = "text/typescript" if ts else "application/json"
        where = await deliver_export(self.app, text, filename, mime)
        if where is not None:
            self.notify(f"exported {to_domain(stored).short_hash} {where}", markup=False)

    def action_close(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()

    @on(OptionList.OptionSelected, "#pack-names")
    def _pick_pack(self, event: OptionList.OptionSelected) -> None:
        option_id = event.option.id or ""
        if option_id.startswith("pack:") and option_id[5:] != self.pack_name:
            self.pack_name = option_id[5:]
            self.reload(replay=True)
