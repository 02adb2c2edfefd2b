"""Typed errors of the store. Each carries a short machine code and a human sentence."""

from __future__ import annotations


class StoreError(Exception):
    """Base class of every error the store raises on purpose."""


class RecordingError(StoreError):
    """An input could not be read as a recording; it goes to quarantine with `code` and the message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return self.message


class DatabaseVersionError(StoreError):
    """The database was written by a newer footprint-reviewer: refused rather than damaged."""


class DatabaseCorruptError(StoreError):
    """The file is not a usable SQLite database: reported, never overwritten."""


class NotFound(StoreError):
    """A run, finding or pack that the caller named does not exist."""


class DatabaseWriteError(StoreError):
    """The database cannot take a write (disk full, read-only file or filesystem): the batch stops, said plainly."""


class DatabaseNotOursError(StoreError):
    """An SQLite database some other program made: refused before anything is written to it."""


class UnsupportedByBackend(StoreError):
    """A command the database's backend (PostgreSQL) does not run yet: said in one line, never attempted."""


class PostgresUnavailable(StoreError):
    """The PostgreSQL server named by --db cannot be reached, or psycopg is not installed."""
