"""Issue 16's table: ingest beside a careful peer on every corpus shape, and every screen's query at a million
runs. Every figure is the median of at least 3 repetitions in this run, with min and max beside it.

    python -m bench.scale [--ingest-runs 10000] [--ingest-mb 50] [--store PATH] [--repeats 3]

Ingest (each repetition into a fresh database; ratios taken within a repetition):
- ours: `store.db.ingest.ingest`, all cores (two workers here);
- raw parse: `orjson.loads` of every file on one core, GC paused (the JSON parse limit);
- careful peer: orjson, then each file's events with sqlite-utils `insert_all` inside one `db.atomic()`
  transaction per file, WAL and synchronous=NORMAL, batch size tuned on the first files (sqlite-utils caps
  a batch at 999 variables, so 199 rows of five columns);
- naive peer: the same with insert_all's defaults (a commit every 100 rows), what `python -m bench` used.

Screens (store level, the statements the service runs for a screen): on the million-run store
(`bench.million`), filtered runs page and its count (by finding kind, outcome, agent, search), facets,
queue first page (any / unlabelled) with its count and progress, full-text search (rare / common word),
replay answers/s, and a label write while a replay runs (`bench.write_under_replay`).
"""

from __future__ import annotations

import argparse
import gc
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from bench.__main__ import measured_code

#: Rows a screen reads as its first block (the service's RUNS_BLOCK).
BLOCK = 100
BUDGET_S = 0.05


@dataclass
class Spread:
    samples: list[float]
    #: what the last repetition returned
    last: Any = None

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def text(self, fmt: Callable[[float], str]) -> str:
        return f"{fmt(self.median)} (min {fmt(min(self.samples))}, max {fmt(max(self.samples))})"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def repeat(fn: Callable[[], Any], n: int) -> Spread:
    fn()  # warm the page cache as a screen's second visit would find it
    samples, last = [], None
    for _ in range(n):
        t = time.perf_counter()
        last = fn()
        samples.append(time.perf_counter() - t)
    return Spread(samples, last)


def shown(result: Any) -> str:
    """What a count a screen shows says (`10,000+` when it is a lower bound), for the case's name; empty for
    anything else. A count that stops at its time budget is faster and says less: the table shows both."""
    if isinstance(result, int) and hasattr(result, "exact"):
        return f"; shows {int(result):,}{'' if result.exact else '+'}"
    return ""


# -- ingest ------------------------------------------------------------------------------------------------


def _events(path: Path) -> list[dict[str, Any]]:
    doc = orjson.loads(path.read_bytes())
    rec = doc.get("recording", doc)
    return [
        {
            "file": path.name,
            "seq": i,
            "type": e.get("type"),
            "run_id": (e.get("meta") or {}).get("runId"),
            "payload": orjson.dumps(e.get("payload")).decode(),
        }
        for i, e in enumerate(rec.get("events", []))
    ]


def careful_peer(paths: list[Path], batch_size: int) -> float:
    """orjson + sqlite-utils insert_all inside one transaction per file; returns seconds."""
    import sqlite_utils

    with tempfile.TemporaryDirectory() as tmp:
        db = sqlite_utils.Database(Path(tmp) / "peer.db")
        db.enable_wal()
        db.execute("PRAGMA synchronous = NORMAL")
        was = gc.isenabled()
        gc.disable()
        t = time.perf_counter()
        try:
            for p in paths:
                rows = _events(p)
                with db.atomic():
                    db["events"].insert_all(rows, batch_size=batch_size)
        finally:
            if was:
                gc.enable()
        seconds = time.perf_counter() - t
        db.close()
    return seconds


def tune_batch(paths: list[Path]) -> int:
    """The careful peer's best batch size on the first files (sqlite-utils caps it at 999 variables)."""
    sample = paths[: max(4, len(paths) // 20)]
    timings = {b: min(careful_peer(sample, b) for _ in range(2)) for b in (50, 100, 199)}
    return min(timings, key=lambda b: timings[b])


def our_ingest(paths: list[Path], workers: int | None) -> float:
    from store.db.connection import open_database
    from store.db.ingest import ingest

    with tempfile.TemporaryDirectory() as tmp:
        db_path = Path(tmp) / "ours.db"
        db = open_database(db_path)
        t = time.perf_counter()
        report = ingest(db, paths, db_path=str(db_path), workers=workers)
        seconds = time.perf_counter() - t
        db.close()
        if report.quarantined:
            raise RuntimeError(f"quarantined: {report.quarantined[:3]}")
    return seconds


@dataclass
class IngestFigures:
    label: str
    files: int
    mb: float
    events: int
    batch: int
    ours: Spread
    ours_one: Spread
    parse: Spread
    careful: Spread
    naive: Spread

    def ratio(self, a: Spread, b: Spread) -> Spread:
        return Spread([y / x for x, y in zip(a.samples, b.samples, strict=True)])


def measure_ingest(label: str, paths: list[Path], repeats: int) -> IngestFigures:
    from bench.ingest import naive_pipeline, raw_parse

    mb = sum(p.stat().st_size for p in paths) / 1e6
    batch = tune_batch(paths)
    ours, ours_one, parse, careful, naive = [], [], [], [], []
    events = 0
    for _ in range(repeats):
        s, events = raw_parse(paths)
        parse.append(s)
        ours.append(our_ingest(paths, None))
        ours_one.append(our_ingest(paths, 1))
        careful.append(careful_peer(paths, batch))
        naive.append(naive_pipeline(paths)[0])
        print(
            f"{label}: parse {parse[-1]:.1f}s ours {ours[-1]:.1f}s (1 worker {ours_one[-1]:.1f}s) "
            f"careful {careful[-1]:.1f}s naive {naive[-1]:.1f}s",
            file=sys.stderr,
            flush=True,
        )
    return IngestFigures(
        label,
        len(paths),
        mb,
        events,
        batch,
        Spread(ours),
        Spread(ours_one),
        Spread(parse),
        Spread(careful),
        Spread(naive),
    )


def ingest_rows(f: IngestFigures, event_heavy: bool) -> list[list[str]]:
    def rate(s: Spread) -> str:
        return Spread([f.mb / x for x in s.samples]).text(lambda v: f"{v:,.0f} MB/s")

    def x(s: Spread) -> str:
        return s.text(lambda v: f"{v:.2f}x")

    vs_parse = Spread([p / o for p, o in zip(f.parse.samples, f.ours.samples, strict=True)])
    one_vs_parse = Spread([p / o for p, o in zip(f.parse.samples, f.ours_one.samples, strict=True)])
    vs_careful = Spread([c / o for c, o in zip(f.careful.samples, f.ours.samples, strict=True)])
    one_vs_careful = Spread([c / o for c, o in zip(f.careful.samples, f.ours_one.samples, strict=True)])
    vs_naive = Spread([n / o for n, o in zip(f.naive.samples, f.ours.samples, strict=True)])
    head = f"{f.label} ({f.files:,} files, {f.mb:,.0f} MB, {f.events:,} events)"
    parse_target = ">= 0.3x" if event_heavy else "reference"
    return [
        [
            "ingest",
            f"{head}: ours, 2 workers",
            rate(f.ours),
            f"orjson.loads 1 core {rate(f.parse)}",
            x(vs_parse),
            parse_target,
            _met(vs_parse.median >= 0.3) if event_heavy else "",
        ],
        [
            "ingest",
            f"{head}: ours, 1 worker",
            rate(f.ours_one),
            "orjson.loads 1 core",
            x(one_vs_parse),
            "",
            "",
        ],
        [
            "ingest",
            f"{head}: vs the careful peer (batch {f.batch})",
            f.ours.text(lambda v: f"{v:.1f} s"),
            f"careful peer {f.careful.text(lambda v: f'{v:.1f} s')}",
            x(vs_careful) + " faster",
            ">= 2x",
            _met(vs_careful.median >= 2),
        ],
        [
            "ingest",
            f"{head}: 1 worker vs the careful peer (1 core each)",
            f.ours_one.text(lambda v: f"{v:.1f} s"),
            "careful peer",
            x(one_vs_careful) + " faster",
            "",
            "",
        ],
        [
            "ingest",
            f"{head}: vs the naive peer (commit every 100 rows)",
            f.ours.text(lambda v: f"{v:.1f} s"),
            f"naive peer {f.naive.text(lambda v: f'{v:.1f} s')}",
            x(vs_naive) + " faster",
            "",
            "",
        ],
    ]


def _met(ok: bool) -> str:
    return "yes" if ok else "NO"


# -- screens at a million runs -----------------------------------------------------------------------------


def pick_words(counts: list[tuple[str, int]], rare_bound: int) -> dict[str, str]:
    """The search words the screens are timed with, from (word, documents holding it): the rarest plain word
    (letters only, 6+ long), the plain words (4+) just under and just over `rare_bound` (where a page stops
    reading a word's runs and sorting them), a middling one (the geometric middle between that bound and the
    commonest) and the commonest word (5+ long)."""
    plain = [(w, n) for w, n in counts if w.isascii() and w.isalpha() and len(w) > 3]
    common = max((c for c in counts if len(c[0]) > 4), key=lambda c: (c[1], c[0]))
    middle = math.sqrt(rare_bound * common[1])
    return {
        "rare": min((c for c in plain if len(c[0]) > 5), key=lambda c: (c[1], c[0]))[0],
        "just under the rare bound": max((c for c in plain if c[1] < rare_bound), key=lambda c: (c[1], c[0]))[
            0
        ],
        "just over the rare bound": min((c for c in plain if c[1] >= rare_bound), key=lambda c: (c[1], c[0]))[
            0
        ],
        "middling": min(plain, key=lambda c: (abs(math.log(c[1] / middle)), c[0]))[0],
        "common": common[0],
    }


def _words(db: Any) -> dict[str, str]:
    """`pick_words` of the full-text index (FTS5's own counts: a scan of its whole vocabulary, once)."""
    from store.search import RARE_DOCS

    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, search, 'row')")
    counts = [(str(t), int(n)) for t, n in db.execute("SELECT term, doc FROM temp.vocab")]
    return pick_words(counts, RARE_DOCS)


def label_share(db: Any, n: int = 2_000) -> None:
    """Label the first `n` findings (by id) once, so an unlabelled first page has labelled ones to skip."""
    from store.labels import label_finding
    from store.vocab import verdicts_for

    if db.execute("SELECT count(*) FROM labels WHERE reviewer = 'bench'").fetchone()[0] < n:
        for fid, kind in db.execute(f"SELECT id, kind FROM findings ORDER BY id LIMIT {int(n)}").fetchall():
            label_finding(db, fid, verdicts_for(kind)[0], "bench")
    # a second reviewer disagreeing on one in ten, so "disagreements first" has some to put first
    if db.execute("SELECT count(*) FROM labels WHERE reviewer = 'bench-2'").fetchone()[0] < n // 10:
        for fid, kind in db.execute(
            f"SELECT id, kind FROM findings ORDER BY id LIMIT {int(n) // 10}"
        ).fetchall():
            label_finding(db, fid, verdicts_for(kind)[1], "bench-2")


def queue_opening(db: Any, sort: str | None = None, **filters: Any) -> Any:
    """What the queue reads when it opens, as `ReviewService.queue_first` reads it (one count for the page and
    the progress line; where it opens, unless a label state chooses the rows)."""
    from store import findings

    f = dict(filters, reviewer="someone")
    total = findings.queue_count_at_most(db, **f)
    rows = findings.queue_page(db, limit=BLOCK, sort=sort, **f)
    return (
        total,
        findings.queue_progress(db, total=None if "state" in f else total, **f),
        rows,
        None if "state" in f else findings.first_unlabelled(db, sort=sort, head=rows, **f),
    )


#: Searches of more tokens (`bench.corpus`'s words): two words each common that few documents hold together
#: (1,400 runs of a million), a phrase (tokens "v2", "14", "3"), two common words often together.
PHRASES = {
    "two words few documents share": "failover retry",
    "a phrase": "v2.14.3",
    "two common words": "source gateway",
}


def screen_cases(db: Any, words: dict[str, str]) -> list[tuple[str, Callable[[], Any]]]:
    """Every screen query, as the app's service calls it, on `db` (SQLite or PostgreSQL): the runs screen's
    pages and counts by filter and search word, the facets, and the queue's first page in every order."""
    from store import findings, labels, runs

    kinds = db.execute("SELECT value, n FROM tallies WHERE facet = 'run_kind' ORDER BY n DESC").fetchall()
    common_kind, rare_kind = kinds[0][0], kinds[-1][0]
    agent = runs.run_facets(db)["agents"][0]
    tool = (findings.queue_facets(db)["tools"] or ["no-such-tool"])[0]

    def runs_screen(**filters: Any) -> Callable[[], Any]:
        def page() -> Any:
            rows = runs.runs_page(db, limit=BLOCK, **filters)
            labels.unlabelled_counts(db, [r["run_key"] for r in rows])
            return rows

        return page

    def queue_first(sort: str | None = None, **filters: Any) -> Callable[[], Any]:
        return lambda: queue_opening(db, sort, **filters)

    def searched(tag: str, text: str) -> tuple[tuple[str, Callable[[], Any]], ...]:
        """A search's page, count and page by most findings (`tag` names it in the cases)."""
        return (
            (f"full-text search page ({tag})", runs_screen(search=text)),
            (f"full-text search count ({tag})", lambda: runs.count_runs_at_most(db, search=text)),
            (
                f"full-text search page, most findings first ({tag})",
                runs_screen(search=text, sort="most-findings"),
            ),
        )

    return [
        ("runs screen first page, no filter", runs_screen()),
        ("runs screen first page, most findings first", runs_screen(sort="most-findings")),
        ("runs screen count, no filter", lambda: runs.count_runs_at_most(db)),
        (f"runs page by finding kind (common: {common_kind})", runs_screen(kind=common_kind)),
        (
            f"runs count by finding kind (common: {common_kind})",
            lambda: runs.count_runs_at_most(db, kind=common_kind),
        ),
        (f"runs page by finding kind (rare: {rare_kind})", runs_screen(kind=rare_kind)),
        (
            f"runs count by finding kind (rare: {rare_kind})",
            lambda: runs.count_runs_at_most(db, kind=rare_kind),
        ),
        ("runs page by outcome (refused)", runs_screen(outcome="refused")),
        ("runs count by outcome (refused)", lambda: runs.count_runs_at_most(db, outcome="refused")),
        (f"runs page by agent ({agent})", runs_screen(agent=agent)),
        (f"runs count by agent ({agent})", lambda: runs.count_runs_at_most(db, agent=agent)),
        ("runs page with findings (f)", runs_screen(has_findings=True)),
        ("runs page with no answer (w)", runs_screen(undelivered=True)),
        ("runs count with no answer (w)", lambda: runs.count_runs_at_most(db, undelivered=True)),
        (
            "runs page by outcome (delivered), most findings first",
            runs_screen(outcome="delivered", sort="most-findings"),
        ),
        ("runs page withheld, most findings first", runs_screen(withheld=True, sort="most-findings")),
        (
            f"runs page by agent ({agent}), most findings first",
            runs_screen(agent=agent, sort="most-findings"),
        ),
        (
            f"runs page by finding kind ({rare_kind}) and outcome (refused), oldest first",
            runs_screen(kind=rare_kind, outcome="refused", sort="oldest"),
        ),
        (
            f"runs count by finding kind ({common_kind}) and outcome (refused)",
            lambda: runs.count_runs_at_most(db, kind=common_kind, outcome="refused"),
        ),
        *(
            case
            for label, word in words.items()
            for case in (
                *searched(f"{label} word: {word}", word),
                (
                    f"full-text search count within a finding kind ({common_kind}; {label} word: {word})",
                    lambda word=word: runs.count_runs_at_most(db, search=word, kind=common_kind),
                ),
                (
                    f"full-text search page within a finding kind ({common_kind}; {label} word: {word})",
                    runs_screen(search=word, kind=common_kind),
                ),
                (
                    f"full-text search page within an agent ({agent}; {label} word: {word})",
                    runs_screen(search=word, agent=agent),
                ),
                (
                    f"full-text search count within an agent ({agent}; {label} word: {word})",
                    lambda word=word: runs.count_runs_at_most(db, search=word, agent=agent),
                ),
                (
                    f"full-text search page within an outcome (refused; {label} word: {word})",
                    runs_screen(search=word, outcome="refused"),
                ),
                (
                    f"full-text search count within an outcome (refused; {label} word: {word})",
                    lambda word=word: runs.count_runs_at_most(db, search=word, outcome="refused"),
                ),
            )
        ),
        *(
            case
            for label, text in PHRASES.items()
            for case in (
                *searched(f"{label}: {text}", text),
                (
                    f"full-text search page with findings (f; {label}: {text})",
                    runs_screen(search=text, has_findings=True),
                ),
            )
        ),
        *(
            case
            for label, word in words.items()
            for case in (
                (
                    f"full-text search page with findings (f; {label} word: {word})",
                    runs_screen(search=word, has_findings=True),
                ),
                (
                    f"full-text search count with findings (f; {label} word: {word})",
                    lambda word=word: runs.count_runs_at_most(db, search=word, has_findings=True),
                ),
                (
                    f"full-text search page withheld ({label} word: {word})",
                    runs_screen(search=word, withheld=True),
                ),
                (
                    f"full-text search page with no answer (w; {label} word: {word})",
                    runs_screen(search=word, undelivered=True),
                ),
            )
        ),
        ("runs screen facets", lambda: runs.run_facets(db)),
        ("queue facets", lambda: findings.queue_facets(db)),
        ("queue first page + count + progress, any", queue_first()),
        ("queue first page + count + progress, unlabelled", queue_first(state="unlabelled")),
        (f"queue first page + count + progress, by tool ({tool})", queue_first(tool=tool)),
        (
            f"queue first page + count + progress, by kind ({common_kind}) and tool ({tool})",
            queue_first(kind=common_kind, tool=tool),
        ),
        ("next unlabelled finding", lambda: findings.next_unlabelled(db)),
        *(
            (f"queue first page + count + progress + first unlabelled, sorted {sort}", queue_first(sort))
            for sort in findings.QUEUE_SORTS
        ),
        (
            "next unlabelled finding of the same run",
            lambda: findings.next_unlabelled(
                db, after=findings.queue_page(db, limit=1)[0]["id"], reviewer="someone", same_run=True
            ),
        ),
    ]


def screen_rows(store: Path, repeats: int) -> list[list[str]]:
    from store import runs
    from store.db.connection import open_database

    db = open_database(store)
    label_share(db)
    n_runs = runs.count_runs(db)
    words = _words(db)
    print(f"words: {words}", file=sys.stderr, flush=True)
    cases = screen_cases(db, words)
    rows = []
    for name, fn in cases:
        spread = repeat(fn, max(repeats, 5))
        rows.append(
            [
                "screens",
                f"{name} ({n_runs:,} runs{shown(spread.last)})",
                spread.text(ms),
                "50 ms",
                f"{spread.median / BUDGET_S:.2f}x of budget",
                "< 50 ms",
                _met(spread.median < BUDGET_S),
            ]
        )
        print(rows[-1][1], rows[-1][2], file=sys.stderr, flush=True)
    db.close()
    return rows


def replay_rows(store: Path, repeats: int) -> list[list[str]]:
    from bench.replay import ensure_pack
    from reviewer.service.pack_ops import run_replay
    from store.db.connection import open_database
    from store.packs import count_answers

    db = open_database(store)
    ref = ensure_pack(db)
    answers = count_answers(db)
    samples = []
    for _ in range(repeats):
        t = time.perf_counter()
        data = run_replay(db, ref, examples=0, progress_every=50_000)
        samples.append(time.perf_counter() - t)
        print(f"replay {data['answers']:,} answers in {samples[-1]:.1f} s", file=sys.stderr, flush=True)
    db.close()
    rate = Spread([answers / s for s in samples])
    return [
        [
            "replay",
            f"32-phrase pack over {answers:,} answers (store -> report)",
            rate.text(lambda v: f"{v:,.0f} answers/s"),
            "",
            "",
            "finishes in a minute",
            _met(max(samples) < 60),
        ]
    ]


def write_rows(store: Path, repeats: int) -> list[list[str]]:
    from bench.write_under_replay import measure

    f = measure(0, repeats=repeats, db_path=store)
    busy = Spread(f.busy_ms)
    ratios = Spread(f.ratios)
    return [
        [
            "service",
            f"label write while a replay of the store runs ({repeats} repetitions of 12 writes)",
            busy.text(lambda v: f"{v:.2f} ms")
            + f"; {f.replays_overlapped}/{repeats} wholly during the replay",
            f"idle write {Spread(f.idle_ms).text(lambda v: f'{v:.2f} ms')}",
            ratios.text(lambda v: f"{v:.2f}x"),
            "< 3x",
            _met(f.ratio < 3),
        ]
    ]


def render(rows: list[list[str]]) -> str:
    head = "| area | figure | median (min, max) | reference | ratio | target | met |\n|---|---|---|---|---|---|---|\n"
    return head + "".join("| " + " | ".join(r) + " |\n" for r in rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--ingest-runs", type=int, default=10_000, help="event-heavy corpus (runs, 10 a file)"
    )
    parser.add_argument("--ingest-mb", type=int, default=50, help="snapshot-heavy corpus (MB)")
    parser.add_argument(
        "--store", type=Path, default=None, help="the million-run store (default: bench.million)"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip", action="append", default=[], help="ingest, screens, replay, write")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows: list[list[str]] = []
    if "ingest" not in args.skip:
        from bench.__main__ import corpus_by_runs, corpus_by_size

        heavy = corpus_by_runs(args.ingest_runs)
        rows += ingest_rows(
            measure_ingest(f"event-heavy {args.ingest_runs:,} runs", heavy, args.repeats), True
        )
        light = corpus_by_size(args.ingest_mb)
        rows += ingest_rows(measure_ingest(f"snapshot-heavy {args.ingest_mb} MB", light, args.repeats), False)
    if args.store is None and not {"screens", "replay", "write"} <= set(args.skip):
        from bench.million import build_store

        args.store = build_store()
    if "screens" not in args.skip:
        rows += screen_rows(args.store, args.repeats)
    if "replay" not in args.skip:
        rows += replay_rows(args.store, args.repeats)
    if "write" not in args.skip:
        rows += write_rows(args.store, args.repeats)
    print(render(rows))
    print(f"total {time.perf_counter() - started:.0f} s; {measured_code()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
