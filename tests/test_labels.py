"""Labels: append-only, undo by appending, several reviewers, kappa, exports that round-trip, and
labels that survive re-ingest, re-extraction and a concurrent process holding the database."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlite_utils import Database

from reviewer.cli.main import cli
from store import labels
from store.db.ingest import ingest
from store.db.reextract import reextract
from tests.conftest import FIXTURE_RECORDINGS, both_backends, postgresql_plan_nodes, record_statements


def _finding(db: Database, kind: str) -> str:
    return db.execute("SELECT id FROM findings WHERE kind = ? ORDER BY id LIMIT 1", [kind]).fetchone()[0]


def _invoke(args: list[str]) -> str:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return result.stdout


@both_backends
def test_labels_are_append_only_and_undo_appends(loaded: Database) -> None:
    fid = _finding(loaded, "unsupported-claim")
    labels.label_finding(loaded, fid, "tp", "ann")
    labels.label_finding(loaded, fid, "fp", "ann", note="the run never read that port")
    assert labels.current(loaded, fid) == {"ann": "fp"}
    labels.undo_last(loaded, "ann")
    assert labels.current(loaded, fid) == {"ann": "tp"}
    labels.undo_last(loaded, "ann")
    assert labels.current(loaded, fid) == {}
    assert labels.undo_last(loaded, "ann") is None
    assert [h["verdict"] for h in labels.history(loaded, fid)] == ["tp", "fp", "tp", "cleared"]


@both_backends
def test_withheld_answers_take_their_own_verdicts(loaded: Database) -> None:
    fid = _finding(loaded, "withheld-answer")
    with pytest.raises(labels.LabelError, match="does not apply"):
        labels.label_finding(loaded, fid, "tp", "ann")
    labels.label_finding(loaded, fid, "justified", "ann")
    assert labels.current(loaded, fid) == {"ann": "justified"}


@both_backends
def test_cli_two_reviewers_and_kappa(loaded: Database, db_path: Path) -> None:
    ids = [
        r[0]
        for r in loaded.execute("SELECT id FROM findings WHERE kind = 'coverage-gap' ORDER BY id LIMIT 4")
    ]
    ann = ["tp", "tp", "fp", "fp"]
    bob = ["tp", "fp", "fp", "fp"]
    for fid, a, b in zip(ids, ann, bob, strict=True):
        _invoke(["label", fid, "--verdict", a, "--reviewer", "ann", "--db", str(db_path)])
        _invoke(["label", fid, "--verdict", b, "--reviewer", "bob", "--db", str(db_path)])
    stats = json.loads(_invoke(["stats", "--json", "--db", str(db_path)]))
    [pair] = stats["agreement"]
    # by hand: po = 3/4; ann tp 2 fp 2, bob tp 1 fp 3 -> pe = (2*1 + 2*3)/16 = 0.5; kappa = (0.75-0.5)/0.5
    assert pair["reviewers"] == ["ann", "bob"] and pair["shared"] == 4
    assert pair["kappa"] == pytest.approx(0.5)
    assert stats["kinds"]["coverage-gap"]["disagreement"] == 1
    assert [d["target_id"] for d in stats["disagreements"]] == [ids[1]]


@both_backends
def test_missed_negative_from_the_cli(loaded: Database, db_path: Path) -> None:
    out = json.loads(
        _invoke(
            [
                "label",
                "--missed",
                "run-1796001919298-1",
                "--text",
                "sunny",
                "--list",
                "none",
                "--reviewer",
                "ann",
                "--json",
                "--db",
                str(db_path),
            ]
        )
    )
    assert out["verdict"] == "missed" and out["list"] == "none" and out["span_text"].lower() == "sunny"
    answer = loaded.execute("SELECT answer FROM runs WHERE run_id = 'run-1796001919298-1'").fetchone()[0]
    assert answer[out["span_start"] : out["span_end"]] == out["span_text"]


@both_backends
def test_reviewer_name_from_environment(
    loaded: Database, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_NAME", "carol")
    fid = _finding(loaded, "dangling-reference")
    _invoke(["label", fid, "--verdict", "unsure", "--db", str(db_path)])
    assert labels.current(loaded, fid) == {"carol": "unsure"}


@both_backends
def test_labels_survive_reingest_and_reextraction(loaded: Database, db_path: Path) -> None:
    fid = _finding(loaded, "evidence-gate")
    labels.label_finding(loaded, fid, "fp", "ann")
    ingest(loaded, [FIXTURE_RECORDINGS], db_path=str(db_path))
    loaded.execute("UPDATE recordings SET extractor_version = 0")  # as after an upgrade of the extractor
    done, failures = reextract(loaded)
    assert failures == [] and done == len(list(FIXTURE_RECORDINGS.glob("*.json")))
    joined = loaded.execute(
        "SELECT f.kind, l.verdict FROM current_labels l JOIN findings f ON f.id = l.target_id"
    ).fetchall()
    assert joined == [("evidence-gate", "fp")]
    assert loaded.execute("SELECT count(*) FROM search WHERE search MATCH 'weather'").fetchone()[0] > 0


@both_backends
def test_export_round_trips_into_a_fresh_database(loaded: Database, db_path: Path, tmp_path: Path) -> None:
    labels.label_finding(loaded, _finding(loaded, "unsupported-claim"), "tp", "ann", note="ünïcode 🚀 note")
    labels.label_finding(loaded, _finding(loaded, "coverage-gap"), "fp", "bob")
    labels.undo_last(loaded, "bob")
    key = loaded.execute("SELECT key FROM runs WHERE run_id = 'run-1796001919298-1'").fetchone()[0]
    labels.label_missed(loaded, key, 0, 5, "complete", "ann")
    export = tmp_path / "labels.json"
    _invoke(["labels", "--json", "-o", str(export), "--db", str(db_path)])
    fresh = tmp_path / "fresh.db"
    assert "4 label(s) imported" in _invoke(["labels", "--import", str(export), "--db", str(fresh)])
    assert "0 label(s) imported, 4 already present" in _invoke(
        ["labels", "--import", str(export), "--db", str(fresh)]
    )
    again = tmp_path / "again.json"
    _invoke(["labels", "--json", "-o", str(again), "--db", str(fresh)])
    exported = json.loads(export.read_text())
    # the run's delivery rides along (the fresh database has the labels but not the runs, hence the strip)
    assert [(r["delivered"], r["delivered_as"]) for r in exported] == [(True, "drafted")] * 4
    strip = (
        "finding_kind",
        "finding_message",
        "finding_span_text",
        "finding_codes",
        "finding_pack_version",
        "delivered",
        "delivered_as",
    )
    a = [{k: v for k, v in r.items() if k not in strip} for r in exported]
    b = [{k: v for k, v in r.items() if k not in strip} for r in json.loads(again.read_text())]
    assert a == b
    csv_text = _invoke(["labels", "--csv", "--db", str(db_path)])
    assert csv_text.splitlines()[0].startswith("uid,target_id,target_kind,verdict")
    assert len(csv_text.strip().splitlines()) == 5


@both_backends
def test_export_never_overwrites_without_force(loaded: Database, db_path: Path, tmp_path: Path) -> None:
    target = tmp_path / "exists.json"
    target.write_text("keep me")
    result = CliRunner().invoke(cli, ["labels", "--json", "-o", str(target), "--db", str(db_path)])
    assert result.exit_code == 1 and "already exists" in result.output
    assert target.read_text() == "keep me"
    _invoke(["labels", "--json", "-o", str(target), "--force", "--db", str(db_path)])
    assert json.loads(target.read_text()) == []


HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN")
conn.execute("SELECT count(*) FROM findings").fetchone()   # a reader holding a snapshot open
print("holding", flush=True)
sys.stdin.readline()                                         # until the test says "next"
conn.execute("COMMIT")
w = sqlite3.connect(sys.argv[1], isolation_level=None)
w.execute("BEGIN IMMEDIATE")                                 # then a writer holding the write lock
w.execute("INSERT INTO labels (uid, target_id, target_kind, verdict, reviewer, created_at) "
          "VALUES ('holder', 'nothing', 'x', 'cleared', 'holder', '2026-01-01')")
print("writing", flush=True)
sys.stdin.readline()                                         # until the test says "release"
w.execute("COMMIT")
print("released", flush=True)
"""


def test_label_while_another_process_holds_the_database(loaded: Database, db_path: Path) -> None:
    """The holder keeps each lock until told: nothing here depends on how fast either process runs."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "holding"
        fid = _finding(loaded, "unsupported-claim")
        _invoke(
            ["label", fid, "--verdict", "tp", "--reviewer", "ann", "--db", str(db_path)]
        )  # beside a reader
        proc.stdin.write("next\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "writing"
        # the other process holds the write lock until the label below has been waiting a while
        stdin = proc.stdin

        def let_go() -> None:
            stdin.write("release\n")
            stdin.flush()

        release = threading.Timer(1.0, let_go)
        release.start()
        _invoke(["label", fid, "--verdict", "fp", "--reviewer", "bob", "--db", str(db_path)])
        release.join()
        assert proc.stdout.readline().strip() == "released"
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert labels.current(loaded, fid) == {"ann": "tp", "bob": "fp"}
    ids = dict(loaded.execute("SELECT uid, id FROM labels").fetchall())
    bob = loaded.execute("SELECT id FROM labels WHERE reviewer = 'bob'").fetchone()[0]
    assert bob > ids["holder"], "the second label queued behind the other writer (and was written after it)"


@both_backends
def test_merging_an_older_export_never_resurrects_an_older_verdict(
    loaded: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from store import vocab
    from store.db.connection import open_database

    target = _finding(loaded, "unsupported-claim")
    other_path = tmp_path / "other.db"
    other = open_database(other_path)
    ingest(other, [FIXTURE_RECORDINGS], db_path=str(other_path))
    stamps = iter(["2026-01-01T10:00:00.000Z", "2026-01-02T10:00:00.000Z"])
    monkeypatch.setattr(labels, "now_iso", lambda: next(stamps))
    labels.label_finding(other, target, "tp", "ann")  # ann's first verdict, on her laptop
    labels.label_finding(loaded, target, "fp", "ann")  # a day later, on the shared database
    older = labels.export_labels(other)
    added, _ = labels.import_labels(loaded, older)  # the older export is merged in after
    assert added == 1
    assert labels.current(loaded, target) == {"ann": "fp"}, "the later verdict stays current"
    history = labels.history(loaded, target)
    assert {r: row["verdict"] for r, row in vocab.current_labels(history).items()} == {"ann": "fp"}
    other.close()


@both_backends
@pytest.mark.parametrize(
    "older",
    ["2026-01-02T12:00:00+02:00", "2026-01-02T10:00:00Z", "2026-01-02T10:00:00"],
    ids=["an offset", "no milliseconds", "no zone (UTC)"],
)
def test_an_older_verdict_written_in_another_time_format_never_becomes_current(
    loaded: Database, monkeypatch: pytest.MonkeyPatch, older: str
) -> None:
    """ "Current" is the latest by the time a label was made, whatever ISO 8601 form an export spells it in:
    10:00 UTC written as 12:00+02:00 (or without milliseconds) is still older than 10:00:00.500Z."""
    target = _finding(loaded, "unsupported-claim")
    monkeypatch.setattr(labels, "now_iso", lambda: "2026-01-02T10:00:00.500Z")
    labels.label_finding(loaded, target, "fp", "ann")
    row = dict(labels.export_labels(loaded)[0], uid="from-elsewhere", verdict="tp", created_at=older)
    labels.import_label_rows(loaded, [row])
    assert labels.current(loaded, target) == {"ann": "fp"}, "the later verdict stays current"
    [imported] = [r for r in labels.export_labels(loaded) if r["uid"] == "from-elsewhere"]
    assert imported["created_at"] == "2026-01-02T10:00:00.000Z", "kept in the one form labels are ordered by"


def test_labels_made_at_the_same_time_break_the_tie_by_the_later_row(
    loaded: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    from store import vocab

    target = _finding(loaded, "unsupported-claim")
    monkeypatch.setattr(labels, "now_iso", lambda: "2026-01-02T10:00:00.000Z")
    labels.label_finding(loaded, target, "tp", "ann")
    labels.label_finding(loaded, target, "fp", "ann")
    assert labels.current(loaded, target) == {"ann": "fp"}
    history = labels.history(loaded, target)
    assert {r: row["verdict"] for r, row in vocab.current_labels(history).items()} == {"ann": "fp"}


@pytest.mark.parametrize(
    ("change", "field_words"),
    [
        ({"span_start": "12"}, "field span_start"),
        ({"verdict": "justified"}, "field verdict"),  # a withheld-answer verdict on a finding
        ({"verdict": "tp", "target_kind": "missed-negative"}, "field verdict"),
        ({"created_at": "yesterday"}, "field created_at"),
        ({"reviewer": ["ann"]}, "field reviewer"),
        ({"uid": None}, "field uid"),
    ],
)
def test_an_imported_label_row_is_validated_and_the_error_names_row_and_field(
    loaded: Database, tmp_path: Path, change: dict[str, object], field_words: str
) -> None:
    labels.label_finding(loaded, _finding(loaded, "unsupported-claim"), "tp", "ann")
    good = labels.export_labels(loaded)[0]
    rows = [dict(good, uid="fresh-1"), {**good, "uid": "fresh-2", **change}]
    before = loaded.execute("SELECT count(*) FROM labels").fetchone()[0]
    with pytest.raises(labels.StoreError) as err:
        labels.import_label_rows(loaded, rows)
    assert "label #2" in str(err.value) and field_words in str(err.value), str(err.value)
    assert loaded.execute("SELECT count(*) FROM labels").fetchone()[0] == before, "nothing written"


@both_backends
def test_labels_for_findings_not_here_are_kept_apart_out_of_stats_and_suggestions(
    loaded: Database, db_path: Path, tmp_path: Path
) -> None:
    from reviewer.review.stats import label_stats

    fid = _finding(loaded, "unsupported-claim")
    labels.label_finding(loaded, fid, "tp", "ann")
    good = labels.export_labels(loaded)[0]
    key = loaded.execute("SELECT key FROM runs WHERE run_id = 'run-1796001919298-1'").fetchone()[0]
    forged = [
        dict(good, uid="ghost-1", target_id="f-does-not-exist", verdict="fp"),
        {
            **{k: good.get(k) for k in ("reviewer", "created_at")},
            "uid": "ghost-2",
            "target_id": "m-forged",
            "target_kind": "missed-negative",
            "verdict": "missed",
            "run_key": key,
            "span_start": 0,
            "span_end": 20,
            "span_text": "words the answer never said",
            "list": "none",
        },
    ]
    stats_before = label_stats(labels.label_states(loaded))
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(forged))
    result = CliRunner().invoke(cli, ["labels", "--import", str(path), "--db", str(db_path)])
    assert result.exit_code == 0, result.output
    assert "2 label(s) imported" in result.output and "2 label(s) name a finding" in result.output
    assert label_stats(labels.label_states(loaded)) == stats_before, "they count in no statistic"
    assert [r for r in labels.iter_missed_labels(loaded) if r[0] == "m-forged"] == [], (
        "nor become suggestions"
    )
    assert {r["uid"] for r in labels.export_labels(loaded)} >= {"ghost-1", "ghost-2"}, "kept, not dropped"


@both_backends
def test_a_changed_recording_of_a_run_is_a_second_version_and_labels_stay_on_their_finding(
    db: Database, db_path: Path, tmp_path: Path
) -> None:
    from reviewer.ui.screens.run import run_title
    from store.runs import run_header

    original = FIXTURE_RECORDINGS / "unsupported-claim-findings.json"
    ingest(db, [original], db_path=str(db_path))
    fid = _finding(db, "unsupported-claim")
    labels.label_finding(db, fid, "tp", "ann")
    doc = json.loads(original.read_text())
    for e in doc["events"]:
        if e["type"].endswith("turn_end"):
            e["payload"]["finalContent"] = str(e["payload"].get("finalContent")) + " (re-recorded)"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(doc))
    assert ingest(db, [changed], db_path=str(db_path)).stored == 1
    run_id = db.execute("SELECT run_id FROM runs LIMIT 1").fetchone()[0]
    shown = json.loads(_invoke(["show", run_id, "--json", "--db", str(db_path)]))
    versions = shown["versions"]
    assert len(versions) == 2 and shown["run_key"] == versions[1]["run_key"], "the newest is shown"
    assert [v["labels"] for v in versions] == [1, 0], "the label stays on the finding it was made on"
    assert labels.current(db, fid) == {"ann": "tp"}
    assert "version 2 of 2" in _invoke(["show", run_id, "--db", str(db_path)])
    title = run_title(run_header(db, versions[1]["run_key"])).plain
    assert "version 2 of 2" in title and "1 label(s) on the other versions" in title


@both_backends
def test_a_pages_unlabelled_counts_probe_each_findings_labels_not_all_of_them(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runs screen's per-run unlabelled counts look up each finding's own current labels: PostgreSQL,
    estimating the current labels at a handful, made NOT EXISTS an anti-join testing every finding against
    all of them (at a million runs 40-100 ms for one page at 2,200 labels, and more with every label)."""
    from bench.synthetic import insert_synthetic_findings, insert_synthetic_runs
    from store import labels, runs
    from store.db.postgres import is_postgres

    insert_synthetic_runs(db, 300)
    insert_synthetic_findings(db)
    ids = [r[0] for r in db.execute("SELECT id FROM findings ORDER BY id").fetchall()]
    for n, fid in enumerate(ids[: len(ids) // 2]):
        labels.label_finding(db, fid, "unsure", f"r{n % 3}")
    page = runs.runs_page(db, sort="most-findings", limit=100)
    keys = [r["run_key"] for r in page]
    expected = {
        key: db.execute(
            "SELECT count(*) FROM findings f WHERE f.run_key = ? AND f.id NOT IN (SELECT target_id FROM current_labels)",
            [key],
        ).fetchone()[0]
        for key in keys
    }
    assert 0 < sum(expected.values()) < sum(r["findings"] for r in page), "some labelled, some not"
    statements = record_statements(db, monkeypatch)
    got = labels.unlabelled_counts(db, keys)
    monkeypatch.undo()
    assert got == expected
    if is_postgres(db):
        counting = [s for s in statements if "FROM findings f" in s[0]]
        assert len(counting) == 1, counting
        joins = [n["Node Type"] for n in postgresql_plan_nodes(db, counting) if n.get("Join Type") == "Anti"]
        assert not joins, f"the unlabelled findings are an anti-join over every current label: {joins}"
