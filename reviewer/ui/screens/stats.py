"""Label statistics: findings per kind and label state, and Cohen's kappa for every pair of reviewers."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Header, Static

from reviewer.service.vocabulary import DISAGREEMENT, UNLABELLED, VERDICTS
from reviewer.ui.screens.base import BaseScreen
from reviewer.ui.widgets.footer import FittingFooter
from reviewer.ui.widgets.safe import safe_text

STATE_COLUMNS = (UNLABELLED, *VERDICTS, DISAGREEMENT)


def _n(value: Any) -> Text:
    return Text(f"{value:,}" if isinstance(value, int) else "—", style="" if value else "dim")


def stats_renderable(stats: dict[str, Any]) -> Group:
    kinds = Table(
        title="Findings per kind and label state",
        title_justify="left",
        expand=False,
        box=None,
        padding=(0, 1),
    )
    kinds.add_column("kind", style="bold")
    kinds.add_column("total", justify="right")
    for state in STATE_COLUMNS:
        kinds.add_column(state, justify="right", style="bold red" if state == "disagreement" else "")
    rows = list(stats.get("kinds", {}).items()) + [("all", stats.get("totals", {}))]
    for kind, counts in rows:
        kinds.add_row(
            safe_text(kind, limit=60, one_line=True),
            _n(counts.get("total", 0)),
            *(_n(counts.get(s, 0)) for s in STATE_COLUMNS),
        )
    pairs = Table(
        title="Agreement per reviewer pair (Cohen's kappa over findings both labelled)",
        title_justify="left",
        expand=False,
        box=None,
        padding=(0, 1),
    )
    for title, justify in (
        ("reviewers", "left"),
        ("shared", "right"),
        ("agreed", "right"),
        ("observed", "right"),
        ("kappa", "right"),
    ):
        pairs.add_column(title, justify=justify)  # type: ignore[arg-type]
    for pair in stats.get("agreement", []):
        a, b = pair["reviewers"]
        kappa = pair.get("kappa")
        pairs.add_row(
            Text.assemble(
                safe_text(a, limit=40, one_line=True), " × ", safe_text(b, limit=40, one_line=True)
            ),
            _n(pair.get("shared")),
            _n(pair.get("agreed")),
            Text(f"{pair['observed_agreement']:.2f}" if pair.get("observed_agreement") is not None else "—"),
            Text(f"{kappa:.2f}" if kappa is not None else "—", style="bold"),
        )
    if not stats.get("agreement"):
        pairs.add_row(
            Text("no two reviewers labelled the same finding yet", style="dim italic"), "", "", "", ""
        )
    reviewers = Text("reviewers: ", style="bold")
    for n, (name, count) in enumerate(stats.get("reviewers", {}).items()):
        if n:
            reviewers.append(", ")
        reviewers.append_text(safe_text(name, limit=60, one_line=True))
        reviewers.append(f" ({count:,})", style="dim")
    if not stats.get("reviewers"):
        reviewers.append("none yet", style="dim italic")
    disagreements = len(stats.get("disagreements", []))
    return Group(
        kinds,
        Text(""),
        reviewers,
        Text(""),
        pairs,
        Text(""),
        Text(
            f"{disagreements:,} finding(s) with disagreeing reviewers (queue filter: disagreement)",
            style="bold red" if disagreements else "dim",
        ),
    )


class StatsScreen(BaseScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="stats.back"),
        Binding("r", "reload", "Reload", id="stats.reload"),
    ]
    DEFAULT_CSS = """
    StatsScreen #stats-body { padding: 1 2; }
    """

    def __init__(self) -> None:
        super().__init__(id="stats-screen")
        self.stats: dict[str, Any] | None = None

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with VerticalScroll(id="stats-body"):
            yield Static(Text("loading…", style="dim"), id="stats")
        yield FittingFooter()

    def on_mount(self) -> None:
        self.load()

    @work(exclusive=True, group="stats-load", exit_on_error=False)
    async def load(self) -> None:
        self.stats = await self.service.label_stats()
        self.query_one("#stats", Static).update(stats_renderable(self.stats))

    def action_reload(self) -> None:
        self.load()

    def action_back(self) -> None:
        self.dismiss()
