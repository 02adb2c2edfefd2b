"""The review app and its one factory, `make_app`, used by the CLI, `reviewer serve` and the tests."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import ClassVar

from textual import on, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.filter import LineFilter
from textual.widget import Widget
from textual.worker import Worker, WorkerState

from reviewer.service import NotFound, ReviewService, Settings
from reviewer.service.label_export import labels_text
from reviewer.service.vocabulary import DataVersion
from reviewer.ui.commands import ReviewerCommands
from reviewer.ui.keymap import KeymapError, read_keymap
from reviewer.ui.messages import ApplyRunFilters, OpenRun
from reviewer.ui.run_commands import RunJumpCommands
from reviewer.ui.screens.help import HelpScreen
from reviewer.ui.screens.modals import ReviewerNameScreen
from reviewer.ui.screens.quarantine import QuarantineScreen
from reviewer.ui.screens.queue import QueueScreen
from reviewer.ui.screens.run import RunScreen
from reviewer.ui.screens.runs import RunsScreen
from reviewer.ui.screens.stats import StatsScreen
from reviewer.ui.widgets.safe import AgreedCells


class ReviewerApp(App[None]):
    """Runs screen at the bottom of the stack; run screens pushed on top; help and palette as overlays."""

    TITLE = "footprint-reviewer"
    CSS_PATH = "styles/app.tcss"
    COMMANDS = App.COMMANDS | {ReviewerCommands, RunJumpCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark,f1", "help", "Help", id="app.help"),
        Binding("ctrl+p", "command_palette", "Commands", show=False, priority=True, id="app.commands"),
        Binding("ctrl+q", "quit", "Quit", priority=True, id="app.quit"),
        Binding("ctrl+e", "export_labels('json')", "Export labels", show=False, id="app.export-labels"),
        Binding("z", "toggle_maximize", "Maximize panel", show=False, id="app.maximize"),
    ]
    #: seconds between two looks at the store's data version (what `reviewer watch` or another ingest adds
    #: shows up without a restart); each look is three index reads on a reader thread
    LIVE_POLL_S: ClassVar[float] = 1.5

    def __init__(
        self,
        service: ReviewService,
        settings: Settings,
        *,
        keymap: dict[str, str] | None = None,
        now: datetime | None = None,
        auto_advance: bool = True,
        ask_reviewer: bool = False,
    ) -> None:
        super().__init__()
        #: ask who is reviewing when the app starts (each browser tab of `reviewer serve`)
        self.ask_reviewer = ask_reviewer
        self.service = service
        self.settings = settings
        #: who labels: the settings' reviewer, until a served tab's reviewer names someone else (a session that
        #: asks starts with only a name given explicitly, so it never labels as the server's owner)
        self.reviewer_name = settings.reviewer
        self.now = now
        #: after a label on the queue screen, move to the next unlabelled finding
        self.auto_advance = auto_advance
        self._initial_keymap = keymap
        self.sub_title = service.db_path.name
        #: the store's data version at the last look, and whether a look is in flight
        self.live_version: DataVersion | None = None
        self._looking = False

    #: one for every app: it keeps no state
    _AGREED_CELLS = AgreedCells()

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters, then emoji sequences spelled so that every terminal gives them Rich's width (see
        `agreed_cells`): a row with "🛰️" keeps its borders in line in a terminal and in the browser."""
        return [*super().get_line_filters(), self._AGREED_CELLS]

    def on_mount(self) -> None:
        if self._initial_keymap is None:
            try:
                found = read_keymap(self.settings.keymap_path)
            except KeymapError as exc:
                self._initial_keymap = {}
                self.notify(str(exc), title="keymap ignored", severity="warning", markup=False)
            else:
                self._initial_keymap = found.bindings
                problems = found.problems + unknown_ids(found.bindings, found.where)
                for problem in problems[:10]:
                    self.notify(problem[:500], title="keymap line ignored", severity="warning", markup=False)
        if self._initial_keymap:
            self.set_keymap(self._initial_keymap)
        if self.settings.theme:
            try:
                self.theme = self.settings.theme
            except Exception as exc:  # noqa: BLE001 - an unknown theme is reported, the default stays
                self.notify(str(exc)[:300], title="theme ignored", severity="warning", markup=False)
        self.push_screen(RunsScreen())
        self.set_interval(self.LIVE_POLL_S, self._look_at_store, name="live")
        if self.ask_reviewer:
            self.push_screen(ReviewerNameScreen(self.reviewer_name), self._set_reviewer)

    def _set_reviewer(self, name: str | None) -> None:
        if name:
            self.reviewer_name = name
            self.notify(f"labelling as {name}", markup=False)

    def action_command_palette(self) -> None:
        """Not while the session's reviewer is still unnamed: the palette could open screens that label."""
        if self.ask_reviewer and not self.reviewer_name:
            self.notify("say who is reviewing first", severity="warning", markup=False)
            return
        super().action_command_palette()

    def on_unmount(self) -> None:
        self.service.close()

    # -- live: new runs and findings without a restart ---------------------------------------------------------

    def _look_at_store(self) -> None:
        if not self._looking:
            self._looking = True
            self.look_at_store()

    @work(group="live", exit_on_error=False)
    async def look_at_store(self) -> None:
        """Read the data version; when it changed, tell each open screen that listens (`store_changed`)."""
        try:
            version = await self.service.data_version()
        except Exception as exc:  # noqa: BLE001 - a look that fails (the app closing) is tried at the next tick
            self.log.warning(f"data version not read: {exc!r}")
            return
        finally:
            self._looking = False
        if version == self.live_version:
            return
        self.live_version = version
        for screen in list(self.screen_stack):
            changed = getattr(screen, "store_changed", None)
            if changed is not None:
                changed(version)

    # -- one place for worker failures ------------------------------------------------------------------------

    def report_worker(self, event: Worker.StateChanged) -> None:
        """Show a failed worker's error as a notification; the app keeps running.

        Every worker is started with `exit_on_error=False` and its node (the app or a screen) passes its
        state changes here, so no worker failure takes the app down."""
        worker = event.worker
        if event.state is not WorkerState.ERROR:
            return
        error = worker.error
        message = str(error) if isinstance(error, NotFound) else f"{type(error).__name__}: {error}"
        self.log.error(f"worker {worker.name!r} ({worker.group}) failed", error)
        self.notify(
            message[:500], title=f"{worker.group or worker.name} failed", severity="error", markup=False
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.report_worker(event)

    # -- navigation -------------------------------------------------------------------------------------------

    @property
    def runs_screen(self) -> RunsScreen | None:
        for screen in self.screen_stack:
            if isinstance(screen, RunsScreen):
                return screen
        return None

    @on(OpenRun)
    def _open_run(self, message: OpenRun) -> None:
        if message.resolved:
            self._show_run(message.ident, message.finding)
        else:
            self.open_run(message.ident, finding=message.finding)

    @work(exclusive=True, group="open-run", exit_on_error=False)
    async def open_run(self, ident: str, finding: str | None = None) -> None:
        key = await self.service.resolve_run(ident)
        self._show_run(key, finding)

    def _show_run(self, key: str, finding: str | None) -> None:
        """A run opened from a run screen (the palette's jump) takes that screen's place, as a walk's next
        run loads in place: escape still leads back to the list or queue it was opened from, and run screens
        never pile up under one another."""
        screen = RunScreen(key, finding=finding)
        if isinstance(self.screen, RunScreen):
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    @on(ApplyRunFilters)
    async def _apply_filters(self, message: ApplyRunFilters) -> None:
        runs = await self._back_to_runs()
        if runs is not None:
            runs.set_filters(message.changes, replace=message.replace)

    async def _back_to_runs(self) -> RunsScreen | None:
        runs = self.runs_screen
        if runs is None:
            return None
        while self.screen is not runs and len(self.screen_stack) > 1:
            await self.pop_screen()
        return runs

    async def action_search_runs(self) -> None:
        runs = await self._back_to_runs()
        if runs is not None:
            runs.action_search()

    async def action_open_queue(self, state: str | None = None) -> None:
        """The findings queue (the one already open, if any), optionally narrowed to a label state."""
        queue = next((s for s in self.screen_stack if isinstance(s, QueueScreen)), None)
        if queue is None:
            self.push_screen(QueueScreen({"state": state} if state else None, auto_advance=self.auto_advance))
            return
        while self.screen is not queue and len(self.screen_stack) > 1:
            await self.pop_screen()
        if state is not None:
            queue.set_filters({"state": state})

    def action_open_packs(self) -> None:
        from reviewer.ui.screens.packs import PacksScreen

        if not any(type(s).__name__ == "PacksScreen" for s in self.screen_stack):
            self.push_screen(PacksScreen(self.service, reviewer=self.reviewer_name))

    @work(exclusive=True, group="export-labels", exit_on_error=False)
    async def action_export_labels(self, fmt: str = "json") -> None:
        """Every label with its finding, in the same format as `reviewer labels --json/--csv`: a browser
        download when served, in a terminal a file at the path the reviewer gives (`exporting.deliver_export`)."""
        from reviewer.ui.exporting import deliver_export

        rows = await self.service.export_labels()
        text = labels_text(rows, fmt)
        mime = "text/csv" if fmt == "csv" else "application/json"
        where = await deliver_export(self, text, f"labels.{fmt}", mime)
        if where is not None:
            self.notify(f"{len(rows)} label row(s) exported {where}", markup=False)

    def action_toggle_maximize(self) -> None:
        """Maximize the panel that has the focus (Textual's `Screen.maximize`; with no focus, the screen's
        `default_panel`), or put it back."""
        screen = self.screen
        if screen.maximized is not None:
            screen.minimize()
            return
        focused = screen.focused or getattr(screen, "default_panel", None)
        if focused is None:
            self.notify("focus a panel first (Tab), then z", severity="warning", markup=False)
            return
        if not screen.maximize(focused):
            # a scrolling container that has the focus is a panel too: the one with a border title
            panels = [w for w in (focused, *focused.ancestors) if isinstance(w, Widget) and w.border_title]
            screen.maximized = panels[0] if panels else focused

    def action_open_quarantine(self) -> None:
        """The inputs that could not be ingested, each with its reason (the one already open, if any)."""
        if not any(isinstance(s, QuarantineScreen) for s in self.screen_stack):
            self.push_screen(QuarantineScreen())

    def action_open_stats(self) -> None:
        if not isinstance(self.screen, StatsScreen):
            self.push_screen(StatsScreen())

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(self.screen))


def known_binding_ids() -> set[str]:
    """Every binding id of the app's classes and Textual's own widgets (what a keymap line may name)."""
    from textual.dom import DOMNode

    import reviewer.ui.screens.packs  # noqa: F401 - imported lazily by the app; its bindings count too

    ids: set[str] = set()
    pending: list[type] = [DOMNode]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        ids.update(b.id for b in cls.__dict__.get("BINDINGS", []) if isinstance(b, Binding) and b.id)
    return ids


def unknown_ids(bindings: dict[str, str], where: dict[str, str] | None = None) -> list[str]:
    """One message per keymap binding id that names no binding of this app (a typo would do nothing), naming
    its line as the other keymap messages do."""
    if not bindings:
        return []  # no keymap file: nothing to check (and no scan of the classes at start-up)
    known = known_binding_ids()
    at = where or {}
    return [
        f"{at.get(binding_id, 'keymap')}: no binding has the id {binding_id!r} (left out); ? lists every "
        "binding with its id"
        for binding_id in bindings
        if binding_id not in known
    ]


def make_app(
    settings: Settings | None = None,
    *,
    keymap: dict[str, str] | None = None,
    now: datetime | None = None,
    auto_advance: bool = True,
    ask_reviewer: bool = False,
) -> ReviewerApp:
    """Build the app from `settings` (default: `Settings.resolve()`, from the environment and defaults).

    `keymap` overrides the keymap file (pass `{}` to ignore the user's file); `now` pins "current time" for
    views that show ages (tests, snapshots); `auto_advance=False` keeps the queue cursor on a finding after
    labelling it; `ask_reviewer` asks who is reviewing at start (what `reviewer serve` does in each tab
    without --reviewer). Any other keyword is an error.
    """
    settings = settings if settings is not None else Settings.resolve()
    return ReviewerApp(
        ReviewService(settings.db_path),
        settings,
        keymap=keymap,
        now=now,
        auto_advance=auto_advance,
        ask_reviewer=ask_reviewer,
    )
