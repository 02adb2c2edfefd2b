"""What would bring ingest of the event-heavy corpus to 0.3x the one-core orjson rate, and every corpus shape
to 2x the careful peer (issue 16 point 3): prototypes timed on the same files beside today's ingest. Nothing
here is wired into the product.

    python -m bench.ingest_prototypes [--runs 2000 | --mb 50] [--repeats 3] [--only TEXT ...] [--no-writer]

`--runs` is the event-heavy corpus of that many runs; `--mb` the snapshot-heavy corpus of that size instead
(`bench.scale --ingest-mb`: few events, large snapshots).

The pipeline, all cores (two workers here) unless the line says otherwise; each repetition runs every line
once, in turn, into a fresh database, and each line is the median (min, max) of its repetitions, with its
ratio to `orjson.loads` of the same files taken within each repetition (`bench.ingest.raw_parse`, one core,
the collector paused: the reference of `bench.scale`):

- ours: `store.db.ingest.ingest` as it is;
- ours, one process: `workers=1`;
- no write: the workers prepare every recording as usual and the group write is replaced by nothing, so
  this is the most any change to the write could give on this machine;
- full text later: the rows are written as usual but the full-text table is a plain one during the ingest
  (the writer's inserts land there unindexed), and the index is built after it from `search_text` (FTS5's
  'rebuild', timed on its own line): what the ingest would take if a screen said how many runs are not
  searchable yet;
- shard merge: the writer's critical path alone, one process: each group's rows written by a "worker" into
  a shard SQLite file with bare tables (timed on its own line, work that would move to the workers), then
  merged into the store with ATTACH and `INSERT ... SELECT` in one transaction, beside `apply_group` on the
  same pre-built rows. The merge writes the same rows for this corpus (no run stored twice, nothing
  quarantined); it is not a complete writer;
- the whole pipeline with shards: the workers prepare each group as usual and write it into a shard file
  (`write_shard`), sending the writer only the shard's path and the group's outcomes; the writer merges each
  shard into the store in one transaction (`merge_shard`): the same design, end to end, with the same
  limits (new, readable recordings only; checked: it stores as many runs, findings, events and documents
  as ours); and with no row of the `events` table written (below);
- extraction at parse speed (a stand-in): decoding and the extraction of each recording cost one
  `orjson.loads` of its bytes, its rows being the ones the real extraction made before
  the timing (kept in the ingesting process, which the forked workers inherit): what a decoder-extractor
  compiled to run at orjson's speed could give at the most (reading, hashing, zstd and the write stay as
  they are), through ours and through the shard pipeline: the measured answer to what would meet 2x the
  careful peer; and the same with no row of the `events` table written (each run's timeline would be read
  from its recording's compressed original when the run is opened): what is left when the writer writes
  no row a peer writes; and, with the shards, the stand-in paying today's run identity on top of its parse
  (`store.reading.identity`: each run's events as canonical JSON, one SHA-256 a run; native calls already),
  which a compiled decoder-extractor that keeps the identity as it is could not avoid; and paying instead one
  SHA-256 pass over each recording's bytes: the least a reader that takes the identity from the bytes while
  it parses them would pay (the line that says whether a cheaper identity would close the gap);
- today's decoder, extraction free (a stand-in): the decode is ours (msgspec Structs, compiled already, and on
  snapshot-heavy recordings three times faster than `orjson.loads`), the extraction's rows handed back as
  above, with today's identity or with one hash pass: what an extractor compiled behind today's decoder
  could give at the most;
- a decoder-extractor at its native floor (a stand-in): the decode, the identity and the extraction cost what
  `bench.native_floor` measures no native reader could avoid (every byte scanned by a compiled JSON reader,
  the rows built as Python objects, the events' bytes hashed once), the rules themselves free: the best any
  decoder-extractor could give, through ours, through the shards, and with no event rows;
- the careful peer (`bench.scale.careful_peer`: orjson and sqlite-utils `insert_all`, one transaction a
  file, one core, its batch size tuned on these files), the second reference of every line.
"""

from __future__ import annotations

import functools
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from sqlite_utils import Database

from bench.__main__ import measured_code, spread
from bench.write_parts import Groups, prepared_groups
from store.db.ingest import apply_group as real_apply_group  # before any line patches it


def _ingest(
    paths: list[Path], workers: int | None, before: Callable[[Database], None] = lambda db: None
) -> tuple[Database, float]:
    """The product's ingest into a fresh database (`before` applied to it first): the database, left open in
    a temporary folder `_remove` deletes, and the seconds the ingest took."""
    from store.db.connection import open_database
    from store.db.ingest import ingest

    folder = Path(tempfile.mkdtemp(prefix="prototype-"))
    db_path = folder / "store.db"
    db = open_database(db_path)
    before(db)
    started = time.perf_counter()
    report = ingest(db, paths, db_path=str(db_path), workers=workers)
    seconds = time.perf_counter() - started
    if report.quarantined:
        raise RuntimeError(f"quarantined: {report.quarantined[:3]}")
    return db, seconds


def _timed_ingest(paths: list[Path], workers: int | None) -> float:
    db, seconds = _ingest(paths, workers)
    _remove(db)
    return seconds


def _remove(db: Database) -> None:
    folder = Path(db.conn.execute("PRAGMA database_list").fetchone()[2]).parent
    db.close()
    for p in folder.iterdir():
        p.unlink()
    folder.rmdir()


@contextmanager
def _patched(module: Any, name: str, value: Any) -> Iterator[None]:
    """`module.name` replaced while the block runs (forked workers inherit it)."""
    real = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, real)


def no_write(paths: list[Path]) -> float:
    import store.db.ingest as ingest_module

    def nothing_written(db: Database, results: list[Any], db_path: str | None = None) -> list[Any]:
        return [ingest_module.Outcome("stored") for _ in results]

    with _patched(ingest_module, "apply_group", nothing_written):
        return _timed_ingest(paths, None)


def _plain_search_table(db: Database) -> None:
    """The full-text table swapped for a plain one: the writer's inserts land there, nothing is indexed."""
    db.execute("DROP TABLE search")
    db.execute("CREATE TABLE search (text)")


def full_text_later(paths: list[Path]) -> tuple[float, float]:
    """(seconds of the ingest without full-text indexing, seconds of indexing every document after it)."""
    fts = None

    def unindexed(db: Database) -> None:
        nonlocal fts
        fts = db.execute("SELECT sql FROM sqlite_master WHERE name = 'search'").fetchone()[0]
        _plain_search_table(db)

    db, ingest_seconds = _ingest(paths, None, unindexed)
    started = time.perf_counter()
    with db.conn:  # the index as the migrations build it, from the documents' table
        db.execute("DROP TABLE search")
        db.execute(str(fts))
        db.execute("INSERT INTO search (search) VALUES ('rebuild')")
    index_seconds = time.perf_counter() - started
    _remove(db)
    return ingest_seconds, index_seconds


# -- the writer's critical path: apply_group on row tuples vs a merge of shard files -----------------------


def _shard_schema(conn: Any, recording_columns: list[str]) -> None:
    from store.db.schema import COLUMNS
    from store.db.writer import ROW_TABLES

    conn.execute(f"CREATE TABLE recordings (n INTEGER PRIMARY KEY, {', '.join(recording_columns)})")
    conn.execute("CREATE TABLE originals (n INTEGER PRIMARY KEY, codec, data)")
    for table in ROW_TABLES:
        conn.execute(f"CREATE TABLE {table} (n, {', '.join(COLUMNS[table])})")
    conn.execute("CREATE TABLE ids (n, run_key, content_id)")
    conn.execute("CREATE TABLE docs (n, run_key, number, kind, ref, text)")


#: tables the shard lines leave unwritten (set before the pool forks: the workers inherit it)
_UNWRITTEN: tuple[str, ...] = ()


def write_shard(path: Path, group: list[Any]) -> None:
    """What a worker would write: one group's rows, into bare tables (no index, no trigger)."""
    import sqlite3

    from store.db.schema import COLUMNS
    from store.db.writer import EXTRACTOR_VERSION, ROW_TABLES, now_iso

    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = OFF")
    conn.execute("PRAGMA synchronous = OFF")
    stamp = {"extractor_version": EXTRACTOR_VERSION, "ingested_at": now_iso()}
    _shard_schema(conn, [*group[0].extracted.recording, *stamp])
    conn.execute("BEGIN")
    for n, prepared in enumerate(group):
        x = prepared.extracted
        rec = dict(x.recording, **stamp)
        conn.execute(
            f"INSERT INTO recordings (n, {', '.join(rec)}) VALUES (?{', ?' * len(rec)})", [n, *rec.values()]
        )
        conn.execute("INSERT INTO originals VALUES (?, ?, ?)", [n, prepared.codec, prepared.original])
        for table in ROW_TABLES:
            if table in _UNWRITTEN:
                continue
            marks = ", ".join("?" for _ in range(len(COLUMNS[table]) + 1))
            conn.executemany(
                f"INSERT INTO {table} VALUES ({marks})", [(n, *r) for r in prepared.tuples[table]]
            )
        conn.executemany(
            "INSERT INTO ids VALUES (?, ?, ?)", [(n, r["key"], x.identities.get(r["key"])) for r in x.runs]
        )
        numbers: dict[str, int] = {}
        docs = []
        for d in x.search:
            number = numbers[d["run_key"]] = numbers.get(d["run_key"], -1) + 1
            docs.append((n, d["run_key"], number, d["kind"], d["ref"], d["text"]))
        conn.executemany("INSERT INTO docs VALUES (?, ?, ?, ?, ?, ?)", docs)
    conn.execute("COMMIT")
    conn.close()


def merge_shard(db: Database, path: Path) -> None:
    """One group's shard merged into the store in one transaction (for a corpus of new recordings only)."""
    from store.db.connection import write_lock
    from store.db.schema import COLUMNS, SEARCH_DOC_BITS
    from store.db.writer import ROW_TABLES, now_iso

    conn = db.conn
    conn.execute("ATTACH DATABASE ? AS shard", [str(path)])
    try:
        with write_lock(db):
            rec_cols = [c[1] for c in conn.execute("PRAGMA shard.table_info(recordings)") if c[1] != "n"]
            conn.execute(f"INSERT INTO recordings ({', '.join(rec_cols)}) SELECT {', '.join(rec_cols)} "
                         "FROM shard.recordings ORDER BY n")  # fmt: skip
            conn.execute("CREATE TEMP TABLE ids_of AS SELECT s.n, r.id FROM shard.recordings s "
                         "JOIN recordings r ON r.sha256 = s.sha256")  # fmt: skip
            conn.execute("INSERT INTO originals (recording_id, codec, data) SELECT i.id, o.codec, o.data "
                         "FROM shard.originals o JOIN temp.ids_of i USING (n) ORDER BY o.n")  # fmt: skip
            for table in ROW_TABLES:
                if table in _UNWRITTEN:
                    continue
                cols = ", ".join(COLUMNS[table])
                picked = cols.replace("recording_id", "i.id AS recording_id") if table == "runs" else cols
                join = " JOIN temp.ids_of i USING (n)" if table == "runs" else ""
                conn.execute(f"INSERT OR REPLACE INTO {table} ({cols}) SELECT {picked} FROM shard.{table} t{join} "
                             "ORDER BY t.rowid")  # fmt: skip
            conn.execute("INSERT INTO run_sources (run_key, recording_id, content_id) SELECT s.run_key, i.id, "
                         "s.content_id FROM shard.ids s JOIN temp.ids_of i USING (n)")  # fmt: skip
            doc_id = f"(r.rowid << {SEARCH_DOC_BITS}) + d.number"
            conn.execute(f"CREATE TEMP TABLE docs_of AS SELECT {doc_id} AS id, d.run_key, d.kind, d.ref, d.text "
                         "FROM shard.docs d JOIN runs r ON r.key = d.run_key")  # fmt: skip
            conn.execute(
                "INSERT INTO search_docs (id, run_key, kind, ref) SELECT id, run_key, kind, ref FROM temp.docs_of"
            )
            conn.execute("INSERT INTO search_text (id, text) SELECT id, text FROM temp.docs_of")
            conn.execute("INSERT INTO search (rowid, text) SELECT id, text FROM temp.docs_of")
            conn.execute("INSERT OR IGNORE INTO sources (path, recording_id, seen_at) SELECT s.source, i.id, ? "
                         "FROM shard.recordings s JOIN temp.ids_of i USING (n)", [now_iso()])  # fmt: skip
            conn.execute("DELETE FROM quarantine WHERE path IN (SELECT source FROM shard.recordings)")
            conn.execute("DROP TABLE temp.ids_of")
            conn.execute("DROP TABLE temp.docs_of")
    finally:
        conn.execute("DETACH DATABASE shard")


def writer_paths(groups: Groups) -> tuple[float, float, float]:
    """CPU seconds of (apply_group on the tuples, writing the shards, merging the shards), one process."""
    from bench.write_parts import Variant, nothing, time_variant, write_as_ingest

    _, apply_cpu = time_variant(Variant("as ingest writes", nothing, write_as_ingest), groups)
    with tempfile.TemporaryDirectory() as tmp:
        shards = [Path(tmp) / f"shard-{i}.db" for i in range(len(groups))]
        started = time.process_time()
        for path, group in zip(shards, groups, strict=True):
            write_shard(path, group)
        shard_cpu = time.process_time() - started

        def merge_all(db: Database, _: Groups) -> None:
            for path in shards:
                merge_shard(db, path)

        _, merge_cpu = time_variant(Variant("shard merge", nothing, merge_all), groups)
    return apply_cpu, shard_cpu, merge_cpu


# -- the whole pipeline with shards: workers write them, the writer merges them ----------------------------

#: where the workers write their shards (set before the pool forks)
_SHARDS: Path | None = None


class _ShardOutcomes(list):  # type: ignore[type-arg]
    """A group's outcomes as the worker sends them, with the path of the shard holding its rows."""

    path = ""


def _prepare_into_shard(items: list[Any], db_path: str) -> _ShardOutcomes:
    """In a worker: prepare the group as the ingest does, write its rows into a shard, send its outcomes."""
    import uuid

    from store.db.ingest import Outcome, prepare
    from store.db.writer import Prepared

    results = [prepare(item, db_path) for item in items]
    prepared = [r for r in results if isinstance(r, Prepared)]
    if len(prepared) != len(results) or _SHARDS is None:
        raise RuntimeError("the shard prototype takes new, readable recordings only")
    path = _SHARDS / f"shard-{os.getpid()}-{uuid.uuid4().hex}.db"
    write_shard(path, prepared)
    out = _ShardOutcomes(
        Outcome("stored", len(r.extracted.runs), int(r.extracted.recording["events"])) for r in prepared
    )
    out.path = str(path)
    return out


def _merge_shard_group(db: Database, results: Any, db_path: str | None = None) -> list[Any]:
    """In the writer: the group's shard merged into the store in one transaction, then removed (a group the
    ingest prepared in this process, as it does for a few files, written as usual)."""
    if not isinstance(results, _ShardOutcomes):
        return real_apply_group(db, results, db_path)
    merge_shard(db, Path(results.path))
    Path(results.path).unlink()
    return list(results)


def shard_pipeline(paths: list[Path], *, unwritten: tuple[str, ...] = ()) -> float:
    """Seconds of the whole ingest with the workers writing shards and the writer merging them (with no
    rows of the tables `unwritten`); checked to store what ours stores (but those tables' rows)."""
    global _SHARDS, _UNWRITTEN
    _UNWRITTEN = unwritten
    import store.db.ingest as ingest_module

    _SHARDS = Path(tempfile.mkdtemp(prefix="shards-"))
    try:
        with (
            _patched(ingest_module, "_prepare_group", _prepare_into_shard),
            _patched(ingest_module, "apply_group", _merge_shard_group),
        ):
            # the pool always, even for a corpus small enough that ingest would prepare it in this process
            # (whose groups would never reach the patched worker step)
            db, seconds = _ingest(paths, max(2, os.cpu_count() or 2))
        stored = _stored_counts(db)
        _remove(db)
    finally:
        for p in _SHARDS.iterdir():
            p.unlink()
        _SHARDS.rmdir()
        _SHARDS, _UNWRITTEN = None, ()
    ours, _ = _ingest(paths, None)
    expected = _stored_counts(ours)
    _remove(ours)
    if stored != {t: 0 if t in unwritten else n for t, n in expected.items()}:
        raise RuntimeError(f"the shard pipeline stored {stored}, ours {expected}")
    return seconds


# -- extraction at parse speed: a stand-in for a compiled decoder-extractor ------------------------------------

#: origin -> the rows the real extraction made of it (set before the pool forks: the workers inherit it)
_EXTRACTED: dict[str, tuple[Any, Any]] = {}
#: origin -> the JSON of those rows and the bytes of its events, which the native floor's charge reads
_FLOOR_INPUTS: dict[str, tuple[bytes, bytes]] = {}


def extract_beforehand(paths: list[Path]) -> None:
    """Extract every file as the ingest does, in this process, and keep its rows for the stand-in."""
    from bench.native_floor import events_bytes, rows_json_of
    from store.db.ingest import prepare, slim
    from store.db.writer import Prepared
    from store.reading.items import SourceItem
    from store.reading.sources import iter_sources, read_source

    for item in iter_sources(paths):
        result = prepare(item) if isinstance(item, SourceItem) else item
        if not isinstance(item, SourceItem) or not isinstance(result, Prepared):
            raise RuntimeError(f"the stand-in takes readable recordings only: {result}")
        _EXTRACTED[item.origin] = (result.extracted, result.tuples)
        _FLOOR_INPUTS[item.origin] = (rows_json_of(slim(result)), events_bytes(read_source(item)))


def forget_beforehand() -> None:
    """Drop what `extract_beforehand` kept."""
    _EXTRACTED.clear()
    _FLOOR_INPUTS.clear()


#: what the stand-ins charge for the decode: one `orjson.loads` of the bytes, today's decoder (msgspec), or
#: the least a native decoder-extractor would pay (`bench.native_floor`: every byte scanned, the rows built,
#: the events' bytes hashed for the identity)
Decode = Literal["orjson", "ours", "native floor"]
#: what they charge for the run identity: nothing, today's (canonical JSON and SHA-256 of each run's events),
#: or one SHA-256 pass over the recording's bytes
Identity = Literal["today", "one hash pass"] | None


@contextmanager
def extraction_at_parse_speed(*, decode: Decode = "orjson", identity: Identity = None) -> Iterator[None]:
    """Inside the block, `extract` and `to_tuples` hand back the rows `extract_beforehand` kept (with the
    identities taken then), and the decode (`decoded_with_identities`) costs:

    - `decode="orjson"`: one `orjson.loads` of the bytes: a decoder-extractor compiled to orjson's speed;
    - `decode="ours"`: today's decoder (msgspec Structs, already compiled): an extractor compiled behind it;
    - `decode="native floor"`: `bench.native_floor.floor_charge`, the identity's hashing included: a native
      decoder-extractor whose rules cost nothing (the best any could do);

    and on top, for the run identity, with `identity="today"`: each run's events as canonical JSON and one
    SHA-256 a run (`store.reading.identity`, native calls already): what a compiled extractor that keeps
    today's identity pays; with `identity="one hash pass"`: one SHA-256 over the recording's bytes: the
    hashing a reader that takes the identity from the bytes as it parses them could not avoid (the keys it
    would sort as it goes are not charged; hashing the events' bytes alone would cost less)."""
    import hashlib

    import orjson

    import store.db.ingest as ingest_module
    from bench.native_floor import floor_charge
    from store.reading.decode import decode_recording
    from store.reading.identity import identities_of_events, taken_identities

    def parsed(data: bytes, origin: str, sha: str) -> Any:
        if decode == "orjson":
            doc = orjson.loads(data)
            if identity == "today":
                inner = doc.get("recording")
                events = (inner if isinstance(inner, dict) else doc).get("events")
                events = [e for e in events if isinstance(e, dict)] if isinstance(events, list) else []
                run_ids = [m.get("runId") if isinstance(m := e.get("meta"), dict) else None for e in events]
                identities_of_events(events, run_ids, None, sha)
        elif decode == "native floor":
            floor_charge(data, *_FLOOR_INPUTS[origin])
        else:
            rec = decode_recording(data, origin, keep_events=identity == "today")
            if identity == "today":
                taken_identities(rec, sha)
        if identity == "one hash pass":
            hashlib.sha256(data).digest()
        return origin, {}

    tuples_of = {id(extracted): tuples for extracted, tuples in _EXTRACTED.values()}

    def kept(parsed_origin: str, **_: Any) -> Any:
        return _EXTRACTED[parsed_origin][0]

    with (
        _patched(ingest_module, "decoded_with_identities", parsed),
        _patched(ingest_module, "extract", kept),
        _patched(ingest_module, "to_tuples", lambda extracted: tuples_of[id(extracted)]),
    ):
        yield


def at_parse_speed(
    paths: list[Path],
    *,
    shards: bool,
    unwritten: tuple[str, ...] = (),
    decode: Decode = "orjson",
    identity: Identity = None,
) -> float:
    """Seconds of the ingest (ours, or the shard pipeline, leaving the tables `unwritten` empty) with the
    stand-in extraction (`extraction_at_parse_speed`); checked to store what ours stores."""
    with extraction_at_parse_speed(decode=decode, identity=identity):
        if shards:
            return shard_pipeline(paths, unwritten=unwritten)
        db, seconds = _ingest(paths, None)
    stored = _stored_counts(db)
    _remove(db)
    ours, _ = _ingest(paths, None)
    expected = _stored_counts(ours)
    _remove(ours)
    if stored != expected:
        raise RuntimeError(f"extraction at parse speed stored {stored}, ours {expected}")
    return seconds


def _stored_counts(db: Database) -> dict[str, int]:
    tables = ("recordings", "runs", "findings", "events", "search_docs", "run_sources", "tallies")
    return {t: int(db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in tables}


# -- the table ---------------------------------------------------------------------------------------------


def lines_of(paths: list[Path]) -> dict[str, Callable[[], float]]:
    """Every line but the two references, each a call that times it once."""
    later: dict[str, float] = {}

    def full_text(part: str) -> Callable[[], float]:
        def timed() -> float:
            if not later:  # one ingest and one indexing pass give the three lines
                later["ingest"], later["index"] = full_text_later(paths)
            return later["ingest"] + later["index"] if part == "both" else later[part]

        return timed

    lines: dict[str, Callable[[], float]] = {
        "ours": lambda: _timed_ingest(paths, None),
        "ours, one process": lambda: _timed_ingest(paths, 1),
        "no write": lambda: no_write(paths),
        "full text later: the ingest": full_text("ingest"),
        "full text later: the indexing pass after it": full_text("index"),
        "full text later: both": full_text("both"),
        "shards: workers write them, the writer merges": lambda: shard_pipeline(paths),
        "shards, and no event rows": lambda: shard_pipeline(paths, unwritten=("events",)),
    }
    for name, choices in STAND_INS.items():
        lines[name] = functools.partial(at_parse_speed, paths, **choices)
    return lines


#: each stand-in line of `lines_of`: what `at_parse_speed` is asked for
STAND_INS: dict[str, dict[str, Any]] = {
    "extraction at parse speed (stand-in), ours": {"shards": False},
    "extraction at parse speed (stand-in), shards": {"shards": True},
    "the same, and no event rows": {"shards": True, "unwritten": ("events",)},
    "extraction at parse speed + today's run identity (stand-in), shards": {
        "shards": True,
        "identity": "today",
    },
    "extraction at parse speed + identity at one hash pass (stand-in), shards": {
        "shards": True,
        "identity": "one hash pass",
    },
    "the same, and no event rows (identity at one hash pass)": {
        "shards": True,
        "unwritten": ("events",),
        "identity": "one hash pass",
    },
    "today's decoder and identity, extraction free (stand-in), ours": {
        "shards": False,
        "decode": "ours",
        "identity": "today",
    },
    "today's decoder, identity at one hash pass, extraction free (stand-in), ours": {
        "shards": False,
        "decode": "ours",
        "identity": "one hash pass",
    },
    "a decoder-extractor at its native floor (stand-in), ours": {"shards": False, "decode": "native floor"},
    "a decoder-extractor at its native floor (stand-in), shards": {"shards": True, "decode": "native floor"},
    "the same, and no event rows (at its native floor)": {
        "shards": True,
        "unwritten": ("events",),
        "decode": "native floor",
    },
}


def one_repetition(paths: list[Path], only: list[str] | None = None) -> dict[str, float]:
    """Seconds of every line (or of those whose name holds one of `only`), once each, in turn, after the two
    references."""
    from bench.ingest import raw_parse
    from bench.scale import careful_peer

    times = {
        "orjson.loads (one core)": raw_parse(paths)[0],
        "careful peer (one core)": careful_peer(paths, PEER_BATCH),
    }
    for name, timed in lines_of(paths).items():
        if not only or any(text in name for text in only):
            times[name] = timed()
    return times


#: the careful peer's batch size (set by `main`, tuned on the files as `bench.scale` tunes it)
PEER_BATCH = 100


def print_table(mb: float, lines: dict[str, list[float]], writer: dict[str, list[float]]) -> None:
    parse, peer = lines["orjson.loads (one core)"], lines["careful peer (one core)"]
    for name, samples in lines.items():
        rate = spread([mb / s for s in samples], lambda v: f"{v:,.0f} MB/s")
        ratio = spread([p / s for p, s in zip(parse, samples, strict=True)], lambda v: f"{v:.2f}x")
        faster = spread([p / s for p, s in zip(peer, samples, strict=True)], lambda v: f"{v:.2f}x")
        print(f"  {name:46} {spread(samples, lambda v: f'{v:.2f} s')}  {rate}  {ratio} orjson  {faster} peer")
    if not all(writer.values()):
        return
    print("the writer's critical path, one process, CPU seconds:")
    for name, cpu in writer.items():
        rate = spread([mb / c for c in cpu], lambda v: f"{v:,.0f} MB/s")
        print(f"  {name:46} {spread(cpu, lambda v: f'{v:.2f} s')}  {rate}")


def main(argv: list[str] | None = None) -> int:
    from bench.__main__ import chosen_corpus, corpus_parser

    parser = corpus_parser(__doc__)
    parser.add_argument("--only", action="append", help="only the lines whose name holds this text")
    parser.add_argument("--no-writer", action="store_true", help="leave out the writer's critical path")
    args = parser.parse_args(argv)
    paths, shape = chosen_corpus(args)
    mb = sum(p.stat().st_size for p in paths) / 1e6
    extract_beforehand(paths)
    groups = [] if args.no_writer else prepared_groups(paths)
    from bench.scale import tune_batch

    global PEER_BATCH
    PEER_BATCH = tune_batch(paths)
    lines: dict[str, list[float]] = {}
    writer: dict[str, list[float]] = {"apply_group": [], "write the shards": [], "merge the shards": []}
    loads = []
    for _ in range(args.repeats):
        loads.append(os.getloadavg()[0])
        times = one_repetition(paths, args.only)
        for name, seconds in times.items():
            lines.setdefault(name, []).append(seconds)
        if not args.no_writer:
            for name, cpu in zip(writer, writer_paths(groups), strict=True):
                writer[name].append(cpu)
        print(" ".join(f"{k}: {v:.2f}s" for k, v in times.items()), file=sys.stderr, flush=True)
    print(
        f"{len(paths):,} files, {mb:,.0f} MB ({shape}); {args.repeats} repetitions; "
        f"load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores; {measured_code()}"
    )
    print_table(mb, lines, writer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
