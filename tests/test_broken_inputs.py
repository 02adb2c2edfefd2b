"""Bad input is quarantined with a specific reason naming the file; the batch goes on; nothing stored changes."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest
from sqlite_utils import Database

from store.db.ingest import ingest
from tests.conftest import FIXTURE_RECORDINGS

GOOD = FIXTURE_RECORDINGS / "plain-tool-run.json"

CASES: dict[str, tuple[bytes, str, str]] = {
    # name: (content, expected code, words the reason must contain)
    "empty.json": (b"", "empty", "is empty"),
    "truncated.json": (GOOD.read_bytes()[:5000], "truncated", "ends early"),
    "prose.json": (b"hello, this is not json", "not-json", "not JSON"),
    "broken-syntax.json": (b'{"events": [1, 2,, 3]}', "not-json", "not valid JSON"),
    "binary.json": (bytes(range(256)) * 4, "binary", "binary data"),
    "latin1.json": (b'{"events": [{"type": "caf\xe9"}]}', "binary", "UTF-8"),
    "array.json": (b"[1, 2, 3]", "not-a-recording", "top-level JSON is an array"),
    "object.json": (b'{"hello": 1}', "not-a-recording", "no `events` list"),
    "events-not-list.json": (b'{"events": {"a": 1}}', "bad-shape", "not a list"),
    "future-envelope.json": (
        b'{"format": "agentfootprint.recording.v9", "recording": {"events": []}}',
        "unknown-format",
        "unsupported envelope format",
    ),
    "deep.json": (
        b'{"snapshot": ' + b"[" * 100_000 + b"]" * 100_000 + b', "events": []}',
        "too-deep",
        "nested too deeply",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_broken_file_is_quarantined_with_its_reason(
    db: Database, db_path: Path, tmp_path: Path, name: str
) -> None:
    content, code, words = CASES[name]
    bad = tmp_path / name
    bad.write_bytes(content)
    report = ingest(db, [GOOD, bad], db_path=str(db_path))
    assert report.stored == 1, "the good file in the same batch still ingests"
    [(path, got_code, reason)] = report.quarantined
    assert (path, got_code) == (str(bad), code)
    assert str(bad) in reason and words in reason
    assert db.execute("SELECT path, code FROM quarantine").fetchall() == [(str(bad), code)]


def test_quarantine_does_not_touch_what_is_stored(db: Database, db_path: Path, tmp_path: Path) -> None:
    ingest(db, [FIXTURE_RECORDINGS], db_path=str(db_path))
    before = db.execute(
        "SELECT count(*), (SELECT count(*) FROM findings), (SELECT count(*) FROM tool_calls) FROM runs"
    ).fetchone()
    for name, (content, _, _) in CASES.items():
        (tmp_path / name).write_bytes(content)
    report = ingest(db, [tmp_path], db_path=str(db_path))
    assert len(report.quarantined) == len(CASES) and report.stored == 0
    after = db.execute(
        "SELECT count(*), (SELECT count(*) FROM findings), (SELECT count(*) FROM tool_calls) FROM runs"
    ).fetchone()
    assert before == after
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_fixed_file_leaves_quarantine(db: Database, db_path: Path, tmp_path: Path) -> None:
    path = tmp_path / "later.json"
    path.write_bytes(GOOD.read_bytes()[:100])
    ingest(db, [path], db_path=str(db_path))
    assert db.execute("SELECT count(*) FROM quarantine").fetchone()[0] == 1
    path.write_bytes(GOOD.read_bytes())
    report = ingest(db, [path], db_path=str(db_path))
    assert report.stored == 1 and report.quarantined == []
    assert db.execute("SELECT count(*) FROM quarantine").fetchone()[0] == 0


def test_missing_path_is_reported(db: Database, db_path: Path, tmp_path: Path) -> None:
    report = ingest(db, [tmp_path / "nope.json"], db_path=str(db_path))
    [(path, code, reason)] = report.quarantined
    assert code == "unreadable" and "nope.json" in reason


def test_bundle_without_a_recording(db: Database, db_path: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "empty.zip"
    with zipfile.ZipFile(bundle, "w") as zf:
        zf.writestr("manifest.json", "{}")
    [(_, code, reason)] = ingest(db, [bundle], db_path=str(db_path)).quarantined
    assert code == "bundle-without-recording" and "empty.zip" in reason


def test_bundle_with_hostile_names_is_never_extracted(db: Database, db_path: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "hostile.zip"
    with zipfile.ZipFile(bundle, "w") as zf:
        zf.writestr("../../envelope.json", GOOD.read_bytes())
        zf.writestr("/abs/recording.json", GOOD.read_bytes())
    before = set(os.listdir(tmp_path))
    [(_, code, _)] = ingest(db, [bundle], db_path=str(db_path)).quarantined
    assert code == "bundle-without-recording"
    assert set(os.listdir(tmp_path)) - before <= {"review.db", "review.db-wal", "review.db-shm"}


def test_bundle_bomb_is_refused_before_unpacking(db: Database, db_path: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as zf:
        info = zipfile.ZipInfo("envelope.json")
        info.compress_type = zipfile.ZIP_DEFLATED
        with zf.open(info, "w", force_zip64=True) as fh:
            chunk = b" " * (1 << 20)
            for _ in range(300):  # 300 MB of spaces compresses to ~300 KB
                fh.write(chunk)
    assert bundle.stat().st_size < 2_000_000
    [(_, code, reason)] = ingest(db, [bundle], db_path=str(db_path)).quarantined
    assert code == "bundle-too-large" and "nothing was extracted" in reason


def test_unknown_keys_and_event_types_are_kept_not_fatal(db: Database, db_path: Path, tmp_path: Path) -> None:
    doc = json.loads(GOOD.read_text())
    doc["futureTopLevel"] = {"x": 1}
    doc["events"].insert(
        3,
        {
            "type": "agentfootprint.future.thing",
            "payload": {"new": True},
            "meta": dict(doc["events"][3]["meta"]),
        },
    )
    doc["events"][0]["payload"]["brandNewKey"] = [1, 2]
    path = tmp_path / "drift.json"
    path.write_text(json.dumps(doc))
    report = ingest(db, [path], db_path=str(db_path))
    assert report.stored == 1 and report.quarantined == []
    # counted with the recording's events, and kept, with the unknown keys, in the original (no screen
    # draws an event type it does not know, so it gets no timeline row)
    assert report.events == len(doc["events"])
    from store.recordings import original_bytes

    sha = db.execute("SELECT sha256 FROM recordings").fetchone()[0]
    original = json.loads(original_bytes(db, sha))
    assert original["futureTopLevel"] == {"x": 1}
    assert original["events"][3] == doc["events"][3] and original["events"][0]["payload"]["brandNewKey"] == [
        1,
        2,
    ]


def test_snapshot_of_an_unexpected_shape_is_tolerated(db: Database, db_path: Path, tmp_path: Path) -> None:
    doc = json.loads(GOOD.read_text())
    doc["snapshot"] = "redacted"
    path = tmp_path / "odd-snapshot.json"
    path.write_text(json.dumps(doc))
    report = ingest(db, [path], db_path=str(db_path))
    assert report.stored == 1


def test_a_reused_tool_call_id_keeps_two_calls_and_both_their_findings(
    db: Database, db_path: Path, tmp_path: Path
) -> None:
    doc = json.loads(GOOD.read_text())
    events = doc["events"]
    start = next(i for i, e in enumerate(events) if e["type"].endswith("tool_start"))
    end = next(i for i, e in enumerate(events) if e["type"].endswith("tool_end"))
    gap = {"notChecked": [{"what": "the archived history", "why": "out of window"}]}

    def declared(after: dict) -> dict:
        payload = {"toolName": "get_weather", "toolCallId": "call-1", "checked": [], **gap}
        return {
            "type": "agentfootprint.tools.coverage_declared",
            "payload": payload,
            "meta": dict(after["meta"]),
        }

    second_start = json.loads(json.dumps(events[start]))
    second_start["payload"]["args"] = {"city": "Oakland"}
    second_end = json.loads(json.dumps(events[end]))
    second_end["payload"]["result"] = {"city": "Oakland", "tempC": 21}
    events[end + 1 : end + 1] = [declared(events[end]), second_start, second_end, declared(second_end)]
    path = tmp_path / "reused-id.json"
    path.write_text(json.dumps(doc))
    assert ingest(db, [path], db_path=str(db_path)).stored == 1
    calls = db.execute("SELECT call_id, args, result FROM tool_calls ORDER BY ordinal").fetchall()
    assert [c[0] for c in calls] == ["call-1", "call-1#2"], "two calls, not one merged"
    assert "San Francisco" in calls[0][1] and "Oakland" in calls[1][1] and "Oakland" in calls[1][2]
    gaps = db.execute("SELECT id, call_id FROM findings WHERE kind = 'coverage-gap'").fetchall()
    assert sorted(c for _, c in gaps) == ["call-1", "call-1#2"], "each call keeps its own gap finding"
    assert len({i for i, _ in gaps}) == 2
