"""The least a native decoder-extractor would pay, measured (issue 16 point 3): the work no extractor written in
Rust or C could avoid, beside `orjson.loads` of the same files (what the stand-ins of `bench.ingest_prototypes`
charge for one) and beside what today's Python pays for the same step.

    python -m bench.native_floor [--runs 2000 | --mb 50] [--repeats 5]

A decoder-extractor reads each recording's bytes and hands the writer its rows. Whatever rules it runs, it
must at least:

- **scan** every byte of the JSON once: msgspec's compiled decoder reading each file into a Struct with no
  fields (it still checks every token, string and escape, and keeps nothing);
- **build its rows** as Python objects, which is what the writer takes: msgspec's decoder building the rows
  today's extraction hands the writer (`store.db.ingest.slim`: the recording's, its runs' and documents'
  dicts, the identities and every table's tuples), from their JSON made before the timing (this parses that
  JSON too, so it charges more than building the objects alone);
- **hash** for the run identity: one SHA-256 pass over the bytes of the recording's events (cut out before
  the timing; the content hash of the whole recording the ingest takes already is not charged here, as
  today's line does not charge it either). A reader that sorts each object's keys as it hashes, as
  today's canonical identity does, would pay more than this.

The floor is their sum. What it leaves out is the rules themselves (which events become which rows), the one
part that cannot be measured without writing the extractor: the gap between the floor and `orjson.loads` is
the time the stand-ins leave for them. "Today" is what the ingest's workers pay for the same step in Python
(`store.reading.identity.decoded_with_identities`, `extract`, `to_tuples`). One core, the collector paused;
each figure is the median (min, max) of `--repeats` passes over every file, the ratios taken within a pass.
"""

from __future__ import annotations

import gc
import hashlib
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import orjson


class _Nothing(msgspec.Struct):
    """A JSON object read for nothing: every key skipped, every token still checked."""


class _Inner(msgspec.Struct):
    events: msgspec.Raw = msgspec.Raw(b"[]")


class _Events(msgspec.Struct):
    """Where a bare recording or an envelope keeps its events, as the bytes they were recorded in."""

    events: msgspec.Raw = msgspec.Raw(b"[]")
    recording: _Inner | None = None


_SCAN = msgspec.json.Decoder(_Nothing)
_BUILD = msgspec.json.Decoder()
_EVENTS = msgspec.json.Decoder(_Events)


def events_bytes(data: bytes) -> bytes:
    """The bytes of a recording's events array (of its inner recording, in an envelope)."""
    top = _EVENTS.decode(data)
    return bytes(top.recording.events if top.recording is not None else top.events)


def scan(data: bytes) -> None:
    """Every byte of a recording read and checked once by a compiled JSON reader, nothing kept."""
    _SCAN.decode(data)


def build_rows(rows_json: bytes) -> Any:
    """A recording's rows built as Python objects by a compiled reader (from `rows_json_of`)."""
    return _BUILD.decode(rows_json)


def rows_json_of(prepared: Any) -> bytes:
    """The JSON of what a worker hands the writer for one recording (`store.db.ingest.slim`'s Prepared): the
    objects a native extractor would have to build."""
    x = prepared.extracted
    return msgspec.json.encode([x.recording, x.runs, x.search, x.identities, prepared.tuples])


def floor_charge(data: bytes, rows_json: bytes, events: bytes) -> None:
    """The floor of one recording: scanned, its rows built, its events' bytes hashed once for the identity."""
    scan(data)
    build_rows(rows_json)
    hashlib.sha256(events).digest()


def corpus_rows(paths: list[Path]) -> dict[str, bytes]:
    """Origin -> the JSON of the rows today's ingest prepares of it (`rows_json_of`)."""
    from store.db.ingest import prepare, slim
    from store.db.writer import Prepared
    from store.reading.items import SourceItem
    from store.reading.sources import iter_sources

    rows: dict[str, bytes] = {}
    for item in iter_sources(paths):
        result = slim(prepare(item)) if isinstance(item, SourceItem) else item
        if not isinstance(item, SourceItem) or not isinstance(result, Prepared):
            raise RuntimeError(f"the floor is measured on readable recordings only: {result}")
        rows[item.origin] = rows_json_of(result)
    return rows


def one_pass(datas: list[bytes], rows: list[bytes], events: list[bytes]) -> dict[str, float]:
    """Seconds of each step over every file, once, on this core, the collector paused."""
    from store.db.writer import to_tuples
    from store.reading.extract import extract
    from store.reading.identity import decoded_with_identities

    def timed(step: Callable[[], object]) -> float:
        start = time.perf_counter()
        step()
        return time.perf_counter() - start

    def today() -> None:
        for n, data in enumerate(datas):
            rec, _ = decoded_with_identities(data, str(n), "0" * 64)
            to_tuples(extract(rec, sha256="0" * 64, origin=str(n), container="file", size=len(data)))

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        times = {
            "orjson.loads": timed(lambda: [orjson.loads(d) for d in datas]),
            "scan": timed(lambda: [_SCAN.decode(d) for d in datas]),
            "build the rows": timed(lambda: [build_rows(r) for r in rows]),
            "hash for the identity": timed(lambda: [hashlib.sha256(e).digest() for e in events]),
            "today: decode, identity, extract, tuples": timed(today),
        }
    finally:
        if was_enabled:
            gc.enable()
    times["the floor (scan + rows + hash)"] = (
        times["scan"] + times["build the rows"] + times["hash for the identity"]
    )
    return times


def main(argv: list[str] | None = None) -> int:
    from bench.__main__ import chosen_corpus, corpus_parser, measured_code, spread

    parser = corpus_parser(__doc__)
    args = parser.parse_args(argv)
    paths, shape = chosen_corpus(args)
    by_origin = corpus_rows(paths)
    origins = sorted(by_origin)
    datas = [Path(origin).read_bytes() for origin in origins]
    rows = [by_origin[origin] for origin in origins]
    events = [events_bytes(data) for data in datas]
    mb = sum(map(len, datas)) / 1e6
    passes = [one_pass(datas, rows, events) for _ in range(args.repeats)]
    print(
        f"{len(datas):,} files, {mb:,.0f} MB ({shape}); rows {sum(map(len, rows)) / 1e6:,.0f} MB of JSON, "
        f"events {sum(map(len, events)) / 1e6:,.0f} MB; "
        f"{args.repeats} passes, one core; {measured_code()}"
    )
    for step in passes[0]:
        seconds = [p[step] for p in passes]
        share = [p[step] / p["orjson.loads"] for p in passes]
        print(
            f"  {step:42} {spread(seconds, lambda v: f'{v:.3f} s')}  "
            f"{spread(share, lambda v: f'{v:.2f}x')} orjson.loads' time"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
