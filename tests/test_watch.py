"""`reviewer watch`: new recordings ingested as they appear, in a folder (file events) and in a bucket
(listings). Every wait polls for its condition with a generous deadline; nothing depends on how fast a
file event arrives (a loaded 2-core machine can take seconds)."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlite_utils import Database

from store import watch as watch_module
from store.db.connection import connect, open_database
from store.db.ingest import IngestReport
from store.reading import buckets
from store.recordings import list_quarantine
from store.watch import _Settling, poll_bucket_once, watch_folder
from tests.artifact_fixtures import Scope, put_file_artifact, recording_meta, recording_text
from tests.bucket_servers import gcs_bucket, s3_bucket
from tests.conftest import FIXTURE_RECORDINGS

ROOT = Path(__file__).resolve().parents[1]
FIRST, SECOND, THIRD = (
    "plain-tool-run.json",
    "evidence-gate-assist-flagged.json",
    "absent-coverage-clarify-ceiling.json",
)
TIMEOUT = 30.0


def wait_for(what: str, predicate: Callable[[], Any], timeout: float = TIMEOUT) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.05)


def counts(db_path: Path) -> dict[str, Any]:
    """Recordings, runs, sources and quarantined paths, read on a connection of the test's own."""
    if not db_path.exists():
        return {"recordings": 0, "runs": 0, "sources": 0, "quarantined": set()}
    db = Database(connect(db_path, readonly=True))
    try:
        return {
            "recordings": db["recordings"].count,
            "runs": db["runs"].count,
            "sources": db["sources"].count,
            "quarantined": {q["path"] for q in list_quarantine(db)},
        }
    finally:
        db.close()


class Watcher:
    """`reviewer watch ... --json` in a subprocess, its stdout read line by line on a thread."""

    def __init__(self, *args: str) -> None:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "reviewer", "watch", *args, "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def drain(self) -> list[dict[str, Any]]:
        while True:
            try:
                self.seen.append(self.lines.get_nowait())
            except queue.Empty:
                return self.seen

    def line(self, what: str, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        return wait_for(what, lambda: next((x for x in self.drain() if predicate(x)), None))

    def stop(self) -> tuple[int, str]:
        """SIGTERM, then the exit code and stderr."""
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=TIMEOUT)
        assert self.proc.stderr is not None
        return code, self.proc.stderr.read()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def watcher() -> Iterator[Callable[..., Watcher]]:
    started: list[Watcher] = []

    def start(*args: str) -> Watcher:
        w = Watcher(*args)
        started.append(w)
        return w

    yield start
    for w in started:
        w.kill()


def test_a_folder_is_followed_half_written_files_end_up_ingested_and_sigterm_stops_it(
    tmp_path: Path, watcher: Callable[..., Watcher]
) -> None:
    folder = tmp_path / "recordings"
    folder.mkdir()
    (folder / FIRST).write_bytes((FIXTURE_RECORDINGS / FIRST).read_bytes())
    db_path = tmp_path / "review.db"
    w = watcher(str(folder), "--db", str(db_path), "--settle", "0.2")

    # The sweep once the watcher is up: what was already there.
    sweep = w.line("the first batch", lambda x: x.get("batch") == 1)
    assert sweep["stored"] == 1 and sweep["quarantined"] == []

    # A recording dropped in.
    (folder / SECOND).write_bytes((FIXTURE_RECORDINGS / SECOND).read_bytes())
    wait_for("the dropped recording", lambda: counts(db_path)["runs"] == 2)

    # A half-written one: its writer stops mid-file, so once it stops changing it is read and quarantined as
    # truncated; when the writer finishes, the change is read again, stored, and the quarantine row is gone.
    half = folder / THIRD
    whole = (FIXTURE_RECORDINGS / THIRD).read_bytes()
    half.write_bytes(whole[: len(whole) // 2])
    wait_for("the half-written file's quarantine", lambda: str(half) in counts(db_path)["quarantined"])
    assert counts(db_path)["runs"] == 2
    with half.open("ab") as fh:
        fh.write(whole[len(whole) // 2 :])
    wait_for("the completed file", lambda: counts(db_path)["runs"] == 3)
    wait_for("its quarantine cleared", lambda: not counts(db_path)["quarantined"])

    code, err = w.stop()
    assert code == 0, err
    summary = w.line("the summary", lambda x: "stopped" in x)
    assert summary["stored"] == 3 and summary["quarantined"] >= 1
    batches = [x for x in w.drain() if "batch" in x]
    assert batches and all(
        {"seen", "stored", "unchanged", "runs", "quarantined"} <= x.keys() for x in batches
    )
    assert "Traceback" not in err


def test_a_file_artifacts_folder_is_followed_in_process(tmp_path: Path) -> None:
    """The framework's fileArtifacts layout: a new envelope is read as its artifact (the payload), and an
    unchanged re-write stores nothing new."""
    store = tmp_path / "artifacts"
    scope = Scope(conversation_id="conv-1", tenant="acme", principal="ann")
    text = recording_text(FIRST)
    put_file_artifact(store, scope, recording_meta(text, digest=True), text)
    db_path = tmp_path / "review.db"
    stop = threading.Event()
    reports: list[IngestReport] = []
    failure: list[BaseException] = []

    def run() -> None:
        db = open_database(db_path)
        try:
            watch_folder(db, store, stop=stop, on_batch=reports.append, db_path=str(db_path), settle=0.2)
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            failure.append(exc)
        finally:
            db.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        wait_for("the sweep", lambda: reports or failure)
        assert not failure and reports[0].stored == 1
        text = recording_text(SECOND)
        path = put_file_artifact(store, scope, recording_meta(text, run_id="run-2", digest=True), text)
        # the batch's report, not only its rows: the rows are visible a moment before the report is handed on,
        # and a report taken late would be counted as the re-write's
        wait_for("the new artifact's batch", lambda: sum(r.stored for r in reports) == 2 or failure)
        assert not failure and counts(db_path)["recordings"] == 2
        db = Database(connect(db_path, readonly=True))
        try:
            row = db.execute("SELECT container FROM recordings WHERE source = ?", [str(path)]).fetchone()
        finally:
            db.close()
        assert row == ("file-artifacts",)
        before = counts(db_path)
        batches = len(reports)
        # written again, same bytes, in one step (outside the store, then moved in): a truncate-then-write
        # could be caught empty if a loaded machine paused the writer between the two for the settle time
        again = tmp_path / "rewritten"
        again.write_bytes(path.read_bytes())
        os.replace(again, path)
        wait_for(
            "the re-written file's batch", lambda: any(r.unchanged for r in reports[batches:]) or failure
        )
        assert not failure and all(r.stored == 0 for r in reports[batches:])
        assert counts(db_path) == before
        # A file where only envelopes belong is reported as the walk of the store reports it.
        stray = store / "notes.json"
        stray.write_text("{}")
        wait_for(
            "the stray file's quarantine", lambda: str(stray) in counts(db_path)["quarantined"] or failure
        )
        db = Database(connect(db_path, readonly=True))
        try:
            assert [q["code"] for q in list_quarantine(db)] == ["not-an-artifact"]
        finally:
            db.close()
    finally:
        stop.set()
        thread.join(TIMEOUT)
    assert not thread.is_alive() and not failure


def test_a_changed_file_waits_until_its_size_and_time_stay_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [100.0]
    monkeypatch.setattr(watch_module.time, "monotonic", lambda: clock[0])
    path = tmp_path / "growing.json"
    path.write_text("{")
    waiting = _Settling(1.0)
    waiting.changed(str(path))
    assert waiting.ready() == []  # first look
    clock[0] += 5
    with path.open("a") as fh:
        fh.write('"a": 1')  # still being written
    assert waiting.ready() == []
    clock[0] += 0.5
    assert waiting.ready() == []  # unchanged, but not for long enough
    clock[0] += 0.6
    assert waiting.ready() == [str(path)]
    assert len(waiting) == 0
    waiting.changed(str(tmp_path / "gone.json"))
    assert waiting.ready() == [] and len(waiting) == 0  # a file that is gone is dropped


# ─── buckets ──────────────────────────────────────────────────────────────────────────────────────

PREFIX = "team/artifacts"
ANON = Scope(conversation_id="run-1796001919298-1")


def test_a_bucket_is_polled_newest_first_and_a_repoll_stores_nothing_new(
    tmp_path: Path, s3_endpoint: str
) -> None:
    bucket = s3_bucket(s3_endpoint, "watched-1")
    text = recording_text(FIRST)
    first_key = bucket.put_artifact(PREFIX, ANON, recording_meta(text, digest=True), text)
    url = bucket.url(PREFIX)
    db_path = tmp_path / "review.db"
    db = open_database(db_path)
    seen: dict[str, str] = {}
    reports: list[IngestReport] = []
    try:
        poll_bucket_once(db, url, seen, on_batch=reports.append, db_path=str(db_path))
        assert [r.stored for r in reports] == [1]
        after_first = counts(db_path)
        assert after_first["runs"] == 1 and first_key in seen

        # Listed again, nothing new: nothing is read, nothing stored, nothing quarantined.
        poll_bucket_once(db, url, seen, on_batch=reports.append, db_path=str(db_path))
        assert len(reports) == 1 and counts(db_path) == after_first

        # A new object and a corrupt one (its body fails the digest on its ticket).
        text = recording_text(SECOND)
        second_key = bucket.put_artifact(
            PREFIX, ANON, recording_meta(text, run_id="run-2", digest=True), text
        )
        meta = recording_meta(recording_text(THIRD), run_id="run-3", digest=True)
        bad_key = bucket.put_artifact(PREFIX, ANON, meta, recording_text(THIRD)[:-40])
        listed = buckets.list_objects(url)
        assert [o.modified for o in listed] == sorted((o.modified for o in listed), reverse=True)
        poll_bucket_once(db, url, seen, on_batch=reports.append, db_path=str(db_path))
        assert reports[-1].seen == 2 and reports[-1].stored == 1
        assert counts(db_path)["quarantined"] == {bucket.origin(bad_key)}
        assert second_key in seen

        # The corrupt object replaced by its whole body: read again, stored, its quarantine row gone.
        bucket.put_artifact(PREFIX, ANON, meta, recording_text(THIRD))
        poll_bucket_once(db, url, seen, on_batch=reports.append, db_path=str(db_path))
        assert reports[-1].seen == 1 and reports[-1].stored == 1
        final = counts(db_path)
        assert final["runs"] == 3 and not final["quarantined"]
        poll_bucket_once(db, url, seen, on_batch=reports.append, db_path=str(db_path))
        assert counts(db_path) == final
    finally:
        db.close()


def test_a_cloud_storage_bucket_is_polled_and_a_repoll_stores_nothing_new(
    tmp_path: Path, gcs_endpoint: str
) -> None:
    bucket = gcs_bucket(gcs_endpoint, "watched-gs")
    text = recording_text(FIRST)
    bucket.put_artifact(PREFIX, ANON, recording_meta(text, digest=True), text)
    url = bucket.url(PREFIX)
    db_path = tmp_path / "review.db"
    db = open_database(db_path)
    seen: dict[str, str] = {}
    reports: list[IngestReport] = []
    try:
        poll_bucket_once(db, url, seen, on_batch=reports.append, db_path=str(db_path))
        assert [r.stored for r in reports] == [1]
        after_first = counts(db_path)
        poll_bucket_once(db, url, seen, on_batch=reports.append, db_path=str(db_path))
        assert len(reports) == 1 and counts(db_path) == after_first
        text = recording_text(SECOND)
        bucket.put_artifact(PREFIX, ANON, recording_meta(text, run_id="run-2", digest=True), text)
        poll_bucket_once(db, url, seen, on_batch=reports.append, db_path=str(db_path))
        assert reports[-1].seen == 1 and reports[-1].stored == 1 and counts(db_path)["runs"] == 2
    finally:
        db.close()


def test_reviewer_watch_on_a_bucket_ingests_new_objects_and_stops_on_sigterm(
    tmp_path: Path, s3_endpoint: str, watcher: Callable[..., Watcher]
) -> None:
    bucket = s3_bucket(s3_endpoint, "watched-2")
    text = recording_text(FIRST)
    bucket.put_artifact(PREFIX, ANON, recording_meta(text, digest=True), text)
    db_path = tmp_path / "review.db"
    w = watcher(bucket.url(PREFIX), "--db", str(db_path), "--interval", "0.2")
    first = w.line("the first listing's batch", lambda x: x.get("batch") == 1)
    assert first["stored"] == 1
    text = recording_text(SECOND)
    bucket.put_artifact(PREFIX, ANON, recording_meta(text, run_id="run-2", digest=True), text)
    wait_for("the new object", lambda: counts(db_path)["runs"] == 2)
    code, err = w.stop()
    assert code == 0, err
    summary = w.line("the summary", lambda x: "stopped" in x)
    assert summary["stored"] == 2 and summary["quarantined"] == 0
    # Each later listing read only what was new: two batches, one object each.
    assert [x["seen"] for x in w.drain() if "batch" in x] == [1, 1]


def test_watch_refuses_what_is_neither_a_folder_nor_a_bucket(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from reviewer.cli.main import cli

    result = CliRunner().invoke(cli, ["watch", str(tmp_path / "nowhere"), "--db", str(tmp_path / "r.db")])
    assert result.exit_code == 2
    assert "not a folder or an s3:// / gs:// URL" in result.output


def test_once_reads_what_is_there_and_stops(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from reviewer.cli.main import cli

    folder = tmp_path / "recordings"
    folder.mkdir()
    for name in (FIRST, SECOND):
        (folder / name).write_bytes((FIXTURE_RECORDINGS / name).read_bytes())
    args = ["watch", str(folder), "--db", str(tmp_path / "r.db"), "--once", "--json"]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    lines = [json.loads(line) for line in first.stdout.splitlines()]
    assert [x.get("batch") for x in lines] == [1, None]
    assert lines[0]["stored"] == 2 and lines[1]["stopped"] and lines[1]["stored"] == 2
    again = CliRunner().invoke(cli, args)  # nothing new: everything unchanged, nothing stored
    assert again.exit_code == 0, again.output
    summary = json.loads(again.stdout.splitlines()[-1])
    assert summary["stored"] == 0 and summary["unchanged"] == 2
