"""The what-if replay runs in one worker process beside the app: a write completes while it runs, its
progress and errors reach the caller as on a thread, and closing the service stops it."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.synthetic import insert_synthetic_answers
from reviewer.service import NotFound, ReviewService
from reviewer.service.pack_ops import create_pack
from reviewer.service.replay_process import ReplayStopped
from store.db.connection import open_database

ANSWERS = 600
WAIT_S = 60


@pytest.fixture
def replay_db(tmp_path: Path) -> tuple[Path, str]:
    """600 answers each flagged "found nothing", and a pack holding that phrase."""
    path = tmp_path / "replay.db"
    db = open_database(path)
    text = "We looked everywhere and found nothing at all in the logs."
    at = text.index("found nothing")
    insert_synthetic_answers(db, ((f"a-{i:05d}", text, [(at, at + 13)]) for i in range(ANSWERS)))
    stored = create_pack(db, "p", ["found nothing"], [], who="t")
    db.close()
    return path, stored.ref


def _holding() -> tuple[Callable[[int, int], None], threading.Event, threading.Event, list[tuple[int, int]]]:
    """A progress callback that holds the replay at its first count above zero until `release` is set."""
    paused, release = threading.Event(), threading.Event()
    seen: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        seen.append((done, total))
        if done and not release.is_set():
            paused.set()
            release.wait(WAIT_S)

    return progress, paused, release, seen


async def _replay(
    service: ReviewService, ref: str, progress: Callable[[int, int], None] | None = None
) -> dict[str, Any]:
    return await service.replay_pack(
        ref, holdout_share=0.2, seed="s", examples=0, progress=progress, progress_every=100
    )


async def test_the_replay_runs_in_its_own_process_while_a_write_completes(
    replay_db: tuple[Path, str],
) -> None:
    path, ref = replay_db
    service = ReviewService(path)
    progress, paused, release, seen = _holding()
    try:
        replay = asyncio.ensure_future(_replay(service, ref, progress))
        assert await asyncio.to_thread(paused.wait, WAIT_S), "the replay never reported progress"
        worker = service._replays.worker_pid
        assert worker is not None and worker != os.getpid()
        os.kill(worker, 0)  # a live process, not this one
        written = await asyncio.wait_for(service.label_finding("syn-a-00007-0", "tp", "ann"), timeout=WAIT_S)
        assert written["label"]["verdict"] == "tp" and not replay.done()
        release.set()
        data = await asyncio.wait_for(replay, timeout=WAIT_S)
        assert data["answers"] == ANSWERS and data["trial"]["id"] >= 1
        assert seen[0] == (100, ANSWERS) and seen[-1] == (ANSWERS, ANSWERS)
        # the same worker serves the next replay, and its trial is a new write
        again = await asyncio.wait_for(_replay(service, ref), timeout=WAIT_S)
        assert service._replays.worker_pid == worker
        assert again["answers"] == ANSWERS and again["trial"]["id"] > data["trial"]["id"]
    finally:
        release.set()
        service.close()


class Boom(Exception):
    pass


async def test_a_failing_replay_raises_its_own_error_and_the_worker_stays_usable(
    replay_db: tuple[Path, str],
) -> None:
    path, ref = replay_db
    service = ReviewService(path)

    def fail(done: int, total: int) -> None:
        raise Boom(f"stopped at {done}/{total}")

    try:
        with pytest.raises(NotFound, match="nope"):
            await asyncio.wait_for(_replay(service, "nope@1"), timeout=WAIT_S)
        with pytest.raises(ValueError, match="holdout share"):
            await asyncio.wait_for(
                service.replay_pack(ref, holdout_share=2.0, seed="s", examples=0), timeout=WAIT_S
            )
        with pytest.raises(Boom, match="stopped at 100/600"):
            await asyncio.wait_for(_replay(service, ref, fail), timeout=WAIT_S)
        # the stopped replay left no trial and did not wedge the worker
        data = await asyncio.wait_for(_replay(service, ref), timeout=WAIT_S)
        assert data["answers"] == ANSWERS and data["trial"]["id"] == 1
    finally:
        service.close()


async def test_closing_the_service_stops_a_held_replay_and_its_worker(replay_db: tuple[Path, str]) -> None:
    path, ref = replay_db
    service = ReviewService(path)
    progress, paused, release, _seen = _holding()
    try:
        replay = asyncio.ensure_future(_replay(service, ref, progress))
        assert await asyncio.to_thread(paused.wait, WAIT_S), "the replay never reported progress"
        worker = service._replays.worker_pid
        assert worker is not None
        service.close()
        release.set()
        with pytest.raises((RuntimeError, ReplayStopped)):
            await asyncio.wait_for(replay, timeout=WAIT_S)
        deadline = time.monotonic() + WAIT_S
        while _alive(worker) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert not _alive(worker), "the replay worker outlived the closed service"
    finally:
        release.set()
        service.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
