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
from store.search import SearchRead, Walk, fts_query, search_read
from tests.conftest import BACKENDS, SYNTHETIC_RUNS, fresh_postgres_database, keyset_run_keys

RUNS = SYNTHETIC_RUNS


@pytest.fixture(params=BACKENDS)
def generated(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(f"synthetic_{request.param}_store")


@pytest.fixture
def scaled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Thresholds for 1,000 runs: rare below 100 documents (100 runs on PostgreSQL), a window of 200 matches."""
    monkeypatch.setattr(search, "RARE_DOCS", 100)
    monkeypatch.setattr(search, "PG_RARE_RUNS", 100)
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
def test_a_newest_page_tests_a_window_of_the_newest_runs_sized_to_the_word(
    synthetic_sqlite_store: Any,
) -> None:
    """200 matches: the newest 200 runs of the middling word (one document a run), the newest 100 of the
    common one (two); a later page's window ends at the run it continues after; oldest first, at the start."""
    generated = synthetic_sqlite_store
    rowids = _rowids(generated)
    lo, hi = rowids[0], rowids[-1]
    assert _read(generated, "failing") == SearchRead("window", hi - 199, hi)
    assert _read(generated, "synthetic") == SearchRead("window", hi - 99, hi)
    key, rowid = generated.execute("SELECT key, rowid FROM runs ORDER BY rowid LIMIT 1 OFFSET 500").fetchone()
    assert _read(generated, "synthetic", after_key=key) == SearchRead("window", rowid - 99, rowid)
    assert _read(generated, "failing", "oldest") == SearchRead("window", lo, lo + 199)


@pytest.mark.usefixtures("scaled")
def test_a_window_of_a_quarter_of_the_runs_or_more_gathers_every_match(
    synthetic_sqlite_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    generated = synthetic_sqlite_store
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
def test_a_most_findings_page_of_a_word_in_every_run_walks_the_runs(synthetic_sqlite_store: Any) -> None:
    generated = synthetic_sqlite_store
    assert _read(generated, "failing", "most-findings").name == "gather"
    assert _read(generated, "synthetic", "most-findings").name == "gather"
    assert _read(generated, "997", "most-findings").name == "drive"


@pytest.mark.usefixtures("scaled")
def test_postgresql_probes_runs_for_any_word_its_statistics_do_not_call_rare(
    synthetic_postgresql_store: Any,
) -> None:
    for word in ("failing", "synthetic"):
        assert _read(synthetic_postgresql_store, word).name == "probe"
        assert _read(synthetic_postgresql_store, word, "oldest").name == "probe"
        assert (
            _read(synthetic_postgresql_store, word, "most-findings").name == "drive"
        )  # it sorts whatever it reads


@pytest.mark.usefixtures("scaled")
def test_the_sqlite_sample_tells_a_common_word_from_a_middling_one(
    synthetic_sqlite_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fewer runs sampled than the store holds (8 windows of 20): the documents per run still come out."""
    monkeypatch.setattr(search, "SAMPLE_RUNS", 160)
    lo, hi = _rowids(synthetic_sqlite_store)[0], _rowids(synthetic_sqlite_store)[-1]
    assert search._sampled_docs_per_run(synthetic_sqlite_store, fts_query("synthetic"), lo, hi) == 2.0
    assert search._sampled_docs_per_run(synthetic_sqlite_store, fts_query("failing"), lo, hi) == 1.0
    assert (
        _read(synthetic_sqlite_store, "synthetic").last - _read(synthetic_sqlite_store, "synthetic").first + 1
        == 100
    )


@pytest.mark.usefixtures("scaled")
def test_postgresql_without_statistics_counts_a_little(
    synthetic_postgresql_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never analysed: no estimate, so a count up to the rare bound tells a rare word from the others."""
    monkeypatch.setattr(search, "postgres_runs_estimate", lambda db, query, facets=None: None)
    assert _read(synthetic_postgresql_store, "997").name == "drive"
    assert _read(synthetic_postgresql_store, "synthetic").name == "probe"


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
    synthetic_sqlite_store: Any, synthetic_postgresql_store: Any, word: str, runs_matching: int, cap: int
) -> None:
    expected = (min(runs_matching, cap), runs_matching <= cap)
    for db in (synthetic_sqlite_store, synthetic_postgresql_store):
        got = runs.count_runs_at_most(db, cap=cap, search=word)
        assert (int(got), got.exact) == expected


@pytest.mark.usefixtures("scaled")
@pytest.mark.parametrize(
    ("text", "matching"),
    [
        ("failing incidents", 0),  # every run holds both words, in two documents: FTS5 wants them in one
        ("997-synthetic", 0),  # a phrase: both tokens in run 997, never one after the other
        ("prompt-997", 1),
        ("997 incidents", 1),
        ("997 failing", 1),
    ],
)
def test_words_are_found_within_one_document_on_both_backends(
    synthetic_sqlite_store: Any, synthetic_postgresql_store: Any, text: str, matching: int
) -> None:
    """PostgreSQL reads a run's tokens of all its documents together (`search_runs`): a run holding every
    token of a query is only a candidate unless the query is one token, so both backends find the same."""
    for db in (synthetic_sqlite_store, synthetic_postgresql_store):
        for sort in ("newest", "oldest", "most-findings"):
            assert len(runs.runs_page(db, search=text, sort=sort, limit=40)) == matching, (db, sort)
        got = runs.count_runs_at_most(db, cap=10, search=text)
        assert (int(got), got.exact) == (matching, True)


def _explain(db: Any, sql: str, params: list[Any]) -> dict[str, Any]:
    from store.db.postgres import translate

    text, _ = translate(sql)
    assert text is not None
    plan = db._conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + text, params).fetchone()[0]
    return dict(plan[0]["Plan"])


def _nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


def _relations(db: Any, sql: str, params: list[Any]) -> set[str]:
    """The tables (and set-returning functions) a statement's plan reads."""
    plan = _nodes(_explain(db, sql, params))
    return {
        n.get("Relation Name") or n["Function Name"]
        for n in plan
        if "Relation Name" in n or "Function Name" in n
    }


def test_postgresql_counts_a_words_runs_without_reading_its_documents(
    synthetic_postgresql_store: Any, postgresql_statements: list[tuple[str, list[Any]]]
) -> None:
    """The capped count of a one-token query reads the runs' own rows of tokens: no document row is read
    (counting runs from their matching documents visited every document's row: 0.3-0.9 s for a middling word
    at a million runs). Two words or a phrase are matched document by document, by the documents' GIN index
    alone (`search_doc_runs`, schema m025: testing each run holding all the tokens against its documents took
    seconds for common words)."""
    statements = postgresql_statements
    for text, reads in (("failing", {"search_runs"}), ("failing incidents", {"search_doc_runs"})):
        statements.clear()
        assert runs.count_runs_at_most(synthetic_postgresql_store, cap=10, search=text).exact is (
            text != "failing"
        )
        counts = [(sql, params) for sql, params in statements if "LIMIT" in sql or "search_doc_runs" in sql]
        assert [_relations(synthetic_postgresql_store, sql, params) for sql, params in counts] == [reads], (
            text
        )


@pytest.mark.parametrize("cap", [10, 400, RUNS - 1, RUNS])
def test_two_words_each_in_a_run_of_their_own_or_bunched_are_counted_alike_on_both_backends(
    synthetic_sqlite_store: Any,
    synthetic_postgresql_store: Any,
    postgresql_statements: list[tuple[str, list[Any]]],
    cap: int,
) -> None:
    """Two words in one document of every run ("synthetic failing") or in both documents of every run
    ("synthetic service"): the capped count is the same on both backends, and on PostgreSQL the first pair is
    counted from no more matching documents than runs the count needs (twice as many cost 72 ms against
    44 for two common words at a million runs)."""
    for text in ("synthetic failing", "synthetic service"):
        expected = (min(RUNS, cap), cap >= RUNS)
        for db in (synthetic_sqlite_store, synthetic_postgresql_store):
            postgresql_statements.clear()
            got = runs.count_runs_at_most(db, cap=cap, search=text)
            assert (int(got), got.exact) == expected, (text, db)
        if text == "synthetic failing":
            docs_read = [params[-1] for sql, params in postgresql_statements if "search_doc_runs" in sql]
            assert docs_read and all(int(str(n)) <= cap + 2 for n in docs_read), docs_read


@pytest.mark.parametrize("word", ["997", "failing", "synthetic"])
def test_a_postgresql_page_of_searched_runs_reads_only_its_own_runs_rows(
    synthetic_postgresql_store: Any, runs_statements: list[tuple[str, list[Any]]], word: str
) -> None:
    """Searching alone, in any order: the page's runs are chosen from `search_runs` (which holds their sort
    keys), so 40 runs' rows are read for a page of 40, not every matching run's, nor every run walked past
    (1,000 here)."""
    statements = runs_statements
    for sort in ("newest", "oldest", "most-findings"):
        statements.clear()
        page = runs.runs_page(synthetic_postgresql_store, search=word, sort=sort, limit=40)
        assert len(page) == (1 if word == "997" else 40)
        rows_read = sum(
            int(n["Actual Rows"]) * int(n.get("Actual Loops", 1))
            for sql, params in statements
            for n in _nodes(_explain(synthetic_postgresql_store, sql, params))
            if n.get("Relation Name") == "runs"
        )
        assert rows_read <= 40, sort


def _keyset_pages(db: Any, text: str, sort: str) -> list[str]:
    return keyset_run_keys(db, search=text, sort=sort, limit=40, pages=3)


@pytest.mark.parametrize("rare_bound", [search.PG_RARE_RUNS, 100], ids=["every-word-rare", "scaled"])
@pytest.mark.parametrize("sort", ["newest", "oldest", "most-findings"])
def test_keyset_pages_of_a_search_are_the_same_on_both_backends(
    synthetic_sqlite_store: Any,
    synthetic_postgresql_store: Any,
    monkeypatch: pytest.MonkeyPatch,
    sort: str,
    rare_bound: int,
) -> None:
    """Scaled to 1,000 runs, a word in every run is not rare on PostgreSQL, and its page most findings first
    is read band by band (`BandedRuns`)."""
    from store.sorted_runs import BandedRuns

    monkeypatch.setattr(search, "PG_RARE_RUNS", rare_bound)
    banded = isinstance(search.postgres_sorted_runs(synthetic_postgresql_store, "failing"), BandedRuns)
    assert banded is (rare_bound == 100)
    for text in ("997", "failing", "synthetic", "failing incidents", "prompt-997"):
        expected = _keyset_pages(synthetic_sqlite_store, text, sort)
        assert _keyset_pages(synthetic_postgresql_store, text, sort) == expected, text
        assert len(expected) == {"997": 1, "failing incidents": 0, "prompt-997": 1}.get(text, 120)


def test_postgresql_keeps_each_runs_tokens_as_its_documents_change() -> None:
    """`search_runs` follows `search_text` (documents added, removed, changed, moved, emptied) and `runs`
    (a run's start time and findings, which order a page)."""
    with fresh_postgres_database() as url:
        db = open_database(url)
        try:
            insert_synthetic_runs(db, 10)
            insert_synthetic_findings(db)
            rowids = _rowids(db)

            def count(word: str) -> int:
                return int(runs.count_runs_at_most(db, search=word))

            def doc(run: int, number: int) -> int:
                return (rowids[run] << search.SEARCH_DOC_BITS) + number

            assert (count("failing"), count("incidents")) == (10, 10)
            db.execute("DELETE FROM search_text WHERE id = ?", [doc(3, 0)])  # run 3's prompt
            assert (count("failing"), count("incidents")) == (9, 10)
            db.execute("UPDATE search_text SET text = 'a zebra' WHERE id = ?", [doc(5, 1)])  # run 5's answer
            assert (count("zebra"), count("incidents"), count("failing")) == (1, 9, 9)
            db.execute("UPDATE search_text SET id = ? WHERE id = ?", [doc(6, 7), doc(5, 1)])  # to run 6
            assert [r["run_key"] for r in runs.runs_page(db, search="zebra")] == [
                db.execute("SELECT key FROM runs WHERE rowid = ?", [rowids[6]]).fetchone()[0]
            ]
            newest = [r["run_key"] for r in runs.runs_page(db, search="incidents", limit=3)]
            db.execute("UPDATE runs SET started_ms = 1 WHERE key = ?", [newest[0]])  # now the oldest
            db.execute("UPDATE runs SET started_ms = NULL WHERE key = ?", [newest[1]])  # sorts as the lowest
            oldest = [r["run_key"] for r in runs.runs_page(db, search="incidents", sort="oldest", limit=2)]
            assert oldest == [newest[1], newest[0]]
            newest_last = [r["run_key"] for r in runs.runs_page(db, search="incidents", limit=20)][-2:]
            assert newest_last == oldest[::-1]
            db.execute("UPDATE runs SET findings = 99 WHERE key = ?", [newest[2]])  # now the most findings
            most = runs.runs_page(db, search="incidents", sort="most-findings", limit=1)
            assert [r["run_key"] for r in most] == [newest[2]]
            db.execute("TRUNCATE search_text")
            assert (count("failing"), count("zebra")) == (0, 0)
        finally:
            db.close()


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
    synthetic_sqlite_store: Any, monkeypatch: pytest.MonkeyPatch, word: str
) -> None:
    """A common word within an agent is counted over windows of runs holding about COUNT_WINDOW_DOCS of its
    matches each, never reading every match at once: exact when the windows end in time, else what they
    counted as a lower bound ("n+"), never more than the runs there are."""
    filters = {"agent": "san-triage", "search": word}
    scanned = synthetic_sqlite_store.execute(
        "SELECT count(*) FROM runs WHERE agent_id = 'san-triage' AND prompt LIKE ?", [f"%{word}%"]
    ).fetchone()[0]
    assert scanned > 100
    monkeypatch.setattr(search, "COUNT_WINDOW_DOCS", 200)  # 1,000 runs: several windows
    counted, windows = _counted_with_windows(synthetic_sqlite_store, filters)
    assert counted.exact and counted == scanned
    assert len(windows) >= 4, windows
    monkeypatch.setattr(runs, "COUNT_BUDGET_S", 0.0)  # out of time after the first window
    partial = runs.count_runs_at_most(synthetic_sqlite_store, **filters)
    assert not partial.exact and 0 < partial < scanned
    monkeypatch.setattr(runs, "COUNT_BUDGET_S", 60.0)
    assert runs.count_runs_at_most(synthetic_sqlite_store, cap=50, **filters) == 50
    assert not runs.count_runs_at_most(synthetic_sqlite_store, cap=50, **filters).exact


def test_two_filters_are_counted_window_by_window_within_the_budget(
    synthetic_sqlite_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two filters the tallies cannot count together (an agent's runs with findings) are counted over windows
    of runs, newest first: exact when the windows end in time, else a lower bound (at a million runs, up to
    10,000 of one tenant's runs with a kind of finding took 383 ms to count in one statement)."""
    filters = {"agent": "san-triage", "has_findings": True}
    scanned = synthetic_sqlite_store.execute(
        "SELECT count(*) FROM runs WHERE agent_id = 'san-triage' AND findings > 0"
    ).fetchone()[0]
    assert scanned > 50
    monkeypatch.setattr(runs, "COUNT_WINDOW_RUNS", 100)
    monkeypatch.setattr(runs, "COUNT_WINDOW_RUNS_MAX", 100)
    counted, windows = _counted_with_windows(synthetic_sqlite_store, filters)
    assert counted.exact and counted == scanned and len(windows) == RUNS // 100
    monkeypatch.setattr(runs, "COUNT_BUDGET_S", 0.0)
    partial = runs.count_runs_at_most(synthetic_sqlite_store, **filters)
    assert not partial.exact and 0 < partial < scanned


#: Queries of more tokens: two words in one document of every run ("failing service"), in no one document
#: though every run holds both ("failing incidents"), phrases in every run, in about ten ("for service 5")
#: or none ("997-synthetic"), and two words of one run.
PHRASES = (
    "failing service",
    "failing incidents",
    "synthetic prompt",
    "is anything failing",
    "for service 5",
    "service 5 incidents",
    "997-synthetic",
    "prompt 997",
)
#: PostgreSQL's reads of them: a walk of `search_runs` (here every run in one block; in blocks of 7, so
#: several blocks and where each ends are used); the walk given up for the runs of the few matching
#: documents, sorted; given up with more documents matching than that, for every match read whole.
PHRASE_READS = {
    "walk": {},
    "walk in blocks": {"PG_FIRST_BLOCK": 7, "PG_COUNT_DOCS_PER_RUN": 0},
    "few documents": {"PG_FIRST_BLOCK": 7, "PG_MAX_WALK": 10},
    "every match": {"PG_FEW_DOCS": 3, "PG_FIRST_BLOCK": 7, "PG_MAX_WALK": 40, "PG_COUNT_DOCS_PER_RUN": 0},
}


@pytest.mark.parametrize("read", list(PHRASE_READS))
@pytest.mark.parametrize("sort", ["newest", "oldest", "most-findings"])
def test_two_words_and_phrases_page_and_count_the_same_on_both_backends(
    synthetic_sqlite_store: Any,
    synthetic_postgresql_store: Any,
    monkeypatch: pytest.MonkeyPatch,
    read: str,
    sort: str,
) -> None:
    """Whichever read PostgreSQL takes for a query of more tokens, alone or within other filters (the
    equality filters, `f` and withheld, which `search_runs` holds, and `w`, which it does not), its pages
    and capped counts are SQLite's (FTS5: every token in one document, a phrase's in order)."""
    for name, value in PHRASE_READS[read].items():
        monkeypatch.setattr(search, name, value)
    for filters in (
        {},
        {"agent": "san-triage"},
        {"has_findings": True},
        {"withheld": True},
        {"undelivered": True},
    ):
        for text in PHRASES:
            expected = keyset_run_keys(
                synthetic_sqlite_store, search=text, sort=sort, limit=25, pages=3, **filters
            )
            got = keyset_run_keys(
                synthetic_postgresql_store, search=text, sort=sort, limit=25, pages=3, **filters
            )
            assert got == expected, (text, filters)
            for cap in (10, 10_000):
                want = runs.count_runs_at_most(synthetic_sqlite_store, cap=cap, search=text, **filters)
                counted = runs.count_runs_at_most(synthetic_postgresql_store, cap=cap, search=text, **filters)
                assert (int(counted), counted.exact) == (int(want), want.exact), (text, filters, cap)


def _rows_read(db: Any, statements: list[tuple[str, list[Any]]]) -> dict[str, int]:
    """The rows each table's scans visited over `statements` (EXPLAIN ANALYZE of each again): the rows
    they returned and those their filters removed."""
    read: dict[str, int] = {}
    for sql, params in statements:
        if not sql.lstrip().upper().startswith("SELECT"):
            continue
        for node in _nodes(_explain(db, sql, params)):
            if node.get("Function Name") == "search_doc_runs":  # the documents' GIN index (schema m025)
                read["search_doc_runs"] = read.get("search_doc_runs", 0) + int(node["Actual Rows"])
            if "Relation Name" in node:
                visited = sum(
                    int(node.get(n, 0))
                    for n in ("Actual Rows", "Rows Removed by Filter", "Rows Removed by Index Recheck")
                )
                rows = visited * int(node.get("Actual Loops", 1))
                read[node["Relation Name"]] = read.get(node["Relation Name"], 0) + rows
    return read


@pytest.mark.usefixtures("scaled")
@pytest.mark.parametrize("sort", ["newest", "oldest"])
def test_a_postgresql_page_of_two_words_few_documents_share_reads_those_documents(
    synthetic_postgresql_store: Any,
    postgresql_statements: list[tuple[str, list[Any]]],
    monkeypatch: pytest.MonkeyPatch,
    sort: str,
) -> None:
    """Each of two words is in every run, both in no one document ("failing incidents"), or in eleven
    ("service 5 incidents"): by its statistics neither word is rare, so the page walked runs seeking each
    in the index (1,000 runs' rows read, and 5 s a page at a million runs for two words 1,400 runs share).
    It walks a first block of runs (50 here), and, the matches met there saying the walk would be long,
    reads the few documents holding both (the GIN index intersects the words' entries) and their runs."""
    monkeypatch.setattr(search, "PG_FIRST_BLOCK", 50)
    monkeypatch.setattr(search, "PG_MAX_WALK", 200)
    db = synthetic_postgresql_store
    for text, matching in (("failing incidents", 0), ("service 5 incidents", 11)):
        postgresql_statements.clear()
        page = runs.runs_page(db, search=text, sort=sort, limit=40)
        assert len(page) == matching
        read = _rows_read(db, list(postgresql_statements))
        assert read.get("runs", 0) <= 40 and read.get("search_runs", 0) <= 50 + 2 * matching, (text, read)
        assert "search_doc_runs" in read, read


def test_a_postgresql_page_most_findings_first_of_a_word_among_the_fewest_findings_reads_its_runs() -> None:
    """A word neither rare nor common held only by older runs with no findings, below every run with some
    in the most-findings order: the planner, taking the word to spread evenly, walked every run with
    findings and half of those without before its first match (at a million runs, a word of 15,600 runs:
    29,000 runs walked, 95 ms). The page reads its runs by bands of the findings count, highest first, each
    band's matching runs sorted, never walking the order's index; every page in the order a scan gives."""
    from store.db.postgres import PgDatabase
    from store.sorted_runs import findings_at_least
    from tests.conftest import postgresql_plan_nodes, record_statements

    with fresh_postgres_database() as url, pytest.MonkeyPatch.context() as monkeypatch:
        db = open_database(url)
        assert isinstance(db, PgDatabase)
        try:
            insert_synthetic_runs(db, RUNS)
            insert_synthetic_findings(db)
            quiet = [
                rowid
                for (rowid,) in db.execute(
                    "SELECT rowid FROM runs WHERE findings = 0 ORDER BY started_ms, key"
                )
            ]
            quiet = quiet[: len(quiet) // 2]  # the older half of the runs without findings
            answers = [(rowid << search.SEARCH_DOC_BITS) + 1 for rowid in quiet]
            db.execute("UPDATE search_text SET text = text || ' quietword' WHERE id = ANY(?)", [answers])
            db.execute("ANALYZE")
            monkeypatch.setattr(search, "PG_RARE_RUNS", 100)  # scaled to 1,000 runs
            assert len(quiet) > 150 and not search._postgres_rare(db, fts_query("quietword"))
            bands = findings_at_least(db)  # the whole table sampled: the statistics are exact
            assert bands is not None and bands[0] == RUNS
            assert [(n, round(runs_at_least)) for n, runs_at_least in bands[1]] == [
                (n, db.execute("SELECT count(*) FROM runs WHERE findings >= ?", [n]).fetchone()[0])
                for n in sorted({f for (f,) in db.execute("SELECT findings FROM runs")}, reverse=True)
            ]
            db.execute("SET enable_seqscan = off")  # as on a store of a size worth reading by its indexes
            statements = record_statements(db, monkeypatch)
            page = runs.runs_page(db, search="quietword", sort="most-findings", limit=40)
            walks = [
                node
                for node in postgresql_plan_nodes(db, list(statements))
                if node.get("Relation Name") == "search_runs" and "tokens" in node.get("Filter", "")
                and node["Node Type"] in ("Index Scan", "Index Only Scan")
            ]  # fmt: skip
            scanned = [
                key
                for (key,) in db.execute(
                    "SELECT key FROM runs WHERE rowid = ANY(?) "
                    "ORDER BY findings DESC, coalesce(started_ms, -1) DESC, key DESC",
                    [quiet],
                )
            ]
            assert [r["run_key"] for r in page] == scanned[:40]
            assert not walks, walks  # the order's index walked, each run's tokens tested
            every = keyset_run_keys(db, search="quietword", sort="most-findings", limit=25, pages=20)
            assert every == scanned
        finally:
            db.close()
