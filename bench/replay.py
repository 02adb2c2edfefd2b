"""What-if replay benchmark: a 32-phrase pack replayed over 100,000 stored answers, store -> domain.

    python -m bench.replay [--answers 100000] [--db PATH] [--fresh]

Builds (once, cached under bench/corpus/) a database of synthetic answers inserted through
`bench.synthetic.insert_synthetic_answers` (bare runs rows with placed negative-claim findings, three in
four with a dispatched tool call, and a few hundred labels), saves a 31-phrase pack and a 32-phrase child, then times `reviewer.service.pack_ops.run_replay`,
the same path the CLI and the packs screen use: keyset pages from SQLite, label resolution, the domain
Replayer, the trial record. Prints progress while it runs and the throughput in answers/s.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from bench.corpus import EMOJI, NEGATIVES, _filler, _Slots

CORPUS_ROOT = Path(__file__).resolve().parent / "corpus"
#: share of synthetic runs that record a dispatched tool call (the others' claims become no-read notes)
READ_SHARE = 0.75

NONE_PHRASES = [
    "found nothing", "no open incidents", "zero results", "nothing turned up",
    "there are none", "no alerts fired", "no matching records", "the log is clean", "no pages fired",
    "nothing is pending", "no data was lost", "nothing is failing", "no pods are pending",
    "none of the replicas", "no deploys touched", "no sign of packet loss", "nothing else is open",
    "no errors on", "the search returned nothing", "not a single alert", "no regressions",
    "no rollbacks", "no incidents anywhere", "came up empty",
]  # fmt: skip
COMPLETE_PHRASES = [
    "that is the full list", "the list is complete", "every region is covered", "no others exist",
    "these are all of them", "the entire inventory is here", "nothing else is running", "this is every service",
]  # fmt: skip


def answers(n: int, seed: int = 11) -> Iterator[tuple[str, str, list[tuple[int, int]]]]:
    """Deterministic answers shaped like the corpus generator's: a lead, filler, sometimes a negative
    (flagged by the 'detector' two times in three), sometimes emoji outside the BMP or a code block."""
    rng = random.Random(seed)
    for i in range(n):
        slots = _Slots(rng)
        parts = [rng.choice(EMOJI) + " " if rng.random() < 0.4 else "", _filler(rng, rng.randint(12, 40))]
        spans: list[tuple[int, int]] = []
        if rng.random() < 0.35:
            neg = slots.fill(rng.choice(NEGATIVES))
            neg = neg[0].upper() + neg[1:] + "."
            at = len(" ".join(parts)) + 1
            parts.append(neg)
            if rng.random() < 0.66:
                spans.append((at, at + len(neg) - 1))
        if rng.random() < 0.05:
            parts.append("\n```\nkubectl get pods  # no pods are pending here\n```\n")
        parts.append(_filler(rng, rng.randint(5, 20)))
        yield f"bench-{i:07d}", " ".join(parts), spans


def build(db_path: Path, n: int) -> None:
    from bench.synthetic import insert_synthetic_answers
    from store import labels as store_labels
    from store.db.connection import open_database
    from store.packs import iter_answers

    started = time.perf_counter()
    db = open_database(db_path)
    insert_synthetic_answers(db, answers(n), read_share=READ_SHARE)
    print(f"inserted {n:,} synthetic answers in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    rng = random.Random(5)
    labelled = 0
    for key, _text, flagged in iter_answers(db, only_flagged=True):
        if rng.random() < 0.01:
            for seq, _ in enumerate(flagged):
                store_labels.label_finding(db, f"syn-{key}-{seq}", rng.choice(["tp", "tp", "fp"]), "bench")
                labelled += 1
    for key, text, flagged in iter_answers(db):
        if not flagged and rng.random() < 0.002:
            words = "came up empty" if "came up empty" in text else text.split(". ")[0][:40]
            start = text.find(words)
            if start >= 0 and words:
                store_labels.label_missed(db, key, start, start + len(words), "none", "bench")
                labelled += 1
    print(f"added {labelled} labels", file=sys.stderr)
    db.close()


def ensure_pack(db: object) -> str:
    """Save the 31-phrase pack and its 32-phrase child once; returns the child's ref."""
    from reviewer.service.pack_ops import change_pack, create_pack
    from store.packs import latest_pack

    if latest_pack(db, "bench") is None:  # type: ignore[arg-type]
        create_pack(db, "bench", NONE_PHRASES[:-1], COMPLETE_PHRASES, who="bench", note="31 phrases")
        change_pack(db, "bench", add=[NONE_PHRASES[-1]], who="bench", note="32 phrases")
    stored = latest_pack(db, "bench")  # type: ignore[arg-type]
    assert stored is not None and len(stored.none) + len(stored.complete) == 32
    return stored.ref


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--fresh", action="store_true", help="Rebuild the database first.")
    args = parser.parse_args(argv)

    from reviewer.service.pack_ops import run_replay
    from store.db.connection import open_database
    from store.packs import count_answers, find_pack

    db_path = args.db or CORPUS_ROOT / f"replay-{args.answers}.db"
    if args.fresh and db_path.exists():
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    if not db_path.exists():
        build(db_path, args.answers)
    db = open_database(db_path)
    stored = find_pack(db, ensure_pack(db))
    total = count_answers(db)

    def progress(done: int, of: int) -> None:
        print(f"  replayed {done:,}/{of:,} answers ({time.perf_counter() - started:.2f}s)", file=sys.stderr)

    print(f"replaying {stored.ref} (32 phrases) over {total:,} answers in {db_path}", file=sys.stderr)
    started = time.perf_counter()
    data = run_replay(db, stored.ref, progress=progress, progress_every=10_000)
    elapsed = time.perf_counter() - started
    print(
        f"replay: {data['answers']:,} answers in {elapsed:.2f}s end to end = {data['answers'] / elapsed:,.0f} "
        f"answers/s (replay loop {data['answers_per_second']:,} answers/s); newly flagged "
        f"{data['newly_flagged']:,}, no longer flagged {data['no_longer_flagged']:,}; "
        f"variant {data['trial']['variant']} of {data['trial']['variants']} against these labels"
    )
    db.close()


if __name__ == "__main__":
    main()
