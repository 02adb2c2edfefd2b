"""What changed in the store since a screen last read it: cheap enough to ask every second or two.

`data_version` is three index reads: the newest recording's id (ids only grow: a new recording is a new
id, a re-extraction keeps its id) and the run and finding totals the tallies keep. An app compares it with
the one it last saw; only when it differs does it read anything more.
"""

from __future__ import annotations

from typing import NamedTuple

from sqlite_utils import Database

from store.tallies import tally


class DataVersion(NamedTuple):
    """The store's state as far as new runs and findings go."""

    recording: int
    runs: int
    findings: int


def data_version(db: Database) -> DataVersion:
    """The newest recording id and the run and finding totals."""
    row = db.execute("SELECT coalesce(max(id), 0) FROM recordings").fetchone()
    return DataVersion(int(row[0]), tally(db, "runs"), tally(db, "findings"))


def runs_since(db: Database, recording: int) -> int:
    """How many runs came from recordings stored after recording id `recording` (runs_recording index)."""
    row = db.execute("SELECT count(*) FROM runs WHERE recording_id > ?", [int(recording)]).fetchone()
    return int(row[0])
