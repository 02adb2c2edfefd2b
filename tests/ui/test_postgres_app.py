"""The review app on a PostgreSQL database (`--db postgresql://...`): the same screens through the same
service; its readers open read-only PostgreSQL sessions, its writes go to the one write thread."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from reviewer.ui.app import ReviewerApp
from store import labels
from store.db.connection import open_database
from store.db.ingest import ingest
from store.findings import queue_count
from store.runs import count_runs
from tests.conftest import FIXTURE_RECORDINGS, fresh_postgres_database
from tests.ui.conftest import SIZE, runs_screen_ready, wait_until
from tests.ui.test_labelling import open_queue, show


@pytest.fixture
def pg_review_db() -> Iterator[str]:
    with fresh_postgres_database() as url:
        db = open_database(url)
        ingest(db, [FIXTURE_RECORDINGS], db_path=url)
        db.close()
        yield url


def _on(url: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    db = open_database(url, migrate=False)
    try:
        return fn(db, *args, **kwargs)
    finally:
        db.close()


async def test_the_app_lists_runs_and_labels_findings_on_postgresql(app_factory, pg_review_db: str) -> None:
    target = _on(
        pg_review_db,
        lambda db: db.execute(
            "SELECT id FROM findings WHERE kind = 'coverage-gap' ORDER BY id LIMIT 1"
        ).fetchone()[0],
    )
    app: ReviewerApp = app_factory(db_path=pg_review_db, reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await runs_screen_ready(pilot)
        runs = _on(pg_review_db, count_runs)
        await wait_until(pilot, lambda: screen.total == runs == screen.run_list.row_count)
        assert runs > 10
        queue = await open_queue(pilot)
        await wait_until(pilot, lambda: queue.total == _on(pg_review_db, queue_count))
        await show(pilot, queue, target)
        await pilot.press("1")  # tp
        await wait_until(pilot, lambda: _on(pg_review_db, labels.current, target) == {"ann": "tp"})
