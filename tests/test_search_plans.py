"""Which read a page of searched runs takes, on both backends, without reading every match of the word
(`store.search`): a rare word reads its runs and sorts them ("drive") on both. Otherwise, on SQLite, a newest-
or oldest-first page tests a window of runs where its walk starts against that window's matches and seeks the
rest ("window", or "gather" when the window is every run), and a most-findings page takes the read its
measured costs make cheapest (SQLite judges from a capped count and a sample of runs); on PostgreSQL,
judged from its planner's statistics, a page walking runs seeks each ("probe"), any other drives. Every read
gives the same pages, and the capped count agrees on both.

A generated store of 1,000 runs (`bench.synthetic`): every prompt and answer says "synthetic" (2,000
documents), every prompt "failing" (1,000), run i's documents "i" (2 documents for i = 997); the thresholds
are scaled down to it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bench.synthetic import insert_synthetic_findings, insert_synthetic_runs
from store import runs, search
from store.db.connection import open_database
from store.db.postgres import is_postgres
from store.search import SearchRead, Walk, fts_query, search_read
from tests.conftest import BACKENDS, fresh_postgres_database

RUNS = 1_000


def _fill(db: Any) -> Any:
    insert_synthetic_runs(db, RUNS)
    insert_synthetic_findings(db)
    if is_postgres(db):
        db.execute("ANALYZE search_text")  # what autovacuum does after a load this size
    return db


@pytest.fixture(scope="module")
def sqlite_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    db = _fill(open_database(tmp_path_factory.mktemp("plans") / "review.db"))
    yield db
    db.close()


@pytest.fixture(scope="module")
def postgresql_store() -> Iterator[Any]:
    with fresh_postgres_database() as url:
        db = _fill(open_database(url))
        yield db
        db.close()


@pytest.fixture(params=BACKENDS)
def generated(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(f"{request.param}_store")


@pytest.fixture
def scaled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Thresholds for 1,000 runs: rare below 100 documents, a window of 200 matches."""
    for name in ("RARE_DOCS", "PG_RARE_DOCS"):
        monkeypatch.setattr(search, name, 100)
    monkeypatch.setattr(search, "WINDOW_DOCS", 200)


def _read(db: Any, word: str, sort: str = "newest", after_key: str | None = None) -> SearchRead:
    return search_read(db, fts_query(word), Walk(sort, after_key))


def _rowids(db: Any) -> list[int]:
    return [r[0] for r in db.execute("SELECT rowid FROM runs ORDER BY rowid")]


@pytest.mark.usefixtures("scaled")
def test_a_rare_word_reads_its_runs_and_sorts_them(generated: Any) -> None:
    for sort in ("newest", "oldest", "most-findings"):
        assert _read(generated, "997", sort).name == "drive"


@pytest.mark.usefixtures("scaled")
def test_a_newest_page_tests_a_window_of_the_newest_runs_sized_to_the_word(sqlite_store: Any) -> None:
    """200 matches: the newest 200 runs of the middling word (one document a run), the newest 100 of the
    common one (two); a later page's window ends at the run it continues after; oldest first, at the start."""
    generated = sqlite_store
    rowids = _rowids(generated)
    lo, hi = rowids[0], rowids[-1]
    assert _read(generated, "failing") == SearchRead("window", hi - 199, hi)
    assert _read(generated, "synthetic") == SearchRead("window", hi - 99, hi)
    key, rowid = generated.execute("SELECT key, rowid FROM runs ORDER BY rowid LIMIT 1 OFFSET 500").fetchone()
    assert _read(generated, "synthetic", after_key=key) == SearchRead("window", rowid - 99, rowid)
    assert _read(generated, "failing", "oldest") == SearchRead("window", lo, lo + 199)


@pytest.mark.usefixtures("scaled")
def test_a_window_of_a_quarter_of_the_runs_or_more_gathers_every_match(
    sqlite_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    generated = sqlite_store
    monkeypatch.setattr(search, "WINDOW_DOCS", 400)
    assert _read(generated, "failing").name == "gather"  # 400 matches: 400 runs of 1,000
    assert _read(generated, "synthetic").name == "window"  # 400 matches: 200 runs


@pytest.mark.parametrize(
    ("documents", "read"),
    [(2_000, "drive"), (38_000, "gather"), (100_000, "gather"), (300_000, "probe"), (726_000, "probe")],
)
def test_a_most_findings_page_at_a_million_runs_takes_the_cheapest_read(documents: int, read: str) -> None:
    """Most findings first walks its own index, so a page need not read every match: a rare word's runs are
    read and sorted, a middling word's match set is built once and runs tested against it as the walk goes,
    and the commonest words are sought run by run (before, 161-197 ms a page at a million runs for a middling
    and the commonest word, each read whole)."""
    assert search._unwindowed_read(documents / 1_000_000, 1_000_000).name == read


@pytest.mark.usefixtures("scaled")
def test_a_most_findings_page_of_a_word_in_every_run_walks_the_runs(sqlite_store: Any) -> None:
    generated = sqlite_store
    assert _read(generated, "failing", "most-findings").name == "gather"
    assert _read(generated, "synthetic", "most-findings").name == "gather"
    assert _read(generated, "997", "most-findings").name == "drive"


@pytest.mark.usefixtures("scaled")
def test_postgresql_probes_runs_for_any_word_its_statistics_do_not_call_rare(postgresql_store: Any) -> None:
    for word in ("failing", "synthetic"):
        assert _read(postgresql_store, word).name == "probe"
        assert _read(postgresql_store, word, "oldest").name == "probe"
        assert _read(postgresql_store, word, "most-findings").name == "drive"  # it sorts whatever it reads


@pytest.mark.usefixtures("scaled")
def test_the_sqlite_sample_tells_a_common_word_from_a_middling_one(
    sqlite_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fewer runs sampled than the store holds (8 windows of 20): the documents per run still come out."""
    monkeypatch.setattr(search, "SAMPLE_RUNS", 160)
    lo, hi = _rowids(sqlite_store)[0], _rowids(sqlite_store)[-1]
    assert search._sampled_docs_per_run(sqlite_store, fts_query("synthetic"), lo, hi) == 2.0
    assert search._sampled_docs_per_run(sqlite_store, fts_query("failing"), lo, hi) == 1.0
    assert _read(sqlite_store, "synthetic").last - _read(sqlite_store, "synthetic").first + 1 == 100


@pytest.mark.usefixtures("scaled")
def test_postgresql_without_statistics_counts_a_little(
    postgresql_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never analysed: no estimate, so a count up to the rare bound tells a rare word from the others."""
    monkeypatch.setattr(search, "postgres_matches_estimate", lambda db, query: None)
    assert _read(postgresql_store, "997").name == "drive"
    assert _read(postgresql_store, "synthetic").name == "probe"


@pytest.mark.parametrize(
    "read",
    [
        SearchRead("gather"),
        SearchRead("probe"),
        SearchRead("window", RUNS, RUNS - 1),  # an empty window: every run sought in the index
        SearchRead("window", RUNS - 99, RUNS),
        SearchRead("window", 401, 600),
        SearchRead("window", 1, 150),
    ],
    ids=[
        "gather",
        "probe",
        "empty window",
        "window of the newest",
        "window in the middle",
        "window of the oldest",
    ],
)
def test_each_read_gives_the_same_pages(
    generated: Any, monkeypatch: pytest.MonkeyPatch, read: SearchRead
) -> None:
    monkeypatch.setattr(search, "search_read", lambda db, query, walk: search.DRIVE)
    expected = _pages(generated)
    monkeypatch.setattr(search, "search_read", lambda db, query, walk: read)
    assert _pages(generated) == expected


def _pages(db: Any) -> list[list[str]]:
    """Three pages of 40 of each word, in each order."""
    out = []
    for word in ("997", "failing", "synthetic"):
        for sort in ("newest", "oldest", "most-findings"):
            keys: list[str] = []
            after = None
            for _ in range(3):
                page = runs.runs_page(db, search=word, sort=sort, limit=40, after=after)
                keys += [r["run_key"] for r in page]
                after = page[-1]["cursor"] if page else None
                if after is None:
                    break
            out.append(keys)
    assert len(out[-1]) == 120  # the common word fills every page
    return out


@pytest.mark.parametrize(("word", "runs_matching"), [("997", 1), ("failing", RUNS), ("synthetic", RUNS)])
@pytest.mark.parametrize("cap", [10, RUNS - 1, RUNS])
def test_the_capped_count_of_a_search_is_the_same_on_both_backends(
    sqlite_store: Any, postgresql_store: Any, word: str, runs_matching: int, cap: int
) -> None:
    expected = (min(runs_matching, cap), runs_matching <= cap)
    for db in (sqlite_store, postgresql_store):
        got = runs.count_runs_at_most(db, cap=cap, search=word)
        assert (int(got), got.exact) == expected


def _counted_with_windows(db: Any, filters: dict[str, Any]) -> tuple[Any, list[str]]:
    """The runs screen's count under `filters`, and the window statements it ran."""
    windows: list[str] = []
    db.conn.set_trace_callback(lambda sql: windows.append(sql) if "BETWEEN" in sql else None)
    try:
        return runs.count_runs_at_most(db, **filters), windows
    finally:
        db.conn.set_trace_callback(None)


@pytest.mark.usefixtures("scaled")
@pytest.mark.parametrize("word", ["synthetic", "failing"])
def test_a_search_with_another_filter_is_counted_window_by_window(
    sqlite_store: Any, monkeypatch: pytest.MonkeyPatch, word: str
) -> None:
    """A common word within an agent is counted over windows of runs holding about COUNT_WINDOW_DOCS of its
    matches each, never reading every match at once: exact when the windows end in time, else what they
    counted as a lower bound ("n+"), never more than the runs there are."""
    filters = {"agent": "san-triage", "search": word}
    scanned = sqlite_store.execute(
        "SELECT count(*) FROM runs WHERE agent_id = 'san-triage' AND prompt LIKE ?", [f"%{word}%"]
    ).fetchone()[0]
    assert scanned > 100
    monkeypatch.setattr(search, "COUNT_WINDOW_DOCS", 200)  # 1,000 runs: several windows
    monkeypatch.setattr(runs, "COUNT_BUDGET_S", 60.0)  # time enough on any machine
    counted, windows = _counted_with_windows(sqlite_store, filters)
    assert counted.exact and counted == scanned
    assert len(windows) >= 4, windows
    monkeypatch.setattr(runs, "COUNT_BUDGET_S", 0.0)  # out of time after the first window
    partial = runs.count_runs_at_most(sqlite_store, **filters)
    assert not partial.exact and 0 < partial < scanned
    monkeypatch.setattr(runs, "COUNT_BUDGET_S", 60.0)
    assert runs.count_runs_at_most(sqlite_store, cap=50, **filters) == 50
    assert not runs.count_runs_at_most(sqlite_store, cap=50, **filters).exact


def test_two_filters_are_counted_window_by_window_within_the_budget(
    sqlite_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two filters the tallies cannot count together (an agent's runs with findings) are counted over windows
    of runs, newest first: exact when the windows end in time, else a lower bound (at a million runs, up to
    10,000 of one tenant's runs with a kind of finding took 383 ms to count in one statement)."""
    filters = {"agent": "san-triage", "has_findings": True}
    scanned = sqlite_store.execute(
        "SELECT count(*) FROM runs WHERE agent_id = 'san-triage' AND findings > 0"
    ).fetchone()[0]
    assert scanned > 50
    monkeypatch.setattr(runs, "COUNT_WINDOW_RUNS", 100)
    monkeypatch.setattr(runs, "COUNT_WINDOW_RUNS_MAX", 100)
    monkeypatch.setattr(runs, "COUNT_BUDGET_S", 60.0)
    counted, windows = _counted_with_windows(sqlite_store, filters)
    assert counted.exact and counted == scanned and len(windows) == RUNS // 100
    monkeypatch.setattr(runs, "COUNT_BUDGET_S", 0.0)
    partial = runs.count_runs_at_most(sqlite_store, **filters)
    assert not partial.exact and 0 < partial < scanned
