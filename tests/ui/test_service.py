"""ReviewService: writes on one database thread, reads on read-only reader threads; run pages, headers,
timelines, unlabelled counts."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from reviewer.service import ReviewService, build_timeline
from store.db.connection import open_database
from store.errors import NotFound
from store.labels import label_finding
from store.runs import list_runs
from tests.ui.recordings import CLAUSE_1, EMOJI_RUN


@pytest.fixture
async def service(ui_db: Path):
    svc = ReviewService(ui_db)
    yield svc
    svc.close()


async def test_writes_on_one_db_thread_reads_on_readers(service: ReviewService) -> None:
    threads = service._threads
    writers = {await threads.write(lambda db: threading.current_thread().name) for _ in range(5)}
    readers = {await threads.read(lambda db: threading.current_thread().name) for _ in range(5)}
    await service.runs_block()
    assert len(writers) == 1 and next(iter(writers)).startswith("reviewer-db-write")
    assert readers and all(name.startswith("reviewer-db-read") for name in readers)
    assert threading.current_thread().name not in writers | readers
    # a reader's connection is read-only: a stray write there fails instead of racing the writer
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        await threads.read(lambda db: db.execute("CREATE TABLE t (x)"))


def test_the_service_has_no_generic_call() -> None:
    assert not hasattr(ReviewService, "call") and not hasattr(ReviewService, "_call")


async def test_pages_follow_the_store_order_by_keyset(service: ReviewService, ui_db: Path) -> None:
    db = open_database(ui_db)
    expected = [r["run_key"] for r in list_runs(db)]
    db.close()
    total, first = await service.first_block(limit=10)
    got = [r["run_key"] for r in first]
    while len(got) < total:
        got += [r["run_key"] for r in await service.runs_block(after=first[-1]["cursor"], limit=10)]
        first = await service.runs_block(offset=len(got) - 1, limit=1)  # offset path lands on the same row
        assert first[0]["run_key"] == got[-1]
    assert got == expected and total == len(expected)


async def test_header_then_timeline(service: ReviewService) -> None:
    header = await service.run_header(EMOJI_RUN)
    assert header["run_id"] == EMOJI_RUN and "tool_calls_rows" not in header
    assert [f["span_text"] for f in header["findings"]][0] == CLAUSE_1
    rows = await service.run_timeline(header["run_key"], header["findings"])
    assert [r["kind"] for r in rows] == ["iteration", "tool_call", "iteration", "finding", "finding"]
    call = await service.tool_call(header["run_key"], "call-1")
    assert call["call"]["tool_name"] == "list_incidents" and call["call"]["result"]["incidents"] == []
    with pytest.raises(NotFound):
        await service.run_header("no-such-run")


async def test_unlabelled_counts_follow_labels(service: ReviewService, ui_db: Path) -> None:
    header = await service.run_header(EMOJI_RUN)
    key = header["run_key"]

    async def unlabelled() -> int | None:
        _, rows = await service.first_block(limit=1000)
        return next(r["unlabelled"] for r in rows if r["run_key"] == key)

    assert await unlabelled() == 2
    db = open_database(ui_db)
    label_finding(db, header["findings"][0]["id"], "tp", "tester")
    db.close()
    assert await unlabelled() == 1


def test_timeline_puts_unsequenced_findings_after_their_call() -> None:
    parts = {
        "iterations": [
            {"seq": 1, "type": "agentfootprint.agent.iteration_start", "iteration": 1, "stage": "s"}
        ],
        "tool_calls": [
            {"call_id": "c1", "seq": 5, "tool_name": "t"},
            {"call_id": "c2", "seq": 9, "tool_name": "u"},
        ],
        "evictions": [{"id": "e1", "seq": 7, "iteration": 1}],
    }
    findings = [
        {"id": "gap", "seq": None, "call_id": "c1", "iteration": None},
        {"id": "late", "seq": 20, "iteration": 1},
        {"id": "loose", "seq": None, "iteration": None},
    ]
    order = [r.get("id") or r.get("call_id") or r["kind"] for r in build_timeline(parts, findings)]
    assert order == ["iteration", "c1", "gap", "e1", "c2", "late", "loose"]


async def test_queue_pages_agree_by_keyset_and_by_offset(service: ReviewService, ui_db: Path) -> None:
    from store.findings import queue_count

    first = await service.queue_first(reviewer="ann", limit=7)
    db = open_database(ui_db)
    assert first["total"] == queue_count(db) == first["progress"]["total"]
    db.close()
    assert first["progress"] == {"total": first["total"], "labelled": 0, "mine": 0, "disagreements": 0}
    ids = [r["id"] for r in first["rows"]]
    keys = [r["run_key"] for r in first["rows"]]
    assert keys == sorted(keys) and all(r["cursor"][-1] == r["id"] for r in first["rows"])  # by run
    assert first["first_unlabelled"] == (ids[0], 0)  # where the queue opens
    by_key = await service.queue_block(reviewer="ann", after=first["rows"][-1]["cursor"], limit=5)
    by_offset = await service.queue_block(reviewer="ann", offset=7, limit=5)
    assert [r["id"] for r in by_key] == [r["id"] for r in by_offset]
    assert await service.queue_position(by_key[2]["id"], reviewer="ann") == 9
    assert await service.queue_position(by_key[2]["id"], reviewer="ann", kind="no-such-kind") is None
    facets = await service.queue_facets()
    assert "negative-claim" in facets["kinds"] and "entity-unresolved" in facets["codes"]
    assert "list_incidents" in facets["tools"]


async def test_label_writes_return_the_new_state(service: ReviewService) -> None:
    first = (await service.queue_first(reviewer="ann", limit=3))["rows"]
    target = next(r for r in first if r["kind"] != "withheld-answer")
    got = await service.label_finding(target["id"], "tp", "ann", "why")
    assert got["label"]["verdict"] == "tp" and got["current"]["ann"]["note"] == "why"
    await service.label_finding(target["id"], "fp", "bob")
    got = await service.label_finding(target["id"], "fp", "ann")
    assert [r["verdict"] for r in got["history"]] == ["tp", "fp", "fp"]
    undone = await service.undo_label("ann", target["id"])
    assert undone["label"]["verdict"] == "tp" and {r: c["verdict"] for r, c in undone["current"].items()} == {
        "ann": "tp",
        "bob": "fp",
    }
    progress = await service.queue_progress(reviewer="ann")
    assert (progress["labelled"], progress["mine"], progress["disagreements"]) == (1, 1, 1)
    assert (await service.queue_first(reviewer="ann", state="disagreement"))["total"] == 1
    # the next finding ann has not labelled, after this one
    nxt = await service.next_unlabelled(reviewer="ann", after=target["id"])
    assert nxt is not None and nxt != target["id"]
    expected = next(r["id"] for r in first if r["id"] != target["id"])
    assert await service.next_unlabelled(reviewer="bob") == expected
    stats = await service.label_stats()
    assert stats["agreement"][0]["reviewers"] == ["ann", "bob"] and stats["disagreements"]
    ev = await service.finding_evidence(target["id"])
    assert [r["verdict"] for r in ev["history"]] == ["tp", "fp", "fp", "tp"]
    assert {r: c["verdict"] for r, c in ev["current"].items()} == {"ann": "tp", "bob": "fp"}
    header = await service.run_header(EMOJI_RUN)
    missed = await service.label_missed(header["run_key"], 2, 9, "none", "ann")
    assert missed["span_text"] == header["answer"][2:9]
    assert [m["span_text"] for m in await service.missed_labels(header["run_key"])] == [header["answer"][2:9]]


async def test_a_label_write_is_not_queued_behind_a_running_replay(tmp_path: Path) -> None:
    """The replay is held mid-run on its reader (its progress callback waits); the write must still finish."""
    import asyncio

    from bench.synthetic import insert_synthetic_answers
    from reviewer.service.pack_ops import create_pack

    path = tmp_path / "replay.db"
    db = open_database(path)
    text = "We looked everywhere and found nothing at all in the logs."
    at = text.index("found nothing")
    insert_synthetic_answers(db, ((f"a-{i:05d}", text, [(at, at + 13)]) for i in range(600)))
    stored = create_pack(db, "p", ["found nothing"], [], who="t")
    db.close()

    service = ReviewService(path)
    paused, release = threading.Event(), threading.Event()

    def progress(done: int, total: int) -> None:
        if done and not release.is_set():
            paused.set()
            release.wait(60)

    try:
        replay = asyncio.ensure_future(
            service.replay_pack(
                stored.ref, holdout_share=0.2, seed="s", examples=0, progress=progress, progress_every=100
            )
        )
        assert await asyncio.to_thread(paused.wait, 60), "the replay never started"
        written = await asyncio.wait_for(service.label_finding("syn-a-00007-0", "tp", "ann"), timeout=60)
        assert written["label"]["verdict"] == "tp" and not replay.done()
        release.set()
        data = await asyncio.wait_for(replay, timeout=60)
        assert data["answers"] == 600 and data["trial"]["id"] >= 1
    finally:
        release.set()
        service.close()
