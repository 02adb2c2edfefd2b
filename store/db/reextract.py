"""Rebuild extracted rows from the stored originals, after an extractor upgrade or a schema change.

Labels are keyed by stable finding ids, so they are untouched and re-attach to the rebuilt findings.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlite_utils import Database

from store.db.connection import write_lock
from store.db.ingest import bulk_writing
from store.db.writer import EXTRACTOR_VERSION, delete_extracted, insert_rows, own_runs
from store.errors import RecordingError
from store.reading.extract import extract
from store.reading.identity import decoded_with_identities
from store.recordings import original_bytes
from store.tallies import rebuild_tallies


def reextract(
    db: Database, *, everything: bool = False, progress: Callable[[int, int], None] | None = None
) -> tuple[int, list[tuple[str, str]]]:
    """Re-extract recordings older than this extractor (or all). Returns (count, failures)."""
    where = "" if everything else f"WHERE extractor_version < {EXTRACTOR_VERSION}"
    todo = db.execute(f"SELECT id, sha256, source, container FROM recordings {where} ORDER BY id").fetchall()
    failures: list[tuple[str, str]] = []
    with bulk_writing(db):
        done = _rewrite(db, todo, failures, progress)
    with write_lock(db):
        rebuild_tallies(db)  # the triggers kept them; recounting makes `reextract` the way to re-derive them
    return done, failures


def _rewrite(
    db: Database,
    todo: list[tuple[int, str, str, str]],
    failures: list[tuple[str, str]],
    progress: Callable[[int, int], None] | None,
) -> int:
    """Each recording's rows written again from its original, one transaction a recording."""
    done = 0
    for n, (rec_id, sha, source, container) in enumerate(todo, start=1):
        data = original_bytes(db, sha)
        try:
            rec, identities = decoded_with_identities(data, source, sha)
        except RecordingError as exc:
            failures.append((source, exc.message))
            continue
        x = extract(rec, sha256=sha, origin=source, container=container, size=len(data))
        x.identities.update(identities)
        with write_lock(db):
            own = own_runs(db, rec_id)  # a run stored twice before m013 stays as it was, labels and all
            delete_extracted(db, rec_id)
            insert_rows(db, rec_id, x, own=own)
            db.execute(
                "UPDATE recordings SET extractor_version = ?, events = ?, runs = ? WHERE id = ?",
                [EXTRACTOR_VERSION, x.recording["events"], x.recording["runs"], rec_id],
            )
        done += 1
        if progress is not None:
            progress(n, len(todo))
    return done
