"""Every filter of the runs screen (alone, and a few pairs) in every sort on the million-run store: a page
with its unlabelled counts, the next page, and the count the screen shows, as `ReviewService` reads them.

    python -m bench.filter_matrix [--store PATH|postgresql://...] [--repeats 3] [NAME_PART ...]

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
from bench.scale import repeat


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.filter_matrix", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--store", default=None, help="a SQLite path or a postgresql:// URL; default: the million-run store"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("only", nargs="*", help="keep only filters whose name contains one of these")
    args = parser.parse_args(argv)
    from store import labels, runs
    from store.db.connection import open_database

    path = args.store or str(replicated_store(store_path(100_000), 10))
    db = open_database(path)
    print(f"{path}: {runs.count_runs(db):,} runs", file=sys.stderr)
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
