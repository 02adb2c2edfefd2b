"""The ingest pipeline: enumerate sources, parse and extract (in worker processes for big batches), write.

Parsing and extraction are CPU-bound and run in up to one process per core for big batches; the workers
hand back insert-ready row tuples and the compressed original, and this process alone writes them, so no
worker waits on another's write lock (when each worker wrote its own, each waited 11-12% of its time).
Recordings are written in groups (up to GROUP_FILES files or GROUP_BYTES of input), one transaction per
group (BEGIN IMMEDIATE queues the writers): a group commits whole or not at all, so no recording is ever
half-stored, and if any write in a group fails, its recordings are written again one per transaction so
a bad one is quarantined alone. A re-ingest of identical bytes is detected by content hash before
any parsing. Any failure of one input is quarantined with its reason and the batch goes on.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import multiprocessing
import os
import signal
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import zstandard
from sqlite_utils import Database

from store.db.connection import write_lock, write_refusal
from store.db.postgres import is_postgres, open_postgres, postgres_url
from store.db.statistics import analyze_grown_tables, refresh_statistics
from store.db.writer import (
    RECORDED_FIELD,
    Prepared,
    group_written_last,
    note_source,
    note_source_in,
    out_of_range_cell,
    runs_stored_elsewhere,
    to_tuples,
    write_quarantine,
    write_quarantine_in,
    write_recording,
    write_recording_in,
)
from store.errors import DatabaseWriteError, RecordingError, StoreError
from store.reading.extract import Extracted, extract
from store.reading.identity import decoded_with_identities
from store.reading.items import as_stored_text
from store.reading.sources import SourceItem, SourceProblem, iter_sources, read_source

CODEC = "zstd"
ZSTD_LEVEL = 3
#: Page cache of each ingest connection (KiB): 8 MiB made event-heavy ingests 1.4x slower (index pages
#: re-read), 64 MiB was no faster than this; the memory row of `python -m bench` watches the cost.
INGEST_CACHE_KIB = 32768
#: WAL pages written between checkpoints while bulk writing (4 KiB pages: 16 MiB), and the size a WAL file
#: is cut back to after one; without both a long ingest left a WAL 25x the size of its database.
INGEST_WAL_PAGES = 4096
WAL_SIZE_LIMIT_BYTES = 16 * 1024 * 1024
#: Below this much input, worker start-up costs more than it saves.
PARALLEL_MIN_BYTES = 24 * 1024 * 1024
#: Recordings per write transaction, and the input bytes a group may hold (a larger file goes alone): the
#: commit per recording (WAL append, full-text flush) was 17% of an event-heavy ingest.
GROUP_FILES = 32
GROUP_BYTES = 8 * 1024 * 1024


@dataclass
class Known:
    """The content is already stored: only the path is noted."""

    origin: str
    recording_id: int


@dataclass
class Failure:
    origin: str
    code: str
    reason: str
    sha256: str | None = None


@dataclass
class IngestReport:
    """What one `ingest` call did. `quarantined` lists (path, code, reason)."""

    seen: int = 0
    stored: int = 0
    unchanged: int = 0
    runs: int = 0
    #: of `runs`, those already stored from another recording (the same run: a bare recording and its
    #: envelope): stored once, with this recording as one more source
    merged_runs: int = 0
    events: int = 0
    bytes: int = 0
    seconds: float = 0.0
    quarantined: list[tuple[str, str, str]] = field(default_factory=list)

    def add(self, outcome: Outcome) -> None:
        if outcome.kind == "stored":
            self.stored += 1
            self.runs += outcome.runs
            self.merged_runs += outcome.merged_runs
            self.events += outcome.events
            self.bytes += outcome.bytes
        elif outcome.kind == "unchanged":
            self.unchanged += 1
        elif outcome.problem is not None:
            self.quarantined.append(outcome.problem)


ProgressFn = Callable[[int, int, int, int], None]

#: sqlite3.Connection, or a PgDatabase (both answer `execute(sql, params).fetchall()`)
_worker_db: Any = None
_worker_db_path: str | None = None


def _known_id(db_path: str | None, sha256: str) -> int | None:
    """Look the hash up on a read-only connection of this process (workers have their own)."""
    global _worker_db, _worker_db_path
    if db_path is None:
        return None
    if _worker_db is None or _worker_db_path != db_path:
        try:
            url = postgres_url(db_path)
            if url is not None:  # PostgreSQL: a connection of this process, nothing migrated
                _worker_db = open_postgres(url, migrate=False)
            else:
                _worker_db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=30)
            _worker_db_path = db_path
        except (sqlite3.Error, StoreError):
            return None
    try:
        rows = _worker_db.execute("SELECT id FROM recordings WHERE sha256 = ?", [sha256]).fetchall()
    except sqlite3.Error:
        return None
    return int(rows[0][0]) if rows else None  # fetchall: no statement left open holding a WAL snapshot


def _close_lookup() -> None:
    """Close this process's read-only lookup connection, so no handle outlives the ingest."""
    global _worker_db, _worker_db_path
    if _worker_db is not None:
        _worker_db.close()
    _worker_db, _worker_db_path = None, None


def prepare(item: SourceItem, db_path: str | None = None) -> Prepared | Known | Failure:
    """Read, hash, decode, extract and compress one source. Never raises."""
    sha: str | None = None
    try:
        data = read_source(item)
        sha = hashlib.sha256(data).hexdigest()
        known = _known_id(db_path, sha)
        if known is not None:
            return Known(item.origin, known)
        was_enabled = gc.isenabled()
        gc.disable()  # nested JSON parses 2-5x faster without the cyclic collector
        try:
            rec, identities = decoded_with_identities(data, item.origin, sha)
            extracted = extract(rec, sha256=sha, origin=item.origin, container=item.container, size=len(data))
            extracted.identities.update(identities)
            tuples = to_tuples(extracted)  # a million small tuples: no collector passes over them either
        finally:
            if was_enabled:
                gc.enable()
        original = zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(data)
        return Prepared(extracted, CODEC, original, tuples)
    except RecordingError as exc:
        return Failure(item.origin, exc.code, exc.message, sha)
    except MemoryError:
        return Failure(item.origin, "too-large", f"{item.origin}: ran out of memory while reading it", sha)
    except RecursionError:
        return Failure(item.origin, "too-deep", f"{item.origin}: JSON nested too deeply to read safely", sha)
    except Exception as exc:  # noqa: BLE001 - one bad input must never stop the batch
        return Failure(
            item.origin,
            "unreadable-recording",
            f"{item.origin}: could not be extracted ({type(exc).__name__}: {exc})",
            sha,
        )


def _worker_init(parent_pid: int) -> None:
    """Workers die with their parent (a killed ingest leaves no orphans); `prepare` pauses the GC per parse."""
    gc.freeze()  # what the worker inherited is never scanned again
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()


def _watch_parent(parent_pid: int) -> None:
    while True:
        time.sleep(1.0)
        if os.getppid() != parent_pid:
            os._exit(1)


def ingest(
    db: Database,
    paths: Iterable[str | os.PathLike[str]],
    *,
    db_path: str | None = None,
    workers: int | None = None,
    progress: ProgressFn | None = None,
    endpoint_url: str | None = None,
) -> IngestReport:
    """Ingest every recording under `paths` into `db`. `workers=1` forces a single process.

    A path may be a bucket URL (`s3://bucket/prefix`, `gs://bucket/prefix`), read through `endpoint_url`
    when one is given.

    With several workers (and `db_path` given), the workers parse and extract a group of recordings each,
    and this process writes each group in one transaction while the workers prepare the next ones.
    """
    found = iter_sources(paths, review_db=db_path, endpoint_url=endpoint_url)
    return ingest_sources(db, found, db_path=db_path, workers=workers, progress=progress)


def ingest_sources(
    db: Database,
    sources: Iterable[SourceItem | SourceProblem],
    *,
    db_path: str | None = None,
    workers: int | None = None,
    progress: ProgressFn | None = None,
) -> IngestReport:
    """`ingest`, for sources already enumerated (what `watch` found changed): problems are quarantined,
    items prepared and written in groups, exactly as `ingest` does."""
    started = time.perf_counter()
    report = IngestReport()
    items: list[SourceItem] = []
    for found in sources:
        if isinstance(found, SourceProblem):
            origin, message = as_stored_text(found.origin), as_stored_text(found.message)
            write_quarantine(db, origin, found.code, message)
            report.quarantined.append((origin, found.code, message))
            report.seen += 1
        else:  # the origin is what is stored and shown; the path stays as it is, to open the file
            items.append(replace(found, origin=as_stored_text(found.origin)))
    total_bytes = sum(i.size for i in items)
    cpu = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    n_workers = workers if workers is not None else (cpu if total_bytes >= PARALLEL_MIN_BYTES else 1)
    if db_path is None:
        n_workers = 1
    done_bytes = 0
    with bulk_writing(db):
        try:
            for n, (item, outcome) in enumerate(_outcomes(db, items, db_path, n_workers), start=1):
                report.seen += 1
                done_bytes += item.size
                report.add(outcome)
                if progress is not None:
                    progress(n, len(items), done_bytes, total_bytes)
        finally:
            _close_lookup()
    if report.stored:
        refresh_statistics(db, written=True)
    report.seconds = time.perf_counter() - started
    return report


@contextlib.contextmanager
def bulk_writing(db: Database) -> Iterator[None]:
    """The writer's settings for a bulk write (ingest, reextract), and the connection's own given back after
    it, with the WAL checkpointed (a reader then finds the rows in the database file)."""
    cache = db.execute("PRAGMA cache_size").fetchone()[0]
    temp_store = db.execute("PRAGMA temp_store").fetchone()[0]
    bulk_write_pragmas(db)
    try:
        yield
    finally:
        db.execute("PRAGMA wal_autocheckpoint = 1000")
        db.execute(f"PRAGMA cache_size = {int(cache)}")
        # SQLite refuses this inside a transaction once the connection has a temp schema (a failed rollback
        # after a write error): the error being raised matters more than where this connection sorts
        with contextlib.suppress(sqlite3.Error):
            db.execute(f"PRAGMA temp_store = {int(temp_store)}")
        db.execute("PRAGMA wal_checkpoint(PASSIVE)")


def bulk_write_pragmas(db: Database) -> None:
    """Checkpoint in steps while bulk writing, and cut the WAL file back after each checkpoint; a larger page
    cache; the statement journal in memory. Each run and finding the writer inserts fires the tally triggers,
    so SQLite journals the pages each such INSERT first changes, to undo that statement alone; past 64 KiB
    that journal spilled to a temporary file: 143,000 `pwrite` calls for 2,000 event-heavy runs, 0.24 s of the
    writer's system time (bench/RESULTS.md, 2026-12-05). In memory it holds only the pages of the statement
    running (a recording's rows, their indexes and tallies); a statement over the whole store (a tally
    rebuild, a migration) runs after `bulk_writing` has given the setting back."""
    db.execute(f"PRAGMA wal_autocheckpoint = {int(INGEST_WAL_PAGES)}")
    db.execute(f"PRAGMA journal_size_limit = {int(WAL_SIZE_LIMIT_BYTES)}")
    db.execute(f"PRAGMA cache_size = -{INGEST_CACHE_KIB}")
    db.execute("PRAGMA temp_store = MEMORY")


@dataclass
class Outcome:
    """What happened to one source: stored / unchanged / quarantined, and how much it held."""

    kind: str
    runs: int = 0
    events: int = 0
    bytes: int = 0
    problem: tuple[str, str, str] | None = None
    merged_runs: int = 0


def apply(db: Database, result: Prepared | Known | Failure, db_path: str | None = None) -> Outcome:
    """Write one prepared source (or its quarantine entry) in its own transaction.

    A write that fails because of the input (a number SQLite cannot hold, a value it refuses) is rolled back
    and quarantined like any other bad input; a write that fails because of the database (disk full,
    read-only) raises DatabaseWriteError, since every later write would fail the same way.
    """
    try:
        if isinstance(result, Failure):
            return _quarantined(db, result)
        if isinstance(result, Known):
            note_source(db, result.origin, result.recording_id)
            return Outcome("unchanged")
        try:
            rec_id, new = write_recording(db, result)
        except (sqlite3.Error, OverflowError, ValueError, TypeError) as exc:
            if write_refusal(db_path, exc) is not None:
                raise
            return _quarantined(db, _write_failure(result, exc))
    except sqlite3.Error as exc:
        refusal = write_refusal(db_path, exc)
        if refusal is not None:
            raise refusal from exc
        raise
    if not new:
        return Outcome("unchanged")
    return _stored(db, result, rec_id)


def apply_in(db: Database, result: Prepared | Known | Failure) -> Outcome:
    """`apply` inside the caller's transaction."""
    if isinstance(result, Failure):
        write_quarantine_in(db, result.origin, result.code, result.reason, result.sha256)
        return Outcome("quarantined", problem=(result.origin, result.code, result.reason))
    if isinstance(result, Known):
        note_source_in(db, result.origin, result.recording_id)
        return Outcome("unchanged")
    rec_id, new = write_recording_in(db, result)
    if not new:
        return Outcome("unchanged")
    return _stored(db, result, rec_id)


def _stored(db: Database, result: Prepared, rec_id: int) -> Outcome:
    rec = result.extracted.recording
    merged = runs_stored_elsewhere(db, rec_id) if result.extracted.runs else 0
    return Outcome(
        "stored", len(result.extracted.runs), int(rec["events"]), int(rec["bytes"]), merged_runs=merged
    )


def apply_group(
    db: Database, results: list[Prepared | Known | Failure], db_path: str | None = None
) -> list[Outcome]:
    """Write a group of prepared sources in one transaction; if any write fails, the whole group is rolled
    back and each is written again in its own transaction, a failing one quarantined alone."""
    if len(results) > 1:
        try:
            with write_lock(db), group_written_last(db):
                return [apply_in(db, r) for r in results]
        except Exception as exc:  # noqa: BLE001 - retried one by one below, where the failing one is named
            refusal = write_refusal(db_path, exc) if isinstance(exc, sqlite3.Error) else None
            if refusal is not None:  # disk full, read-only: every write would fail the same way
                raise refusal from exc
    return [_apply_alone(db, r, db_path) for r in results]


def _apply_alone(db: Database, result: Prepared | Known | Failure, db_path: str | None) -> Outcome:
    try:
        return apply(db, result, db_path)
    except DatabaseWriteError:
        raise
    except Exception as exc:  # noqa: BLE001 - one recording that cannot be stored must not stop the batch
        if isinstance(result, Prepared):
            origin, sha = result.extracted.recording["source"], result.extracted.recording["sha256"]
        else:
            origin, sha = result.origin, getattr(result, "sha256", None)
        reason = f"{origin}: could not be stored ({type(exc).__name__}: {exc})"
        write_quarantine(db, origin, "unwritable-recording", reason, sha)
        return Outcome("quarantined", problem=(origin, "unwritable-recording", reason))


def group_items(items: Iterable[SourceItem]) -> Iterator[list[SourceItem]]:
    """Consecutive items, GROUP_FILES at most and GROUP_BYTES of input at most (a bigger file alone)."""
    group: list[SourceItem] = []
    size = 0
    for item in items:
        if group and (len(group) >= GROUP_FILES or size + item.size > GROUP_BYTES):
            yield group
            group, size = [], 0
        group.append(item)
        size += item.size
    if group:
        yield group


def _quarantined(db: Database, failure: Failure) -> Outcome:
    write_quarantine(db, failure.origin, failure.code, failure.reason, failure.sha256)
    return Outcome("quarantined", problem=(failure.origin, failure.code, failure.reason))


def _write_failure(prepared: Prepared, exc: BaseException) -> Failure:
    """Why SQLite refused this recording's rows, named by the stored column and the recorded field."""
    rec = prepared.extracted.recording
    origin, sha = str(rec["source"]), str(rec["sha256"])
    found = out_of_range_cell(prepared)
    if found is not None:
        table, column, value = found
        field_name = RECORDED_FIELD.get(column, column)
        return Failure(
            origin,
            "number-out-of-range",
            f"{origin}: {field_name} ({table}.{column}) is {value}, outside the 64-bit range SQLite can "
            "store; nothing of this file was stored",
            sha,
        )
    return Failure(
        origin, "unwritable-recording", f"{origin}: could not be stored ({type(exc).__name__}: {exc})", sha
    )


def _prepare_group(items: list[SourceItem], db_path: str) -> list[Prepared | Known | Failure]:
    """In a worker: prepare a group of sources for the writer (the parent), sending only what it writes."""
    return [slim(prepare(item, db_path)) for item in items]


def slim(result: Prepared | Known | Failure) -> Prepared | Known | Failure:
    """A prepared recording without the row dicts its tuples repeat (half of what would be pickled)."""
    if isinstance(result, Prepared) and result.tuples is not None:
        x = result.extracted
        lean = Extracted(recording=x.recording, runs=x.runs, search=x.search, identities=x.identities)
        return replace(result, extracted=lean)
    return result


def _here(db: Database, group: list[SourceItem], db_path: str | None) -> Iterator[tuple[SourceItem, Outcome]]:
    """Prepare and write one group in this process."""
    yield from zip(group, _write_group(db, [prepare(item, db_path) for item in group], db_path), strict=True)


def _write_group(
    db: Database, results: list[Prepared | Known | Failure], db_path: str | None
) -> list[Outcome]:
    """`apply_group`; then, on PostgreSQL, ANALYZE the tables this ingest has grown past their statistics.
    Each group's writes and the workers' lookups are planned from them: a first ingest of 10,000 runs into a
    new database took 38.9 s on the statistics of its empty tables, 17.5 s when analysed after its first
    100 files (`python -m bench.ingest_into_million`). A table is analysed each time it doubles, a catalog
    query per group otherwise."""
    outcomes = apply_group(db, results, db_path)
    if is_postgres(db):
        # statistics only speed the ingest: a failed ANALYZE (PostgresError is an sqlite3.Error) must not stop it
        with contextlib.suppress(sqlite3.Error):
            analyze_grown_tables(db)
    return outcomes


def _outcomes(
    db: Database, items: list[SourceItem], db_path: str | None, n_workers: int
) -> Iterator[tuple[SourceItem, Outcome]]:
    """Outcomes in input order; in worker processes when `n_workers > 1`, a few groups in flight at a time.

    Workers only prepare; every group is written here, one transaction each. If the worker pool cannot
    start or breaks, the groups not yet written are prepared in this process too.
    """
    groups = group_items(items)
    if n_workers <= 1 or len(items) < 2 or db_path is None:
        for group in groups:
            yield from _here(db, group, db_path)
        return
    # fork is cheap and needs no re-import, but is only safe while this process has a single thread
    method = (
        "fork"
        if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods()
        else "spawn"
    )
    ctx = multiprocessing.get_context(method)
    pending: deque[tuple[list[SourceItem], Future[list[Prepared | Known | Failure]]]] = deque()
    try:
        with ProcessPoolExecutor(
            max_workers=n_workers, mp_context=ctx, initializer=_worker_init, initargs=(os.getpid(),)
        ) as pool:
            for group in groups:
                pending.append((group, pool.submit(_prepare_group, group, db_path)))
                if len(pending) >= n_workers * 2:
                    break
            while pending:
                group, future = pending[0]
                prepared = future.result()  # BrokenProcessPool propagates to the fallback below
                pending.popleft()
                nxt = next(groups, None)
                if nxt is not None:
                    pending.append((nxt, pool.submit(_prepare_group, nxt, db_path)))
                yield from zip(group, _write_group(db, prepared, db_path), strict=True)
    except BrokenProcessPool:
        pass
    for group, _ in pending:
        yield from _here(db, group, db_path)
    for group in groups:
        yield from _here(db, group, db_path)


def default_db_path() -> Path:
    return Path(os.environ.get("REVIEWER_DB") or "reviewer.db")
