"""The screen queries the benchmarks time (`bench.scale.screen_cases`, used at a million runs on SQLite and
on PostgreSQL) run on both backends and answer what the screens would show, so a benchmark never times a
query that fails or reads nothing."""

from __future__ import annotations

from pathlib import Path

from sqlite_utils import Database

from bench.filter_matrix import filters_of
from bench.scale import label_share, screen_cases
from store import runs
from store.db.ingest import ingest
from tests.conftest import FIXTURE_RECORDINGS, both_backends


@both_backends
def test_every_screen_case_of_the_benchmark_runs_on_both_backends(db: Database, db_path: Path) -> None:
    ingest(db, [FIXTURE_RECORDINGS], db_path=str(db_path))
    label_share(db, 5)
    cases = screen_cases(db, {"common": "the", "rare": "nosuchwordanywhere"})
    names = [name for name, _ in cases]
    assert len(names) == len(set(names)) and any("sorted newest" in n for n in names)
    answers = {name: fn() for name, fn in cases}
    assert answers["runs screen first page, no filter"], "the first page holds runs"
    assert runs.count_runs(db) > 0
    assert not answers["full-text search page (rare word: nosuchwordanywhere)"]

    grid = filters_of(db)  # the filter grid of `bench.filter_matrix`: each filter leaves what a scan does
    assert "no answer (w)" in grid and any("+ search" in name for name in grid)
    for filters in grid.values():
        for sort in runs.SORTS:
            assert len(runs.runs_page(db, sort=sort, limit=None, **filters)) >= runs.count_runs_at_most(
                db, **filters
            )
