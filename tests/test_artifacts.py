"""Reading the framework's own artifact stores (fileArtifacts folders, sqliteArtifacts databases)."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import sqlite3
from pathlib import Path

import pytest

from store.errors import RecordingError
from store.reading import artifacts
from store.reading.sources import SourceItem, SourceProblem, iter_sources, read_source
from tests.artifact_fixtures import (
    RECORDINGS,
    Scope,
    make_meta,
    mint_ref,
    open_sqlite_store,
    put_file_artifact,
    put_file_artifact_streamed,
    put_sqlite_artifact,
    recording_meta,
    recording_text,
    scope_dir,
)

PLAIN = "plain-tool-run.json"
MULTI = "multi-turn-conversation-identity.json"
IDENTITY = "plain-tool-run-with-trace-and-identity.json"

ANON = Scope(conversation_id="run-1796001919298-1")
ACME = Scope(conversation_id="sess-2f9c", tenant="acme-corp", principal="user-4471")
ODD = Scope(conversation_id="conv.1/..", tenant="Acme Corp", principal="_")


def original(name: str) -> bytes:
    return (RECORDINGS / name).read_bytes()


def split(found: list[SourceItem | SourceProblem]) -> tuple[list[SourceItem], list[SourceProblem]]:
    items = [f for f in found if isinstance(f, SourceItem)]
    problems = [f for f in found if isinstance(f, SourceProblem)]
    assert len(items) + len(problems) == len(found)
    return items, problems


@pytest.fixture()
def file_store(tmp_path: Path) -> dict[str, Path]:
    """A fileArtifacts folder: recordings (plain, digest + odd scope, streamed), a dataset, a corrupt one."""
    root = tmp_path / "artifacts"
    paths: dict[str, Path] = {}
    text = recording_text(PLAIN)
    paths[PLAIN] = put_file_artifact(root, ANON, recording_meta(text), text)
    text = recording_text(MULTI)
    paths[MULTI] = put_file_artifact(root, ODD, recording_meta(text, digest=True), text)
    paths[IDENTITY] = put_file_artifact_streamed(
        root, ACME, recording_meta(recording_text(IDENTITY)), original(IDENTITY)
    )
    rows = [{"region": "emea", "total": 12}]
    paths["dataset"] = put_file_artifact(root, ACME, make_meta("dataset/rows", rows, label="Q3"), rows)
    corrupt = scope_dir(root, ACME) / f"{mint_ref()}.json"
    corrupt.write_text('{"format":1,"meta":{"ref":"art_x","kind":"recording/run"', encoding="utf-8")
    paths["corrupt"] = corrupt
    (scope_dir(root, ACME) / ".DS_Store").write_bytes(b"\0\0")
    paths["root"] = root
    return paths


@pytest.fixture()
def sqlite_store(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    db = tmp_path / "artifacts.db"
    conn = open_sqlite_store(db)
    refs: dict[str, str] = {}
    for name, scope, digest in ((PLAIN, ANON, False), (MULTI, ODD, True), (IDENTITY, ACME, False)):
        text = recording_text(name)
        meta = recording_meta(text, digest=digest)
        put_sqlite_artifact(conn, scope, meta, text)
        refs[name] = meta["ref"]
    rows = [{"region": "emea"}]
    put_sqlite_artifact(conn, ACME, make_meta("dataset/rows", rows), rows)
    conn.close()
    return db, refs


# ─── fileArtifacts ────────────────────────────────────────────────────────────────────────────────


def test_file_store_yields_recordings_skips_other_kinds_and_reports_corrupt(
    file_store: dict[str, Path],
) -> None:
    root = file_store["root"]
    assert artifacts.is_file_artifact_store(root)
    items, problems = split(list(iter_sources([root])))

    expected = sorted(str(file_store[n]) for n in (PLAIN, MULTI, IDENTITY))
    assert [i.origin for i in items] == [i.path for i in items] == expected == sorted(expected)
    assert {i.container for i in items} == {"file-artifacts"}
    assert str(file_store["dataset"]) not in {i.origin for i in items}
    assert not any(p.name.endswith(".bin") for p in map(Path, (i.path for i in items)))

    assert [(p.origin, p.code) for p in problems] == [(str(file_store["corrupt"]), "bad-artifact")]
    assert str(file_store["corrupt"]) in problems[0].message

    by_path = {i.path: i for i in items}
    for name in (PLAIN, MULTI, IDENTITY):
        item = by_path[str(file_store[name])]
        data = read_source(item)
        assert data == original(name)
        assert item.size == len(data)
        assert set(json.loads(data)) == {"snapshot", "events", "structure"}


def test_file_store_layout_escapes_scope_segments(file_store: dict[str, Path]) -> None:
    rel = file_store[MULTI].relative_to(file_store["root"]).parts
    assert rel[:3] == ("~acme%20~corp", "%5F", "conv%2E1%2F%2E%2E")
    assert file_store[PLAIN].relative_to(file_store["root"]).parts[:2] == ("_", "_")


def test_file_store_found_inside_a_parent_folder(file_store: dict[str, Path], tmp_path: Path) -> None:
    shutil.copy(RECORDINGS / PLAIN, tmp_path / "loose.json")
    assert not artifacts.is_file_artifact_store(tmp_path)
    items, _ = split(list(iter_sources([tmp_path])))
    containers = sorted((i.container, Path(i.path).name) for i in items)
    assert ("file", "loose.json") in containers
    assert sum(c == "file-artifacts" for c, _ in containers) == 3


def test_file_store_digest_mismatch_is_a_recording_error(file_store: dict[str, Path]) -> None:
    path = file_store[MULTI]
    envelope = json.loads(path.read_text(encoding="utf-8"))
    envelope["payload"]["value"] = envelope["payload"]["value"].replace("ORD-1001", "ORD-1002", 1)
    path.write_text(json.dumps(envelope, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    (item,) = [
        i for i in artifacts.iter_file_artifacts(file_store["root"]) if getattr(i, "path", "") == str(path)
    ]
    assert isinstance(item, SourceItem)
    with pytest.raises(RecordingError) as err:
        read_source(item)
    assert err.value.code == "bad-artifact"
    assert str(path) in err.value.message and "digest" in err.value.message


def test_file_store_missing_stream_payload_names_the_file(file_store: dict[str, Path]) -> None:
    envelope = file_store[IDENTITY]
    envelope.with_suffix(".bin").unlink()
    item = SourceItem(str(envelope), "file-artifacts", str(envelope))
    with pytest.raises(RecordingError) as err:
        read_source(item)
    assert err.value.code == "bad-artifact" and str(envelope) in err.value.message


def test_file_store_refuses_newer_format_and_foreign_files(file_store: dict[str, Path]) -> None:
    root = file_store["root"]
    newer = scope_dir(root, ANON) / f"{mint_ref()}.json"
    newer.write_text('{"format":2,"meta":{"ref":"x","kind":"recording/run"},"payload":{}}', encoding="utf-8")
    (root / "notes.txt").write_text("hello", encoding="utf-8")
    problems = {p.origin: p for p in artifacts.iter_file_artifacts(root) if isinstance(p, SourceProblem)}
    assert problems[str(newer)].code == "bad-artifact" and "format 2" in problems[str(newer)].message
    assert problems[str(root / "notes.txt")].code == "not-an-artifact"


def test_file_store_binary_and_json_payload_shapes(tmp_path: Path) -> None:
    root = tmp_path / "store"
    raw = original(PLAIN)
    as_binary = put_file_artifact(root, ACME, make_meta("recording/run", raw, digest=True), raw)
    parsed = json.loads(raw)
    as_json = put_file_artifact(root, ANON, make_meta("recording/run", parsed), parsed)
    assert artifacts.is_file_artifact_store(root)
    items = {i.path: i for i in iter_sources([root]) if isinstance(i, SourceItem)}
    assert read_source(items[str(as_binary)]) == raw
    assert json.loads(read_source(items[str(as_json)])) == parsed


def test_items_are_picklable(file_store: dict[str, Path], sqlite_store: tuple[Path, dict[str, str]]) -> None:
    found = [*iter_sources([file_store["root"]]), *iter_sources([sqlite_store[0]])]
    assert pickle.loads(pickle.dumps(found)) == found


# ─── detection must not misfire ───────────────────────────────────────────────────────────────────


def test_shared_recordings_folder_is_not_a_file_artifact_store() -> None:
    assert RECORDINGS.is_dir()
    assert not artifacts.is_file_artifact_store(RECORDINGS)
    assert not artifacts.is_sqlite_artifact_store(RECORDINGS / PLAIN)


def test_nested_plain_recordings_are_not_a_file_artifact_store(tmp_path: Path) -> None:
    deep = tmp_path / "team" / "alice" / "week-1"
    deep.mkdir(parents=True)
    shutil.copy(RECORDINGS / PLAIN, deep / PLAIN)
    # Even a plain recording under an artifact-like name at artifact depth is not an envelope.
    shutil.copy(RECORDINGS / MULTI, deep / f"{mint_ref()}.json")
    assert not artifacts.is_file_artifact_store(tmp_path)
    items, problems = split(list(iter_sources([tmp_path])))
    assert not problems and {i.container for i in items} == {"file"} and len(items) == 2


# ─── sqliteArtifacts ──────────────────────────────────────────────────────────────────────────────


def test_sqlite_store_yields_recordings_and_reads_them(sqlite_store: tuple[Path, dict[str, str]]) -> None:
    db, refs = sqlite_store
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    assert artifacts.is_sqlite_artifact_store(db)
    items, problems = split(list(iter_sources([db])))
    assert not problems
    assert {i.container for i in items} == {"sqlite-artifacts"}
    assert sorted(i.origin for i in items) == sorted(f"{db}#{r}" for r in refs.values())
    by_origin = {i.origin: i for i in items}
    for name, ref in refs.items():
        item = by_origin[f"{db}#{ref}"]
        assert read_source(item) == original(name)
        assert item.size == len(original(name))
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert sorted(os.listdir(db.parent)) == ["artifacts.db"]  # no -wal/-shm left behind


def test_sqlite_store_found_in_folder_and_live_wal_is_read(tmp_path: Path) -> None:
    db = tmp_path / "data" / "artifacts.sqlite"
    db.parent.mkdir()
    writer = open_sqlite_store(db)
    try:
        text = recording_text(PLAIN)
        meta = recording_meta(text)
        put_sqlite_artifact(writer, ACME, meta, text)  # committed to the WAL, not checkpointed
        assert Path(f"{db}-wal").exists()
        items, problems = split(list(iter_sources([tmp_path])))
        assert not problems
        assert [i.origin for i in items] == [f"{db}#{meta['ref']}"]
        assert read_source(items[0]) == original(PLAIN)
    finally:
        writer.close()


def test_sqlite_store_corrupt_row_names_the_artifact(sqlite_store: tuple[Path, dict[str, str]]) -> None:
    db, refs = sqlite_store
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE af_artifacts SET payload_shape = 'binary', payload = '%%%' WHERE ref = ?", (refs[PLAIN],)
        )
        conn.execute("UPDATE af_artifacts SET payload = 'tampered' WHERE ref = ?", (refs[MULTI],))
    conn.close()
    items = {i.origin: i for i in iter_sources([db]) if isinstance(i, SourceItem)}
    for name, needle in ((PLAIN, "base64"), (MULTI, "digest")):
        origin = f"{db}#{refs[name]}"
        with pytest.raises(RecordingError) as err:
            read_source(items[origin])
        assert err.value.code == "bad-artifact"
        assert origin in err.value.message and needle in err.value.message


def test_sqlite_without_af_artifacts_is_not_a_store(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE runs (id TEXT)")
    conn.close()
    assert not artifacts.is_sqlite_artifact_store(other)
    (tmp_path / "fake.db").write_bytes(b"SQLite format 3\x00" + b"\0" * 200)
    assert not artifacts.is_sqlite_artifact_store(tmp_path / "fake.db")


def test_sqlite_store_with_foreign_schema_is_a_problem(tmp_path: Path) -> None:
    db = tmp_path / "foreign.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE af_artifacts (ref TEXT, kind TEXT)")
    conn.close()
    assert artifacts.is_sqlite_artifact_store(db)
    (problem,) = list(iter_sources([db]))
    assert isinstance(problem, SourceProblem)
    assert problem.code == "bad-artifact-store" and str(db) in problem.message
