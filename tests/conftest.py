"""Shared fixtures: the real recordings kept in the repo (tests/fixtures/recordings), throwaway databases."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlite_utils import Database

from store.db.connection import open_database

REPO = Path(__file__).resolve().parents[1]
#: real recordings produced by agentfootprint, kept in the repository (with their INDEX.md) so a clone alone
#: passes the suite; `python3 tools/refresh_fixtures.py SOURCE` copies a newer corpus in
FIXTURE_RECORDINGS = REPO / "tests" / "fixtures" / "recordings"
SAMPLES = REPO / "sample_recordings"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "review.db"


@pytest.fixture
def db(db_path: Path) -> Iterator[Database]:
    database = open_database(db_path)
    yield database
    database.close()
