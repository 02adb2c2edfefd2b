"""The app's own command-palette commands: filter by outcome, search, sort, help (jump to run: run_commands)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider

from reviewer.service import OUTCOMES
from reviewer.ui.messages import ApplyRunFilters

if TYPE_CHECKING:
    from reviewer.ui.app import ReviewerApp


class ReviewerCommands(Provider):
    """Fixed commands (filters, sorts, help) plus one that takes the typed text: search runs."""

    @property
    def reviewer_app(self) -> ReviewerApp:
        return self.app  # type: ignore[return-value]

    def _commands(self) -> list[tuple[str, Callable[[], object], str]]:
        app = self.reviewer_app
        post = app.post_message
        commands: list[tuple[str, Callable[[], object], str]] = [
            (
                "Runs: show answers not delivered only",
                partial(post, ApplyRunFilters({"undelivered": True})),
                "Runs whose person received nothing (withheld, refused, denied, halted, paused)",
            ),
            (
                "Runs: only runs with findings",
                partial(post, ApplyRunFilters({"has_findings": True})),
                "Runs with at least one finding",
            ),
            (
                "Runs: clear filters and search",
                partial(post, ApplyRunFilters({}, replace=True)),
                "Show every run",
            ),
            (
                "Runs: search…",
                app.action_search_runs,
                "Full-text search over prompts, answers, results, findings",
            ),
            ("Findings queue", app.action_open_queue, "Every finding across runs, to triage and label"),
            (
                "Findings queue: unlabelled",
                partial(app.action_open_queue, "unlabelled"),
                "Findings nobody has labelled yet",
            ),
            (
                "Findings queue: not labelled by me",
                partial(app.action_open_queue, "not-mine"),
                "Findings still waiting for your label",
            ),
            (
                "Findings queue: disagreements",
                partial(app.action_open_queue, "disagreement"),
                "Findings whose reviewers' current verdicts differ",
            ),
            (
                "Label stats",
                app.action_open_stats,
                "Labels per kind and state; Cohen's kappa per reviewer pair",
            ),
            (
                "Quarantined inputs",
                app.action_open_quarantine,
                "Inputs that could not be ingested, each with its reason (reviewer quarantine)",
            ),
            (
                "Phrase packs",
                app.action_open_packs,
                "Curate phrase packs from labels, with the what-if replay",
            ),
            (
                "Export labels (JSON)",
                partial(app.action_export_labels, "json"),
                "Every label with its finding, as a download (reviewer labels --json)",
            ),
            (
                "Export labels (CSV)",
                partial(app.action_export_labels, "csv"),
                "Every label with its finding, as a download (reviewer labels --csv)",
            ),
            ("Help: keys", app.action_help, "Every key binding"),
        ]
        screen = self.screen
        if screen.maximized is None and (screen.focused is None or not screen.focused.allow_maximize):
            # Textual offers its own Maximize only for a focused widget that allows it
            commands.append(
                ("Maximize a panel (z)", app.action_toggle_maximize, "The focused one, else the detail")
            )
        for outcome in OUTCOMES:
            commands.append(
                (
                    f"Filter runs by outcome: {outcome}",
                    partial(post, ApplyRunFilters({"outcome": outcome})),
                    f"Only {outcome} runs",
                )
            )
        for sort, label in (
            ("newest", "newest first"),
            ("oldest", "oldest first"),
            ("most-findings", "most findings"),
        ):
            commands.append((f"Sort runs: {label}", partial(post, ApplyRunFilters({"sort": sort})), ""))
        return commands

    async def discover(self) -> Hits:
        for title, callback, help_text in self._commands():
            yield DiscoveryHit(title, callback, help=help_text or None)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, callback, help_text in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, text=title, help=help_text or None)
        typed = query.strip()
        if typed:
            post = self.reviewer_app.post_message
            yield Hit(
                0.15,
                Text.assemble("Search runs for ", (typed[:200], "bold")),
                partial(post, ApplyRunFilters({"search": typed})),
                text=f"Search runs for {typed}",
                help="Full-text search",
            )
