"""A full-text search with other runs filters (a finding kind, an agent, an outcome, a tenant, a pack
version): the same pages and counts on both backends as a scan of the runs finds. On PostgreSQL a one-token
search within such filters is one match of `search_runs` (schema m022: each run's row holds those filters'
values as lexemes beside its tokens), so its count reads no other table, and the lexemes follow the runs,
findings and documents as they change.

A generated store of 1,000 runs (`bench.synthetic`): every prompt and answer says "synthetic", every prompt
"failing", run i's documents "i"."""

from __future__ import annotations

import re
from typing import Any

import pytest

from bench.synthetic import insert_synthetic_findings, insert_synthetic_runs
from store import runs, search
from store.db.connection import open_database
from store.db.postgres import translate
from store.vocab import DANGLING_REFERENCE, NEGATIVE_CLAIM, received_nothing_sql, withheld_sql
from tests.conftest import fresh_postgres_database, keyset_run_keys, runs_rows_read

FILTERS: tuple[dict[str, Any], ...] = (
    {"kind": NEGATIVE_CLAIM},
    {"kind": DANGLING_REFERENCE},
    {"agent": "san-triage"},
    {"outcome": "refused"},
    {"outcome": "delivered", "agent": "billing-bot"},
    {"tenant": "globex", "kind": NEGATIVE_CLAIM},
    {"pack_version": "en-negatives@3"},
    {"has_findings": True},
    {"withheld": True},
    {"undelivered": True},
    {"has_findings": True, "withheld": True, "agent": "billing-bot"},
    {"has_findings": True, "kind": NEGATIVE_CLAIM, "outcome": "refused"},
    {"undelivered": True, "has_findings": True, "tenant": "globex"},
)
WORDS = ("997", "failing", "synthetic")
#: Filters -> the SQL condition (on alias r) of each flag.
FLAGS = {
    "has_findings": "r.findings > 0",
    "withheld": withheld_sql("r.outcome"),
    "undelivered": received_nothing_sql("r.delivered", "r.outcome"),
}


def _scan(db: Any, word: str, filters: dict[str, Any]) -> set[str]:
    """The keys of the runs meeting `filters` whose documents hold `word`, by reading every run and
    document (no index, no tally, no search table)."""
    where, params = [], []
    for name, value in filters.items():
        if name in FLAGS:
            where.append(FLAGS[name])
            continue
        if name in ("kind", "pack_version"):
            where.append(f"r.key IN (SELECT run_key FROM findings WHERE {name} = ?)")
        else:
            where.append(f"r.{'agent_id' if name == 'agent' else name} = ?")
        params.append(value)
    keys = {k for (k,) in db.execute(f"SELECT r.key FROM runs r WHERE {' AND '.join(where)}", params)}
    texts = db.execute("SELECT d.run_key, t.text FROM search_docs d JOIN search_text t ON t.id = d.id")
    holding = {k for k, text in texts if word in re.findall(r"\w+", (text or "").lower())}
    return keys & holding


@pytest.mark.parametrize("sort", ["newest", "oldest", "most-findings"])
@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: "+".join(f"{k}={v}" for k, v in f.items()))
def test_a_word_within_filters_pages_and_counts_as_a_scan_on_both_backends(
    synthetic_sqlite_store: Any, synthetic_postgresql_store: Any, filters: dict[str, Any], sort: str
) -> None:
    for word in WORDS:
        scanned = _scan(synthetic_sqlite_store, word, filters)
        assert _scan(synthetic_postgresql_store, word, filters) == scanned
        assert word == "997" or len(scanned) > 5, (word, filters)  # "997": run 997, in the filters or not
        expected = keyset_run_keys(
            synthetic_sqlite_store, search=word, sort=sort, limit=25, pages=60, **filters
        )
        assert len(expected) == len(scanned) and set(expected) == scanned, (word, filters)
        got = keyset_run_keys(
            synthetic_postgresql_store, search=word, sort=sort, limit=25, pages=60, **filters
        )
        assert got == expected, (word, filters)
        for db in (synthetic_sqlite_store, synthetic_postgresql_store):
            counted = runs.count_runs_at_most(db, search=word, **filters)
            assert (int(counted), counted.exact) == (len(scanned), True), (db, word, filters)
            if len(scanned) > 10:
                capped = runs.count_runs_at_most(db, cap=10, search=word, **filters)
                assert (int(capped), capped.exact) == (10, False), (db, word, filters)


@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: "+".join(f"{k}={v}" for k, v in f.items()))
def test_a_word_within_filters_not_rare_pages_most_findings_first_as_a_scan(
    synthetic_sqlite_store: Any,
    synthetic_postgresql_store: Any,
    monkeypatch: pytest.MonkeyPatch,
    filters: dict[str, Any],
) -> None:
    """The rare bound scaled down so the word within the filters is not rare on PostgreSQL: its pages most
    findings first are read band by band of the findings count (`BandedRuns`, where the filters `search_runs`
    holds apply), each band's runs sorted, and page through in SQLite's order."""
    from store.sorted_runs import BandedRuns

    monkeypatch.setattr(search, "PG_RARE_RUNS", 5)
    for word in ("failing", "synthetic"):
        expected = keyset_run_keys(
            synthetic_sqlite_store, search=word, sort="most-findings", limit=25, pages=60, **filters
        )
        got = keyset_run_keys(
            synthetic_postgresql_store, search=word, sort="most-findings", limit=25, pages=60, **filters
        )
        assert got == expected, (word, filters)
    facets = search.postgres_facets(synthetic_postgresql_store, filters)
    if facets is not None:
        chosen = search.postgres_sorted_runs(synthetic_postgresql_store, "failing", facets)
        assert isinstance(chosen, BandedRuns), filters


def _relations(db: Any, sql: str, params: list[Any]) -> set[str]:
    text, _ = translate(sql)
    assert text is not None
    plan = db._conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + text, params).fetchone()[0][0]["Plan"]
    found, stack = set(), [plan]
    while stack:
        node = stack.pop()
        stack.extend(node.get("Plans", []))
        if "Relation Name" in node:
            found.add(node["Relation Name"])
    return found


@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: "+".join(f"{k}={v}" for k, v in f.items()))
def test_postgresql_counts_a_word_within_filters_from_the_runs_tokens_alone(
    synthetic_postgresql_store: Any,
    postgresql_statements: list[tuple[str, list[Any]]],
    filters: dict[str, Any],
) -> None:
    """The capped count of a one-token search within equality filters, runs with findings (`f`), withheld
    runs or runs with no answer (`w`) reads `search_runs` alone: no run's row and no finding is read (testing each of a word's runs for a
    finding kind took 176-779 ms at a million runs)."""
    statements = postgresql_statements
    runs.count_runs_at_most(synthetic_postgresql_store, search="failing", **filters)
    counts = [(sql, params) for sql, params in statements if "LIMIT" in sql]
    assert counts
    assert all(_relations(synthetic_postgresql_store, *c) == {"search_runs"} for c in counts), counts


def test_postgresql_keeps_each_runs_filters_beside_its_tokens_as_they_change() -> None:
    """The filters' lexemes of a run's row of `search_runs` follow its findings (inserted, changed, moved,
    deleted, truncated), its own columns (agent, outcome, tenant), and its documents (added, removed), and
    hold any value (quotes, backslashes, spaces)."""
    with fresh_postgres_database() as url:
        db = open_database(url)
        try:
            insert_synthetic_runs(db, 10)
            insert_synthetic_findings(db)
            keys = [k for (k,) in db.execute("SELECT key FROM runs ORDER BY rowid")]

            def agree(**filters: str) -> int:
                counted = runs.count_runs_at_most(db, search="failing", **filters)
                assert counted.exact
                assert int(counted) == len(_scan(db, "failing", filters)), filters
                assert sorted(
                    keyset_run_keys(db, search="failing", sort="newest", limit=3, pages=9, **filters)
                ) == (sorted(_scan(db, "failing", filters)))
                return int(counted)

            odd = "o'brien \\ de la x"
            db.execute(
                "UPDATE runs SET agent_id = ?, outcome = 'odd', tenant = 'solo' WHERE key = ?", [odd, keys[2]]
            )
            assert (agree(agent=odd), agree(outcome="odd"), agree(tenant="solo", agent=odd)) == (1, 1, 1)
            columns = "id, run_key, run_id, seq, kind, field, pack_version, advisory, truncated, placeable"
            db.execute(
                f"INSERT INTO findings ({columns}) VALUES ('z1', ?, 'x', 99, 'zz kind', 'answer', 'p@1', 0, 0, 0)",
                [keys[3]],
            )
            assert (agree(kind="zz kind"), agree(pack_version="p@1", kind="zz kind")) == (1, 1)
            db.execute("UPDATE findings SET kind = 'yy' WHERE id = 'z1'")
            assert (agree(kind="zz kind"), agree(kind="yy")) == (0, 1)
            db.execute("UPDATE findings SET run_key = ? WHERE id = 'z1'", [keys[2]])  # moved to run 2
            assert (agree(kind="yy", agent=odd), agree(kind="yy")) == (1, 1)
            db.execute(
                "DELETE FROM search_text WHERE id IN (SELECT id FROM search_docs WHERE run_key = ?)",
                [keys[2]],
            )
            assert agree(kind="yy") == 0  # run 2 holds no document now
            db.execute(
                "INSERT INTO search_text (id, text) SELECT id, 'failing again' FROM search_docs WHERE run_key = ?",
                [keys[2]],
            )
            assert (agree(kind="yy", agent=odd, outcome="odd"), agree(pack_version="p@1")) == (1, 1)
            db.execute("DELETE FROM findings WHERE id = 'z1'")
            assert (agree(kind="yy"), agree(pack_version="p@1"), agree(agent=odd)) == (0, 0, 1)
            db.execute("UPDATE runs SET agent_id = 'san-triage' WHERE key = ?", [keys[2]])
            assert agree(agent=odd) == 0
            nothing = agree(undelivered=True)  # `w` follows a run's delivery (schema m026)
            db.execute("UPDATE runs SET delivered = 1 - delivered, outcome = 'x' WHERE key = ?", [keys[4]])
            assert agree(undelivered=True) != nothing
            db.execute("UPDATE runs SET delivered = NULL WHERE key = ?", [keys[4]])
            assert agree(undelivered=True) <= nothing
            assert agree(kind=NEGATIVE_CLAIM) > 0
            db.execute("TRUNCATE findings")
            assert (agree(kind=NEGATIVE_CLAIM), agree(agent="san-triage") > 0) == (0, True)
        finally:
            db.close()


@pytest.mark.parametrize(
    "filters",
    [
        {"has_findings": True},
        {"withheld": True},
        {"undelivered": True},
        {"has_findings": True, "withheld": True, "agent": "billing-bot"},
    ],
    ids=lambda f: "+".join(f"{k}={v}" for k, v in f.items()),
)
def test_a_postgresql_page_of_a_word_with_findings_or_withheld_reads_only_its_own_runs_rows(
    synthetic_postgresql_store: Any, runs_statements: list[tuple[str, list[Any]]], filters: dict[str, Any]
) -> None:
    """`f` (runs with findings), withheld runs and `w` (no answer) are held in `search_runs` too (its
    `findings` column, the outcomes' lexemes, a lexeme of its own: schema m026), so a page of a word within them chooses its runs there, in every order: only the
    page's own rows of `runs` are read, never every run walked past or matched."""
    db = synthetic_postgresql_store
    for sort in ("newest", "oldest", "most-findings"):
        runs_statements.clear()
        page = runs.runs_page(db, search="failing", sort=sort, limit=10, **filters)
        statements = list(runs_statements)
        assert len(page) == min(10, len(_scan(db, "failing", filters)))
        rows_read = runs_rows_read(db, statements)
        assert rows_read <= 10, (sort, rows_read)


@pytest.mark.parametrize(
    "filters",
    [
        {"search": "synthetic"},
        {"search": "synthetic", "has_findings": True},
        {"kind": NEGATIVE_CLAIM, "outcome": "refused"},
        {"agent": "billing-bot", "has_findings": True, "tenant": "globex"},
    ],
    ids=["word", "word with findings", "kind and outcome", "agent, findings and tenant"],
)
def test_postgresql_a_count_that_outlasts_its_budget_is_a_lower_bound(
    synthetic_postgresql_store: Any, synthetic_sqlite_store: Any, monkeypatch: pytest.MonkeyPatch,
    filters: dict[str, Any],
) -> None:  # fmt: skip
    """A count no tally answers is one statement read for at most `runs.STATEMENT_COUNT_BUDGET_S` on
    PostgreSQL (a middling word with findings read 150,000 rows for 46-200 ms at a million runs; windows of
    runs counted 89 of a kind and an outcome's 6,700 runs in their time): in time, the same count as
    SQLite's; out of time, what it has counted, shown as "N+", never more than the runs that match."""
    whole = runs.count_runs_at_most(synthetic_postgresql_store, **filters)
    assert whole.exact and whole == runs.count_runs_at_most(synthetic_sqlite_store, **filters) > 0
    monkeypatch.setattr(runs, "STATEMENT_COUNT_BUDGET_S", 1e-9)
    cut = runs.count_runs_at_most(synthetic_postgresql_store, **filters)
    assert not cut.exact and 0 <= cut < whole
