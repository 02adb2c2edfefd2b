"""Opening the review database safely: WAL, a busy timeout, schema migrations, version and corruption checks."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import cast

from sqlite_utils import Database

from store.db.postgres import is_postgres, postgres_url
from store.db.schema import migrations
from store.db.statistics import refresh_statistics
from store.errors import (
    DatabaseCorruptError,
    DatabaseNotOursError,
    DatabaseVersionError,
    DatabaseWriteError,
    StoreError,
)

#: How long a writer waits for another writer before giving up (several app processes share one file).
BUSY_TIMEOUT_S = 60.0

# A None parameter is bound as NULL either way; with no adapter registered for it, Python's sqlite3 first
# asks the adapter protocol, which formats and discards an AttributeError per None (CPython 3.11): 8% of an
# ingest group write's instructions, a sixth of an event-heavy file's row values being None
# (`python -m bench.write_parts`). `get` of an empty dict is a C function that answers None for None.
# (For None only: it answers None for anything.)
NULL_ADAPTER = cast("Callable[[None], None]", {}.get)
sqlite3.register_adapter(type(None), NULL_ADAPTER)


def connect(path: str | Path, *, readonly: bool = False) -> sqlite3.Connection:
    """A raw connection with the project's pragmas; autocommit mode, transactions are explicit."""
    target = Path(path)
    if readonly:
        conn = sqlite3.connect(
            f"file:{target}?mode=ro",
            uri=True,
            timeout=BUSY_TIMEOUT_S,
            isolation_level=None,
            check_same_thread=False,
        )
    else:
        conn = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute("PRAGMA recursive_triggers = ON")  # a row INSERT OR REPLACE drops leaves the tallies too
    if not readonly:
        conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA cache_size = -65536")
    return conn


def locate(path: str | Path) -> str:
    """The --db value as another process must be given it: a file path made absolute; a URL as it is."""
    url = postgres_url(path)
    return url if url is not None else str(Path(path).resolve())


def shown(path: str | Path) -> str:
    """The --db value for a message: a URL without its password."""
    from store.db.postgres import redacted

    url = postgres_url(path)
    return redacted(url) if url is not None else str(path)


def open_reader(path: str | Path) -> Database:
    """A read-only connection for a reader thread or process (nothing migrated): SQLite opens the file
    read-only; PostgreSQL opens a session whose transactions are read-only."""
    url = postgres_url(path)
    if url is not None:
        from store.db.postgres import open_postgres

        db = open_postgres(url, migrate=False)
        db.execute("SET default_transaction_read_only = on")
        return db  # type: ignore[return-value]
    return Database(connect(path, readonly=True))


def check_file(path: Path) -> None:
    """Refuse a folder where a database file should be.

    The file's content is checked through SQLite itself, never by opening it from Python: closing any
    other handle on a database file drops this process's POSIX locks on it, which SQLite relies on.
    """
    if path.is_dir():
        raise DatabaseCorruptError(f"{path}: is a folder, not a database file")


def open_database(path: str | Path, *, migrate: bool = True) -> Database:
    """Open (creating if needed) and migrate the database at `path`.

    The store's one dialect seam: a `postgresql://` URL opens PostgreSQL (`store.db.postgres`, the same
    query modules through a translating connection); anything else is an SQLite file through sqlite-utils."""
    url = postgres_url(path)
    if url is not None:
        from store.db.postgres import open_postgres

        return open_postgres(url, migrate=migrate)  # type: ignore[return-value]
    target = Path(path)
    check_file(target)
    if target.parent and not target.parent.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = connect(target)
    except sqlite3.DatabaseError as exc:
        raise _refusal(target, exc) from exc
    try:
        conn.execute(
            "SELECT count(*) FROM sqlite_master"
        ).fetchone()  # reads the header and schema, writes nothing
        foreign = _foreign_tables(conn)
        if foreign:
            conn.close()
            shown = ", ".join(foreign[:5]) + (", …" if len(foreign) > 5 else "")
            raise DatabaseNotOursError(
                f"{target}: an SQLite database footprint-reviewer did not create (tables: {shown}); "
                "refusing to touch it. Give --db a new file or a review database."
            )
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
    except sqlite3.DatabaseError as exc:
        conn.close()
        refusal = write_refusal(target, exc)
        if refusal is not None:
            raise refusal from exc
        if "not a database" in str(exc):
            raise DatabaseCorruptError(f"{target}: not an SQLite database (refusing to touch it)") from exc
        raise DatabaseCorruptError(
            f"{target}: the database is damaged ({exc}); it was left untouched"
        ) from exc
    db = Database(conn)
    check_version(db, target)
    if migrate and migrations.pending(db):
        try:
            with write_lock(db):  # two processes opening a new file at once: one migrates, the other waits
                migrations.apply(db)
        except sqlite3.Error as exc:
            conn.close()
            refusal = write_refusal(target, exc)
            if refusal is not None:
                raise refusal from exc
            raise
    if migrate:
        refresh_statistics(db)
    return db


def _foreign_tables(conn: sqlite3.Connection) -> list[str]:
    """The tables of a database that is not a review database (empty when it is one, or is empty)."""
    names = sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
    if not names:
        return []
    if "_sqlite_migrations" in names:
        ours = conn.execute(
            "SELECT 1 FROM _sqlite_migrations WHERE migration_set = ? LIMIT 1", [migrations.name]
        ).fetchone()
        if ours is not None:
            return []
    return names


def _refusal(target: Path, exc: sqlite3.DatabaseError) -> StoreError:
    refusal = write_refusal(target, exc)
    if refusal is not None:
        return refusal
    if "not a database" in str(exc):
        return DatabaseCorruptError(f"{target}: not an SQLite database (refusing to touch it)")
    return DatabaseCorruptError(f"{target}: the database is damaged ({exc}); it was left untouched")


def check_version(db: Database, path: Path) -> None:
    """Refuse a database that a newer build has migrated past what this build knows."""
    if not db.table("_sqlite_migrations").exists():
        return
    known = {m.name for m in migrations._migrations}
    applied = [
        r[0]
        for r in db.execute(
            "SELECT name FROM _sqlite_migrations WHERE migration_set = ?", [migrations.name]
        ).fetchall()
    ]
    unknown = [name for name in applied if name not in known]
    if unknown:
        raise DatabaseVersionError(
            f"{path}: written by a newer footprint-reviewer (schema steps {', '.join(unknown)} are unknown "
            "to this version); upgrade footprint-reviewer to open it. Nothing was changed."
        )


@contextmanager
def write_lock(db: Database, scope: str | None = None) -> Iterator[Database]:
    """One write transaction, taken with BEGIN IMMEDIATE so concurrent writers queue instead of failing
    (on PostgreSQL: a transaction holding the store's advisory write lock, or with `scope` (writes that
    touch nothing another scope writes, such as one reviewer's labels) that scope's lock alone; see
    `PgDatabase.transaction`). SQLite has one writer whatever the scope."""
    if is_postgres(db):
        with db.transaction(scope=scope):  # type: ignore[attr-defined]
            yield db
        return
    conn = db.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


#: SQLite's primary result codes that mean "the database cannot be written", not "this input is bad".
_SQLITE_READONLY, _SQLITE_IOERR, _SQLITE_CANTOPEN, _SQLITE_FULL = 8, 10, 14, 13


def write_refusal(path: str | Path | None, exc: BaseException) -> DatabaseWriteError | None:
    """A clear error when `exc` says the database (not the input) cannot be written, else None."""
    code = getattr(exc, "sqlite_errorcode", None)
    if not isinstance(exc, sqlite3.Error) or code is None:
        return None
    primary = code & 0xFF
    where = f"{path}: " if path else ""
    if primary == _SQLITE_FULL:
        return DatabaseWriteError(
            f"{where}the disk is full (or the database reached its size limit); nothing more was stored. "
            "Free some space and run the same command again: what was stored is kept."
        )
    if primary == _SQLITE_READONLY or (primary in (_SQLITE_IOERR, _SQLITE_CANTOPEN) and _read_only(path)):
        return DatabaseWriteError(
            f"{where}the database is read-only (a read-only file, folder or filesystem); nothing was "
            "written. Use a writable --db."
        )
    return None


def _read_only(path: str | Path | None) -> bool:
    """Whether the database file (or its folder, where the WAL lives) cannot be written by this process."""
    if not path:
        return False
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return True
    except OSError:
        return False
    return not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK))
