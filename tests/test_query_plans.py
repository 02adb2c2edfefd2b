"""Every screen's query reads a table at most once: no scan of findings or runs per row of another.

The statements are the ones the store really runs (caught with SQLite's trace callback, parameters bound),
asked for their plan with EXPLAIN QUERY PLAN on a generated store of 3,000 runs, both before any ANALYZE
(the index shapes alone must make the plan right) and after the statistics `open_database` keeps current.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlite_utils import Database

from bench.synthetic import insert_synthetic_findings, insert_synthetic_runs
from store import findings, labels, packs, runs, search
from store.db.connection import open_database
from store.db.statistics import statistics_stale
from store.vocab import DISAGREEMENT
from tests.conftest import sqlite_selects

RUNS = 3_000

#: A SEARCH inside a correlated subquery must be keyed by the row it is correlated with.
_CORRELATED_KEY = re.compile(r"\b(run_key|key|target_id|id|rowid)[=><]")
#: An FTS5 query constrained to one rowid or a rowid range ("=" or "><" in its idxStr): a seek, not a whole
#: match per outer row.
_FTS_BY_ROWID = re.compile(r"VIRTUAL TABLE INDEX \d+:\S*(=|><)")
#: Scans that are not a table read per row: the FTS match, json_each of one row, a temporary b-tree.
_HARMLESS_SCAN = re.compile(r"^SCAN (\w+ VIRTUAL TABLE|CONSTANT ROW|\(subquery)|^SCAN json_each")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("plans") / "review.db"
    db = open_database(path)
    insert_synthetic_runs(db, RUNS)
    insert_synthetic_findings(db)
    first = [r[0] for r in db.execute("SELECT id FROM findings ORDER BY id LIMIT 300")]
    for n, fid in enumerate(first):
        kind = db.execute("SELECT kind FROM findings WHERE id = ?", [fid]).fetchone()[0]
        labels.label_finding(db, fid, "unsure" if kind == "withheld-answer" else "tp", f"r{n % 3}")
    db.execute("DELETE FROM sqlite_stat1") if db.table("sqlite_stat1").exists() else None
    db.close()
    return path


@pytest.fixture(params=["no statistics", "statistics kept by open_database"])
def store(request: pytest.FixtureRequest, built: Path, tmp_path: Path) -> Iterator[Database]:
    path = tmp_path / "review.db"
    shutil.copy(built, path)
    if request.param == "no statistics":
        db = open_database(path, migrate=False)
        assert (
            not db.table("sqlite_stat1").exists()
            or db.execute("SELECT count(*) FROM sqlite_stat1").fetchone()[0] == 0
        )
    else:
        db = open_database(path)
        assert db.execute("SELECT count(*) FROM sqlite_stat1 WHERE tbl = 'findings'").fetchone()[0] > 0
    yield db
    db.close()


_statements = sqlite_selects


def _problems(db: Database, sql: str) -> list[str]:
    """What in the plan of `sql` reads a table once per row of another (empty: nothing)."""
    rows = db.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
    parent = {r[0]: r[1] for r in rows}
    detail = {r[0]: r[3] for r in rows}

    def correlated(node: int) -> bool:
        while node in parent:
            node = parent[node]
            if detail.get(node, "").startswith("CORRELATED"):
                return True
        return False

    problems = []
    scans_by_parent: dict[int, list[str]] = {}
    for node, text in detail.items():
        table_scan = text.startswith("SCAN ") and not _HARMLESS_SCAN.match(text)
        if table_scan:
            scans_by_parent.setdefault(parent[node], []).append(text)
            if correlated(node):
                problems.append(f"scan per outer row: {text}")
        if text.startswith("SEARCH ") and correlated(node) and not _CORRELATED_KEY.search(text):
            problems.append(f"search not keyed by the outer row: {text}")
        if "VIRTUAL TABLE INDEX" in text and correlated(node) and not _FTS_BY_ROWID.search(text):
            problems.append(f"full-text query run whole per outer row: {text}")
    for texts in scans_by_parent.values():
        if len(texts) > 1:
            problems.append(f"nested loop over two scans: {texts}")
    return problems


def _screen_queries(db: Database) -> dict[str, Callable[[], Any]]:
    kind = "coverage-gap"
    return {
        "runs page by kind": lambda: runs.runs_page(db, kind=kind, limit=60),
        "runs count by kind": lambda: runs.count_runs(db, kind=kind),
        "runs page by outcome": lambda: runs.runs_page(db, outcome="refused", limit=60),
        "runs count by outcome": lambda: runs.count_runs(db, outcome="refused"),
        "runs page by agent": lambda: runs.runs_page(db, agent="san-triage", limit=60),
        "runs count by agent": lambda: runs.count_runs(db, agent="san-triage"),
        "runs page by search": lambda: runs.runs_page(db, search="incidents", limit=60),
        "runs count by search": lambda: runs.count_runs(db, search="incidents"),
        "runs page by kind and outcome": lambda: runs.runs_page(db, kind=kind, outcome="refused", limit=60),
        "runs count by kind and outcome": lambda: runs.count_runs(db, kind=kind, outcome="refused"),
        "unlabelled per run on a page": lambda: labels.unlabelled_counts(
            db, [r["run_key"] for r in runs.runs_page(db, limit=60)]
        ),
        "runs facets": lambda: runs.run_facets(db),
        "queue facets": lambda: findings.queue_facets(db),
        "queue first page, any": lambda: findings.queue_page(db, limit=60),
        "queue first page, unlabelled": lambda: findings.queue_page(db, state="unlabelled", limit=60),
        "queue count, any": lambda: findings.queue_count(db),
        "queue count, unlabelled": lambda: findings.queue_count(db, state="unlabelled"),
        "queue first page of a kind": lambda: findings.queue_page(db, kind=kind, limit=60),
        "next unlabelled": lambda: findings.next_unlabelled(db),
        **{
            f"queue first page, sorted {sort}": (
                lambda sort=sort: findings.queue_page(db, sort=sort, limit=60)
            )
            for sort in findings.QUEUE_SORTS
        },
        **{
            f"queue second page, sorted {sort}": (
                lambda sort=sort: findings.queue_page(
                    db, sort=sort, limit=60, after=findings.queue_page(db, sort=sort, limit=60)[-1]["cursor"]
                )
            )
            for sort in findings.QUEUE_SORTS
        },
        "queue opens on the first unlabelled": lambda: findings.first_unlabelled(db, reviewer="r9"),
        "next unlabelled of the same run": lambda: findings.next_unlabelled(
            db, after=findings.queue_page(db, limit=1)[0]["id"], reviewer="r0", same_run=True
        ),
        "replay page": lambda: packs.iter_answers(db),
    }


@pytest.mark.parametrize("name", list(_screen_queries(Database(memory=True))))
def test_no_screen_query_reads_a_table_per_row_of_another(store: Database, name: str) -> None:
    call = _screen_queries(store)[name]
    statements = _statements(store, call)
    assert statements, f"{name}: no statement was caught"
    found = {sql: problems for sql in statements if (problems := _problems(store, sql))}
    assert not found, f"{name}: {found}"


def test_the_plan_check_catches_a_finding_scan_per_run(store: Database) -> None:
    """The check itself: the old shape of the kind filter (probing by kind alone) is reported."""
    sql = (
        "SELECT r.key FROM runs r INDEXED BY runs_order WHERE EXISTS (SELECT 1 FROM findings f "
        "INDEXED BY findings_kind WHERE f.run_key = r.key AND f.kind = 'coverage-gap') LIMIT 60"
    )
    assert _problems(store, sql)


def test_open_and_ingest_keep_the_statistics_current(built: Path, tmp_path: Path) -> None:
    path = tmp_path / "review.db"
    shutil.copy(built, path)
    db = open_database(path, migrate=False)
    assert statistics_stale(db)
    db.close()
    db = open_database(path)
    assert not statistics_stale(db)
    insert_synthetic_runs(db, RUNS * 2, seed=8, start_ms=1_800_000_000_000)
    assert statistics_stale(db)  # three times the runs the statistics describe
    db.close()
    db = open_database(path)
    assert not statistics_stale(db)
    described = db.execute(  # the table's own row (its count), as statistics_stale reads it
        "SELECT stat FROM sqlite_stat1 WHERE tbl = 'runs' AND idx IS NULL"
    ).fetchone()[0]
    assert int(described.split()[0]) >= RUNS * 2
    db.close()


@pytest.mark.parametrize(
    ("read", "marker"),
    [
        (search.SearchRead("drive"), "r.rowid IN (SELECT"),
        (search.SearchRead("gather"), "+r.rowid IN (SELECT"),
        (search.SearchRead("window", RUNS, RUNS - 1), "s.rowid >= (r.rowid"),
        (search.SearchRead("window", RUNS - 99, RUNS), "CASE WHEN r.rowid BETWEEN"),
    ],
    ids=[
        "rare word: read its runs and sort",
        "middling: walk and test a match set",
        "empty window: seek per run",
        "window: test the newest runs' matches, seek the rest",
    ],
)
def test_each_way_of_reading_a_search_page_gives_the_same_pages(
    store: Database, monkeypatch: pytest.MonkeyPatch, read: search.SearchRead, marker: str
) -> None:
    monkeypatch.setattr(search, "search_read", lambda db, query, walk: search.DRIVE)
    first = runs.runs_page(store, search="incidents", limit=60)
    second = runs.runs_page(store, search="incidents", after=first[-1]["cursor"], limit=60)
    monkeypatch.setattr(search, "search_read", lambda db, query, walk: read)  # "incidents": every answer
    statements = _statements(store, lambda: runs.runs_page(store, search="incidents", limit=60))
    assert any(marker in s for s in statements)
    assert not any(_problems(store, s) for s in statements)
    assert runs.runs_page(store, search="incidents", limit=60) == first and len(first) == 60
    assert runs.runs_page(store, search="incidents", after=first[-1]["cursor"], limit=60) == second


def _vm_steps(db: Database, call: Callable[[], Any]) -> int:
    """SQLite virtual-machine steps `call` takes (counted in hundreds): a measure of the rows it visits that
    no machine's load changes."""
    steps = [0]

    def tick() -> int:
        steps[0] += 1
        return 0

    db.conn.set_progress_handler(tick, 100)
    try:
        call()
    finally:
        db.conn.set_progress_handler(None, 0)
    return steps[0] * 100


@pytest.mark.parametrize("sort", ["run", "kind", "tool"])
def test_the_queue_opens_in_any_order_without_counting_a_whole_group(store: Database, sort: str) -> None:
    """Where the queue opens (the first finding a reviewer has not labelled, and its row number) is found by
    narrow index ranges: before, in kind order, the row number counted every finding of the first kind (1.1 s
    for the first coverage gap of 333,280 at a million runs; here about 13 steps a finding of that kind)."""
    whole_kind = store.execute(
        "SELECT count(*) FROM findings WHERE kind = (SELECT min(kind) FROM findings)"
    ).fetchone()[0]
    assert whole_kind > 500, "the store must have a large kind for this test to mean anything"
    opened = findings.first_unlabelled(store, sort=sort, reviewer="a newcomer")
    assert opened is not None and opened[1] == 0  # a newcomer's queue opens on its first row
    steps = _vm_steps(store, lambda: findings.first_unlabelled(store, sort=sort, reviewer="a newcomer"))
    assert steps < 2 * whole_kind, (
        f"{sort}: {steps} steps to open the queue ({whole_kind} findings of the first kind)"
    )


#: Queue filters that leave no finding, or few, in a large store: each alone or the pair is rare.
_RARE_QUEUE_FILTERS: dict[str, dict[str, Any]] = {
    "a newcomer's own labels": {"state": "mine", "reviewer": "a newcomer"},
    "labels disagreeing (none)": {"state": "disagreement"},
    "a kind and a pack version none of it has": {"kind": "coverage-gap", "pack_version": "en-negatives@3"},
}


@pytest.mark.parametrize("sort", list(findings.QUEUE_SORTS))
@pytest.mark.parametrize("name", list(_RARE_QUEUE_FILTERS))
def test_the_queue_under_a_rare_filter_reads_its_few_findings_not_the_store(
    store: Database, sort: str, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A queue whose filters leave few findings reads them by their own index: at a million runs a reviewer's
    own labels (none yet) newest first walked every finding (3.9 s), disagreements by kind 0.8 s, and a kind
    with a pack version none of it has 447 ms. Here its first page costs half of walking at most (the labels
    are read whole, 300 of them, once a part of the sort; the walk tests every finding of the store)."""
    filters = _RARE_QUEUE_FILTERS[name]

    def first_page() -> Any:
        return findings.queue_page(store, sort=sort, limit=100, **filters)

    read_whole = _vm_steps(store, first_page)
    with monkeypatch.context() as walking:
        walking.setattr(findings, "_driver", lambda *a, **k: None)
        walked = _vm_steps(store, first_page)
    assert read_whole <= max(walked // 2, 1_000), (
        f"{sort} / {name}: {read_whole} steps read whole, {walked} walking"
    )
    if name == "a newcomer's own labels":
        assert walked > 50_000, (
            f"{sort}: the walk took {walked} steps; the test store is too small to mean anything"
        )


@pytest.mark.parametrize("sort", list(findings.QUEUE_SORTS))
@pytest.mark.parametrize(
    "filters",
    [{"state": "labelled"}, {"code": "rare"}, {"code": "rare", "pack_version": "en@1"}],
    ids=["labelled", "a code", "a code with a pack version"],
)
def test_a_set_read_whole_is_sorted_from_the_keys_indexes_alone(
    store: Database, sort: str, filters: dict[str, Any]
) -> None:
    """A filter's findings read whole by id (a code's, the labelled ones) are sorted from the index that holds
    each finding's sort keys, and newest first their runs' starts from the index that holds a run's start
    (schema m024), never from the findings' and runs' rows: at a million runs a rare code's 13,790
    findings newest first took 113 ms from the rows, 16 ms from these; with a pack version, 47 ms against
    12 before the index held it, m028)."""
    if "code" in filters:  # a code 30 findings have (the store's own are common)
        store.execute(
            "UPDATE findings SET codes = json_insert(coalesce(codes, '[]'), '$[#]', 'rare') "
            "WHERE rowid IN (SELECT rowid FROM findings ORDER BY id LIMIT 30)"
        )
    if "pack_version" in filters:  # a common pack version, tested from the index too (m028)
        store.execute(
            "UPDATE findings SET pack_version = 'en@1' WHERE rowid IN (SELECT rowid FROM findings ORDER BY id "
            "LIMIT 20 OFFSET 10) OR rowid IN (SELECT rowid FROM findings ORDER BY id DESC LIMIT 600)"
        )
    details = [
        row[3]
        for sql in _statements(store, lambda: findings.queue_page(store, sort=sort, limit=100, **filters))
        if "INDEXED BY findings_keys" in sql
        for row in store.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
    ]
    assert details, f"{sort} / {filters}: no set was read whole"
    assert "SEARCH f USING COVERING INDEX findings_keys (id=?)" in details, details
    if sort == "newest":
        assert "SEARCH r USING COVERING INDEX runs_key_started (key=?)" in details, details


def test_the_most_findings_sort_reads_runs_in_index_order(store: Database) -> None:
    """The runs screen's "most findings" sort is a range of one index read backwards, never a sort of every
    run (1.8 s a page at a million runs before m016)."""
    statements = _statements(store, lambda: runs.runs_page(store, sort="most-findings", limit=60))
    plans = [row[3] for sql in statements for row in store.execute("EXPLAIN QUERY PLAN " + sql).fetchall()]
    assert any("runs_most_findings" in p for p in plans), plans
    assert not any("TEMP B-TREE" in p for p in plans), plans
    steps = _vm_steps(store, lambda: runs.runs_page(store, sort="most-findings", limit=60))
    assert steps < 50_000, f"{steps} steps for a page of 60 of {RUNS} runs"
    pages = runs.runs_page(store, sort="most-findings", limit=None)
    assert [r["findings"] for r in pages] == sorted((r["findings"] for r in pages), reverse=True)


#: Every runs filter the screen offers alone (one value each, as a reviewer picks it), for the sort x filter check.
_RUN_FILTERS: dict[str, dict[str, Any]] = {
    "has findings (f)": {"has_findings": True},
    "no answer (w)": {"undelivered": True},
    "withheld": {"withheld": True},
    "outcome delivered": {"outcome": "delivered"},
    "outcome refused": {"outcome": "refused"},
    "agent": {"agent": "san-triage"},
    "tenant": {"tenant": "globex"},
    "kind": {"kind": "coverage-gap"},
    "pack version": {"pack_version": "en-negatives@3"},
    "outcome and kind": {"outcome": "delivered", "kind": "coverage-gap"},
}


#: `sqlite_stat1` of runs and findings as `open_database` left them on the million-run bench store (sampled
#: with an analysis limit): with these SQLite read "has findings" newest first by sorting every such run.
_MILLION_RUN_STATISTICS = {
    ("findings", None): "933480",
    ("findings", "findings_kind"): "831600 2001 1",
    ("findings", "findings_kind_order"): "1243620 2001 2 2 1",
    ("findings", "findings_kind_run"): "1198080 2001 2 2",
    ("findings", "findings_pack_version"): "3476112 2001",
    ("findings", "findings_pack_kind"): "2320660 2001 2001",
    ("findings", "findings_queue_order"): "1096200 2 2 1",
    ("findings", "findings_run"): "576186 2 2",
    ("findings", "findings_tool_order"): "1336608 2001 2 2 1",
    ("findings", "sqlite_autoindex_findings_1"): "960498 1",
    ("runs", None): "1000000",
    ("runs", "runs_agent"): "3118080 2001 1 1",
    ("runs", "runs_most_findings"): "899232 2001 1 1",
    ("runs", "runs_newest_first"): "5183568 1 1",
    ("runs", "runs_order"): "5183568 1 1",
    ("runs", "runs_outcome"): "5216400 2001 1 1",
    ("runs", "runs_recording"): "1220142 96",
    ("runs", "runs_run_id"): "1268080 1",
    ("runs", "sqlite_autoindex_runs_1"): "608966 1",
}


@pytest.fixture(
    params=["no statistics", "statistics kept by open_database", "a million-run store's statistics"]
)
def any_statistics(request: pytest.FixtureRequest, built: Path, tmp_path: Path) -> Iterator[Database]:
    """The test store under each kind of planner statistics a reviewer's store may have: a plan must not
    depend on them being right."""
    path = tmp_path / "review.db"
    shutil.copy(built, path)
    db = open_database(path, migrate=request.param != "no statistics")
    if request.param == "a million-run store's statistics":
        db.execute("DELETE FROM sqlite_stat1 WHERE tbl IN ('runs', 'findings')")
        db.conn.executemany(
            "INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, ?, ?)",
            [(tbl, idx, stat) for (tbl, idx), stat in _MILLION_RUN_STATISTICS.items()],
        )
        db.conn.commit()
        db.execute("ANALYZE sqlite_schema")  # the connection reloads the statistics
    yield db
    db.close()


@pytest.mark.parametrize("sort", list(runs.SORTS))
@pytest.mark.parametrize("name", list(_RUN_FILTERS))
def test_every_sort_with_any_filter_reads_a_page_without_sorting_every_match(
    any_statistics: Database, sort: str, name: str
) -> None:
    store = any_statistics
    """A page in any order under any filter walks an index in that order (or reads a filter's few runs):
    at a million runs "has findings" newest first took 3 s and "delivered" by most findings 1.8 s, each
    sorting every matching run. Here a page of 60 reads a few rows per run shown, not the store."""
    filters = _RUN_FILTERS[name]
    page = runs.runs_page(store, sort=sort, limit=60, **filters)
    assert len(page) == 60, f"{name}: the test store must hold a full page of such runs"
    steps = _vm_steps(store, lambda: runs.runs_page(store, sort=sort, limit=60, **filters))
    matching = len(runs.runs_page(store, sort=sort, limit=None, **filters))
    assert steps < 15_000, (
        f"{sort} / {name}: {steps} steps for a page of 60 ({matching} of {RUNS} runs match)"
    )
    whole = runs.runs_page(store, sort=sort, limit=None, **filters)
    assert page == whole[:60]
    second = runs.runs_page(store, sort=sort, limit=60, after=page[-1]["cursor"], **filters)
    assert second == whole[60:120]


@pytest.mark.parametrize("sort", ["run", "kind", "tool"])
def test_the_queue_by_kind_walks_its_order_under_any_statistics(any_statistics: Database, sort: str) -> None:
    """A page of one kind's findings walks an index in the queue's order (in the orders an index holds with
    the kind) under any statistics: with a million
    -run store's, which do not know the kind-by-tool index (m020), SQLite read the commonest kind through that
    index and sorted all of it (0.7 s a page at a million runs)."""
    store = any_statistics
    kind = store.execute("SELECT kind FROM findings GROUP BY kind ORDER BY count(*) DESC LIMIT 1").fetchone()[
        0
    ]
    whole = findings.queue_page(store, sort=sort, limit=10_000, kind=kind)
    assert len(whole) > 1_000, "the test store must have a large kind"
    steps = _vm_steps(store, lambda: findings.queue_page(store, sort=sort, limit=60, kind=kind))
    assert steps < len(whole) * 5, f"{sort}: {steps} steps for a page of 60 of {len(whole)} findings"
    assert findings.queue_page(store, sort=sort, limit=60, kind=kind) == whole[:60]


@pytest.mark.parametrize("sort", list(findings.QUEUE_SORTS))
def test_the_queue_under_a_pack_version_walks_its_order_under_any_statistics(
    any_statistics: Database, sort: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page of a common pack version's findings walks the queue order's index under any statistics: a
    million-run store's put a pack version at about 2,001 findings (most findings have none), and SQLite read
    all 217,190 of one through its own index and sorted them (320 ms by run, 500 ms by kind, where the first
    kinds hold none of the pack)."""
    store = any_statistics
    # walked, as at a million runs, where the pack's findings are past what a page reads whole
    monkeypatch.setattr(findings, "READ_WHOLE_BUDGET_US", 0)
    pack = store.execute(
        "SELECT pack_version FROM findings WHERE pack_version IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC LIMIT 1"
    ).fetchone()[0]
    whole = findings.queue_page(store, sort=sort, limit=10_000, pack_version=pack)
    assert len(whole) > 1_000, "the test store must have a common pack version"
    steps = _vm_steps(store, lambda: findings.queue_page(store, sort=sort, limit=60, pack_version=pack))
    # newest first reads runs a chunk at a time, and disagreements first reads the disagreeing findings from
    # the labels before it walks: more steps a row than one index walked (main's code: 49,100-146,100 steps)
    per_finding = {"newest": 12, DISAGREEMENT: 25}.get(sort, 5)
    assert steps < len(whole) * per_finding, (
        f"{sort}: {steps} steps for a page of 60 of {len(whole)} findings"
    )
    assert findings.queue_page(store, sort=sort, limit=60, pack_version=pack) == whole[:60]


def test_the_queue_by_kind_under_a_tool_walks_only_the_kinds_naming_it(
    any_statistics: Database, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """By kind, a tool's findings are walked only in the kinds whose `kind_tool` tallies name it: a tool is
    bunched in a few kinds, and the walk passed every finding of the others first (56-72 ms at a million
    runs, 2.2 ms so)."""
    store = any_statistics
    store.execute(  # a common tool only negative claims name (the tallies follow, by their triggers)
        "UPDATE findings SET tool_name = 'bunched_tool' WHERE rowid IN "
        "(SELECT rowid FROM findings WHERE kind = 'negative-claim' ORDER BY id LIMIT 2000)"
    )
    before = store.execute("SELECT count(*) FROM findings WHERE kind < 'negative-claim'").fetchone()[0]
    assert before > 1_000, "the test store must have many findings in kinds before the tool's"

    def page() -> Any:
        return findings.queue_page(store, sort="kind", limit=60, tool="bunched_tool")

    walks = [s for s in _statements(store, page) if "INDEXED BY findings_kind_order" in s]
    assert walks and all("f.kind IN ('negative-claim')" in s for s in walks), walks
    steps = _vm_steps(store, page)
    rows = page()
    with monkeypatch.context() as every_kind:
        every_kind.setattr(findings, "_kinds_holding", lambda *a, **k: None)
        assert page() == rows
        walked = _vm_steps(store, page)
    assert len(rows) == 60 and {r["kind"] for r in rows} == {"negative-claim"}
    # fresh statistics steer SQLite to the kind-and-tool index here (2,000 findings read and sorted: at a
    # million runs a common tool's are not few), and keeping to the kinds costs its two tally reads and a
    # walk of the tool's kind (about 3,000 steps against 2,600, both pages' own label reads of 1,200 steps
    # aside); with none it walked every kind before the tool's
    assert steps <= walked * 1.25, f"{steps} steps kept to its kinds, {walked} not"
    if request.node.callspec.params["any_statistics"] == "no statistics":
        assert steps * 4 < walked, f"{steps} steps kept to its kinds, {walked} not"


def _columns_read_from(db: Database, sql: str, index: str) -> set[str]:
    """The columns of `index` that `sql`'s bytecode reads from the index itself (not from the table's row)."""
    root = db.execute("SELECT rootpage FROM sqlite_schema WHERE name = ?", [index]).fetchone()[0]
    names = {int(r[0]): r[2] for r in db.execute(f"PRAGMA index_xinfo({index})")}
    ops = db.execute("EXPLAIN " + sql).fetchall()
    cursors = {op[2] for op in ops if op[1] == "OpenRead" and op[3] == root}
    return {str(names.get(op[3])) for op in ops if op[1] == "Column" and op[2] in cursors}


@pytest.mark.parametrize("sort", ["tool", "run", "newest"])
def test_a_walk_under_a_pack_version_tests_it_from_the_index_it_walks(
    store: Database, sort: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A common tool with a common pack version walks the sort's index and tests the pack version (and,
    by run, the tool) from the index itself (schema m028): each finding's row was read for it, about 130 us
    a row at a million runs (a common tool with a pack version by tool 57 ms a page, 11 ms so)."""
    # as at a million runs, where a common pack version's findings are too many to read whole
    monkeypatch.setattr(findings, "READ_WHOLE_BUDGET_US", 100 * findings.READ_ROW_US)
    [tool] = store.execute(
        "SELECT tool_name FROM findings WHERE tool_name IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC LIMIT 1"
    ).fetchone()
    store.execute(  # a common pack version: no set small enough to read whole
        "UPDATE findings SET pack_version = 'en@1' WHERE rowid IN (SELECT rowid FROM findings ORDER BY id "
        "DESC LIMIT 900)"
    )
    index = {"tool": "findings_tool_order", "run": "findings_queue_order", "newest": "findings_queue_order"}[
        sort
    ]
    walks = [
        sql
        for sql in _statements(
            store, lambda: findings.queue_page(store, sort=sort, limit=60, tool=tool, pack_version="en@1")
        )
        if f"INDEXED BY {index}" in sql
    ]
    assert walks, f"{sort}: the page did not walk {index}"
    for sql in walks:
        read = _columns_read_from(store, sql, index)
        assert "pack_version" in read, f"{sort}: the pack version is read from each row ({read})"


@pytest.mark.parametrize(
    "filters", [{}, {"state": "unlabelled"}, {"code": "TIMEOUT"}], ids=["alone", "unlabelled", "with a code"]
)
def test_a_tool_in_the_tool_order_is_read_in_its_index_order(
    store: Database, filters: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The queue by tool under a tool reads the tool's range of its index in order, never a sort of every
    finding of the tool: under an equality on the index's expression SQLite 3.40 sorted them all (a common
    tool with a common code 44 ms at a million runs, 0.5 ms read in order)."""
    # as at a million runs, where a common code's findings are too many to read whole
    monkeypatch.setattr(findings, "READ_WHOLE_BUDGET_US", 10 * findings.READ_KEY_US)
    [tool] = store.execute(
        "SELECT tool_name FROM findings WHERE tool_name IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC LIMIT 1"
    ).fetchone()
    walks = [
        sql
        for sql in _statements(
            store, lambda: findings.queue_page(store, sort="tool", limit=60, tool=tool, **filters)
        )
        if "ORDER BY ifnull(f.tool_name, '')" in sql and "LIMIT 60" in sql
    ]
    assert walks, "the page did not walk the tool order"
    for sql in walks:
        plan = [row[3] for row in store.execute("EXPLAIN QUERY PLAN " + sql).fetchall()]
        assert "USE TEMP B-TREE FOR ORDER BY" not in plan, plan


def test_newest_first_a_tool_with_a_pack_version_is_read_from_the_tool_index_alone(
    store: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Newest first, a tool and a pack version that seldom meet are read whole from the tool order's index,
    which holds their keys and the pack version (schema m028), and sorted: the walk of the runs newest first
    visited tens of thousands of runs for a page (72-75 ms at a million runs, 27-40 ms so)."""
    [tool] = store.execute(
        "SELECT tool_name FROM findings WHERE tool_name IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC LIMIT 1"
    ).fetchone()
    store.execute(  # a pack version on more findings than the tool has, few of them the tool's
        "UPDATE findings SET pack_version = 'en@1' WHERE tool_name IS NOT ? OR rowid % 25 = 0", [tool]
    )

    def page() -> list[str]:
        rows = findings.queue_page(store, sort="newest", limit=60, tool=tool, pack_version="en@1")
        return [r["id"] for r in rows]

    statements = _statements(store, page)
    reads = [sql for sql in statements if "INDEXED BY findings_tool_order" in sql]
    assert reads, "the tool's findings were not read from its index"
    assert not [sql for sql in statements if "runs_newest_first" in sql], "the runs were walked"
    for sql in reads:
        assert "pack_version" in _columns_read_from(store, sql, "findings_tool_order"), sql
    got = page()
    with monkeypatch.context() as walking:
        walking.setattr(findings, "_driver", lambda *a, **k: None)
        assert page() == got and got


@pytest.mark.parametrize("with_code", [False, True], ids=["a tool", "a tool and a rare code"])
def test_disagreements_first_reads_the_disagreeing_findings_by_id_under_any_filter(
    store: Database, with_code: bool
) -> None:
    """Disagreements first, the disagreeing findings are read by their ids (no more of them than labelled
    findings), never by walking a filter's index nor reading a filter's set whole: under a common tool and a
    common code SQLite walked the tool's 47,340 findings testing each against the disagreements (51 ms at a
    million runs, 26 ms so); PostgreSQL read a kind's code whole for them (68 -> 27 ms)."""
    from store.vocab import verdicts_for

    [tool] = store.execute(
        "SELECT tool_name FROM findings WHERE tool_name IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC LIMIT 1"
    ).fetchone()
    some = store.execute(
        "SELECT id, kind FROM findings WHERE tool_name = ? ORDER BY id LIMIT 6", [tool]
    ).fetchall()
    for fid, kind in some:  # two reviewers who disagree on them
        verdicts = verdicts_for(kind)
        labels.label_finding(store, fid, verdicts[0], "ann")
        labels.label_finding(store, fid, verdicts[1], "bo")
    filters: dict[str, Any] = {"tool": tool}
    if with_code:  # a code few findings have, which the rest of the queue reads whole
        store.execute(
            "UPDATE findings SET codes = json_insert(coalesce(codes, '[]'), '$[#]', 'rare') "
            "WHERE rowid IN (SELECT rowid FROM findings WHERE tool_name = ? ORDER BY id LIMIT 40)",
            [tool],
        )
        filters["code"] = "rare"
        assert findings._driver(store, filters, findings.DISAGREEMENT) is not None

    def page() -> list[dict[str, Any]]:
        return findings.queue_page(store, sort=findings.DISAGREEMENT, limit=60, **filters)

    disagreeing = [
        sql
        for sql in _statements(store, page)
        if "HAVING count(DISTINCT" in sql and "NOT f.id IN" not in sql and "LIMIT 60" in sql
    ]
    assert disagreeing, "no statement read the disagreeing findings"
    for sql in disagreeing:
        plan = [row[3] for row in store.execute("EXPLAIN QUERY PLAN " + sql).fetchall()]
        assert any(step.startswith("SEARCH f USING") and "findings_keys (id=?)" in step for step in plan), (
            plan
        )
        assert "SELECT c.finding FROM finding_codes" not in sql, "a filter's set read whole for them"
    assert {r["id"] for r in page()[:6]} == {fid for fid, _ in some}


def test_the_no_answer_count_reads_only_runs_with_no_answer(store: Database) -> None:
    """`w` on the runs screen: its count reads the runs that delivered nothing from their own index, not
    every run until 10,000 are found (127 ms at a million runs)."""
    expected = store.execute(
        "SELECT count(*) FROM runs WHERE delivered = 0 AND outcome IS NOT 'incomplete'"
    ).fetchone()[0]
    assert runs.count_runs_at_most(store, undelivered=True) == expected > 0
    steps = _vm_steps(store, lambda: runs.count_runs_at_most(store, undelivered=True))
    assert steps < 10 * expected, f"{steps} steps to count {expected} runs of {RUNS}"


def test_ingest_looks_up_a_recordings_runs_already_stored_from_the_content_index(store: Database) -> None:
    """The writer asks once per recording which of its runs are stored from another one (their content
    identities): read from `run_sources_content`, each match joined to its run by key, no table scanned."""
    from types import SimpleNamespace

    from store.db import writer

    identities = {f"run-{n}@0123456789": f"{n:032x}" for n in range(10)}
    recording = SimpleNamespace(identities=identities, runs=[])
    statements = _statements(store, lambda: writer._stored_elsewhere(store.conn, recording, frozenset()))
    assert len(statements) == 1
    plan = [r[3] for r in store.execute("EXPLAIN QUERY PLAN " + statements[0]).fetchall()]
    assert any("run_sources_content" in step for step in plan), plan
    assert not [step for step in plan if step.startswith("SCAN ") and not _HARMLESS_SCAN.match(step)], plan


def test_stored_runs_that_keep_no_identity_are_looked_up_by_run_id_and_their_original(
    store: Database,
) -> None:
    """A store older than schema m032 keeps no identity (this generated one keeps none): the writer reads
    the stored runs of the recording's run ids from `runs_run_id`, then the one original they were read
    from, once, each by its key; no table scanned."""
    from types import SimpleNamespace

    from store.db import writer

    run_ids = [r[0] for r in store.execute("SELECT run_id FROM runs ORDER BY key LIMIT 3")]
    store.execute(  # each its source, as a real store has them, with no identity kept
        "INSERT OR IGNORE INTO run_sources (run_key, recording_id, content_id) "
        f"SELECT key, recording_id, NULL FROM runs WHERE run_id IN ({', '.join('?' for _ in run_ids)})",
        run_ids,
    )
    keys = [f"{run_id}@0123456789" for run_id in run_ids]
    recording = SimpleNamespace(
        runs=[{"key": k, "run_id": r} for k, r in zip(keys, run_ids, strict=True)],
        identities=dict.fromkeys(keys, "rc2-never-stored"),  # not one of them: different runs
    )
    statements = _statements(store, lambda: writer._stored_elsewhere(store.conn, recording, frozenset()))
    content, missing, by_run_id, *originals = statements
    assert "run_sources s" in content and "content_id IS NULL LIMIT 1" in missing
    assert [re.sub(r"\d+$", "?", sql) for sql in originals] == [
        "SELECT sha256, source FROM recordings WHERE id = ?",
        "SELECT codec, data FROM originals WHERE recording_id = ?",
    ], "the stored runs' identities from their one recording's original, read once"
    for sql in statements:
        plan = [r[3] for r in store.execute("EXPLAIN QUERY PLAN " + sql).fetchall()]
        assert not [step for step in plan if step.startswith("SCAN ") and not _HARMLESS_SCAN.match(step)], (
            plan
        )
    assert any("runs_run_id" in r[3] for r in store.execute("EXPLAIN QUERY PLAN " + by_run_id).fetchall())
