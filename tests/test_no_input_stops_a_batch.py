"""No input stops a batch: numbers SQLite cannot hold, hostile file types, links out of a store, a full or
read-only database. Every per-file failure is a quarantine row with a specific reason; files after it ingest."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlite_utils import Database

from store.db.ingest import ingest
from tests.conftest import FIXTURE_RECORDINGS, both_backends

PLAIN = FIXTURE_RECORDINGS / "plain-tool-run.json"
OTHER = FIXTURE_RECORDINGS / "unsupported-claim-findings.json"
ENVELOPE = FIXTURE_RECORDINGS / "envelope-capped-recording-maxEvents-150.json"
#: JavaScript writes 1e20 as this; one past SQLite's largest INTEGER is 2**63.
BIG = 10**20


def _events(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return doc["recording"]["events"] if "recording" in doc else doc["events"]


def _first(doc: dict[str, Any], suffix: str) -> dict[str, Any]:
    return next(e for e in _events(doc) if e["type"].endswith(suffix))


def _wall(doc: dict[str, Any]) -> None:
    _first(doc, "tool_start")["meta"]["wallClockMs"] = BIG


def _duration(doc: dict[str, Any]) -> None:
    _first(doc, "tool_end")["payload"]["durationMs"] = BIG


def _iter_index(doc: dict[str, Any]) -> None:
    _first(doc, "iteration_start")["payload"]["iterIndex"] = 2**63


def _dropped(doc: dict[str, Any]) -> None:
    doc["run"]["droppedEvents"] = BIG


def _span_end(doc: dict[str, Any]) -> None:
    meta = dict(_first(doc, "tool_start")["meta"])
    _events(doc).append(
        {
            "type": "agentfootprint.findings.negative_claim",
            "payload": {"kind": "negative-claim", "field": "answer", "span": {"start": 0, "end": BIG}},
            "meta": meta,
        }
    )


NUMBER_CASES: dict[str, tuple[Path, Callable[[dict[str, Any]], None], str]] = {
    "wallClockMs": (PLAIN, _wall, "wallClockMs"),
    "durationMs": (PLAIN, _duration, "durationMs"),
    "iterIndex": (PLAIN, _iter_index, "iterIndex"),
    "droppedEvents": (ENVELOPE, _dropped, "droppedEvents"),
    "span end": (PLAIN, _span_end, "span end"),
}


@both_backends
@pytest.mark.parametrize("case", sorted(NUMBER_CASES))
def test_a_number_past_64_bits_quarantines_its_file_and_the_batch_goes_on(
    db: Database, db_path: Path, tmp_path: Path, case: str, store_backend: str
) -> None:
    source, mutate, field_words = NUMBER_CASES[case]
    doc = json.loads(source.read_text())
    mutate(doc)
    bad = tmp_path / "a-big-number.json"
    bad.write_text(json.dumps(doc))
    report = ingest(db, [bad, OTHER], db_path=str(db_path), workers=1)
    assert report.stored == 1, "the file after the bad one is still ingested"
    [(path, code, reason)] = report.quarantined
    assert (path, code) == (str(bad), "number-out-of-range")
    assert field_words in reason and "64-bit" in reason
    assert db.execute("SELECT code FROM quarantine").fetchall() == [("number-out-of-range",)]
    assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 1, "nothing half-written"
    if store_backend == "sqlite":
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


@both_backends
def test_a_tool_result_and_argument_past_64_bits_are_stored_as_their_json(
    db: Database, db_path: Path, tmp_path: Path
) -> None:
    doc = json.loads(PLAIN.read_text())
    _first(doc, "tool_end")["payload"]["result"] = {"tempC": 10**25, "city": "SF"}
    _first(doc, "tool_start")["payload"]["args"] = {"seed": 2**64 + 1}
    path = tmp_path / "big-json.json"
    path.write_text(json.dumps(doc))
    assert ingest(db, [path], db_path=str(db_path)).stored == 1
    result, args = db.execute("SELECT result, args FROM tool_calls").fetchone()
    assert json.loads(result) == {"tempC": 10**25, "city": "SF"}
    assert json.loads(args) == {"seed": 2**64 + 1}
    assert "unstorable" not in result + args


def test_a_tool_result_past_64_bits_is_shown_as_its_json(db: Database, db_path: Path, tmp_path: Path) -> None:
    """Read back as recorded by `show --json` and by the app's raw view: 10000000000000000000000000, not
    1e+25 (a float) and not a Python repr."""
    from click.testing import CliRunner

    from reviewer.cli.main import cli
    from reviewer.ui.results.raw import raw_sections
    from reviewer.ui.widgets.safe import pretty_json
    from store.runs import tool_call

    doc = json.loads(PLAIN.read_text())
    _first(doc, "tool_end")["payload"]["result"] = {"tempC": 10**25, "city": "SF"}
    _first(doc, "tool_start")["payload"]["args"] = {"seed": 2**64 + 1}
    path = tmp_path / "big-json.json"
    path.write_text(json.dumps(doc))
    assert ingest(db, [path], db_path=str(db_path)).stored == 1
    run_key, call_id = db.execute("SELECT run_key, call_id FROM tool_calls").fetchone()
    shown = CliRunner().invoke(cli, ["show", run_key, "--json", "--db", str(db_path)])
    assert shown.exit_code == 0, shown.output
    assert '"tempC": 10000000000000000000000000' in shown.output
    assert f'"seed": {2**64 + 1}' in shown.output and "e+" not in shown.output
    [call] = [c for c in json.loads(shown.output)["tool_calls"] if c["call_id"] == call_id]
    assert call["result"]["tempC"] == 10**25
    read = tool_call(db, run_key, call_id)["call"]
    drawn = "\n".join(text for _, text in raw_sections(read))
    assert '"tempC": 10000000000000000000000000' in drawn and f'"seed": {2**64 + 1}' in drawn
    detail = pretty_json(read["args"]).plain  # the call detail's arguments
    assert f'"seed": {2**64 + 1}' in detail and "{'seed'" not in detail


def test_a_full_database_is_reported_as_full_not_a_traceback(db: Database, db_path: Path) -> None:
    from store.errors import DatabaseWriteError

    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {pages + 8}")  # room for a few pages: the disk "fills" mid-batch
    with pytest.raises(DatabaseWriteError, match="disk is full"):
        ingest(db, [FIXTURE_RECORDINGS], db_path=str(db_path), workers=1)
    db.execute("PRAGMA max_page_count = 1073741823")
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    report = ingest(db, [FIXTURE_RECORDINGS], db_path=str(db_path), workers=1)
    assert report.stored + report.unchanged == report.seen - len(report.quarantined) > 0


def test_a_full_disk_is_one_line_from_the_cli(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`reviewer ingest` when the disk fills mid-batch: exit 1 and one line saying so, no traceback."""
    from click.testing import CliRunner

    import store.db.connection as connection
    from reviewer.cli.main import cli

    runner = CliRunner()
    assert runner.invoke(cli, ["ingest", str(OTHER), "--db", str(db_path)]).exit_code == 0
    real = connection.connect

    def filling(path: str | Path, readonly: bool = False) -> Any:
        conn = real(path, readonly=readonly)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages + 8}")  # a few pages left on the "disk"
        return conn

    monkeypatch.setattr(connection, "connect", filling)
    result = runner.invoke(cli, ["ingest", str(FIXTURE_RECORDINGS), "--workers", "1", "--db", str(db_path)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    [line] = result.output.strip().splitlines()
    assert "disk is full" in line and "Traceback" not in result.output


def _read_only_connections(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every review-database connection opened read-only, as on a read-only filesystem."""
    import store.db.connection as connection

    real = connection.connect
    monkeypatch.setattr(connection, "connect", lambda path, readonly=False: real(path, readonly=True))


def test_a_read_only_database_is_reported_as_read_only_not_damaged(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from reviewer.cli.main import cli

    runner = CliRunner()
    assert runner.invoke(cli, ["ingest", str(OTHER), "--db", str(db_path)]).exit_code == 0
    _read_only_connections(monkeypatch)
    listed = runner.invoke(cli, ["runs", "--db", str(db_path)])
    assert listed.exit_code == 0, listed.output  # reading a read-only database works
    result = runner.invoke(cli, ["ingest", str(PLAIN), "--db", str(db_path)])
    assert result.exit_code == 1
    assert "read-only" in result.output and "damaged" not in result.output
    assert isinstance(result.exception, SystemExit), "a clean exit, not a traceback"
    assert len(result.output.strip().splitlines()) == 1


def test_the_wal_is_checkpointed_and_cut_back_during_a_long_ingest(
    db: Database, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    import store.db.ingest as ingest_module

    # the same rule at a small scale: checkpoint every 32 pages, cut the WAL back to 128 KiB, and groups of two
    # files, so that the ingest commits often (the fixtures are one group of 32 otherwise: one transaction,
    # which no checkpoint can cut; without the rule this WAL grows to 2.9 MB, with it about 0.6 MB)
    monkeypatch.setattr(ingest_module, "INGEST_WAL_PAGES", 32)
    monkeypatch.setattr(ingest_module, "WAL_SIZE_LIMIT_BYTES", 128 * 1024)
    monkeypatch.setattr(ingest_module, "GROUP_FILES", 2)
    wal = Path(f"{db_path}-wal")
    sizes: list[int] = []

    def watch(*_: int) -> None:
        sizes.append(wal.stat().st_size if wal.exists() else 0)

    report = ingest(db, [FIXTURE_RECORDINGS], db_path=str(db_path), workers=1, progress=watch)
    assert report.stored > 10
    database = os.path.getsize(db_path)
    assert max(sizes) < 1024 * 1024 < 2 * database, (max(sizes), database)


# ─── only regular files, bounded, never blocking ─────────────────────────────────────────────────


def _ingest_or_fail_if_it_hangs(db: Database, db_path: Path, paths: list[Path], fifos: list[Path]) -> Any:
    """Ingest on a thread; if it is still blocked after a generous 60 s, unblock the FIFOs and fail."""
    import os
    import threading

    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["report"] = ingest(db, paths, db_path=str(db_path), workers=1)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            out["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(60)
    if worker.is_alive():
        for fifo in fifos:  # a writer appearing lets a blocked open return
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
        worker.join(60)
        pytest.fail("ingest blocked on a FIFO")
    if "error" in out:
        raise out["error"]
    return out["report"]


def test_a_fifo_or_device_given_directly_is_refused_without_blocking(
    db: Database, db_path: Path, tmp_path: Path
) -> None:
    import os

    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    report = _ingest_or_fail_if_it_hangs(db, db_path, [fifo, Path("/dev/zero"), OTHER], [fifo])
    assert report.stored == 1
    codes = {path: (code, reason) for path, code, reason in report.quarantined}
    assert codes[str(fifo)][0] == "not-a-regular-file" and "FIFO" in codes[str(fifo)][1]
    assert codes["/dev/zero"][0] == "not-a-regular-file" and "device" in codes["/dev/zero"][1]


def test_dev_stdin_given_directly_is_refused_without_blocking(tmp_path: Path) -> None:
    """`reviewer ingest /dev/stdin` with a pipe on stdin that never ends: refused at once, never read."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    program = "from reviewer.cli.main import cli; cli()"
    argv = [sys.executable, "-c", program, "ingest", "/dev/stdin", str(OTHER), "--db", str(tmp_path / "s.db")]
    with subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True
    ) as proc:
        try:
            output, _ = proc.communicate(timeout=60)  # stdin is left open: a read of it would never return
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail("ingest blocked reading /dev/stdin")
    assert proc.returncode == 1, output  # the exit code of a batch with a quarantined input
    assert "1 stored" in output and "[not-a-regular-file] /dev/stdin" in output, output


def test_symlinks_and_special_files_in_a_folder_are_reported_not_skipped(
    db: Database, db_path: Path, tmp_path: Path
) -> None:
    import os

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "linked.json").symlink_to(PLAIN)
    (folder / "linked-folder").symlink_to(FIXTURE_RECORDINGS, target_is_directory=True)
    os.mkfifo(folder / "pipe.json")
    (folder / "real.json").write_bytes(OTHER.read_bytes())
    report = _ingest_or_fail_if_it_hangs(db, db_path, [folder], [folder / "pipe.json"])
    assert report.stored == 1
    codes = {Path(path).name: code for path, code, _ in report.quarantined}
    assert codes == {
        "linked.json": "symlink-not-followed",
        "linked-folder": "symlink-not-followed",
        "pipe.json": "not-a-regular-file",
    }
    assert db.execute("SELECT count(*) FROM quarantine").fetchone()[0] == 3


def test_a_folder_a_thousand_levels_deep_is_walked(db: Database, db_path: Path, tmp_path: Path) -> None:
    import os

    deep = tmp_path / "d"
    made: list[Path] = []
    try:
        here = deep
        for _ in range(1001):  # os.makedirs itself recurses too deeply for this
            os.mkdir(here)
            made.append(here)
            here = here / "a"
        (made[-1] / "bottom.json").write_bytes(PLAIN.read_bytes())
        report = ingest(db, [deep], db_path=str(db_path), workers=1)
    finally:  # pytest's own clean-up of tmp_path recurses, so the tree is taken down here, leaf first
        if made:
            (made[-1] / "bottom.json").unlink(missing_ok=True)
        for folder in reversed(made):
            os.rmdir(folder)
    assert report.stored == 1 and report.quarantined == []


def test_a_recording_over_the_size_bound_is_refused(
    db: Database, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from store.reading import items

    monkeypatch.setattr(items, "MAX_RECORDING_BYTES", 1000)  # the same bound at a small scale
    report = ingest(db, [PLAIN], db_path=str(db_path), workers=1)
    [(_, code, reason)] = report.quarantined
    assert code == "too-large" and "1,000-byte limit" in reason


def _streamed_store(tmp_path: Path) -> tuple[Path, Path]:
    """A fileArtifacts store holding one streamed recording; returns (root, its <ref>.bin)."""
    from tests.artifact_fixtures import (
        Scope,
        put_file_artifact_streamed,
        recording_meta,
        recording_text,
    )

    root = tmp_path / "store"
    text = recording_text("plain-tool-run.json")
    envelope = put_file_artifact_streamed(
        root, Scope(conversation_id="c1"), recording_meta(text), text.encode()
    )
    return root, envelope.with_suffix(".bin")


@pytest.mark.parametrize("target", ["/etc/passwd", "/dev/zero", "fifo"])
def test_a_streamed_payload_that_is_a_link_or_a_fifo_is_refused_and_never_read(
    db: Database, db_path: Path, tmp_path: Path, target: str
) -> None:
    import os

    root, payload = _streamed_store(tmp_path)
    payload.unlink()
    fifos = []
    if target == "fifo":
        os.mkfifo(payload)
        fifos.append(payload)
    else:
        payload.symlink_to(target)
    report = _ingest_or_fail_if_it_hangs(db, db_path, [root, OTHER], fifos)
    assert report.stored == 1
    want = "not-a-regular-file" if target == "fifo" else "symlink-not-followed"
    codes = {Path(path).suffix: code for path, code, _ in report.quarantined}
    assert codes == {".json": want, ".bin": want}, "the envelope refused, the payload file reported"
    for _, _, reason in report.quarantined:
        assert "root:" not in reason and "\\x00" not in reason


def test_a_store_whose_write_ahead_log_cannot_be_read_is_refused_not_read_in_part(
    db: Database, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from store.reading import artifacts
    from tests.artifact_fixtures import (
        Scope,
        open_sqlite_store,
        put_sqlite_artifact,
        recording_meta,
        recording_text,
    )

    store = tmp_path / "artifacts.db"
    writer = open_sqlite_store(store)
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    names = [
        "plain-tool-run.json",
        "unsupported-claim-findings.json",
        "multi-turn-conversation-identity.json",
    ]
    for n, name in enumerate(names):
        text = recording_text(name)
        put_sqlite_artifact(writer, Scope(conversation_id=f"c{n}"), recording_meta(text), text)
        writer.commit()
    try:
        assert Path(f"{store}-wal").stat().st_size > 0, "the recordings are committed to the log only"
        whole = ingest(db, [store], db_path=str(db_path), workers=1)
        assert whole.stored == 3, "a live store is read with its log"

        def no_log(target: str) -> sqlite3.Connection:  # as for a read-only copy without its -shm
            raise sqlite3.OperationalError("unable to open database file")

        monkeypatch.setattr(artifacts, "_open_with_log", no_log)
        report = ingest(db, [store, ENVELOPE], db_path=str(db_path), workers=1)
    finally:
        writer.close()
    assert report.stored == 1, "nothing of the store was read, the next file was"
    [(_, code, reason)] = report.quarantined
    assert code == "store-busy" and "busy or unreadable" in reason


def test_a_copy_of_a_store_with_its_write_ahead_log_is_read_whole(
    db: Database, db_path: Path, tmp_path: Path
) -> None:
    """The file and its -wal copied away from a live writer (no -shm, files read-only): every committed
    recording is read, none silently skipped (it was 3 of 6 before)."""
    import shutil

    from tests.artifact_fixtures import (
        Scope,
        open_sqlite_store,
        put_sqlite_artifact,
        recording_meta,
        recording_text,
    )

    live = tmp_path / "live" / "artifacts.db"
    live.parent.mkdir()
    writer = open_sqlite_store(live)
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    names = sorted(p.name for p in FIXTURE_RECORDINGS.glob("*.json"))[:6]
    try:
        for n, name in enumerate(names):
            text = recording_text(name)
            put_sqlite_artifact(writer, Scope(conversation_id=f"c{n}"), recording_meta(text), text)
            writer.commit()
        copy = tmp_path / "copy"
        copy.mkdir()
        for suffix in ("", "-wal"):
            shutil.copy(f"{live}{suffix}", copy / f"artifacts.db{suffix}")
            (copy / f"artifacts.db{suffix}").chmod(0o444)
    finally:
        writer.close()
    assert (copy / "artifacts.db-wal").stat().st_size > 0, "the recordings are in the copied log only"
    report = ingest(db, [copy / "artifacts.db"], db_path=str(db_path), workers=1)
    assert (report.stored, report.quarantined) == (len(names), [])


# ─── bad bytes in arguments ──────────────────────────────────────────────────────────────────────

BAD = "caf\udce9"  # the bytes b"caf\xe9" as Python receives them from a Latin-1 terminal


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["runs", "--search", BAD], {}),
        (["label", "f-anything", "--verdict", "fp", "--note", BAD], {}),
        (["label", "f-anything", "--verdict", "fp", "--reviewer", BAD], {}),
        (["label", "f-anything", "--verdict", "fp"], {"REVIEWER_NAME": BAD}),
    ],
    ids=["--search", "--note", "--reviewer", "$REVIEWER_NAME"],
)
def test_bad_bytes_in_an_argument_give_a_one_line_error(
    db_path: Path, args: list[str], env: dict[str, str]
) -> None:
    from click.testing import CliRunner

    from reviewer.cli.main import cli

    assert CliRunner().invoke(cli, ["ingest", str(OTHER), "--db", str(db_path)]).exit_code == 0
    result = CliRunner().invoke(cli, [*args, "--db", str(db_path)], env=env)
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.exception
    [line] = result.output.strip().splitlines()
    assert "not valid UTF-8" in line and "\\xe9" in line


# ─── memory ──────────────────────────────────────────────────────────────────────────────────────

#: The README's bound on the memory an ingest needs beyond the program itself, per byte of the largest file...
MEMORY_PER_INPUT_BYTE = 8
#: ...plus this much per event it holds (each is a decoded object until it is written; 440 bytes measured).
MEMORY_PER_EVENT = 1024

_MEASURE = """
import sys
from store.db.connection import open_database
from store.db.ingest import ingest

def rss(field):
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) * 1024 for line in fh if line.startswith(field))

path, db_path = sys.argv[1], sys.argv[2]
db = open_database(db_path)
with open("/proc/self/clear_refs", "w") as fh:
    fh.write("5")  # the high-water mark restarts here: only what the ingest needs is measured
base = rss("VmRSS:")
report = ingest(db, [path], db_path=db_path, workers=1)
assert report.stored == 1, report.quarantined
print(rss("VmHWM:") - base)
"""


def test_memory_for_a_recording_that_is_one_huge_string_stays_within_the_stated_bound(
    tmp_path: Path,
) -> None:
    import os
    import subprocess
    import sys

    if not Path("/proc/self/clear_refs").exists():
        pytest.fail("this test measures peak memory through /proc (Linux)")
    doc = json.loads(PLAIN.read_text())
    # non-ASCII and astral text: Python holds it at 4 bytes a character, the worst case for memory
    _first(doc, "turn_end")["payload"]["finalContent"] = "ab 🚀 cd é " * 720_000
    path = tmp_path / "one-string.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    size = path.stat().st_size
    assert size > 10_000_000
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path), str(tmp_path / "m.db")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    needed = int(done.stdout.strip())
    assert needed < MEMORY_PER_INPUT_BYTE * size, f"{needed / size:.1f} x the file's size"


def test_memory_for_a_recording_of_many_tiny_events_stays_within_the_stated_bound(tmp_path: Path) -> None:
    """The other worst case: events of a dozen bytes each (a million of them took 1.17 GB). The README states
    the per-event part of the bound; this holds it at 200,000 of the smallest events a recording can have."""
    import os
    import subprocess
    import sys

    if not Path("/proc/self/clear_refs").exists():
        pytest.fail("this test measures peak memory through /proc (Linux)")
    doc = json.loads(PLAIN.read_text())
    events = _events(doc)
    count = 200_000
    events[len(events) // 2 : len(events) // 2] = [{"type": "x"}] * count
    path = tmp_path / "tiny-events.json"
    path.write_text(json.dumps(doc, separators=(",", ":")))
    size = path.stat().st_size
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path), str(tmp_path / "m.db")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    needed = int(done.stdout.strip())
    bound = MEMORY_PER_INPUT_BYTE * size + MEMORY_PER_EVENT * len(events)
    assert needed < bound, (
        f"{needed / len(events):.0f} bytes an event ({needed / size:.0f} x the file's size)"
    )


# ─── a database that is not ours ─────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("command", [["runs"], ["ingest", str(OTHER)], ["stats"]])
def test_a_foreign_sqlite_database_is_refused_before_any_write(tmp_path: Path, command: list[str]) -> None:
    import hashlib
    import sqlite3

    from click.testing import CliRunner

    from reviewer.cli.main import cli

    foreign = tmp_path / "someone-elses.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO customers (name) VALUES ('ada')")
    conn.commit()
    conn.close()
    before = hashlib.sha256(foreign.read_bytes()).hexdigest()
    result = CliRunner().invoke(cli, [*command, "--db", str(foreign)])
    assert result.exit_code == 1 and "did not create" in result.output
    assert hashlib.sha256(foreign.read_bytes()).hexdigest() == before, "not a byte written"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["someone-elses.db"], "no -wal or -shm left"
    with sqlite3.connect(foreign) as check:
        assert check.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_file_names_that_are_not_utf8_are_ingested_and_quarantined_not_fatal(
    db: Database, db_path: Path, tmp_path: Path
) -> None:
    import os

    folder = tmp_path / "in"
    folder.mkdir()
    base = os.fsencode(folder)
    with open(base + b"/caf\xe9.json", "wb") as fh:  # a Latin-1 file name
        fh.write(PLAIN.read_bytes())
    with open(base + b"/bro\xefken.json", "wb") as fh:
        fh.write(b"")
    report = ingest(db, [folder, OTHER], db_path=str(db_path), workers=1)
    assert report.stored == 2
    [(path, code, reason)] = report.quarantined
    assert code == "empty" and path.endswith("bro\\xefken.json") and path in reason
    sources = {r[0] for r in db.execute("SELECT source FROM recordings")}
    assert str(folder / "caf\\xe9.json") in sources


def test_a_search_holding_a_nul_finds_the_words_around_it(db: Database, tmp_path: Path) -> None:
    from store.runs import count_runs, list_runs

    ingest(db, [PLAIN, OTHER], db_path=str(tmp_path / "x.db"))
    plain = list_runs(db, search="the")
    assert plain, "the fixture's answers hold the word"
    # FTS5 reads a NUL as the end of its query text ("unterminated string"): it separates words instead.
    assert list_runs(db, search="the\x00") == plain
    assert count_runs(db, search="\x00the\x00") == len(plain)
