"""Where one core's ingest time goes, stage by stage, beside orjson.loads and the careful peer on the same files.

    python -m bench.ingest_parts [--runs 2000 | --mb 50] [--repeats 3]

Each stage is timed on its own over the event-heavy corpus (`corpus_by_runs`; `--mb`: the snapshot-heavy one):
read, sha256, decode (msgspec: the top level typed, the events read whole once), the run content identity
(`store.reading.identity`: each run's events as canonical JSON, one SHA-256 a run), extract (the Python walk),
row tuples, zstd, and the write (the real writer with the ingest's settings, in groups, into a fresh
database). The "without extraction" line is the ceiling any faster extractor could reach with everything else
unchanged: if it clears a target and the whole does not, the Python walk is what stands in the way. The
"2-core floor" is the best wall time of ingest's design on two cores (one writer, the workers preparing): the
larger of the write alone (on pre-built row tuples) and all the stages' time shared by two cores.
"""

from __future__ import annotations

import gc
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson
import zstandard


def stages(paths: list[Path]) -> dict[str, float]:
    from store.db.connection import open_database
    from store.db.ingest import (
        CODEC,
        GROUP_FILES,
        ZSTD_LEVEL,
        apply_group,
        bulk_write_pragmas,
    )
    from store.db.writer import Prepared, to_tuples
    from store.reading.decode import decode_recording
    from store.reading.extract import extract
    from store.reading.identity import taken_identities

    t: dict[str, float] = dict.fromkeys(
        (
            "read",
            "sha256",
            "decode",
            "extract",
            "tuples",
            "zstd",
            "write",
            "orjson.loads",
            "identity",
        ),
        0.0,
    )
    prepared = []
    gc.disable()
    try:
        for p in paths:
            s = time.perf_counter()
            data = p.read_bytes()
            t["read"] += time.perf_counter() - s
            s = time.perf_counter()
            orjson.loads(data)
            t["orjson.loads"] += time.perf_counter() - s
            s = time.perf_counter()
            sha = hashlib.sha256(data).hexdigest()
            t["sha256"] += time.perf_counter() - s
            s = time.perf_counter()
            rec = decode_recording(data, str(p), keep_events=True)
            t["decode"] += time.perf_counter() - s
            s = time.perf_counter()
            identities = taken_identities(rec, sha)
            rec.events = None
            t["identity"] += time.perf_counter() - s
            s = time.perf_counter()
            x = extract(rec, sha256=sha, origin=str(p), container="file", size=len(data))
            t["extract"] += time.perf_counter() - s
            x.identities.update(identities)
            s = time.perf_counter()
            tuples = to_tuples(x)
            t["tuples"] += time.perf_counter() - s
            s = time.perf_counter()
            original = zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(data)
            t["zstd"] += time.perf_counter() - s
            prepared.append(Prepared(x, CODEC, original, tuples))
    finally:
        gc.enable()
    with tempfile.TemporaryDirectory() as tmp:
        db = open_database(Path(tmp) / "parts.db")
        bulk_write_pragmas(db)  # the writer's settings, as ingest sets them
        s = time.perf_counter()
        for i in range(0, len(prepared), GROUP_FILES):
            apply_group(db, list(prepared[i : i + GROUP_FILES]))
        t["write"] = time.perf_counter() - s
        db.close()
    return t


def main(argv: list[str] | None = None) -> int:
    from bench.__main__ import chosen_corpus, corpus_parser
    from bench.scale import careful_peer, tune_batch

    parser = corpus_parser(__doc__)
    args = parser.parse_args(argv)
    paths, shape = chosen_corpus(args)
    batch = tune_batch(paths)
    samples = [stages(paths) for _ in range(args.repeats)]
    peer = [careful_peer(paths, batch) for _ in range(args.repeats)]
    med = {k: statistics.median(s[k] for s in samples) for k in samples[0]}
    ours = sum(v for k, v in med.items() if k != "orjson.loads")
    without = ours - med["extract"] - med["tuples"]
    parse, careful = med["orjson.loads"], statistics.median(peer)
    mb = sum(p.stat().st_size for p in paths) / 1e6
    print(f"{len(paths):,} files, {mb:,.0f} MB ({shape}); medians of {args.repeats}; one core")
    for k, v in med.items():
        print(
            f"  {k:14} {v:7.2f} s  {v / ours:5.0%} of ours" if k != "orjson.loads" else f"  {k:14} {v:7.2f} s"
        )
    print(
        f"  {'ours, 1 core':14} {ours:7.2f} s  = {parse / ours:.2f}x orjson.loads, {careful / ours:.2f}x faster than the careful peer ({careful:.2f} s)"
    )
    print(
        f"  {'no extraction':14} {without:7.2f} s  = {parse / without:.2f}x orjson.loads, {careful / without:.2f}x faster than the careful peer"
    )
    # The floor of this design on 2 cores: one writer (this process) does every write, the workers the
    # rest; the wall time cannot go below the write alone, nor below all the work shared by the two cores.
    floor = max(med["write"], ours / 2)
    print(
        f"  {'2-core floor':14} {floor:7.2f} s  = {parse / floor:.2f}x orjson.loads, {careful / floor:.2f}x faster than the careful peer "
        f"(max of the write alone, {med['write']:.2f} s, and all of ours over 2 cores, {ours / 2:.2f} s)"
    )
    print(
        f"  {'write alone':14} {med['write']:7.2f} s  = {parse / med['write']:.2f}x orjson.loads, {careful / med['write']:.2f}x faster than the careful peer"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
