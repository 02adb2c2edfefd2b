"""The replay reads what the framework's observer reads (issue #13 points 1 and 2): a small stored corpus
with a denied answer, an appended coverage block, a run ingested twice (bare and enveloped) and a turn
without a dispatched read, replayed through `reviewer pack replay --json`, every figure worked by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock

import orjson

from reviewer.review.matching import compile_pack
from reviewer.review.observed_replay import ObservedReplayer, StoredAnswer, observed_fields
from reviewer.review.phrase_pack import PhrasePack
from store import labels as store_labels
from store.db import writer
from store.db.connection import open_database
from store.db.ingest import ingest
from tests.test_pack_cli import data, run
from tests.test_packs_store import finding_id, missed, recording_events

BLOCK = (
    "\n\n---\n\nCoverage of this answer \u2014 declared by the tools that produced it, not by the model:\n\n"
    "Not checked:\n- incidents filed by email came up empty"
)
#: run id -> (answer, flagged phrases, dispatched read?)
CORPUS: dict[str, tuple[str, list[str], bool]] = {
    "run-a": ("There are no incidents. Billing came up empty.", ["no incidents"], True),
    "run-b": ("The search came up empty.", ["came up empty"], True),  # ingested twice
    "run-d": ("All services are healthy." + BLOCK, [], True),  # the block holds a pack phrase
    "run-e": ("No incidents anywhere. Nothing found.", [], False),  # no read this turn
}
DENIED = ("run-c", "Nothing found in the refunds table.")


def _write(folder: Path, name: str, obj: Any) -> None:
    (folder / name).write_bytes(orjson.dumps(obj))


def build(db_path: Path, folder: Path) -> dict[str, list[str]]:
    """Ingest the corpus and label it; returns run id -> its run keys in key order."""
    folder.mkdir()
    for run_id, (answer, flagged, read) in CORPUS.items():
        _write(folder, f"{run_id}.json", {"events": recording_events(run_id, answer, flagged, read=read)})
    bare = {"events": recording_events("run-b", CORPUS["run-b"][0], ["came up empty"])}
    _write(
        folder,
        "run-b-envelope.json",
        {
            "format": "agentfootprint.recording.v1",
            "producer": {"agentfootprintVersion": "9.62.0"},
            "run": {"runId": "run-b", "complete": True, "droppedEvents": 0, "firstRetainedEventIndex": 0},
            "privacy": {"mode": "full"},
            "recording": bare,
        },
    )
    run_id, answer = DENIED
    events = recording_events(run_id, answer, ["Nothing found"])
    deny = {"phase": "output", "outcome": "deny", "middleware": "guard", "why": "needs a human"}
    events.insert(
        -1, {"type": "agentfootprint.middleware.decision", "payload": deny, "meta": events[0]["meta"]}
    )
    _write(folder, f"{run_id}.json", {"events": events})
    db = open_database(db_path)
    # stored as a database written before m013 holds them: the envelope's copy of run-b a run of its own
    # (ingest now stores it once, with two sources: tests/test_run_sources.py), which the replay reads once
    with mock.patch.object(writer, "_stored_elsewhere", lambda conn, x, own: {}):
        report = ingest(db, [folder], workers=1)
    assert not report.quarantined, report.quarantined
    keys: dict[str, list[str]] = {}
    for key, rid in db.execute("SELECT key, run_id FROM runs ORDER BY key"):
        keys.setdefault(rid, []).append(key)
    assert len(keys["run-b"]) == 2 and len(keys) == 5
    outcome = db.execute("SELECT outcome FROM runs WHERE run_id = 'run-c'").fetchone()[0]
    assert outcome == "denied"
    a, b, c, e = keys["run-a"][0], keys["run-b"][0], keys["run-c"][0], keys["run-e"][0]
    store_labels.label_finding(db, finding_id(db, a, "no incidents"), "tp", "ann")
    missed(db, a, "Billing came up empty")
    store_labels.label_finding(db, finding_id(db, b, "came up empty"), "fp", "ann")  # the copy read first
    store_labels.label_finding(db, finding_id(db, c, "Nothing found"), "tp", "ann")  # a denied draft
    missed(db, e, "Nothing found")
    db.close()
    return keys


def test_replay_reads_delivered_answers_once_without_the_coverage_block(
    db_path: Path, tmp_path: Path
) -> None:
    keys = build(db_path, tmp_path / "rec")
    run(db_path, "new", "ops", "--none", "no incidents")  # ops@1, the baseline
    run(db_path, "add", "ops", "came up empty", "nothing found")  # ops@2, the candidate
    out = data(db_path, "replay", "ops", "--holdout", "0")
    # 6 stored answers; the denied draft and the envelope's copy of run-b are not read
    assert out["answers_read"] == 6 and out["answers"] == 4
    assert out["excluded"]["total"] == 2 and out["excluded"]["why"] == {"denied": 1, "duplicate-run": 1}
    assert {(e["run_key"], e["why"]) for e in out["excluded"]["examples"]} == {
        (keys["run-c"][0], "denied"),
        (keys["run-b"][1], "duplicate-run"),
    }
    assert out["coverage_blocks_removed"] == 1 and out["typed_answers"] == 0
    # candidate claims on every answer read: a "There are no incidents." and "Billing came up empty.",
    # b "The search came up empty."; d's "came up empty" is in the removed block; e's two negatives,
    # with no read this turn, give one no-read note instead (so does the baseline's "No incidents").
    assert out["notes"] == {"candidate": {"no-read": 1}, "baseline": {"no-read": 1}}
    # only the candidate claims a's second clause and b's (once, not once per file); b's was recorded
    assert (
        out["newly_flagged"] == 2 and out["newly_flagged_unrecorded"] == 1 and out["no_longer_flagged"] == 0
    )
    assert sorted(c["text"] for c in out["newly_flagged_examples"]) == [
        "Billing came up empty.",
        "The search came up empty.",
    ]
    assert {p["phrase"]: (p["hits"], p["confirmed"], p["fp"]) for p in out["phrases"]} == {
        "no incidents": (1, 1, 0),
        "came up empty": (2, 1, 1),  # a's (a missed label) and b's (fp)
        "nothing found": (0, 0, 0),  # only in the denied draft and the noted answer
    }
    every = out["figures"]["all"]
    # labelled answers read: a, b, e (c's label is on a denied draft: not seen)
    assert every["labelled_answers"] == 3 and out["labels"]["labelled_answers_not_seen"] == 1
    # candidate: claims a1 (tp), a2 (missed), b (fp) -> precision 2/3; misses a2 (claimed) and e (in an
    # answer with a whole-answer note, counted apart) -> recall 1/2
    assert every["candidate"] == {
        "claims": 3, "labelled_hits": 3, "confirmed_hits": 2, "fp_hits": 1, "precision": 0.6667,
        "misses": 2, "misses_covered": 1, "misses_in_noted_answers": 1, "recall": 0.5,
        "notes": {"no-read": 1},
    }  # fmt: skip
    # baseline: claim a1 (tp) -> precision 1/1; neither miss claimed, e's in a noted answer
    assert every["baseline"] == {
        "claims": 1, "labelled_hits": 1, "confirmed_hits": 1, "fp_hits": 0, "precision": 1.0,
        "misses": 2, "misses_covered": 0, "misses_in_noted_answers": 1, "recall": 0.0,
        "notes": {"no-read": 1},
    }  # fmt: skip
    assert every["fp_added"] == 1  # b's fp claim, only the candidate's
    assert set(out["prediction_shape"]) == {"negative-claim", "negative-claim-note"}
    text = run(db_path, "replay", "ops", "--holdout", "0").output
    assert "not read: 2 answer(s) (1 denied, 1 duplicate-run), never in the figures" in text


def test_typed_answers_are_read_field_by_field_with_their_paths() -> None:
    typed = '{"summary": "The audit came up empty.", "items": [{"note": "fine"}, {"note": "Nothing found."}]}'
    fields, stripped = observed_fields(typed)
    assert (
        fields
        == [
            ("summary", "The audit came up empty."),
            ("items[0].note", "fine"),
            ("items[1].note", "Nothing found."),
        ]
        and not stripped
    )
    pack = PhrasePack.create("p", ["came up empty", "nothing found"])
    replayer = ObservedReplayer(PhrasePack.create("empty"), pack)
    replayer.feed(StoredAnswer("k1", typed, "run-1", dispatched_calls=1))
    report = replayer.report()
    assert report.typed_answers == 1 and report.newly_flagged == 2
    assert {(c.start, c.end, c.text) for c in report.newly_flagged_examples} == {
        (0, 24, "The audit came up empty."),
        (0, 14, "Nothing found."),
    }
    # the same clauses as observe_answer gives them, with their field paths
    assert compile_pack(pack).hits("The audit came up empty.")


def test_the_replay_reads_what_extraction_decided_was_delivered() -> None:
    """The stored `delivered` decides (a paused or halted run's draft is not read even though its outcome is not
    in the withheld set); only a row extracted before the column existed falls back to the outcome."""
    from store.packs import answer_delivered

    assert answer_delivered("paused", 0) is False
    assert answer_delivered("contract_unmet", 1) is True  # delivered raw: the caller received it
    assert answer_delivered("withheld", None) is False and answer_delivered("delivered", None) is True
