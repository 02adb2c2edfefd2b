"""The what-if replay's figures in a worker process, so a label write never waits for the replay's Python loop.

The replay is pure Python. On a reader thread it held the GIL, and under CPU load a label write on the write
thread measured 4-22x its idle time (bench/RESULTS.md). Here it runs in ONE worker process, started on the
first replay with "spawn" (never fork a threaded app), reused, and stopped by `close()`; the worker opens
its own read-only connection to the database file.

Progress crosses back over a manager queue, one message per `progress_every` answers, and the worker waits
for each message to be answered. So the caller's `progress(done, total)` paces the replay exactly as it did
on a thread: a callback that blocks holds the replay, one that raises stops it, and that exception (like any
the replay raises in the worker, which `concurrent.futures` pickles back) reaches the caller unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from multiprocessing.managers import SyncManager
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from reviewer.service import pack_ops
from store.db.connection import open_reader

#: What the parent answers each progress message with.
GO, STOP = "go", "stop"
#: The start method: a fresh interpreter, so no lock held by another thread of the app is copied into it.
START_METHOD = "spawn"


class ReplayStopped(Exception):
    """Raised in the worker when the caller stopped the replay (its progress raised, or the service closed)."""


# -- in the worker process ---------------------------------------------------------------------------------------

_worker_db: Database | None = None
_worker_open_error: BaseException | None = None


def _open_worker_db(db_path: str) -> None:
    """Pool initializer: the worker's read-only connection (an error is kept and raised by every replay,
    since a failing initializer would only break the pool with an unhelpful message)."""
    global _worker_db, _worker_open_error
    try:
        _worker_db = open_reader(db_path)
    except Exception as exc:  # noqa: BLE001 - re-raised by every replay
        _worker_open_error = exc


def _replay_in_worker(ref: str, options: dict[str, Any], to_parent: Any, from_parent: Any) -> pack_ops.Replay:
    """`pack_ops.replay_figures` on the worker's connection, each progress message `(pid, done, total)`
    answered before it goes on (it always sends at least one: the last count)."""
    if _worker_db is None:
        raise _worker_open_error or RuntimeError("the replay worker has no database connection")
    pid = os.getpid()

    def progress(done: int, total: int) -> None:
        to_parent.put((pid, done, total))
        if from_parent.get() != GO:
            raise ReplayStopped("the replay was stopped")

    return pack_ops.replay_figures(_worker_db, ref, progress=progress, **options)


# -- in the app's process ----------------------------------------------------------------------------------------


def _wake(to_parent: Any, _future: Future[Any]) -> None:
    """Tell the waiting thread the worker is done (or died) with this replay."""
    with contextlib.suppress(Exception):  # the manager is gone: the service is closing
        to_parent.put(None)


def _ensure_resource_tracker() -> None:
    """Start multiprocessing's resource tracker (every spawn needs it) with a real stderr: inside a Textual
    app `sys.stderr` is a capture whose `fileno()` is -1, and the tracker's own spawn then fails with
    "bad value(s) in fds_to_keep". Once started it serves every later spawn of this process."""
    from multiprocessing import resource_tracker

    try:
        usable = sys.stderr is not None and sys.stderr.fileno() >= 0
    except (AttributeError, OSError, ValueError):
        usable = False
    if usable:
        resource_tracker.ensure_running()
        return
    captured = sys.stderr
    sys.stderr = sys.__stderr__
    try:
        resource_tracker.ensure_running()
    finally:
        sys.stderr = captured


class ReplayProcess:
    """One worker process for replays: `await run(...)` from async code; `close()` when done.

    `ready()` is called (on a thread) before the worker first starts: it waits until the write thread has
    opened and migrated the file, and raises its error if that failed.
    """

    def __init__(self, db_path: Path, ready: Callable[[], None]) -> None:
        self.db_path = db_path
        self._ready = ready
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None
        self._manager: SyncManager | None = None
        self._answers: set[Any] = set()  # the reply queue of every running replay, to stop them on close
        # Threads that relay progress; a dedicated pool so closing never waits for one.
        self._relays = ThreadPoolExecutor(max_workers=2, thread_name_prefix="reviewer-replay-progress")
        #: The process the latest replay reported from (a diagnostic; a test checks it is not this one).
        self.worker_pid: int | None = None
        self.closed = False

    async def run(
        self, ref: str, *, progress: Callable[[int, int], None] | None = None, **options: Any
    ) -> pack_ops.Replay:
        """`pack_ops.replay_figures(db, ref, **options)` in the worker; `progress` is called on a relay thread."""
        if self.closed:
            raise RuntimeError("the review service is closed")
        stop = threading.Event()
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._relays, self._relay, ref, progress, options, stop)
        except asyncio.CancelledError:
            stop.set()  # the caller gave up: the relay stops the worker at its next message
            raise

    def _relay(
        self,
        ref: str,
        progress: Callable[[int, int], None] | None,
        options: dict[str, Any],
        stop: threading.Event,
    ) -> pack_ops.Replay:
        pool, manager = self._start()
        to_parent, from_parent = manager.Queue(), manager.Queue()
        with self._lock:
            self._answers.add(from_parent)
        try:
            future = pool.submit(_replay_in_worker, ref, options, to_parent, from_parent)
            future.add_done_callback(partial(_wake, to_parent))
            while (message := to_parent.get()) is not None:
                self.worker_pid, done, total = message
                if stop.is_set() or self.closed:
                    from_parent.put(STOP)
                    continue
                try:
                    if progress is not None:
                        progress(done, total)
                except BaseException:
                    from_parent.put(STOP)
                    raise
                from_parent.put(GO)
            try:
                return future.result()
            except BrokenProcessPool:
                self._forget(pool)
                raise
        except (EOFError, OSError) as exc:  # the manager's connection: gone once the service closed
            if self.closed:
                raise RuntimeError("the review service is closed") from exc
            raise
        finally:
            with self._lock:
                self._answers.discard(from_parent)

    def _start(self) -> tuple[ProcessPoolExecutor, SyncManager]:
        """The worker pool and its manager, started on first use (and again after a worker died)."""
        self._ready()
        with self._lock:
            if self.closed:
                raise RuntimeError("the review service is closed")
            if self._pool is None or self._manager is None:
                _ensure_resource_tracker()
                context = multiprocessing.get_context(START_METHOD)
                if self._manager is None:
                    self._manager = context.Manager()
                self._pool = ProcessPoolExecutor(
                    max_workers=1,
                    mp_context=context,
                    initializer=_open_worker_db,
                    initargs=(str(self.db_path),),
                )
            return self._pool, self._manager

    def _forget(self, pool: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._pool is pool:
                self._pool = None
        pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop running replays at their next progress message and the worker after them, without waiting."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            pool, manager, answers = self._pool, self._manager, list(self._answers)
        for answer in answers:
            with contextlib.suppress(Exception):  # the manager is already gone
                answer.put(STOP)
        self._relays.shutdown(wait=False)
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        if pool is not None or manager is not None:
            threading.Thread(
                target=_stop_after, args=(pool, manager), name="reviewer-replay-close", daemon=True
            ).start()


def _stop_after(pool: ProcessPoolExecutor | None, manager: SyncManager | None) -> None:
    """Once the worker has finished (a stopped replay ends at its next message), stop the manager it used."""
    if pool is not None:
        pool.shutdown(wait=True)
    if manager is not None:
        manager.shutdown()
