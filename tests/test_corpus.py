"""The synthetic corpus generator (bench/corpus.py) and the committed samples keep the real format."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import orjson
import pytest

from bench.corpus import (
    FORMAT_V1,
    NEGATIVES,
    generate_corpus,
    make_recording,
)
from store.spans import slice_utf16, utf16_span

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_recordings"
META_KEYS = {"wallClockMs", "runOffsetMs", "runtimeStageId", "subflowPath", "compositionPath", "runId"}
NEGATIVE_RE = re.compile(
    "^(?:" + "|".join(re.sub(r"\\\{\w+\\\}", ".+", re.escape(t)) for t in NEGATIVES) + ")$"
)


def _files(info) -> list[tuple[Path, bytes, dict]]:
    return [(p, p.read_bytes(), orjson.loads(p.read_bytes())) for p in info.paths]


def _recording(doc: dict) -> dict:
    return doc["recording"] if "format" in doc else doc


def _answer_text(events: list[dict], field: str) -> str:
    final = next(e for e in events if e["type"] == "agentfootprint.agent.turn_end")["payload"]["finalContent"]
    return final if field == "answer" else orjson.loads(final)[field]


def test_utf16_helpers_count_astral_characters_twice() -> None:
    text = "\U0001f680 \U0001d518S-East: there are no open incidents"
    span = utf16_span(text, "there are no open incidents")
    assert span == {"start": 13, "end": 40}
    assert slice_utf16(text, span["start"], span["end"]) == "there are no open incidents"
    assert text[span["start"] : span["end"]] != "there are no open incidents"  # naive indexing is off by two
    with pytest.raises(ValueError):
        slice_utf16(text, 30, 41)


def test_corpus_is_deterministic_for_a_seed(tmp_path: Path) -> None:
    a = generate_corpus(tmp_path / "a", target_bytes=1_500_000, seed=3)
    b = generate_corpus(tmp_path / "b", target_bytes=1_500_000, seed=3)
    c = generate_corpus(tmp_path / "c", target_bytes=1_500_000, seed=4)
    rel = lambda info, root: [p.relative_to(root) for p in info.paths]  # noqa: E731
    assert rel(a, tmp_path / "a") == rel(b, tmp_path / "b")
    assert all(p.read_bytes() == q.read_bytes() for p, q in zip(a.paths, b.paths, strict=True))
    assert [p.read_bytes() for p in c.paths] != [p.read_bytes() for p in a.paths]
    # the same bytes whatever the number of worker processes
    d = generate_corpus(tmp_path / "d", runs=30, seed=5, workers=2)
    e = generate_corpus(tmp_path / "e", runs=30, seed=5, workers=1)
    assert [p.read_bytes() for p in d.paths] == [p.read_bytes() for p in e.paths]


def test_corpus_has_the_real_shape(tmp_path: Path) -> None:
    info = generate_corpus(tmp_path, target_bytes=3_000_000, seed=11, envelope_share=0.5)
    run_ids: list[str] = []
    kinds = Counter()
    for path, raw, doc in _files(info):
        assert raw[:1] == b"{" and b"\n" not in raw  # compact JSON, like JSON.stringify
        if "format" in doc:
            kinds["envelope"] += 1
            assert doc["format"] == FORMAT_V1
            assert set(doc) == {"format", "producer", "run", "configuration", "privacy", "recording"}
            assert path.name == f"{doc['run']['runId']}.json"
            assert doc["run"]["complete"] is True and doc["run"]["droppedEvents"] == 0
        else:
            kinds["bare"] += 1
        rec = _recording(doc)
        assert set(rec) == {"snapshot", "events", "structure"}
        events = rec["events"]
        assert 40 <= len(events) <= 1600
        for event in events:
            assert set(event) == {"type", "payload", "meta"}
            assert event["type"].startswith("agentfootprint.")
            assert isinstance(event["payload"], dict)
            assert set(event["meta"]) >= META_KEYS and event["meta"]["runId"].startswith("run-")
        ids = {e["meta"]["runId"] for e in events}
        assert len(ids) == 1
        if "format" in doc:
            assert ids == {doc["run"]["runId"]}
        assert events[0]["type"] == "agentfootprint.agent.run_configured"
        assert events[-1]["type"] == "agentfootprint.integrity.disposition"
        assert [e["type"] for e in events].count("agentfootprint.agent.turn_end") == 1
        assert rec["snapshot"]["sharedState"]["history"][0]["role"] == "user"
        run_ids += ids
    assert kinds["envelope"] and kinds["bare"]
    assert len(run_ids) == len(set(run_ids)) == info.runs == info.files
    assert info.events == sum(len(_recording(d)["events"]) for _, _, d in _files(info))


def test_snapshot_carries_most_of_the_bytes(tmp_path: Path) -> None:
    info = generate_corpus(tmp_path / "heavy", target_bytes=2_000_000, seed=2, envelope_share=0)
    snap = sum(len(orjson.dumps(_recording(d)["snapshot"])) for _, _, d in _files(info))
    assert 0.82 <= snap / info.bytes <= 0.90
    light = generate_corpus(tmp_path / "light", runs=20, seed=2)
    snap = sum(len(orjson.dumps(_recording(d)["snapshot"])) for _, _, d in _files(light))
    assert snap / light.bytes < 0.4


def test_target_bytes_is_roughly_honoured(tmp_path: Path) -> None:
    target = 2_500_000
    info = generate_corpus(tmp_path, target_bytes=target, seed=1)
    sizes = [p.stat().st_size for p in info.paths]
    assert info.bytes == sum(sizes) == sum(p.stat().st_size for p in tmp_path.rglob("*.json"))
    assert target <= info.bytes < target + max(sizes)
    assert info.bytes - sizes[-1] < target  # it stopped as soon as the target was reached


def test_runs_mode_and_packing(tmp_path: Path) -> None:
    info = generate_corpus(tmp_path / "one", runs=25, seed=9)
    assert (info.files, info.runs) == (25, 25)
    assert all(40 <= len(_recording(d)["events"]) <= 80 for _, _, d in _files(info))
    packed = generate_corpus(tmp_path / "packed", runs=25, seed=9, runs_per_file=10)
    assert (packed.files, packed.runs) == (3, 25)
    per_file = []
    for _, _, doc in _files(packed):
        assert "format" not in doc  # a multi-run recording cannot be enveloped
        events = doc["events"]
        ids = list(dict.fromkeys(e["meta"]["runId"] for e in events))
        per_file.append(len(ids))
        starts = [e for e in events if e["type"] == "agentfootprint.agent.turn_start"]
        dispositions = [e for e in events if e["type"] == "agentfootprint.integrity.disposition"]
        assert len(starts) == len(dispositions) == len(ids)
        assert len({e["meta"].get("sessionId") for e in events}) == 1
    assert per_file == [10, 10, 5]
    with pytest.raises(ValueError):
        generate_corpus(tmp_path / "bad", runs=1, target_bytes=1)


def test_negative_claim_spans_slice_to_the_flagged_clause() -> None:
    kinds = Counter()
    naive_wrong = 0
    for index in range(250):
        rng = random.Random(index)
        rec = make_recording(rng, index, events=rng.choice((45, 90, 160)), snapshot_heavy=False)
        events = rec["events"]
        for event in events:
            if event["type"] != "agentfootprint.findings.negative_claim":
                continue
            payload = event["payload"]
            kinds[payload["kind"]] += 1
            assert payload["phrasePackVersion"].startswith("en-negatives@")
            if payload["kind"] == "negative-claim-note":
                assert payload["code"] == "no-read" and "span" not in payload
                continue
            text = _answer_text(events, payload["field"])
            start, end = payload["span"]["start"], payload["span"]["end"]
            clause = slice_utf16(text, start, end)
            if payload["kind"] == "negative-claim":
                assert NEGATIVE_RE.match(clause), clause
                refs = {r["toolCallId"] for r in payload["refs"]}
                starts = {
                    e["payload"]["toolCallId"] for e in events if e["type"].endswith("stream.tool_start")
                }
                assert refs <= starts
            naive_wrong += text[start:end] != clause
    assert kinds["negative-claim"] >= 20 and kinds["negative-claim-note"] >= 1
    assert naive_wrong >= 5  # some answers carry astral emoji before the span


def test_committed_samples_spans_are_right() -> None:
    """Every placeable span in sample_recordings/ slices to a clause; exactly one is out of range."""
    if not SAMPLES.is_dir():
        pytest.skip("no sample_recordings/")
    unplaceable = placed = 0
    for path in sorted(SAMPLES.glob("*.json")):
        rec = _recording(orjson.loads(path.read_bytes()))
        by_run: dict[str, list[dict]] = {}
        for event in rec["events"]:
            # `resilience.output_fallback_triggered` carries no meta (recording-format.md section 17.2)
            by_run.setdefault((event.get("meta") or {}).get("runId"), []).append(event)
        for events in by_run.values():
            for event in events:
                if (
                    event["type"] != "agentfootprint.findings.negative_claim"
                    or "span" not in event["payload"]
                ):
                    continue
                payload = event["payload"]
                span = payload["span"]
                start, end = (span["start"], span["end"]) if isinstance(span, dict) else span
                text = _answer_text(events, payload["field"])
                try:
                    clause = slice_utf16(text, start, end)
                except ValueError:
                    unplaceable += 1
                    continue
                placed += 1
                assert clause.strip() == clause and len(clause) > 10, (path.name, clause)
                assert text[start:end] != clause, (path.name, "sample must defeat naive indexing")
    assert (placed, unplaceable) == (8, 1)  # the 8th: typed-answer-span-delivered.json
