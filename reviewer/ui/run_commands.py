"""The palette's "jump to run": runs whose id (or key, or agent) matches what is typed, listed as you type.

A prefix of the run id ranks first, then a substring, then the typed characters in order (fuzzy). Scores stay
below 1 so the built-in commands (Maximize, Theme, ...) that match the typed word always rank above runs,
and at most `MAX_RUN_HITS` runs are listed so they never crowd those commands out.
"""

from __future__ import annotations

import re
from functools import partial
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.command import Hit, Hits, Provider

from reviewer.ui.messages import OpenRun
from reviewer.ui.widgets.safe import inert

if TYPE_CHECKING:
    from reviewer.ui.app import ReviewerApp

#: runs listed for one query at most
MAX_RUN_HITS = 8
#: characters typed before runs are offered (one character matches nearly every run)
MIN_QUERY = 2


def run_match_score(query: str, run: dict[str, Any], fuzzy: re.Pattern[str] | None = None) -> float:
    """How well `query` picks `run` (0: not at all). Prefix of the id or key > prefix of the agent > substring >
    in-order letters."""
    q = query.casefold()
    run_id = str(run.get("run_id") or "").casefold()
    key = str(run.get("run_key") or "").casefold()
    agent = str(run.get("agent_id") or "").casefold()
    if run_id == q or key == q:
        return 0.95
    if run_id.startswith(q) or key.startswith(q):
        return 0.9
    if agent.startswith(q):  # the start of an agent's name: above commands that merely hold its letters
        return 0.8
    if q in run_id or q in key:
        return 0.7
    if q in agent:
        return 0.5
    pattern = fuzzy or fuzzy_pattern(q)
    if pattern.search(run_id) or pattern.search(agent):
        return 0.3
    return 0.0


def fuzzy_pattern(query: str) -> re.Pattern[str]:
    """The typed characters, in order, anything between them."""
    return re.compile(".*?".join(re.escape(c) for c in query.casefold()))


def matching_runs(
    query: str, runs: list[dict[str, Any]], limit: int = MAX_RUN_HITS
) -> list[tuple[float, dict[str, Any]]]:
    """The best `limit` runs for `query`, best first (newest first among equals: `runs` is newest first)."""
    typed = query.strip()
    if len(typed) < MIN_QUERY:
        return []
    pattern = fuzzy_pattern(typed)
    scored = [(s, n, r) for n, r in enumerate(runs) if (s := run_match_score(typed, r, pattern)) > 0]
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [(s, r) for s, _n, r in scored[:limit]]


class RunJumpCommands(Provider):
    """Jump to a run by a prefix or a fuzzy match of its id, key or agent; the run list is read once per
    palette opening on the database thread."""

    runs: list[dict[str, Any]]

    @property
    def reviewer_app(self) -> ReviewerApp:
        return self.app  # type: ignore[return-value]

    async def startup(self) -> None:
        self.runs = []
        try:
            self.runs = await self.reviewer_app.service.run_choices()
        except Exception as exc:  # noqa: BLE001 - the palette keeps its other commands
            self.app.log.error("run list for the palette failed", exc)

    async def search(self, query: str) -> Hits:
        post = self.reviewer_app.post_message
        matcher = self.matcher(query)
        for rank, run in matching_runs(query, self.runs):
            # on the palette's own scale (Textual's fuzzy matcher, as every command is scored), so a run whose
            # id or agent starts with the query is not listed under commands that merely hold its letters;
            # `rank` (below 1) orders runs the matcher scores alike
            score = rank + max(
                matcher.match(str(run.get(f) or "")) for f in ("run_id", "run_key", "agent_id")
            )
            run_id = inert(str(run.get("run_id") or run.get("run_key") or "?")[:120], keep_newlines=False)
            agent = inert(str(run.get("agent_id") or "?")[:60], keep_newlines=False)
            when = str(run.get("started_at") or "")[:16].replace("T", " ")
            # recorded text goes in the prompt as Text: the palette reads `help` as markup
            yield Hit(
                score,
                Text.assemble(
                    "Jump to run ",
                    (run_id, "bold"),
                    (f"  {agent} · {inert(str(run.get('outcome') or '?')[:30])} · {when}", "dim"),
                ),
                partial(post, OpenRun(str(run["run_key"]), resolved=True)),
                text=f"Jump to run {run_id}",
            )
