"""Facets and counts come from tallies the writing transaction keeps; they always equal a recount of the rows."""

from __future__ import annotations

import json

from sqlite_utils import Database

from bench.synthetic import insert_synthetic_findings, insert_synthetic_runs
from store import labels
from store.db.connection import write_lock
from store.db.reextract import reextract
from store.db.writer import delete_extracted
from store.findings import queue_count, queue_count_at_most, queue_facets, queue_page
from store.runs import count_runs, count_runs_at_most, run_facets, run_filters
from store.tallies import rebuild_tallies
from tests.conftest import both_backends


def _tallies(db: Database) -> dict[tuple[str, str], int]:
    return {(f, v): n for f, v, n in db.execute("SELECT facet, value, n FROM tallies")}


def _recounted(db: Database) -> dict[tuple[str, str], int]:
    kept = _tallies(db)
    with write_lock(db):
        rebuild_tallies(db)
    recount = _tallies(db)
    assert kept == recount
    return recount


def _scanned_runs(db: Database, **filters: object) -> int:
    where, params = run_filters(db, **filters)
    sql = "SELECT count(*) FROM runs r" + (" WHERE " + " AND ".join(where) if where else "")
    return int(db.execute(sql, params).fetchone()[0])


@both_backends
def test_tallies_follow_ingest_reextract_and_deletion(loaded: Database) -> None:
    tallies = _recounted(loaded)
    runs = loaded.execute("SELECT count(*) FROM runs").fetchone()[0]
    assert tallies[("runs", "")] == runs > 0
    kinds = [r[0] for r in loaded.execute("SELECT DISTINCT kind FROM findings ORDER BY kind")]
    assert run_facets(loaded)["kinds"] == kinds
    for kind in kinds:
        assert count_runs(loaded, kind=kind) == _scanned_runs(loaded, kind=kind)
    for outcome in {r[0] for r in loaded.execute("SELECT outcome FROM runs")}:
        assert count_runs(loaded, outcome=outcome) == _scanned_runs(loaded, outcome=outcome)
    assert count_runs(loaded, withheld=True) == _scanned_runs(loaded, withheld=True)
    assert count_runs(loaded, has_findings=True) == _scanned_runs(loaded, has_findings=True)

    reextract(loaded, everything=True)
    assert _recounted(loaded) == tallies

    rec_id = loaded.execute("SELECT recording_id FROM runs ORDER BY findings DESC LIMIT 1").fetchone()[0]
    with write_lock(loaded):
        delete_extracted(loaded, rec_id)
    after = _recounted(loaded)
    assert (
        after[("runs", "")]
        == runs - loaded.execute("SELECT runs FROM recordings WHERE id = ?", [rec_id]).fetchone()[0]
    )
    assert after != tallies


@both_backends
def test_a_replaced_row_leaves_the_tallies(loaded: Database) -> None:
    """INSERT OR REPLACE (how the writer inserts) removes the old row's tallies before adding the new ones."""
    row = loaded.execute("SELECT id, kind FROM findings LIMIT 1").fetchone()
    before = _tallies(loaded)
    loaded.execute(
        "INSERT OR REPLACE INTO findings (id, run_key, run_id, kind) SELECT id, run_key, run_id, 'moved-kind' "
        "FROM findings WHERE id = ?",
        [row[0]],
    )
    after = _recounted(loaded)
    assert after[("kind", "moved-kind")] == 1
    assert after.get(("kind", row[1]), 0) == before[("kind", row[1])] - 1
    assert "moved-kind" in queue_facets(loaded)["kinds"]


@both_backends
def test_queue_counts_follow_labels(loaded: Database) -> None:
    ids = [
        r[0] for r in loaded.execute("SELECT id FROM findings WHERE kind != 'withheld-answer' ORDER BY id")
    ]
    labels.label_finding(loaded, ids[0], "tp", "ann")
    labels.label_finding(loaded, ids[1], "fp", "ann")
    labels.label_finding(loaded, ids[1], "tp", "bob")
    labels.undo_last(loaded, "ann", ids[0])
    total = loaded.execute("SELECT count(*) FROM findings").fetchone()[0]
    assert queue_count(loaded) == total
    assert queue_count(loaded, state="labelled") == 1
    assert queue_count(loaded, state="unlabelled") == total - 1
    assert queue_count(loaded, state="mine", reviewer="bob") == 1
    assert queue_count(loaded, state="not-mine", reviewer="ann") == total - 1
    assert queue_count(loaded, state="disagreement") == 1
    kind = loaded.execute("SELECT kind FROM findings WHERE id = ?", [ids[1]]).fetchone()[0]
    of_kind = loaded.execute("SELECT count(*) FROM findings WHERE kind = ?", [kind]).fetchone()[0]
    assert queue_count(loaded, kind=kind, state="unlabelled") == of_kind - 1


@both_backends
def test_a_count_the_tallies_cannot_answer_is_bounded_and_says_so(db: Database) -> None:
    insert_synthetic_runs(db, 400)
    insert_synthetic_findings(db)
    exact = count_runs_at_most(db, cap=50, outcome="delivered")
    assert exact.exact and exact == _scanned_runs(db, outcome="delivered") > 50
    both = _scanned_runs(db, outcome="delivered", agent="san-triage")
    assert both > 50
    bounded = count_runs_at_most(db, cap=50, outcome="delivered", agent="san-triage")
    assert (bounded, bounded.exact) == (50, False)
    roomy = count_runs_at_most(db, cap=both, outcome="delivered", agent="san-triage")
    assert (roomy, roomy.exact) == (both, True)
    searched = count_runs_at_most(db, cap=50, search="incidents")
    assert (searched, searched.exact) == (50, False)
    assert count_runs(db, search="incidents") == 400
    tool = queue_count_at_most(db, cap=20, tool="search_logs")  # a tally answers a tool (schema m023)
    assert (tool, tool.exact) == (queue_count(db, tool="search_logs"), True) and tool > 20
    [kind] = db.execute("SELECT value FROM tallies WHERE facet = 'kind' ORDER BY n DESC LIMIT 1").fetchone()
    pair = queue_count_at_most(db, cap=20, kind=kind, tool="search_logs")  # so does a kind and a tool
    assert (pair, pair.exact) == (queue_count(db, kind=kind, tool="search_logs"), True) and pair > 20
    coded = queue_count_at_most(db, cap=20, kind=kind, code="TIMEOUT")  # and a kind and a code (m027)
    assert (coded, coded.exact) == (queue_count(db, kind=kind, code="TIMEOUT"), True) and coded > 20
    assert queue_count(db, code="TIMEOUT", tool="search_logs") > 20
    both_filters = queue_count_at_most(db, cap=20, code="TIMEOUT", tool="search_logs")
    assert (both_filters, both_filters.exact) == (20, False)


@both_backends
def test_every_run_filter_in_every_sort_lists_and_counts_the_runs_a_scan_finds(loaded: Database) -> None:
    """Each filter of the runs screen alone (`f`, `w`, withheld, an outcome, agent, tenant, kind, pack
    version), in each sort, pages through exactly the runs a plain scan finds, in the sort's order, and its
    count is theirs. (`w` raised a syntax error on PostgreSQL before.)"""
    from store.runs import SORTS, runs_page

    one = loaded.execute(
        "SELECT outcome, agent_id, tenant FROM runs WHERE tenant IS NOT NULL ORDER BY key LIMIT 1"
    ).fetchone()
    kind = loaded.execute("SELECT kind FROM findings ORDER BY id LIMIT 1").fetchone()[0]
    packs = loaded.execute(
        "SELECT DISTINCT pack_version FROM findings WHERE pack_version IS NOT NULL"
    ).fetchall()
    every = [
        {"has_findings": True},
        {"undelivered": True},
        {"withheld": True},
        {"outcome": one[0]},
        {"agent": one[1]},
        {"tenant": one[2]},
        {"kind": kind},
        *({"pack_version": pack} for (pack,) in packs[:1]),
        {"outcome": one[0], "kind": kind},
    ]
    for filters in every:
        where, params = run_filters(loaded, **filters)
        scanned = loaded.execute(
            f"SELECT key, findings, started_ms FROM runs r WHERE {' AND '.join(where)}", params
        ).fetchall()
        assert scanned or filters == {"undelivered": True} or filters == {"withheld": True}, filters
        assert count_runs_at_most(loaded, **filters) == len(scanned), filters
        for sort in SORTS:
            listed, after = [], None
            while page := runs_page(loaded, sort=sort, limit=3, after=after, **filters):
                listed += [(r["run_key"], r["findings"], r["started_ms"]) for r in page]
                after = page[-1]["cursor"]
            newest = sorted(scanned, key=lambda r: (r[2] if r[2] is not None else -1, r[0]), reverse=True)
            expected = {
                "newest": newest,
                "oldest": newest[::-1],
                "most-findings": sorted(
                    scanned, key=lambda r: (r[1], r[2] if r[2] is not None else -1, r[0]), reverse=True
                ),
            }[sort]
            assert [r[0] for r in listed] == [r[0] for r in expected], (filters, sort)


def _codes_kept(db: Database) -> set[tuple[str, str]]:
    return {(c, f) for c, f in db.execute("SELECT code, finding FROM finding_codes")}


def _codes_of_the_findings(db: Database) -> set[tuple[str, str]]:
    """Each text code of each finding's JSON `codes`, read in Python (not by the store's own SQL)."""
    out: set[tuple[str, str]] = set()
    for fid, codes in db.execute("SELECT id, codes FROM findings"):
        try:
            values = json.loads(codes) if codes else []
        except ValueError:
            continue
        out |= {(v, fid) for v in values if isinstance(v, str)} if isinstance(values, list) else set()
    return out


@both_backends
def test_the_code_filters_index_follows_every_write_of_findings(loaded: Database) -> None:
    """`finding_codes` (schema m021: the queue's code filter reads it) holds exactly each finding's codes
    after an ingest, a changed, replaced, moved or deleted finding, a re-extraction and a deleted recording."""
    assert _codes_kept(loaded) == _codes_of_the_findings(loaded) != set()
    first, second = (r[0] for r in loaded.execute("SELECT id FROM findings ORDER BY id LIMIT 2"))
    loaded.execute("UPDATE findings SET codes = ? WHERE id = ?", ['["new-code", "new-code", 7, null]', first])
    loaded.execute("UPDATE findings SET codes = 'not json' WHERE id = ?", [second])
    assert _codes_kept(loaded) == _codes_of_the_findings(loaded)
    assert queue_count(loaded, code="new-code") == 1
    loaded.execute(
        "INSERT OR REPLACE INTO findings (id, run_key, run_id, kind, codes) SELECT id, run_key, run_id, kind, "
        "'[\"replaced\"]' FROM findings WHERE id = ?",
        [first],
    )
    loaded.execute("UPDATE findings SET id = 'moved-id' WHERE id = ?", [first])
    loaded.execute("DELETE FROM findings WHERE id = ?", [second])
    assert _codes_kept(loaded) == _codes_of_the_findings(loaded)
    assert ("replaced", "moved-id") in _codes_kept(loaded)
    reextract(loaded, everything=True)
    assert _codes_kept(loaded) == _codes_of_the_findings(loaded)
    rec_id = loaded.execute("SELECT recording_id FROM runs ORDER BY findings DESC LIMIT 1").fetchone()[0]
    with write_lock(loaded):
        delete_extracted(loaded, rec_id)
    assert _codes_kept(loaded) == _codes_of_the_findings(loaded) != set()


#: Refs a finding may hold (written by hand: the extractor writes lists of objects), with the tools each names
#: beside the finding's own: not JSON, elements that are not objects and values that are not text name none.
EDGE_REFS = [
    (
        '[{"toolName": "edge_a", "id": "edge_a"}, {"id": "edge_a"}, {"toolName": "edge_b"}]',
        {"edge_a", "edge_b"},
    ),
    ('not json {"toolName": "edge_a"}', set()),
    (
        '["edge_a", 5, null, [{"id": "edge_a"}], {"toolName": 7}, {"id": true}, {"toolName": {"id": "edge_a"}}]',
        set(),
    ),
    ('{"first": {"id": "edge_b"}, "second": "edge_a"}', {"edge_b"}),
    ('[{"toolName": "edge_a"}, {"toolName": "edge_a"}]', {"edge_a"}),
]
EDGE_TOOLS = ("edge_a", "edge_b", "7", "true", "5")


def _scanned_tool(db: Database, tool: str) -> set[str]:
    """The findings the queue's tool filter matches, read row by row (its full condition, refs parsed)."""
    from store.findings import _filters

    where, params = _filters(tool=tool)
    return {str(r[0]) for r in db.execute(f"SELECT f.id FROM findings f WHERE {' AND '.join(where)}", params)}


def _tool_counts_are_exact(db: Database) -> dict[str, int]:
    """Every tool's tally equals a scan of the queue's tool filter, and is the queue's exact count; the
    queue by tool lists those findings (read by the tool index when no finding names it in its refs alone)."""
    _recounted(db)
    tools = {str(r[0]) for r in db.execute("SELECT value FROM tallies WHERE facet = 'tool_named'")}
    kinds: dict[str, set[str]] = {}
    for fid, kind in db.execute("SELECT id, kind FROM findings WHERE kind IS NOT NULL"):
        kinds.setdefault(str(kind), set()).add(str(fid))
    counts = {}
    for tool in sorted(tools - {""} | set(EDGE_TOOLS)):
        scanned = _scanned_tool(db, tool)
        counted = queue_count_at_most(db, tool=tool)
        assert (counted, counted.exact) == (len(scanned), True), tool
        assert queue_count(db, tool=tool) == counted, tool
        assert {r["id"] for r in queue_page(db, tool=tool, limit=10_000)} == scanned, tool
        counts[tool] = int(counted)
        for kind in kinds:  # a kind and a tool: their own tally (`kind_tool`)
            pair = queue_count_at_most(db, kind=kind, tool=tool)
            assert (pair, pair.exact) == (len(scanned & kinds[kind]), True), (kind, tool)
    return counts


@both_backends
def test_the_tool_tally_counts_what_the_queue_tool_filter_matches(loaded: Database) -> None:
    """A finding is counted once for each tool it names, its own or in its refs (`toolName`, `id`), after
    inserts, deletes, updates of its refs and tool and a re-extraction: the queue's count by tool is exact
    and equals a scan of the filter. (Before, refs such as `["edge_a"]` made the tool filter fail with
    "malformed JSON", and a count by tool read windows of findings, a lower bound at scale.)"""
    start = _tool_counts_are_exact(loaded)
    assert start and all(start.get(t, 0) == 0 for t in EDGE_TOOLS)
    ids = [r[0] for r in loaded.execute("SELECT id FROM findings ORDER BY id").fetchall()]
    assert len(ids) > len(EDGE_REFS) + 3
    for fid, (refs, _) in zip(ids, EDGE_REFS, strict=False):
        loaded.execute("UPDATE findings SET refs = ?, tool_name = NULL WHERE id = ?", [refs, fid])
    counts = _tool_counts_are_exact(loaded)
    for tool in EDGE_TOOLS:
        assert counts[tool] == sum(tool in named for _, named in EDGE_REFS), tool
    # the finding's own tool and its refs naming the same tool: once; another own tool: counted too
    loaded.execute("UPDATE findings SET tool_name = 'edge_a' WHERE id IN (?, ?)", [ids[0], ids[3]])
    loaded.execute("UPDATE findings SET tool_name = 'edge_b' WHERE id = ?", [ids[4]])
    counts = _tool_counts_are_exact(loaded)
    assert (counts["edge_a"], counts["edge_b"]) == (3, 3)
    # a new finding (as the writer inserts, INSERT OR REPLACE) and a replaced one, then a deletion
    loaded.execute(
        "INSERT OR REPLACE INTO findings (id, run_key, run_id, kind, tool_name, refs) SELECT 'f-edge', run_key, "
        "run_id, kind, 'edge_b', ? FROM findings WHERE id = ?",
        ['[{"id": "edge_a"}, {"toolName": "edge_b"}]', ids[0]],
    )
    loaded.execute(
        "INSERT OR REPLACE INTO findings (id, run_key, run_id, kind, tool_name, refs) SELECT id, run_key, "
        "run_id, kind, NULL, '[]' FROM findings WHERE id = ?",
        [ids[4]],
    )
    counts = _tool_counts_are_exact(loaded)
    assert (counts["edge_a"], counts["edge_b"]) == (3, 3)  # f-edge in, ids[4] out
    loaded.execute("DELETE FROM findings WHERE id IN (?, ?)", ["f-edge", ids[0]])
    counts = _tool_counts_are_exact(loaded)
    assert (counts["edge_a"], counts["edge_b"]) == (1, 1)  # ids[3]: its own edge_a, its refs' edge_b
    # re-extraction writes every finding again from its recording: the tallies are the start's again
    reextract(loaded, everything=True)
    assert _tool_counts_are_exact(loaded) == start


@both_backends
def test_statements_of_many_rows_keep_the_tallies(loaded: Database) -> None:
    """One statement that adds, changes or removes many runs and findings (a COPY of a recording's many rows on
    PostgreSQL, a re-extraction, a deleted recording) moves the tallies as the rows one by one would, and a
    statement that rewrites rows as they were moves nothing (PostgreSQL keeps `run_kind` and the codes by
    statement triggers over the whole statement)."""
    runs = [r[0] for r in loaded.execute("SELECT key FROM runs WHERE findings > 1 ORDER BY key LIMIT 3")]
    assert len(runs) == 3
    marks = ", ".join("?" for _ in runs)
    before = _recounted(loaded)
    loaded.execute("UPDATE findings SET seq = seq")  # every finding rewritten as it was: nothing moves
    loaded.execute("UPDATE runs SET agent_id = agent_id, tenant = tenant")
    assert _recounted(loaded) == before
    loaded.execute(
        f"UPDATE findings SET kind = 'moved-kind', tool_name = 'moved-tool' WHERE run_key IN ({marks})", runs
    )
    moved = loaded.execute(f"SELECT count(*) FROM findings WHERE run_key IN ({marks})", runs).fetchone()[0]
    assert _recounted(loaded)[("kind", "moved-kind")] == moved > len(runs)
    loaded.execute(f"UPDATE runs SET tenant = 'moved-tenant' WHERE key IN ({marks})", runs)
    assert _recounted(loaded)[("tenant", "moved-tenant")] == len(runs)
    loaded.execute(
        "INSERT INTO findings (id, run_key, run_id, kind, tool_name, codes) SELECT id || '-copy', run_key, run_id, "
        f"kind, tool_name, codes FROM findings WHERE run_key IN ({marks})",
        runs,
    )
    assert _recounted(loaded)[("kind", "moved-kind")] == 2 * moved
    loaded.execute(f"DELETE FROM findings WHERE run_key IN ({marks})", runs)
    loaded.execute(f"DELETE FROM runs WHERE key IN ({marks})", runs)
    after = _recounted(loaded)
    assert ("kind", "moved-kind") not in after and ("tenant", "moved-tenant") not in after
    assert after[("runs", "")] == before[("runs", "")] - len(runs)
