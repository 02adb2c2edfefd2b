"""Every filter of the runs screen (alone, and a few pairs) in every sort on the million-run store: a page
with its unlabelled counts, the next page, and the count the screen shows, as `ReviewService` reads them;
with `--queue`, every queue filter (alone, and every pair of them) in every queue sort: the queue's opening
(count, progress, first page, where it opens) and the next page.

    python -m bench.filter_matrix [--store PATH|postgresql://...] [--repeats 3] [--queue] [NAME_PART ...]

`bench.scale` times the screens a reviewer opens first; this walks the whole grid, where a page that sorts
every matching run hides (at a million runs "has findings" newest first took 3 s, "delivered" by most
findings 1.8 s, before schema m017 and `store.runs._page_index`). Each figure: one warm-up, then the median
(min, max) of the repetitions; NAME_PART keeps only the filters whose name contains it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from typing import Any

from bench.million import replicated_store, store_path
from bench.scale import BLOCK, label_share, queue_opening, repeat


def _timed(fn: Callable[[], Any], repeats: int) -> tuple[float, float, float]:
    """Median, min and max in milliseconds of `repeats` runs after a warm-up (`bench.scale.repeat`)."""
    samples = [t * 1000 for t in repeat(fn, repeats).samples]
    return statistics.median(samples), min(samples), max(samples)


def filters_of(db: Any) -> dict[str, dict[str, Any]]:
    """The grid's filters, their values read from the store's tallies (the commonest and rarest of each)."""

    def values(facet: str) -> list[str]:
        rows = db.execute("SELECT value FROM tallies WHERE facet = ? ORDER BY n DESC", [facet]).fetchall()
        return [str(r[0]) for r in rows]

    kinds, outcomes, agents = values("run_kind"), values("outcome"), values("agent")
    tenants, packs = values("tenant"), values("run_pack")
    grid: dict[str, dict[str, Any]] = {
        "none": {},
        "has findings (f)": {"has_findings": True},
        "withheld": {"withheld": True},
        "no answer (w)": {"undelivered": True},
        "search rare (picala)": {"search": "picala"},
        "search middling (failover)": {"search": "failover"},
        "search common (source)": {"search": "source"},
    }
    for name, column, found in (
        ("outcome", "outcome", outcomes),
        ("kind", "kind", kinds),
        ("agent", "agent", agents),
        ("tenant", "tenant", tenants),
        ("pack", "pack_version", packs),
    ):
        for value in dict.fromkeys(found[:1] + found[-1:]):  # the commonest and the rarest
            grid[f"{name} {value}"] = {column: value}
    if outcomes and kinds:
        for kind in dict.fromkeys(kinds[:1] + kinds[-1:]):
            grid[f"outcome {outcomes[-1]} + kind {kind}"] = {"outcome": outcomes[-1], "kind": kind}
        grid[f"kind {kinds[0]} + search source"] = {"kind": kinds[0], "search": "source"}
    if tenants and kinds:
        grid[f"tenant {tenants[0]} + kind {kinds[0]}"] = {"tenant": tenants[0], "kind": kinds[0]}
    if agents:
        grid[f"agent {agents[0]} + search failover"] = {"agent": agents[0], "search": "failover"}
    return grid


def queue_filters_of(db: Any) -> dict[str, dict[str, Any]]:
    """The queue grid's filters: each facet's commonest and rarest value (from the tallies), the label
    states, every pair of two facets' values, and each kind with a pack version none of its findings has."""

    def values(facet: str) -> list[str]:
        rows = db.execute("SELECT value FROM tallies WHERE facet = ? ORDER BY n DESC", [facet]).fetchall()
        found = [str(r[0]) for r in rows]
        return list(dict.fromkeys(found[:1] + found[-1:]))

    facets = {name: values(facet) for name, facet in (("kind", "kind"), ("code", "code"), ("tool", "tool"))}
    facets["pack_version"] = values("pack_version")
    grid: dict[str, dict[str, Any]] = {"none": {}}
    for state in ("unlabelled", "labelled", "mine", "not-mine", "disagreement"):
        grid[f"state {state}"] = {"state": state}
    for name, found in facets.items():
        for value in found:
            grid[f"{name} {value}"] = {name: value}
            grid[f"{name} {value} + unlabelled"] = {name: value, "state": "unlabelled"}
    names = list(facets)
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            for a in facets[first]:
                for b in facets[second]:
                    grid[f"{first} {a} + {second} {b}"] = {first: a, second: b}
    # a kind and a pack version that no finding of the kind has: the pair is empty, each alone is not
    pairs = db.execute(
        "SELECT DISTINCT kind, pack_version FROM findings WHERE pack_version IS NOT NULL"
    ).fetchall()
    held = {(str(k), str(p)) for k, p in pairs}
    for kind in facets["kind"]:
        for pack in facets["pack_version"]:
            if (kind, pack) not in held:
                grid[f"kind {kind} + pack_version {pack} (none together)"] = {
                    "kind": kind,
                    "pack_version": pack,
                }
    return grid


def queue_main(db: Any, repeats: int, only: list[str]) -> None:
    """The queue grid: each filter's opening and next page in every queue sort."""
    from store import findings

    label_share(db)  # 2,000 findings labelled, 200 of them disagreed on, as `bench.scale` leaves the store
    for name, filters in queue_filters_of(db).items():
        if only and not any(part in name for part in only):
            continue
        print(name, flush=True)
        for sort in findings.QUEUE_SORTS:

            def opening(f: dict[str, Any] = filters, sort: str = sort) -> Any:
                return queue_opening(db, sort, **f)

            def next_page(f: dict[str, Any] = filters, sort: str = sort) -> None:
                rows = findings.queue_page(db, limit=BLOCK, sort=sort, reviewer="someone", **f)
                if rows:
                    findings.queue_page(
                        db, limit=BLOCK, sort=sort, after=rows[-1]["cursor"], reviewer="someone", **f
                    )

            median, low, high = _timed(opening, repeats)
            pages, _, _ = _timed(next_page, repeats)
            total = opening()[0]
            shown = f"{int(total):,}" + ("" if total.exact else "+")
            print(
                f"    {sort:14s} opening {median:7.1f} ms ({low:.1f}, {high:.1f})   two pages {pages:7.1f} ms"
                f"   count {shown}",
                flush=True,
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.filter_matrix", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--store", default=None, help="a SQLite path or a postgresql:// URL; default: the million-run store"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--queue", action="store_true", help="the queue's filters instead of the runs screen's"
    )
    parser.add_argument("only", nargs="*", help="keep only filters whose name contains one of these")
    args = parser.parse_args(argv)
    from store import labels, runs
    from store.db.connection import open_database

    path = args.store or str(replicated_store(store_path(100_000), 10))
    db = open_database(path)
    print(f"{path}: {runs.count_runs(db):,} runs", file=sys.stderr)
    if args.queue:
        queue_main(db, args.repeats, args.only)
        return 0
    for name, filters in filters_of(db).items():
        if args.only and not any(part in name for part in args.only):
            continue

        def count_of(f: dict[str, Any] = filters) -> Any:
            return runs.count_runs_at_most(db, **f)

        median, low, high = _timed(count_of, args.repeats)
        count = count_of()
        shown = f"{int(count):,}" + ("" if count.exact else "+")
        print(f"{name:44s} count {median:7.1f} ms ({low:.1f}, {high:.1f}) = {shown}", flush=True)
        for sort in runs.SORTS:

            def page(f: dict[str, Any] = filters, sort: str = sort) -> list[dict[str, Any]]:
                rows = runs.runs_page(db, limit=100, sort=sort, **f)
                labels.unlabelled_counts(db, [r["run_key"] for r in rows])
                return rows

            def two_pages(f: dict[str, Any] = filters, sort: str = sort) -> None:
                rows = page(f, sort)
                if len(rows) == 100:
                    runs.runs_page(db, limit=100, sort=sort, after=rows[-1]["cursor"], **f)

            median, low, high = _timed(page, args.repeats)
            both, _, _ = _timed(two_pages, args.repeats)
            print(
                f"    {sort:14s} page {median:7.1f} ms ({low:.1f}, {high:.1f})   with the next {both:7.1f} ms"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
