"""Recordings as stored: the exact bytes ingested (decompressed), what came from one source, and the
quarantine of inputs that could not be read."""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from store.errors import NotFound
from store.rows import fetch_rows


def original_bytes(db: Database, recording_sha: str) -> bytes:
    """The exact bytes that were ingested, decompressed."""
    row = db.execute(
        "SELECT o.codec, o.data FROM originals o JOIN recordings r ON r.id = o.recording_id WHERE r.sha256 = ?",
        [recording_sha],
    ).fetchone()
    if row is None:
        raise NotFound(f"no original stored for recording {recording_sha[:12]}")
    return decompressed(*row)


def decompressed(codec: str, data: Any) -> bytes:
    """An original's stored bytes (`codec`: how ingest compressed them) as they were ingested."""
    if codec == "zstd":
        import zstandard

        return zstandard.ZstdDecompressor().decompress(data)
    return bytes(data)


def runs_of_source(db: Database, source: str) -> dict[str, Any]:
    """The recording ingested from `source` (its events and bytes) and its run keys, most events first."""
    rec = db.execute("SELECT id, events, bytes FROM recordings WHERE source = ?", [source]).fetchone()
    if rec is None:
        raise NotFound(f"no recording ingested from {source!r}")
    keys = [
        r[0] for r in db.execute("SELECT key FROM runs WHERE recording_id = ? ORDER BY events DESC", [rec[0]])
    ]
    return {"events": rec[1], "bytes": rec[2], "keys": keys}


def list_quarantine(db: Database, limit: int | None = None) -> list[dict[str, Any]]:
    """Every quarantined input with its reason, by path (the first `limit` of them when given)."""
    sql = (
        "SELECT path, code, reason, sha256, first_seen, last_seen, times FROM quarantine ORDER BY path, code"
    )
    if limit is None:
        return fetch_rows(db, sql)
    return fetch_rows(db, sql + " LIMIT ?", [max(0, int(limit))])


def count_quarantine(db: Database) -> int:
    """How many inputs are quarantined (one per path and reason code)."""
    return int(db.execute("SELECT COUNT(*) FROM quarantine").fetchone()[0])
