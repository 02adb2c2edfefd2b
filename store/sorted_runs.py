"""A page of runs whose runs are chosen first from a narrow table of their own, beside each run's sort keys
(PostgreSQL: `search_runs`, schema m018, for a one-token search; `run_kinds`, m019, for a finding kind), so
only the page's own runs' rows of the wide `runs` table are read."""

from __future__ import annotations

import re
from collections.abc import Callable
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


@dataclass(frozen=True)
class RunsRead:
    """PostgreSQL, a page whose runs are chosen by statements of its own, before the page is read: `source`'s
    rows (alias `w`) meeting `match` (with `params`), their column `run` being the run's `runs_column`."""

    db: Any
    source: str
    match: str
    params: tuple[Any, ...]
    run: str
    runs_column: str


@dataclass(frozen=True)
class WalkedRuns(RunsRead):
    """PostgreSQL, a page whose runs no index finds by themselves (a query of more tokens, whose runs are
    matched document by document): `source`'s rows (alias `w`) are walked in the order's index in blocks,
    each block's rows tested against `match`, the first of `first_block` rows, each next one sized by the
    share of matches walked so far (one statement a block: its matching runs and its last row's keys, where
    the next starts). Where that share says the page would walk more than `max_walk` rows in all, the
    matching runs are read and sorted instead (`drive`, when it finds them few), or the matches whole
    (`whole`). The page's runs are then read by their rowids."""

    whole: SortedRuns
    drive: Callable[[], SortedRuns | None] | None = None
    first_block: int = 1_000
    max_walk: int = 20_000

    def condition(
        self, keys: tuple[str, ...], desc: bool, extra: list[str], extra_params: list[Any], want: int
    ) -> tuple[str, list[Any]]:
        """As `SortedRuns.condition`: the `want` first matching runs in the order of `keys` meeting `extra`."""
        on_w = [_RUN_ALIAS.sub("w.", c) for c in extra]
        keys_w = [_RUN_ALIAS.sub("w.", k) for k in keys]
        direction = " DESC" if desc else " ASC"
        order = ", ".join(k + direction for k in keys_w)
        op = "<" if desc else ">"
        found: list[Any] = []
        after: list[Any] | None = None
        block, walked = int(self.first_block), 0
        while len(found) < want:
            conds, params = list(on_w), list(extra_params)
            if after is not None:
                # within a segment the first key is NULL in every row or in none (`store.runs._segments`)
                at = 1 if after[0] is None else 0
                conds.append(f"({', '.join(keys_w[at:])}) {op} ({', '.join('?' for _ in keys_w[at:])})")
                params += after[at:]
            where = f" WHERE {' AND '.join(conds)}" if conds else ""
            outputs = ", ".join(f"{k} AS _k{i}" for i, k in enumerate(keys_w))
            sql = (
                f"SELECT m.run, m.n, m.hit, {', '.join(f'm._k{i}' for i in range(len(keys)))} FROM ("
                f"SELECT w.{self.run} AS run, ({self.match}) AS hit, row_number() OVER () AS n, {outputs} "
                f"FROM (SELECT * FROM {self.source} w{where} ORDER BY {order} LIMIT {block}) AS w) AS m "
                f"WHERE m.hit OR m.n = {block} ORDER BY m.n"
            )
            rows = self.db.execute(sql, [*self.params, *params]).fetchall()
            found += [row[0] for row in rows if row[2]]
            walked += block
            last = rows[-1] if rows else None
            if last is None or int(last[1]) < block:  # the walk reached the end of the order
                break
            after = list(last[3:])
            needed = want - len(found)
            if needed <= 0:
                break
            # rows still to walk at the share of matches seen so far (at least one match assumed)
            ahead = needed * walked / max(1, len(found))
            if walked + ahead > self.max_walk:
                chosen = self.drive() if self.drive is not None else None
                return (chosen or self.whole).condition(keys, desc, extra, extra_params, want)
            block = max(int(self.first_block), min(4 * block, int(ahead * 1.5) + 1))
        return f"r.{self.runs_column} = ANY(?)", [found[:want]]


#: PostgreSQL: the findings counts of `search_runs` by its statistics (schema m018): the most common ones
#: with their shares, the histogram of the rest, the share of NULLs, and the rows.
PG_FINDINGS_STATS = (
    "SELECT s.most_common_vals::text::bigint[], s.most_common_freqs, s.histogram_bounds::text::bigint[], "
    "s.null_frac, c.reltuples FROM pg_stats s, pg_class c WHERE s.schemaname = current_schema() "
    "AND s.tablename = 'search_runs' AND s.attname = 'findings' AND c.oid = 'search_runs'::regclass"
)


def findings_at_least(db: Any) -> tuple[float, tuple[tuple[int, float], ...]] | None:
    """PostgreSQL: the runs `search_runs` holds and, for each findings count its statistics know, highest
    first, about how many runs have at least that many findings (None without statistics)."""
    row = db.execute(PG_FINDINGS_STATS).fetchone()
    if row is None or row[4] is None or float(row[4]) <= 0:
        return None
    common, freqs, bounds = (list(column or []) for column in row[:3])
    nulls, total = row[3], row[4]
    rest = max(0.0, 1.0 - sum(freqs) - float(nulls or 0))
    buckets = max(1, len(bounds) - 1)
    counts = sorted({int(v) for v in [*common, *bounds]}, reverse=True)
    at_least = []
    for count in counts:
        share = sum(f for v, f in zip(common, freqs, strict=True) if int(v) >= count)
        share += rest * sum(1 for b in bounds[1:] if int(b) >= count) / buckets
        at_least.append((count, share * float(total)))
    return float(total), tuple(at_least)


@dataclass(frozen=True)
class BandedRuns(RunsRead):
    """PostgreSQL, a most-findings page of a word neither rare nor common: its runs read band by band of
    the findings count, highest first, each band's matching runs found by intersecting the word's runs (GIN)
    with the band's (the findings index) and sorted; the rest read whole. The planner's walk of the order's
    index assumes a word spreads evenly along it, and a word of 15,600 runs of a million, none among the
    15,900 runs with most findings, was walked 29,000 runs deep (95 ms); read by bands, 20 ms. The bands are
    sized by the findings counts' statistics (`findings_at_least`, read only for such a page) and `estimate`,
    the runs the word is estimated to match; other orders, or no statistics, read as `walk` does."""

    walk: SortedRuns
    estimate: float
    #: a band after the first holds this many times the runs of all before it
    growth: int = 4
    #: bands read before the rest is read whole
    max_bands: int = 3

    def bands(self, want: int, runs_at_least: tuple[tuple[int, float], ...], share: float) -> list[int]:
        """The findings counts where bands start, from (count, runs with at least that many) highest first
        and the share of runs matching: the first estimated to hold twice `want` matches, each next one
        `growth` times the runs before it."""
        starts: list[int] = []
        target = 2 * want / max(share, 1e-9)
        for count, runs in runs_at_least:
            if runs >= target:
                starts.append(count)
                if len(starts) == self.max_bands:
                    break
                target = runs * self.growth
        return starts

    def condition(
        self, keys: tuple[str, ...], desc: bool, extra: list[str], extra_params: list[Any], want: int
    ) -> tuple[str, list[Any]]:
        """As `SortedRuns.condition`; most findings first, the runs are chosen band by band."""
        stats = findings_at_least(self.db) if desc and keys[0] == "r.findings" else None
        if stats is None:
            return self.walk.condition(keys, desc, extra, extra_params, want)
        total, runs_at_least = stats
        starts = self.bands(want, runs_at_least, self.estimate / max(1.0, total))
        on_w = [_RUN_ALIAS.sub("w.", c) for c in extra]
        # the findings count's own order is not the index's (`+ 0`): each band's runs are sorted, never walked
        order = ", ".join(
            [
                f"{_RUN_ALIAS.sub('w.', keys[0])} + 0 DESC",
                *(_RUN_ALIAS.sub("w.", k) + " DESC" for k in keys[1:]),
            ]
        )
        found: list[Any] = []
        above: int | None = None
        for start in [*starts, None]:
            band = [] if start is None else [f"w.findings >= {int(start)}"]
            band += [] if above is None else [f"w.findings < {int(above)}"]
            where = " AND ".join([self.match, *band, *on_w])
            sql = f"SELECT w.{self.run} FROM {self.source} w WHERE {where} ORDER BY {order} LIMIT {want - len(found)}"
            found += [row[0] for row in self.db.execute(sql, [*self.params, *extra_params]).fetchall()]
            if len(found) >= want or start is None:
                break
            above = start
        return f"r.{self.runs_column} = ANY(?)", [found[:want]]
