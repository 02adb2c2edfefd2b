"""The typed decode (events as Structs, unread payloads not decoded) reads every recording exactly as the
tolerant one does, and a recording of an unusual shape falls back to the tolerant reading."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from bench.corpus import generate_corpus
from store.reading.decode import UNREAD_PAYLOADS, decode_recording
from store.reading.extract import extract
from tests.conftest import FIXTURE_RECORDINGS, SAMPLES

FILES = sorted(FIXTURE_RECORDINGS.glob("*.json")) + sorted(SAMPLES.glob("*.json"))


def _both(data: bytes) -> tuple[object, object]:
    out = []
    for typed in (True, False):
        rec = decode_recording(data, "x.json", typed=typed)
        out.append(extract(rec, sha256="0" * 64, origin="x.json", container="file", size=len(data)))
    return out[0], out[1]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_typed_and_tolerant_decode_extract_the_same_rows(path: Path) -> None:
    typed, tolerant = _both(path.read_bytes())
    assert typed == tolerant


def test_same_rows_on_generated_event_heavy_recordings(tmp_path: Path) -> None:
    info = generate_corpus(tmp_path, runs=20, seed=3, runs_per_file=10)
    for path in info.paths:
        data = path.read_bytes()
        assert any(f'"agentfootprint.{t}"'.encode() in data for t in UNREAD_PAYLOADS)
        typed, tolerant = _both(data)
        assert typed == tolerant


def test_an_event_or_meta_that_is_not_an_object_is_read_the_tolerant_way() -> None:
    rec = orjson.loads((FIXTURE_RECORDINGS / "plain-tool-run.json").read_bytes())
    rec["events"].insert(1, "not an event")
    rec["events"][2]["meta"] = ["not", "a", "meta"]
    data = orjson.dumps(rec)
    typed, tolerant = _both(data)
    assert typed == tolerant
    decoded = decode_recording(data, "x.json")
    assert decoded.skipped_events == 1
    assert decoded.metas[1].runId is None  # the list meta reads as an empty one
