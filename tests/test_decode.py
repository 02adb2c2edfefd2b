"""A recording is the same runs, findings and identities however it was serialised, and events of an unusual shape are skipped or
read as empty, never a reason to refuse the recording."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from bench.corpus import generate_corpus
from store.reading.decode import decode_recording
from store.reading.extract import Extracted, extract
from store.reading.identity import run_identities
from tests.conftest import FIXTURE_RECORDINGS, SAMPLES

FILES = sorted(FIXTURE_RECORDINGS.glob("*.json")) + sorted(SAMPLES.glob("*.json"))


def _extracted(data: bytes) -> Extracted:
    rec = decode_recording(data, "x.json")
    return extract(rec, sha256="0" * 64, origin="x.json", container="file", size=len(data))


def _identities(data: bytes) -> dict[str, str]:
    return run_identities(data, "x.json", "0" * 64)


def _findings(x: Extracted) -> list[tuple[Any, ...]]:
    return [(f["id"], f["kind"], f["span_start"], f["span_end"], f["span_text"]) for f in x.findings]


def _reversed_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _reversed_keys(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reversed_keys(v) for v in value]
    return value


def _reserialised(data: bytes) -> bytes:
    """The same recording written another way: every object's keys in reverse order, indented, and every
    non-ASCII character escaped."""
    return json.dumps(_reversed_keys(json.loads(data)), indent=3, ensure_ascii=True).encode()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_recording_written_another_way_is_the_same_runs_with_the_same_findings(path: Path) -> None:
    """(Stored JSON values keep the key order they were recorded in, so only these are compared.)"""
    data = path.read_bytes()
    other, original = _extracted(_reserialised(data)), _extracted(data)
    assert _identities(_reserialised(data)) == _identities(data)
    assert [r["key"] for r in other.runs] == [r["key"] for r in original.runs]
    assert _findings(other) == _findings(original)


def test_a_changed_event_changes_the_runs_identity_and_nothing_else_does(tmp_path: Path) -> None:
    [path, *_] = generate_corpus(tmp_path, runs=10, seed=3, runs_per_file=10).paths
    data = path.read_bytes()
    same = _identities(_reserialised(data))
    assert same == _identities(data)
    assert sorted(same) == sorted(r["key"] for r in _extracted(data).runs)  # one identity a run
    doc = json.loads(data)
    event = next(e for e in doc["events"] if e["type"].endswith("stream.token"))  # a payload no table takes
    event["payload"] = {"changed": True}
    changed = _identities(json.dumps(doc).encode())
    differing = [key for key in same if changed[key] != same[key]]
    assert len(differing) == 1  # the run of that event, and only it


def test_an_event_or_meta_that_is_not_an_object_is_skipped_or_read_as_empty() -> None:
    rec = orjson.loads((FIXTURE_RECORDINGS / "plain-tool-run.json").read_bytes())
    runs = _extracted(orjson.dumps(rec)).runs
    rec["events"].insert(1, "not an event")
    rec["events"][2]["meta"] = ["not", "a", "meta"]
    decoded = decode_recording(orjson.dumps(rec), "x.json")
    assert decoded.skipped_events == 1
    assert decoded.metas[1].runId is None  # the list meta reads as an empty one
    assert len(_extracted(orjson.dumps(rec)).runs) == len(runs)
