"""The WAL checkpointed beside an ingest, not inside it.

An SQLite checkpoint copies the WAL's pages into the database file and syncs it. Into a store that already
holds a million runs, a group's new rows land on pages spread over every index, so each checkpoint writes
scattered pages and waits for the disk: the writer's commits (which ran the automatic checkpoint) took 4.0
of an 8 s ingest there, against 1.2 of 4.9 s into an empty store (`python -m bench.ingest_into_million`).
Here a thread with its own connection checkpoints after each commit while the writer goes on with the next
group; SQLite lets one checkpoint run beside one writer. The WAL restarts (and is cut back to the ingest's
`journal_size_limit`) only when a checkpoint has copied every frame before the writer's next transaction, so
when the last checkpoint left more than `wal_pages` frames the writer waits for one pass that began after
its last commit: the WAL stays bounded as it did with the automatic checkpoint. A failed checkpoint loses
nothing (the rows are in the WAL); the writer then goes back to the automatic one.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from types import TracebackType

from store.db.connection import connect


class Checkpointer:
    """Checkpoints `db_path`'s WAL in a thread while one writer commits; `committed` after each commit,
    `bounded` before each transaction, `close` at the end (it stops the thread; the last checkpoint is the
    caller's)."""

    def __init__(self, db_path: str, wal_pages: int) -> None:
        self._conn = connect(db_path)
        self._wal_pages = wal_pages
        self._wal = Path(f"{db_path}-wal")
        self._frame_bytes = int(self._conn.execute("PRAGMA page_size").fetchone()[0]) + 24
        self._cond = threading.Condition()
        self._asked = 0  # commits the writer has reported
        self._started = 0  # of them, those before the running (or last) pass began
        self._covered = 0  # of them, those before the last finished pass began
        self._frames: int | None = None  # the WAL's frames at the last finished pass (None: none yet)
        self._closing = False
        self.failure: sqlite3.Error | None = None
        self._thread = threading.Thread(target=self._run, name="wal-checkpointer", daemon=True)
        self._thread.start()

    @property
    def working(self) -> bool:
        """False once a checkpoint has failed: the writer should checkpoint for itself again."""
        return self.failure is None

    def committed(self) -> None:
        """The writer committed: checkpoint what it wrote."""
        with self._cond:
            self._asked += 1
            self._cond.notify_all()

    def bounded(self) -> None:
        """Before the writer's next transaction: when the last pass found a WAL longer than `wal_pages` frames,
        wait for a pass that began after the last commit (it copies every frame, the writer being idle), so
        that the transaction restarts the WAL. (A pass that copied every frame it found says nothing of the
        frames committed while it ran.)"""
        with self._cond:
            if not self.working or self._covered >= self._asked or self._found_frames() <= self._wal_pages:
                return
            wanted = self._asked
            self._cond.wait_for(lambda: not self.working or self._closing or self._covered >= wanted)

    def _found_frames(self) -> int:
        """The WAL's frames at the last finished pass; before the first, as many as the WAL file can hold."""
        if self._frames is not None:
            return self._frames
        try:
            return self._wal.stat().st_size // self._frame_bytes
        except OSError:
            return 0

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._closing or self._asked > self._started)
                if self._closing:
                    return
                self._started = self._asked
            try:
                _busy, frames, _copied = self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            except sqlite3.Error as exc:
                with self._cond:
                    self.failure = exc
                    self._cond.notify_all()
                return
            with self._cond:
                self._covered = self._started
                self._frames = max(0, int(frames))
                self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join()
        self._conn.close()

    def __enter__(self) -> Checkpointer:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
