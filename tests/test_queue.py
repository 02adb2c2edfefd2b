"""The findings queue: filters by kind, code, tool and label state; next unlabelled; evidence beside a finding."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlite_utils import Database

from reviewer.review.evidence import assemble_evidence
from store import labels
from store.db.connection import open_database
from store.db.postgres import is_postgres
from store.findings import (
    QUEUE_SORTS,
    evidence_rows,
    first_unlabelled,
    next_unlabelled,
    queue_count,
    queue_count_at_most,
    queue_page,
    queue_page_at,
    queue_position,
)
from tests.conftest import both_backends, sqlite_selects


@both_backends
def test_filters(loaded: Database) -> None:
    total = queue_count(loaded)
    assert total == loaded.execute("SELECT count(*) FROM findings").fetchone()[0]
    assert queue_count(loaded, kind="unsupported-claim") == 3
    assert queue_count(loaded, kind="unsupported-claim", code="advisory") == 1
    assert queue_count(loaded, kind="coverage-gap", tool="flogi_lookup") == 2
    page = queue_page(loaded, limit=5)
    nxt = queue_page(loaded, after=page[-1]["cursor"], limit=5)
    assert [r["id"] for r in page + nxt] == [r["id"] for r in queue_page(loaded, limit=10)]


@both_backends
def test_a_tool_named_only_in_a_findings_refs_is_found_whatever_its_name(loaded: Database) -> None:
    """The tool filter reads a finding's refs (`toolName`, `id`) as well as its own tool: a name the refs'
    JSON writes escaped (a quote, a backslash) or as it is (accents, underscores) is found alike, so the
    text test that spares parsing refs that cannot hold the name never drops one that does."""
    import orjson

    names = ['we"ird\\tool', "café_lookup", "100%_sure"]
    ids = [r[0] for r in loaded.execute("SELECT id FROM findings ORDER BY id LIMIT 3").fetchall()]
    for fid, name in zip(ids, names, strict=True):
        key = "toolName" if name != "café_lookup" else "id"
        refs = orjson.dumps([{"shape": "number"}, {key: name}]).decode()
        loaded.execute("UPDATE findings SET refs = ? WHERE id = ?", [refs, fid])
    for fid, name in zip(ids, names, strict=True):
        assert [r["id"] for r in queue_page(loaded, tool=name, limit=10)] == [fid], name
        assert queue_count(loaded, tool=name) == 1, name
    assert queue_count(loaded, tool="café") == 0  # a part of a name is not the name


@both_backends
def test_label_states_and_next_unlabelled(loaded: Database) -> None:
    ids = [r["id"] for r in queue_page(loaded, limit=3)]
    labels.label_finding(loaded, ids[0], "unsure", "ann")
    assert next_unlabelled(loaded) == ids[1]
    assert next_unlabelled(loaded, reviewer="bob") == ids[0]
    assert queue_count(loaded, state="mine", reviewer="ann") == 1
    labels.label_finding(loaded, ids[0], "unsure", "bob")
    assert queue_count(loaded, state="disagreement") == 0
    kind = loaded.execute("SELECT kind FROM findings WHERE id = ?", [ids[1]]).fetchone()[0]
    first, second = ("justified", "wrong") if kind == "withheld-answer" else ("tp", "fp")
    labels.label_finding(loaded, ids[1], first, "ann")
    labels.label_finding(loaded, ids[1], second, "bob")
    assert queue_count(loaded, state="disagreement") == 1
    assert queue_page(loaded, state="disagreement")[0]["labels"] == {"ann": first, "bob": second}


@both_backends
def test_evidence_for_a_dangling_reference(loaded: Database) -> None:
    fid = loaded.execute("SELECT id FROM findings WHERE kind = 'dangling-reference'").fetchone()[0]
    ev = assemble_evidence(**evidence_rows(loaded, fid))
    assert ev["offered_tool"] == "screen_fire"
    assert ev["evicted"][0]["dropped_tools"] == ["whats_here"] and ev["evicted"][0]["iteration"] == 4
    assert [c["call_id"] for c in ev["evicted"][0]["calls"]] == ["h1"]


@both_backends
def test_evidence_for_a_withheld_answer(loaded: Database) -> None:
    fid = loaded.execute(
        "SELECT f.id FROM findings f JOIN runs r ON r.key = f.run_key WHERE f.kind = 'withheld-answer' AND r.outcome = 'refused'"
    ).fetchone()[0]
    ev = assemble_evidence(**evidence_rows(loaded, fid))
    assert ev["withheld"]["outcome"] == "refused" and ev["withheld"]["channel"] == "evidence-gate"
    assert "1500" in ev["withheld"]["draft"]
    assert "1500" in ev["finding"]["message"]


@both_backends
def test_evidence_for_a_coverage_gap_names_the_read(loaded: Database) -> None:
    fid = loaded.execute(
        "SELECT id FROM findings WHERE kind = 'coverage-gap' AND tool_name = 'flogi_lookup' AND codes LIKE '%cannot%'"
    ).fetchone()[0]
    ev = assemble_evidence(**evidence_rows(loaded, fid))
    [read] = ev["reads"]
    assert read["tool_name"] == "flogi_lookup" and read["absent"] is True
    assert [c["what"] for c in read["cannot_cover"]] == ["ports on the peer fabric"]
    assert len(read["checked"]) == 2


@both_backends
def test_queue_rows_say_what_the_person_received(loaded: Database) -> None:
    rows = queue_page(loaded, limit=10_000)
    by_outcome = {(r["outcome"], r["delivered"], r["delivered_as"]) for r in rows}
    assert ("delivered", True, "drafted") in by_outcome
    assert ("refused", False, None) in by_outcome and ("denied", False, None) in by_outcome
    # only withheld drafts are queued as withheld answers: not the contract unmet (delivered raw), not the pause
    withheld = [r for r in rows if r["kind"] == "withheld-answer"]
    assert sorted(r["outcome"] for r in withheld) == ["denied", "refused"]
    assert all(r["delivered"] is False for r in withheld)


def _position(loaded: Database, finding_id: str) -> tuple[int, int]:
    """(event seq or -1, 0): where a finding stands in its run."""
    seq = loaded.execute("SELECT seq FROM findings WHERE id = ?", [finding_id]).fetchone()[0]
    return (-1 if seq is None else int(seq), 0)


def test_the_queue_reads_by_run_then_position_in_the_run(loaded: Database) -> None:
    rows = queue_page(loaded, limit=10_000)
    assert len(rows) == queue_count(loaded)
    runs = [r["run_key"] for r in rows]
    # each run's findings together, runs in run order, and in a run by the event each was filed at
    assert runs == sorted(runs)
    for key in set(runs):
        mine = [r for r in rows if r["run_key"] == key]
        assert [(_position(loaded, r["id"]), r["id"]) for r in mine] == sorted(
            (_position(loaded, r["id"]), r["id"]) for r in mine
        )


@both_backends
@pytest.mark.parametrize("sort", list(QUEUE_SORTS))
def test_every_sort_pages_by_keyset_and_agrees_with_jumps_and_positions(loaded: Database, sort: str) -> None:
    whole = queue_page(loaded, sort=sort, limit=10_000)
    assert sorted(r["id"] for r in whole) == sorted(r["id"] for r in queue_page(loaded, limit=10_000))
    paged, after = [], None
    while page := queue_page(loaded, sort=sort, limit=7, after=after):
        paged += page
        after = page[-1]["cursor"]
    assert [r["id"] for r in paged] == [r["id"] for r in whole]
    assert [r["id"] for r in queue_page_at(loaded, sort=sort, offset=9, limit=5)] == [
        r["id"] for r in whole[9:14]
    ]
    for n in (0, 5, len(whole) - 1):
        assert queue_position(loaded, whole[n]["id"], sort=sort) == n


@both_backends
def test_sorts_order_what_they_say(loaded: Database, db_path: Path) -> None:
    kinds = [r["kind"] for r in queue_page(loaded, sort="kind", limit=10_000)]
    assert kinds == sorted(kinds)
    tools = [r["tool_name"] for r in queue_page(loaded, sort="tool", limit=10_000)]
    named = [t for t in tools if t is not None]
    assert tools == named + [None] * (len(tools) - len(named)) and named == sorted(named)
    started = {k: s for k, s in loaded.execute("SELECT key, coalesce(started_ms, -1) FROM runs").fetchall()}
    newest = [started[r["run_key"]] for r in queue_page(loaded, sort="newest", limit=10_000)]
    assert newest == sorted(newest, reverse=True)
    # disagreements first: a finding two reviewers judge differently leads
    ids = [r["id"] for r in queue_page(loaded, limit=10_000)]
    late = ids[-1]
    labels.label_finding(loaded, late, "unsure", "ann")
    kind = loaded.execute("SELECT kind FROM findings WHERE id = ?", [late]).fetchone()[0]
    labels.label_finding(loaded, late, "wrong" if kind == "withheld-answer" else "fp", "bob")
    first = queue_page(loaded, sort="disagreement", limit=3)
    assert first[0]["id"] == late and [r["id"] for r in first[1:]] == [i for i in ids if i != late][:2]


@both_backends
def test_opening_and_advancing_stay_on_unlabelled_findings_of_the_run(loaded: Database) -> None:
    rows = queue_page(loaded, limit=10_000)
    assert first_unlabelled(loaded, reviewer="ann") == (rows[0]["id"], 0)
    labels.label_finding(loaded, rows[0]["id"], "unsure", "ann")
    assert first_unlabelled(loaded, reviewer="ann") == (rows[1]["id"], 1)
    # a run with several findings: after labelling its first, the next is its second, even when sorted by
    # kind (where the run's other findings stand in other kinds' groups)
    by_kind = queue_page(loaded, sort="kind", limit=10_000)
    key = next(
        k for k in {r["run_key"] for r in rows} if len({r["kind"] for r in rows if r["run_key"] == k}) > 1
    )
    in_run = [r["id"] for r in by_kind if r["run_key"] == key]
    labels.label_finding(loaded, in_run[0], "unsure", "ann")
    nxt = next_unlabelled(loaded, after=in_run[0], reviewer="ann", sort="kind", same_run=True)
    assert nxt in in_run[1:]
    # the run done: on to the next unlabelled in the queue's order
    for fid in in_run[1:]:
        labels.label_finding(loaded, fid, "unsure", "ann")
    order = [r["id"] for r in by_kind]
    after = order[order.index(in_run[-1]) + 1 :]
    mine = {r["id"] for r in by_kind if r["run_key"] == key} | {rows[0]["id"]}
    expected = next(i for i in after if i not in mine)
    assert next_unlabelled(loaded, after=in_run[-1], reviewer="ann", sort="kind", same_run=True) == expected


@both_backends
@pytest.mark.parametrize("sort", list(QUEUE_SORTS))
def test_the_queue_opens_where_its_first_page_says_without_reading_again(
    loaded: Database, sort: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the queue opens is looked for first among the rows of its first page, already read with their
    labels (`head`): the same finding and row as walking for it, and no read of the store when it is there.
    Walking again read a filter's whole set twice more (a rare code newest first: 691 ms on PostgreSQL at a
    million runs, two thirds of it these walks)."""
    order = [r["id"] for r in queue_page(loaded, sort=sort, limit=10_000)]
    kind = loaded.execute("SELECT kind FROM findings ORDER BY id LIMIT 1").fetchone()[0]
    for n, fid in enumerate(order[:5]):  # the first findings labelled: by ann, by bo, or both
        for who in ("ann", "bo")[n % 2 :] if n < 4 else ("bo",):
            labels.label_finding(loaded, fid, "unsure", who)
    execute = type(loaded).execute
    for filters in ({}, {"kind": kind}):
        for reviewer in ("ann", "bo", None):
            wanted = {**filters, "reviewer": reviewer}
            expected = first_unlabelled(loaded, sort=sort, **wanted)
            assert expected is not None
            for limit in (1, 2, 3, 6, 10_000):
                head = queue_page(loaded, sort=sort, limit=limit, **wanted)
                assert first_unlabelled(loaded, sort=sort, head=head, **wanted) == expected, (limit, wanted)
            head = queue_page(loaded, sort=sort, limit=10_000, **wanted)
            reads: list[str] = []

            def watched(db: Any, sql: str, *args: Any, reads: list[str] = reads, **kwargs: Any) -> Any:
                reads.append(sql)
                return execute(db, sql, *args, **kwargs)

            with monkeypatch.context() as patched:
                patched.setattr(type(loaded), "execute", watched)
                assert first_unlabelled(loaded, sort=sort, head=head, **wanted) == expected
            assert reads == [], f"{sort} / {wanted}: where the queue opens was read again: {reads}"
    # every finding labelled by ann: she has no opening, in the first page or past it
    for fid in order:
        labels.label_finding(loaded, fid, "unsure", "ann")
    for limit in (2, 10_000):
        head = queue_page(loaded, sort=sort, limit=limit, reviewer="ann")
        assert first_unlabelled(loaded, sort=sort, head=head, reviewer="ann") is None
    assert first_unlabelled(loaded, sort=sort, reviewer="ann") is None


def test_a_code_and_tool_filter_is_counted_window_by_window_and_the_progress_line_says_when_it_is_a_lower_bound(
    synthetic_sqlite_store: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two queue filters no tally answers together (a code and a tool): their count and the progress line's
    total read windows of findings, newest first, for a bounded time (at a million runs the progress line
    counted every finding of a kind and a tool so: 1.6 s). Exact when the windows end in time, else a lower
    bound the screens show as `n+`. (A tool, and a kind with a tool or a code, have their tallies, schema
    m023 and m027.)"""
    from store import findings as queue

    db = synthetic_sqlite_store
    filters = {"code": "TIMEOUT", "tool": "query_metrics"}
    scanned = db.execute(
        "SELECT count(*) FROM findings WHERE tool_name = 'query_metrics' AND codes LIKE '%\"TIMEOUT\"%'"
    ).fetchone()[0]
    assert scanned > 50
    monkeypatch.setattr(queue, "COUNT_WINDOW_FINDINGS", 300)
    monkeypatch.setattr(queue, "COUNT_WINDOW_FINDINGS_MAX", 300)
    counted = queue.queue_count_at_most(db, **filters)
    assert counted.exact and counted == scanned
    assert queue.queue_progress(db, **filters)["total"] == scanned
    monkeypatch.setattr(queue, "QUEUE_COUNT_BUDGET_S", 0.0)  # out of time after the first window
    partial = queue.queue_count_at_most(db, **filters)
    assert not partial.exact and 0 < partial < scanned
    total = queue.queue_progress(db, **filters)["total"]
    assert not getattr(total, "exact", True) and total == partial
    from reviewer.ui.screens.queue import progress_text

    shown = progress_text({"labelled": 0, "total": total, "mine": 0, "disagreements": 0}, None, {}).plain
    assert f"0 / {int(total):,}+ labelled" in shown


@both_backends
def test_a_kind_and_a_code_are_counted_from_their_tally_and_filters_under_no_common_kind_are_empty(
    loaded: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kind and a code are counted exactly from their `kind_code` tally (schema m027); filters filed under
    no common kind leave nothing (in every order, with an exact count of 0), and every pair and triple of a
    kind, a code, a tool and a pack version lists and counts what a scan of the findings finds."""
    import itertools
    import json

    from store import findings as findings_module

    kinds = [r[0] for r in loaded.execute("SELECT DISTINCT kind FROM findings ORDER BY kind")]
    for n, kind in enumerate(kinds[:2]):  # pack versions on a few findings of two kinds, as replays file them
        loaded.execute(
            "UPDATE findings SET pack_version = ? WHERE id IN (SELECT id FROM findings WHERE kind = ? "
            "ORDER BY id LIMIT 4)",
            [f"en-negatives@{n + 1}", kind],
        )
    rows = loaded.execute("SELECT id, kind, codes, tool_name, pack_version FROM findings").fetchall()
    found = [
        {"id": fid, "kind": kind, "codes": set(json.loads(codes or "[]")), "tool": tool, "pack_version": pack}
        for fid, kind, codes, tool, pack in rows
    ]
    filed: dict[tuple[str, str], int] = {}
    for f in found:
        for code in f["codes"]:
            filed[(f["kind"], code)] = filed.get((f["kind"], code), 0) + 1
    assert len({k for k, _ in filed}) > 1
    for (kind, code), n in filed.items():
        assert queue_count(loaded, kind=kind, code=code) == n, (kind, code)
        assert queue_count_at_most(loaded, kind=kind, code=code).exact
    [(kind, code), *_] = sorted((k, c) for k in kinds for c in {c for _, c in filed} if (k, c) not in filed)
    for sort in QUEUE_SORTS:
        assert queue_page(loaded, sort=sort, limit=20, kind=kind, code=code) == []
    assert queue_count(loaded, kind=kind, code=code) == 0
    assert queue_count_at_most(loaded, kind=kind, code=code).exact
    values = {
        "kind": kinds[:3],
        "code": sorted({c for _, c in filed})[:3],
        "tool": sorted({f["tool"] for f in found if f["tool"]})[:2],
        "pack_version": ["en-negatives@1", "en-negatives@2"],
    }
    for names in [*itertools.combinations(values, 2), *itertools.combinations(values, 3)]:
        for picked in itertools.product(*(values[n] for n in names)):
            filters = dict(zip(names, picked, strict=True))
            scanned = sorted(
                f["id"]
                for f in found
                if all(
                    value in f["codes"] if name == "code" else f[name] == value
                    for name, value in filters.items()
                )
            )
            listed = sorted(r["id"] for r in queue_page(loaded, sort="kind", limit=10_000, **filters))
            assert listed == scanned and queue_count(loaded, **filters) == len(scanned), filters
            newest = [r["id"] for r in queue_page(loaded, sort="newest", limit=10_000, **filters)]
            with monkeypatch.context() as walking:  # newest first a tool with a pack version is read whole
                walking.setattr(findings_module, "_driver", lambda *a, **k: None)
                walked = [r["id"] for r in queue_page(loaded, sort="newest", limit=10_000, **filters)]
            assert newest == walked and sorted(newest) == scanned, filters
    # a tool with a pack version on more findings than the tool has: newest first, the tool's findings are
    # read whole from the tool order's index (which holds the pack version, m028) on SQLite; PostgreSQL
    # walks its newest-first index, which holds both (m030)
    postgres = is_postgres(loaded)
    loaded.execute("UPDATE findings SET pack_version = 'en-all@1' WHERE kind = ?", [kinds[0]])
    tools = sorted({f["tool"] for f in found if f["kind"] == kinds[0] and f["tool"]})[:2]
    assert tools, "the fixture recordings must have tools in their first kind"
    for tool in tools:
        filters = {"tool": tool, "pack_version": "en-all@1"}
        driver = findings_module._driver(loaded, filters, "newest")
        scanned = sorted(f["id"] for f in found if f["tool"] == tool and f["kind"] == kinds[0])
        newest = [r["id"] for r in queue_page(loaded, sort="newest", limit=10_000, **filters)]
        with monkeypatch.context() as walking:
            walking.setattr(findings_module, "_driver", lambda *a, **k: None)
            walked = [r["id"] for r in queue_page(loaded, sort="newest", limit=10_000, **filters)]
        assert newest == walked and sorted(newest) == scanned and scanned, filters
        if postgres:
            assert driver is None or driver.index != "findings_tool_order", driver
        else:
            assert driver is not None and driver.index == "findings_tool_order", driver


def test_filters_under_no_common_kind_are_empty_without_reading_the_findings(
    synthetic_sqlite_store: Database, tmp_path: Path
) -> None:
    """Two filters filed under no common kind (a code only coverage gaps carry, a pack version only negative
    claims carry) leave nothing, known from the tallies in a few reads: at a million runs the walk read every
    finding of the store to learn it (0.3-1.3 s an opening)."""
    from store import findings as queue

    synthetic_sqlite_store.execute(f"VACUUM INTO '{tmp_path / 'own.db'}'")  # the module's store is shared
    db = open_database(tmp_path / "own.db")
    db.execute(  # a code only coverage gaps carry (the tallies follow, by their triggers)
        "UPDATE findings SET codes = '[\"SCOPE_LIMIT\"]' WHERE id IN "
        "(SELECT id FROM findings WHERE kind = 'coverage-gap' ORDER BY id LIMIT 40)"
    )
    db.execute(  # a pack version, as a replay files it on a few negative claims
        "UPDATE findings SET pack_version = 'en@1' WHERE id IN "
        "(SELECT id FROM findings WHERE kind = 'negative-claim' ORDER BY id LIMIT 5)"
    )
    apart = {"code": "SCOPE_LIMIT", "pack_version": "en@1"}
    assert queue.queue_count(db, code="SCOPE_LIMIT") == 40 and queue.queue_count(db, pack_version="en@1") == 5

    def opened_in_every_order() -> None:
        for sort in QUEUE_SORTS:
            assert queue.queue_page(db, sort=sort, limit=60, **apart) == []
            assert queue.first_unlabelled(db, sort=sort, **apart) is None
        assert queue.queue_count(db, **apart) == 0
        assert queue.queue_count_at_most(db, **apart).exact

    statements = sqlite_selects(db, opened_in_every_order)
    # the findings are read only to seek whether the code's kinds hold the pack version (one seek a kind):
    # no walk, not even newest first's walk of every run by chunks
    reads = [s for s in statements if "findings" in s and "tallies" not in s]
    assert reads and all("WHERE EXISTS" in s and "findings_pack_kind" in s for s in reads), reads


def test_a_kind_and_a_pack_version_are_counted_exactly_from_their_index(
    synthetic_sqlite_store: Database, tmp_path: Path
) -> None:
    """A kind and a pack version are counted from one range of their index (`findings_pack_kind`), exact,
    never window by window of findings (at a million runs 25 ms and a lower bound for a rare kind with a
    common pack version; 0.3 ms so)."""
    from store import findings as queue

    synthetic_sqlite_store.execute(f"VACUUM INTO '{tmp_path / 'own.db'}'")  # the module's store is shared
    db = open_database(tmp_path / "own.db")
    db.execute(
        "UPDATE findings SET pack_version = 'en@1' WHERE id IN (SELECT id FROM findings ORDER BY id LIMIT 900)"
    )

    def counted_by_kind() -> None:
        for kind in ("negative-claim", "coverage-gap"):
            scanned = db.execute(
                "SELECT count(*) FROM findings WHERE kind = ? AND pack_version = 'en@1'", [kind]
            ).fetchone()[0]
            counted = queue.queue_count_at_most(db, kind=kind, pack_version="en@1")
            assert counted.exact and counted == scanned > 0, kind

    statements = sqlite_selects(db, counted_by_kind)
    assert not [s for s in statements if "rowid BETWEEN" in s], "counted window by window"


def _queue_filters_of(db: Database) -> list[dict[str, str]]:
    """Filters the queue may read whole (label states, a code, a pack version, pairs of them with a kind,
    pairs no finding meets) beside a kind alone, from the store's own values."""
    kinds = [r[0] for r in db.execute("SELECT DISTINCT kind FROM findings ORDER BY kind")]
    # the fixture recordings name no phrase pack: a few findings of two kinds get versions, as replays file them
    for n, kind in enumerate(kinds[:2]):
        db.execute(
            "UPDATE findings SET pack_version = ? WHERE id IN (SELECT id FROM findings WHERE kind = ? ORDER BY id "
            "LIMIT 4)",
            [f"en-negatives@{n + 1}", kind],
        )
    codes = [r[0] for r in db.execute("SELECT DISTINCT code FROM finding_codes ORDER BY code")]
    packs = [
        r[0] for r in db.execute("SELECT DISTINCT pack_version FROM findings WHERE pack_version IS NOT NULL")
    ]
    assert len(kinds) > 2 and codes and packs, (
        "the fixture recordings must have kinds, codes and pack versions"
    )
    out: list[dict[str, str]] = [{"state": s} for s in ("labelled", "mine", "disagreement", "unlabelled")]
    out += [{"kind": kinds[0]}, {"code": codes[0]}, {"code": codes[-1]}, {"pack_version": packs[0]}]
    out += [{"kind": k, "code": codes[0]} for k in kinds[:3]]
    out += [{"kind": k, "pack_version": packs[0]} for k in kinds[:3]]
    out += [{"kind": kinds[-1], "state": "labelled"}, {"code": codes[0], "state": "mine"}]
    return out


@both_backends
@pytest.mark.parametrize("sort", list(QUEUE_SORTS))
def test_a_filter_read_whole_lists_what_walking_the_sort_lists(
    loaded: Database, sort: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A queue whose filters leave few findings reads them whole by the filter's own index (a reviewer's own
    labels newest first walked every finding at a million runs: 3.9 s); the rows, their keyset pages, jumps,
    positions and where the queue opens are those walking the sort's index gives."""
    from store import findings
    from store.vocab import verdicts_for

    some = loaded.execute("SELECT id, kind FROM findings ORDER BY id LIMIT 12").fetchall()
    for n, (fid, kind) in enumerate(some):  # two reviewers, disagreeing on a third of them
        verdicts = verdicts_for(kind)
        labels.label_finding(loaded, fid, verdicts[0], "ann")
        labels.label_finding(loaded, fid, verdicts[1] if n % 3 == 0 else verdicts[0], "bo")
    driven = 0
    for filters in _queue_filters_of(loaded):
        wanted = {**filters, "reviewer": "ann"}
        read_whole = findings._driver(loaded, wanted, sort) is not None
        driven += read_whole

        def listing(
            filters: dict[str, str] = filters, wanted: dict[str, str] = wanted
        ) -> tuple[list[str], list[str], list[str], list[int | None], Any]:
            whole = [r["id"] for r in queue_page(loaded, sort=sort, limit=10_000, **wanted)]
            paged, after = [], None
            while page := queue_page(loaded, sort=sort, limit=3, after=after, **wanted):
                paged += [r["id"] for r in page]
                after = page[-1]["cursor"]
            jump = [r["id"] for r in queue_page_at(loaded, sort=sort, offset=2, limit=3, **wanted)]
            positions = [queue_position(loaded, fid, sort=sort, **wanted) for fid in whole[:4]]
            opened = None if "state" in filters else first_unlabelled(loaded, sort=sort, **wanted)
            return whole, paged, jump, positions, opened

        got = listing()
        with monkeypatch.context() as walking:
            walking.setattr(findings, "_driver", lambda *a, **k: None)
            walked = listing()
        assert got == walked, f"{sort} / {filters}: read whole {read_whole}"
        assert got[0] == got[1], f"{sort} / {filters}: keyset pages differ from the whole list"
        assert sorted(got[0]) == sorted(r["id"] for r in queue_page(loaded, limit=10_000, **wanted)), (
            f"{sort} / {filters}: another sort lists other findings"
        )
    assert driven >= 6, f"{sort}: only {driven} of the filters were read whole; the test means nothing"


@both_backends
def test_postgresql_reads_a_rare_code_whole_by_its_keys_where_sqlite_walks(
    db: Database, store_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At a million runs's sizes (947,500 findings, a code in 14,600): on PostgreSQL a walk costs more an
    entry in the run and newest orders, so the code's findings are read whole from the keys index (newest
    first 65-80 ms walking, 26-31 ms read whole; a kind's likewise); SQLite walks as before."""
    from store import findings

    sizes = {("findings", ""): 947_500, ("code", "rare"): 14_600, ("code", "middling"): 69_800}
    sizes |= {("kind", "rare"): 14_600}
    monkeypatch.setattr(findings, "tally", lambda _db, facet, value="": sizes[(facet, value)])
    postgres = store_backend == "postgresql"
    for sort in ("run", "newest"):
        assert (findings._driver(db, {"code": "rare"}, sort) is not None) is postgres, sort
        assert findings._driver(db, {"code": "middling"}, sort) is None, sort
    # disagreements first likewise on PostgreSQL (the disagreeing findings are read by id, the rest from the
    # code's keys, m031: the rare code walked 48-60 ms, read whole 22-39)
    assert (findings._driver(db, {"code": "rare"}, "disagreement") is not None) is postgres
    if postgres:  # a code's findings with their keys from `finding_codes` (m031), not by id
        assert findings._driver(db, {"code": "rare"}, "run").index == findings.CODE_KEYS_SOURCE  # type: ignore[union-attr]
    # a rare kind newest first is walked on both: PostgreSQL reads it from the kind's newest-first index
    # (schema m030: 3.6 ms a page at a million runs, where the kind read whole and sorted took 82 ms)
    assert findings._driver(db, {"kind": "rare"}, "newest") is None
    assert findings._driver(db, {"kind": "rare"}, "kind") is None


@both_backends
def test_by_tool_a_set_read_whole_is_read_once_for_both_parts(
    loaded: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By tool, a set read whole (here a reviewer's labels) is read once for a page that spans a tool's
    findings and those of none, in the order the two-part walk gives, page by page (read part by part, a
    rare code by tool was read twice: 26 + 77 ms at a million runs on PostgreSQL)."""
    from store import findings as findings_module
    from tests.conftest import record_statements

    rows = queue_page(loaded, sort="tool", limit=10_000)
    with_tool = [r["id"] for r in rows if r["tool_name"]][:2]
    without = [r["id"] for r in rows if not r["tool_name"]][:2]
    assert len(with_tool) == 2 and len(without) == 2, "the fixture needs findings with and without a tool"
    for fid in with_tool + without:
        labels.label_finding(loaded, fid, "unsure", "ann")
    mine = {"state": "mine", "reviewer": "ann"}
    assert findings_module._driver(loaded, mine, "tool") is not None, "a reviewer's few labels are read whole"
    statements = record_statements(loaded, monkeypatch)
    first = queue_page(loaded, sort="tool", limit=3, **mine)
    assert len([sql for sql, _ in statements if f"LIMIT {1 << 62}" in sql]) == 1, "the set was read twice"
    paged, after = [], None
    while page := queue_page(loaded, sort="tool", limit=1, after=after, **mine):
        paged += page
        after = page[-1]["cursor"]
    with monkeypatch.context() as walking:
        walking.setattr(findings_module, "_driver", lambda *a, **k: None)
        walked = queue_page(loaded, sort="tool", limit=10, **mine)
    assert [r["id"] for r in paged] == [r["id"] for r in walked] == with_tool + without
    assert [r["cursor"] for r in paged] == [r["cursor"] for r in walked]
    assert [r["id"] for r in first] == with_tool + without[:1]


@both_backends
def test_of_two_sets_the_cheaper_read_is_read_whole(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rare kind and a rare code of as many findings (13,790 each at a million runs): the code's set, whose
    keys its index holds, is read, not the kind's rows (newest first on SQLite: 90-97 -> 28-37 ms)."""
    from store import findings

    sizes = {("findings", ""): 947_500, ("code", "rare"): 13_790, ("kind", "rare"): 13_790}
    monkeypatch.setattr(findings, "tally", lambda _db, facet, value="": sizes[(facet, value)])
    monkeypatch.setattr(findings, "_never_meet", lambda *a, **k: False)
    driver = findings._driver(db, {"kind": "rare", "code": "rare"}, "newest")
    assert driver is not None and driver.replaces == "code", driver
