"""Where database work runs: ONE write thread, beside a small pool of read-only connections (datasette's split).

Reads and writes used to share one thread, so a label write measured 3.8 ms idle took 834 ms queued behind a
40,000-answer replay. Now a read (a replay, a big page, an export) runs on a reader thread with its own
read-only connection in WAL mode, and the write thread only ever waits for other writers.

Each connection is used only by the thread that opened it. The write thread opens (and migrates) the file
first; readers open theirs after that, so they never see a half-migrated schema.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from sqlite_utils import Database

from store.db.connection import open_database, open_reader

T = TypeVar("T")

#: Reader threads (each with its own read-only connection). Two: the machine this runs on has two cores,
#: and a replay plus a page read at once is the case that matters.
READERS = 2


class DatabaseThreads:
    """Run `fn(db, ...)` on the write thread (`write`) or on a reader (`read`), from async code."""

    def __init__(self, db_path: str | Path, *, readers: int = READERS) -> None:
        self.db_path = Path(db_path)
        self._write_local = threading.local()
        self._read_local = threading.local()
        self._opened = threading.Event()
        self._open_error: BaseException | None = None
        self._readers: list[Database] = []
        self._readers_lock = threading.Lock()
        self._writer = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="reviewer-db-write", initializer=self._open_writer
        )
        self._reader_pool = ThreadPoolExecutor(
            max_workers=readers, thread_name_prefix="reviewer-db-read", initializer=self._open_reader
        )
        self._writer.submit(lambda: None)  # open (and migrate) now, before the first read needs the schema
        self.closed = False

    # -- opening, on each thread ------------------------------------------------------------------------------

    def _open_writer(self) -> None:
        # A failing initializer would break the pool with an unhelpful error; keep the real one for each call.
        try:
            self._write_local.db = open_database(self.db_path)
        except Exception as exc:  # noqa: BLE001 - re-raised by every call
            self._write_local.db = None
            self._open_error = exc
        finally:
            self._opened.set()

    def _open_reader(self) -> None:
        self._opened.wait()
        self._read_local.db = None
        if self._open_error is not None:
            return
        try:
            db = open_reader(self.db_path)
        except Exception as exc:  # noqa: BLE001 - re-raised by every read
            self._read_local.error = exc
            return
        self._read_local.db = db
        with self._readers_lock:
            self._readers.append(db)

    def wait_open(self) -> None:
        """Block until the write thread has opened (and migrated) the file; raise its error if it failed."""
        self._opened.wait()
        if self._open_error is not None:
            raise self._open_error

    def _db(self, local: threading.local) -> Database:
        db = getattr(local, "db", None)
        if db is None:
            error = self._open_error or getattr(local, "error", None)
            raise error if error is not None else RuntimeError("the database is closed")
        return db

    # -- running ----------------------------------------------------------------------------------------------

    async def write(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`fn(db, ...)` on the one write thread (its reads after the write see the write)."""
        return await self._run(self._writer, self._write_local, fn, args, kwargs)

    async def read(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`fn(db, ...)` on a reader thread, over a read-only connection: it never delays a write."""
        return await self._run(self._reader_pool, self._read_local, fn, args, kwargs)

    async def _run(
        self,
        pool: ThreadPoolExecutor,
        local: threading.local,
        fn: Callable[..., T],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> T:
        if self.closed:
            raise RuntimeError("the review service is closed")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(pool, lambda: fn(self._db(local), *args, **kwargs))

    def close(self) -> None:
        """Stop both sides without waiting on the caller's thread; each connection is closed after its work."""
        if self.closed:
            return
        self.closed = True

        def close_writer() -> None:
            db = getattr(self._write_local, "db", None)
            if db is not None:
                db.close()
                self._write_local.db = None

        self._writer.submit(close_writer)
        self._writer.shutdown(wait=False, cancel_futures=False)
        self._reader_pool.shutdown(wait=False, cancel_futures=True)
        threading.Thread(target=self._close_readers, name="reviewer-db-close", daemon=True).start()

    def _close_readers(self) -> None:
        # After the pool has drained no reader uses its connection; connections allow any thread to close them.
        self._reader_pool.shutdown(wait=True)
        with self._readers_lock:
            for db in self._readers:
                db.close()
            self._readers.clear()
