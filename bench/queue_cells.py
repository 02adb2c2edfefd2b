"""A few named queue cells at a million runs, timed as the queue opens (`bench.scale.queue_opening`): the
cells a change is about, quick enough to run alternately on two stores (main's code on one, a change's on
the other) where `bench.filter_matrix --queue` walks every filter for half an hour.

    python -m bench.queue_cells [--store PATH_OR_URL] [--repeats 5]

Run it from the checkout whose code is to be timed. The store gets `bench.scale.label_share`'s labels
(2,000 findings, 200 disagreed on), as the other benches leave it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

from bench.scale import label_share, queue_opening

#: (filters, sorts): a rare code (13,790 findings at a million runs) and a commoner one (24,440), the
#: labelled findings and the disagreements, a kind with a code none of it has, a rare kind, the unlabelled, a
#: common tool by kind, a code and a pack version that never meet, pairs with a pack version.
CELLS: list[tuple[dict[str, Any], tuple[str, ...]]] = [
    ({"code": "language-unsupported"}, ("run", "newest", "kind", "tool", "disagreement")),
    ({"state": "labelled"}, ("run", "newest", "kind", "tool", "disagreement")),
    ({"state": "disagreement"}, ("run", "newest", "kind", "tool", "disagreement")),
    (
        {"kind": "coverage-gap", "code": "language-unsupported"},
        ("run", "newest", "kind", "tool", "disagreement"),
    ),
    ({"code": "evidence-gate"}, ("newest", "kind", "tool")),
    ({"kind": "unread-unit"}, ("newest", "run")),
    ({"state": "unlabelled"}, ("newest", "run")),
    # the commonest tool, bunched in a few kinds; the commonest code (coverage gaps') with the commonest pack
    # version (negative claims'), two filters filed under no common kind
    ({"tool": "runbook_lookup"}, ("kind",)),
    ({"code": "cannot_cover", "pack_version": "en-negatives@3"}, ("run", "newest", "kind", "tool")),
    # a rare code and a common tool, each with a pack version they seldom meet (schema m028's cells), and the
    # one cell of the grid still over 50 ms at the end of the fifth session
    ({"code": "language-unsupported", "pack_version": "en-negatives@3"}, ("run", "tool", "disagreement")),
    ({"tool": "runbook_lookup", "pack_version": "en-negatives@3+ext:5d41402a"}, ("newest", "tool")),
    ({"code": "cannot_cover", "tool": "runbook_lookup"}, ("disagreement",)),
]


def main(argv: list[str] | None = None) -> int:
    from store.db.connection import open_database

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default="bench/corpus/store-100000-s5-x10.db")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    db = open_database(args.store)
    label_share(db)
    print(f"{args.store}; load {os.getloadavg()[0]:.1f}", flush=True)
    for filters, sorts in CELLS:
        for sort in sorts:
            queue_opening(db, sort, **filters)  # warm-up
            times = []
            for _ in range(max(1, args.repeats)):
                started = time.perf_counter()
                queue_opening(db, sort, **filters)
                times.append((time.perf_counter() - started) * 1000)
            print(
                f"{str(filters):58s} {sort:13s} {statistics.median(times):8.1f} ms "
                f"({min(times):.1f}, {max(times):.1f})",
                flush=True,
            )
    print(f"load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
