"""Phrase packs in the store: versions, references, trials, decisions, and the keyset-paged streams a replay
reads. Also the by-hand corpus (tiny real recordings, ingested) that the CLI and screen tests share."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlite_utils import Database

from bench import synthetic
from reviewer.review.pack_replay import build_labels, consensus
from reviewer.review.phrase_pack import PhrasePack
from store import labels as store_labels
from store import packs as store_packs
from store.db.ingest import ingest
from store.errors import NotFound
from store.runs import resolve_run
from tests.conftest import both_backends

# -- the by-hand corpus --------------------------------------------------------------------------------------------

#: run id -> (answer, phrases the recorded detector flagged in it)
HAND_CORPUS: dict[str, tuple[str, list[str]]] = {
    "run-r1": ("The search came up empty. Payments is fine.", []),
    "run-r2": ("There are no incidents. Billing came up empty.", ["no incidents", "came up empty"]),
    "run-r3": ("🚀 Nothing found in the audit log.", ["Nothing found"]),
    "run-r4": ("That is the full list of services.", ["the full list"]),
    # the phrase sits inside a fenced code block: it must not match
    "run-r5": ("Checked the queue:\n```\nlog search came up empty\n```\nAll clear.", []),
    # the phrase is split across two clauses by a line break: it must not match
    "run-r6": ("The log search came up\nempty-handed again.", []),
}


def _u16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def recording_events(
    run_id: str, answer: str, flagged: list[str], *, read: bool = True, version: str = "en-negatives@3"
) -> list[dict[str, Any]]:
    """The events of a minimal agentfootprint recording: one turn whose answer is `answer`, one dispatched
    tool call when `read`, and a negative-claim finding (UTF-16 span, as the framework reports it) on each
    phrase of `flagged`, carrying phrase-pack version `version`."""
    meta = {"runId": run_id, "wallClockMs": 1_796_003_100_000, "runOffsetMs": 0}
    events: list[dict[str, Any]] = [
        {"type": "agentfootprint.agent.run_configured", "payload": {"agentId": "t"}, "meta": meta},
        {
            "type": "agentfootprint.agent.turn_start",
            "payload": {"turnIndex": 0, "userPrompt": "q"},
            "meta": meta,
        },
    ]
    if read:
        call = {"toolName": "search_logs", "toolCallId": f"{run_id}-c1"}
        events.append(
            {"type": "agentfootprint.stream.tool_start", "payload": {**call, "args": {}}, "meta": meta}
        )
        events.append(
            {
                "type": "agentfootprint.stream.tool_end",
                "payload": {"toolCallId": call["toolCallId"], "result": []},
                "meta": meta,
            }
        )
    for words in flagged:
        at = answer.index(words)
        span = {"start": _u16(answer[:at]), "end": _u16(answer[: at + len(words)])}
        payload = {
            "kind": "negative-claim",
            "field": "answer",
            "span": span,
            "phrasePackVersion": version,
        }
        events.append({"type": "agentfootprint.findings.negative_claim", "payload": payload, "meta": meta})
    events.append(
        {
            "type": "agentfootprint.agent.turn_end",
            "payload": {"turnIndex": 0, "finalContent": answer},
            "meta": meta,
        }
    )
    return events


def write_recording(
    folder: Path,
    run_id: str,
    answer: str,
    flagged: list[str],
    *,
    read: bool = True,
    version: str = "en-negatives@3",
) -> Path:
    """`recording_events` as a bare recording file `<run_id>.json` in `folder`."""
    events = recording_events(run_id, answer, flagged, read=read, version=version)
    path = folder / f"{run_id}.json"
    path.write_bytes(orjson.dumps({"snapshot": {}, "structure": {}, "events": events}))
    return path


def finding_id(db: Database, run_key: str, words: str) -> str:
    row = db.execute(
        "SELECT id FROM findings WHERE run_key = ? AND span_text = ?", [run_key, words]
    ).fetchone()
    assert row, (run_key, words)
    return str(row[0])


def missed(db: Database, run_key: str, words: str, reviewer: str = "ann", list_name: str = "none") -> None:
    start, end = store_labels.find_text(db, run_key, words)
    store_labels.label_missed(db, run_key, start, end, list_name, reviewer)


def build_hand_corpus(db: Database, folder: Path) -> dict[str, str]:
    """Ingest HAND_CORPUS and label it. Returns run id -> run key.

    Finding labels: r2 "no incidents" tp, r2 "came up empty" fp, r3 "Nothing found" tp, r4 "the full list" fp.
    Missed negatives: r1 "came up empty", r5 "All clear", r6 "came up\\nempty-handed"."""
    folder.mkdir(parents=True, exist_ok=True)
    for run_id, (answer, flagged) in HAND_CORPUS.items():
        write_recording(folder, run_id, answer, flagged)
    report = ingest(db, [folder], workers=1)
    assert not report.quarantined, report.quarantined
    keys = {run_id: resolve_run(db, run_id) for run_id in HAND_CORPUS}
    for run_id, words, verdict in (
        ("run-r2", "no incidents", "tp"),
        ("run-r2", "came up empty", "fp"),
        ("run-r3", "Nothing found", "tp"),
        ("run-r4", "the full list", "fp"),
    ):
        store_labels.label_finding(db, finding_id(db, keys[run_id], words), verdict, "ann")
    missed(db, keys["run-r1"], "came up empty")
    missed(db, keys["run-r5"], "All clear")
    missed(db, keys["run-r6"], "came up\nempty-handed")
    return keys


def build_hand_corpus_and_r7(db: Database, folder: Path) -> dict[str, str]:
    """`build_hand_corpus`, then r7 (from a folder beside `folder`): a second run whose flagged "came up
    empty" is labelled fp, so that phrase's false positives are two, in two runs, to step through."""
    keys = build_hand_corpus(db, folder)
    more = folder.with_name(f"{folder.name}-r7")
    more.mkdir()
    write_recording(more, "run-r7", "Our search came up empty.", ["came up empty"])
    assert not ingest(db, [more], workers=1).quarantined
    keys["run-r7"] = resolve_run(db, "run-r7")
    store_labels.label_finding(db, finding_id(db, keys["run-r7"], "came up empty"), "fp", "ann")
    return keys


@pytest.fixture
def hand_db(db: Database, tmp_path: Path) -> tuple[Database, dict[str, str]]:
    return db, build_hand_corpus(db, tmp_path / "recordings")


# -- versions and references ---------------------------------------------------------------------------------------


def save(db: Database, name: str, pack: PhrasePack, **kw: Any) -> store_packs.StoredPack:
    return store_packs.save_pack(
        db, name, content_hash=pack.content_hash, none=pack.none, complete=pack.complete,
        parent_hash=pack.parent_hash, **kw,
    )  # fmt: skip


@both_backends
def test_versions_parent_and_references(db: Database) -> None:
    v1 = PhrasePack.create("ops", ["came up empty"])
    v2 = v1.with_phrase("complete", "that is the full list")
    s1 = save(db, "ops", v1, created_by="ann", note="first")
    s2 = save(db, "ops", v2, created_by="bob")
    save(db, "other", PhrasePack.create("other", ["zero results"]))
    assert (s1.version, s2.version) == (1, 2) and s2.parent_hash == s1.content_hash == v1.content_hash
    assert s2.none == ("came up empty",) and s2.complete == ("that is the full list",)
    assert store_packs.latest_pack(db, "ops") == s2
    assert [p.version for p in store_packs.pack_versions(db, "ops")] == [1, 2]
    assert store_packs.find_pack(db, "ops") == s2
    assert store_packs.find_pack(db, "ops@1") == s1
    assert store_packs.find_pack(db, f"ops@{s1.content_hash[:8]}") == s1
    assert store_packs.find_pack(db, s1.content_hash[:10]) == s1
    assert store_packs.previous_version(db, s2) == s1 and store_packs.previous_version(db, s1) is None
    assert store_packs.pack_by_hash(db, s2.content_hash) == s2
    listed = {r["name"]: r for r in store_packs.list_packs(db)}
    assert (
        listed["ops"]["versions"] == 2 and listed["ops"]["ref"] == "ops@2" and listed["ops"]["phrases"] == 2
    )
    for bad in ("ops@3", "ops@ffff", "nope", "abcdef0123"):
        with pytest.raises(NotFound):
            store_packs.find_pack(db, bad)
    for name in ("", "  ", "a@b", "x" * 65, "tab\there"):
        with pytest.raises(store_packs.PackNameError):
            save(db, name, v1)


# -- trials and decisions --------------------------------------------------------------------------------------------


@both_backends
def test_trials_count_variants_per_label_set(db: Database) -> None:
    first = store_packs.record_trial(db, "c1", "b", "labels-A", {"answers": 1})
    again = store_packs.record_trial(db, "c1", "b", "labels-A", {})
    second = store_packs.record_trial(db, "c2", "b", "labels-A", {})
    other = store_packs.record_trial(db, "c2", "b", "labels-B", {})
    assert (first["variant"], first["variants"], first["trials"]) == (1, 1, 1)
    assert (again["variant"], again["variants"], again["trials"]) == (1, 1, 2)
    assert (second["variant"], second["variants"], second["trials"]) == (2, 2, 3)
    assert (other["variant"], other["variants"], other["trials"]) == (1, 1, 1)
    assert store_packs.trial_counts(db, "labels-A", "nope") == {"trials": 3, "variants": 2, "variant": 0}


@both_backends
def test_decisions(db: Database) -> None:
    store_packs.record_decision(db, "ops", "came up empty", "none", "accepted", "ann")
    store_packs.record_decision(db, "ops", "zero", "complete", "rejected", "bob")
    rows = store_packs.list_decisions(db, "ops")
    assert [(r["phrase"], r["list"], r["decision"], r["reviewer"]) for r in rows] == [
        ("came up empty", "none", "accepted", "ann"),
        ("zero", "complete", "rejected", "bob"),
    ]
    with pytest.raises(store_packs.StoreError):
        store_packs.record_decision(db, "ops", "x", "none", "maybe", "ann")


# -- streams -----------------------------------------------------------------------------------------------------------


@both_backends
def test_answer_stream_pages_by_key(hand_db: tuple[Database, dict[str, str]]) -> None:
    db, keys = hand_db
    rows = list(store_packs.iter_answers(db, page=2))
    assert [k for k, _, _ in rows] == sorted(keys.values()) and store_packs.count_answers(db) == 6
    by_key = {k: (text, spans) for k, text, spans in rows}
    text, spans = by_key[keys["run-r3"]]  # a Python index after an astral emoji
    assert [(text[s:e], v) for s, e, v in spans] == [("Nothing found", "en-negatives@3")]
    flagged = list(store_packs.iter_answers(db, page=1, only_flagged=True))
    assert {k for k, _, _ in flagged} == {keys["run-r2"], keys["run-r3"], keys["run-r4"]}
    assert all(spans for _, _, spans in flagged)


@both_backends
def test_label_streams_page_and_resolve(hand_db: tuple[Database, dict[str, str]]) -> None:
    db, keys = hand_db
    fid = finding_id(db, keys["run-r4"], "the full list")
    store_labels.label_finding(db, fid, "tp", "bob")  # bob disagrees with ann
    missed(db, keys["run-r1"], "came up empty", reviewer="bob")  # same words, second reviewer
    findings = list(store_labels.iter_finding_labels(db, page=1))
    assert len(findings) == 5 and sorted(r[4] for r in findings if r[0] == fid) == ["ann", "bob"]
    assert list(store_labels.iter_finding_labels(db, reviewer="bob")) == [
        (fid, keys["run-r4"], 8, 21, "bob", "tp")
    ]
    misses = list(store_labels.iter_missed_labels(db, page=1))
    assert len(misses) == 4
    labels = build_labels(findings, misses)
    assert len(labels.misses) == 3  # one missed id however many reviewers
    verdicts = {(f.answer_key, f.start): f.verdict for f in labels.findings}
    assert verdicts[(keys["run-r4"], 8)] == "unsure"  # disagreement is not counted
    assert consensus(["tp", "unsure"]) == "tp" and consensus(["unsure"]) == "unsure"
    # the fingerprint follows the resolved labels, not who made them or in which order
    again = build_labels(reversed(findings), reversed(misses))
    assert again.fingerprint == labels.fingerprint
    store_labels.undo_last(db, "bob", fid)
    after = build_labels(store_labels.iter_finding_labels(db), store_labels.iter_missed_labels(db))
    assert after.fingerprint != labels.fingerprint


def test_synthetic_answers_for_benchmarks(db: Database) -> None:
    rows = [(f"k{i}", f"answer {i} came up empty.", [(9, 22)] if i % 2 else []) for i in range(5)]
    assert synthetic.insert_synthetic_answers(db, rows, batch=2) == 5
    got = list(store_packs.iter_answers(db, page=2))
    assert [(k, t[s:e]) for k, t, spans in got for s, e, _ in spans] == [
        ("k1", "came up empty"),
        ("k3", "came up empty"),
    ]
    assert store_packs.count_answers(db, only_flagged=True) == 2
