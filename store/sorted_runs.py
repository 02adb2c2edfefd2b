"""A page of runs whose runs are chosen first from a narrow table of their own, beside each run's sort keys
(PostgreSQL: `search_runs`, schema m018, for a one-token search; `run_kinds`, m019, for a finding kind), so
only the page's own runs' rows of the wide `runs` table are read."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_RUN_ALIAS = re.compile(r"\br\.")


@dataclass(frozen=True)
class SortedRuns:
    """PostgreSQL, a page with one filter that a narrow table of its own answers beside each run's sort keys
    (`started_ms`, `key`, and for a search `findings`): the page's runs are chosen from that table (`source`,
    alias `w`, rows meeting `match`; its column `run` is the run's column `runs_column`), so only the page's
    own runs' rows are read. A search reads `search_runs` (schema m018), in any order: the planner, seeing
    the query's token and its statistics, walks the order's index of it testing each run's tokens (a common
    word) or reads a rarer word's runs from the GIN index and sorts them; through `runs`, either read
    visited a wide row (1.3 KB) per run walked or matched, and a walk sought each run's documents (60-170 ms
    a newest-first page for words in 7,000-17,000 runs of a million). A finding kind reads `run_kinds`
    (m019), newest or oldest first, one index range."""

    source: str
    match: str
    params: tuple[Any, ...]
    run: str
    runs_column: str
    #: Read every matching row first, then sort (a rare word: the planner's walk of an order's index assumes
    #: the word's runs spread evenly along it, and walked 29,000 rows for a page of a word in 15,600 runs
    #: most findings first, 125 ms, where reading its rows and sorting them takes 20-40 ms).
    fenced: bool = False

    def condition(
        self, keys: tuple[str, ...], desc: bool, extra: list[str], extra_params: list[Any], want: int
    ) -> tuple[str, list[Any]]:
        """The condition on alias `r` that it is one of the `want` first matching runs in the order of
        `keys` (the sort's expressions, on `r.started_ms` and `r.key`) that meet a segment's `extra`
        conditions (on those keys too), and its parameters."""
        on_w = [_RUN_ALIAS.sub("w.", c) for c in extra]
        order = ", ".join(_RUN_ALIAS.sub("w.", k) + (" DESC" if desc else " ASC") for k in keys)
        if self.fenced:  # OFFSET 0: the matching rows are read as such, never by walking the order's index
            source, conds = f"(SELECT * FROM {self.source} w WHERE {self.match} OFFSET 0) AS w", on_w
        else:
            source, conds = f"{self.source} w", [self.match, *on_w]
        where = f" WHERE {' AND '.join(conds)}" if conds else ""
        # = ANY(ARRAY(...)): the chosen runs are a list computed first, then sought one by one; as `IN
        # (SELECT ...)` the planner may join them to a scan of every run instead, as it did on a small
        # store whose rows of facets (schema m022) made the chosen runs look more numerous
        return (
            f"r.{self.runs_column} = ANY(ARRAY(SELECT w.{self.run} FROM {source}{where} "
            f"ORDER BY {order} LIMIT {int(want)}))",
            [*self.params, *extra_params],
        )


def kind_runs(kind: str) -> SortedRuns:
    """The runs with a finding of `kind`, newest or oldest first: (kind, started_ms, key) of each in
    `run_kinds` (schema m019), one index range."""
    return SortedRuns("run_kinds", "w.kind = ?", (kind,), "key", "key")
