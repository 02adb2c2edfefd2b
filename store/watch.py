"""Live ingest (`reviewer watch`): a folder through file events, a bucket by polling its listing.

Both reuse the idempotent ingest: content already stored is only noted, so whatever is read twice stores
nothing new.

- **A folder** (plain, or a fileArtifacts store, or one holding several) is swept once when the watcher is
  up, then followed through file events (watchfiles: inotify / FSEvents / kqueue, no polling of the tree).
  A changed file is read only once it is *stable*: the same size and modification time at two looks
  `settle` seconds apart, so a recording still being written is left until its writer is done. A file read
  anyway while half-written (its writer paused longer than `settle`) is quarantined, and read again at its
  next change; a successful read clears its quarantine row (`note_source` / `write_recording`).
- **A bucket** is listed every `interval` seconds, newest first; only objects whose version (ETag,
  generation) is new since the last listing are read, newest first, in batches. An object that could not
  be read for a transient reason (`unreadable`: the client failed) is tried again at the next listing; one
  quarantined for its content is tried again when it is replaced.

`stop` (a `threading.Event`, set from a signal handler) ends either loop between batches.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from sqlite_utils import Database

from store.db.ingest import IngestReport, ingest, ingest_sources
from store.errors import RecordingError
from store.reading import buckets
from store.reading.sources import sources_at

#: Seconds a changed file must keep its size and modification time before it is read.
SETTLE_S = 1.0
#: Objects read per batch when a listing shows many new ones (the newest land first).
BUCKET_BATCH = 64
#: How often (ms) the file watcher wakes with no event, to look at files waiting to settle.
_WAKE_MS = 200
#: File names whose change may mean a new recording (a sqliteArtifacts store changes through its log).
_INPUT_SUFFIXES = (".json", ".zip", ".db", ".sqlite", ".sqlite3")
_LOG_SUFFIXES = ("-wal", "-journal")

BatchFn = Callable[[IngestReport], None]


@dataclass
class WatchTotals:
    """What a watch did until it stopped: batches and the sums of their reports."""

    batches: int = 0
    seen: int = 0
    stored: int = 0
    unchanged: int = 0
    runs: int = 0
    events: int = 0
    quarantined: int = 0
    problems: list[str] = field(default_factory=list)

    def add(self, report: IngestReport) -> None:
        self.batches += 1
        self.seen += report.seen
        self.stored += report.stored
        self.unchanged += report.unchanged
        self.runs += report.runs
        self.events += report.events
        self.quarantined += len(report.quarantined)


# ─── folders ─────────────────────────────────────────────────────────────────────────────────────


class _Settling:
    """Changed files waiting to be stable: path -> (size, mtime_ns) at the last look, and since when."""

    def __init__(self, settle: float) -> None:
        self.settle = settle
        self._files: dict[str, tuple[tuple[int, int] | None, float]] = {}

    def __len__(self) -> int:
        return len(self._files)

    def changed(self, path: str) -> None:
        self._files[path] = (None, time.monotonic())

    def ready(self) -> list[str]:
        """Files whose size and time have not changed for `settle` seconds (removed from the waiting set);
        files that are gone are dropped."""
        now = time.monotonic()
        done: list[str] = []
        for path, (last, since) in list(self._files.items()):
            try:
                st = os.stat(path)
            except OSError:
                del self._files[path]
                continue
            sig = (st.st_size, st.st_mtime_ns)
            if sig != last:
                self._files[path] = (sig, now)
            elif now - since >= self.settle:
                del self._files[path]
                done.append(path)
        return done


def _candidate(path: str, skip: set[str]) -> str | None:
    """The input a changed path stands for (a database log stands for its database), or None."""
    name = os.path.basename(path)
    if name.startswith("."):
        return None
    for suffix in _LOG_SUFFIXES:
        if name.endswith(suffix):
            path, name = path[: -len(suffix)], name[: -len(suffix)]
            break
    if not name.lower().endswith(_INPUT_SUFFIXES) or os.path.abspath(path) in skip:
        return None
    return path


def watch_folder(
    db: Database,
    root: str | os.PathLike[str],
    *,
    stop: threading.Event,
    on_batch: BatchFn,
    db_path: str | None = None,
    settle: float = SETTLE_S,
    once: bool = False,
    workers: int | None = None,
) -> WatchTotals:
    """Sweep `root` once, then (unless `once`) ingest each file that changes under it once it is stable,
    until `stop` is set. `on_batch` gets each batch's report (the sweep's always, later ones when they saw
    something)."""
    totals = WatchTotals()

    def batch(report: IngestReport) -> None:
        totals.add(report)
        on_batch(report)

    def sweep() -> None:
        batch(ingest(db, [str(root)], db_path=db_path, workers=workers))

    if once:
        sweep()
        return totals
    import watchfiles

    skip = {os.path.abspath(f"{db_path}{s}") for s in ("", "-wal", "-shm", "-journal")} if db_path else set()
    waiting = _Settling(settle)
    swept = False
    for changes in watchfiles.watch(
        Path(root),
        stop_event=stop,
        yield_on_timeout=True,
        rust_timeout=_WAKE_MS,
        debounce=_WAKE_MS * 2,
        step=50,
        raise_interrupt=False,
    ):
        if not swept:  # the watcher is up: nothing written from now on can be missed
            swept = True
            sweep()
        for change, path in changes:
            if change == watchfiles.Change.deleted:
                continue
            found = _candidate(path, skip)
            if found is not None:
                waiting.changed(found)
        ready = waiting.ready()
        if ready and not stop.is_set():
            report = ingest_sources(
                db, sources_at(root, ready, review_db=db_path), db_path=db_path, workers=1
            )
            if report.seen:
                batch(report)
        if stop.is_set():
            break
    return totals


# ─── buckets ─────────────────────────────────────────────────────────────────────────────────────


def _chunks(objects: list[buckets.Listed], size: int) -> Iterator[list[buckets.Listed]]:
    for start in range(0, len(objects), size):
        yield objects[start : start + size]


def poll_bucket_once(
    db: Database,
    url: str,
    seen: dict[str, str],
    *,
    on_batch: BatchFn,
    db_path: str | None = None,
    endpoint_url: str | None = None,
    stop: threading.Event | None = None,
) -> Iterable[IngestReport]:
    """One listing: read every object whose version is not in `seen` (key -> version), newest first, in
    batches of BUCKET_BATCH; `seen` is updated. RecordingError when the bucket cannot be listed."""
    listed = buckets.list_objects(url, endpoint_url=endpoint_url)
    fresh = [o for o in listed if seen.get(o.key) != o.version]
    reports: list[IngestReport] = []
    for chunk in _chunks(fresh, BUCKET_BATCH):
        pairs = buckets.listed_sources(url, chunk, endpoint_url=endpoint_url)
        report = ingest_sources(db, (s for _, s in pairs if s is not None), db_path=db_path, workers=1)
        retry = {origin for origin, code, _ in report.quarantined if code == "unreadable"}
        for obj, source in pairs:
            if source is None or source.origin not in retry:
                seen[obj.key] = obj.version
        reports.append(report)
        on_batch(report)
        if stop is not None and stop.is_set():
            break
    return reports


def watch_bucket(
    db: Database,
    url: str,
    *,
    stop: threading.Event,
    on_batch: BatchFn,
    on_error: Callable[[str], None],
    db_path: str | None = None,
    endpoint_url: str | None = None,
    interval: float = 10.0,
    once: bool = False,
) -> WatchTotals:
    """List `url` every `interval` seconds until `stop` is set (once with `once`), reading what is new."""
    totals = WatchTotals()
    seen: dict[str, str] = {}

    def batch(report: IngestReport) -> None:
        totals.add(report)
        on_batch(report)

    while not stop.is_set():
        try:
            poll_bucket_once(
                db, url, seen, on_batch=batch, db_path=db_path, endpoint_url=endpoint_url, stop=stop
            )
        except RecordingError as exc:  # the listing failed: say so, list again at the next interval
            totals.problems.append(exc.message)
            on_error(exc.message)
        if once:
            break
        stop.wait(interval)
    return totals
