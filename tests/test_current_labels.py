"""A reviewer's current label on a finding is kept as labels are written (schema m029), and it is always the
one the rule names: their latest by the time it was made, ties to the later row, a clear removing it, an
older label merged in later never becoming current."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from sqlite_utils import Database

from store import labels, vocab
from tests.conftest import both_backends

STAMPS = ["2026-01-01T10:00:00.000Z", "2026-01-02T10:00:00.000Z", "2026-01-03T10:00:00.000Z"]
REVIEWERS = ["ann", "bob", "cy"]


def _by_rule(db: Database, targets: list[str]) -> set[tuple[str, str, str]]:
    """The Python twin of the rule, over each target's history in row order."""
    out = set()
    for target in targets:
        for reviewer, row in vocab.current_labels(labels.history(db, target)).items():
            out.add((target, reviewer, row["verdict"]))
    return out


def _by_subquery(db: Database) -> set[tuple[str, str, str]]:
    """What the view read before m029 (a subquery for each label row), on the same labels."""
    select = vocab.CURRENT_LABELS_BY_SUBQUERY.split(" AS", 1)[1]
    return {tuple(r) for r in db.execute(f"SELECT target_id, reviewer, verdict FROM ({select}) x").fetchall()}


def _view(db: Database) -> list[tuple[Any, ...]]:
    return [
        tuple(r) for r in db.execute("SELECT target_id, reviewer, verdict FROM current_labels").fetchall()
    ]


@both_backends
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_kept_current_labels_are_the_rules_after_any_history(
    loaded: Database, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = random.Random(seed)
    targets = [
        r[0]
        for r in loaded.execute(
            "SELECT id FROM findings WHERE kind != ? ORDER BY id LIMIT 6", [vocab.WITHHELD_ANSWER]
        ).fetchall()
    ]
    # labels made out of time order (an export merged in later), at the same instant, undone and cleared
    monkeypatch.setattr(labels, "now_iso", lambda: rng.choice(STAMPS))
    for _ in range(60):
        target, reviewer = rng.choice(targets), rng.choice(REVIEWERS)
        if rng.random() < 0.2:
            labels.undo_last(loaded, reviewer, target)
        else:
            labels.label_finding(loaded, target, rng.choice(["tp", "fp", "unsure"]), reviewer)
    view = _view(loaded)
    assert len(view) == len(set(view)), "one current label per reviewer and target"
    assert set(view) == _by_rule(loaded, targets) == _by_subquery(loaded)
    assert any(v[2] != "tp" for v in view) and len(view) > 3


@both_backends
def test_an_older_label_arriving_later_and_a_clear_keep_the_rule(
    loaded: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    [target] = loaded.execute(
        "SELECT id FROM findings WHERE kind != ? ORDER BY id LIMIT 1", [vocab.WITHHELD_ANSWER]
    ).fetchone()[:1]
    stamps = iter([STAMPS[1], STAMPS[0], STAMPS[2], STAMPS[2], STAMPS[0], STAMPS[0]])
    monkeypatch.setattr(labels, "now_iso", lambda: next(stamps))
    labels.label_finding(loaded, target, "fp", "ann")
    labels.label_finding(loaded, target, "tp", "ann")  # made earlier, written later: not current
    assert labels.current(loaded, target) == {"ann": "fp"}
    labels.undo_last(loaded, "ann", target)  # undoes the tp: restores the fp, now the latest
    labels.label_finding(loaded, target, "unsure", "ann")  # the same instant as the undo, a later row
    assert labels.current(loaded, target) == {"ann": "unsure"}
    labels.label_finding(loaded, target, "tp", "bob")
    assert labels.current(loaded, target) == {"ann": "unsure", "bob": "tp"}
    labels.undo_last(loaded, "bob", target)  # nothing before: cleared, at the same instant, a later row
    assert labels.current(loaded, target) == {"ann": "unsure"}
    assert set(_view(loaded)) == _by_rule(loaded, [target]) == _by_subquery(loaded)


def test_labels_written_after_the_last_analysis_never_make_sqlite_filter_every_finding_of_a_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store is analysed at ingest and labelled after: with no statistics for the current labels, SQLite
    took them for a million rows and built a Bloom filter over every finding of the kind to join them (370
    ms for the unlabelled count under a kind at a million runs, 3 ms driven by the labels)."""
    from bench.synthetic import insert_synthetic_findings, insert_synthetic_runs
    from store import findings
    from store.db.connection import open_database
    from store.db.statistics import refresh_statistics
    from tests.conftest import record_statements

    path = tmp_path / "review.db"
    db = open_database(path)
    insert_synthetic_runs(db, 300)
    insert_synthetic_findings(db)
    assert refresh_statistics(db, force=True)  # as after an ingest, before anyone labels
    [(kind, _)] = db.execute(
        "SELECT kind, count(*) FROM findings GROUP BY kind ORDER BY count(*) DESC LIMIT 1"
    ).fetchall()
    for (fid,) in db.execute(
        "SELECT id FROM findings WHERE kind = ? ORDER BY id LIMIT 150", [kind]
    ).fetchall():
        labels.label_finding(db, fid, "unsure" if kind == vocab.WITHHELD_ANSWER else "tp", "ann")
    db.close()
    db = open_database(path)  # as the app opens it
    statements = record_statements(db, monkeypatch)
    count = findings.queue_count_at_most(db, kind=kind, state="unlabelled")
    progress = findings.queue_progress(db, reviewer="ann", kind=kind)
    page = findings.queue_page(db, kind=kind, limit=100)
    monkeypatch.undo()
    assert progress["labelled"] == 150 and progress["mine"] == 150 and count > 0 and count.exact
    assert sum(1 for row in page if row["labels"]) > 0
    reads = [(sql, params) for sql, params in statements if "current_labels" in sql]
    assert sum("findings f" in sql for sql, _ in reads) >= 2
    for sql, params in reads:
        plan = [r[3] for r in db.execute("EXPLAIN QUERY PLAN " + sql, params).fetchall()]
        assert not any("BLOOM" in step for step in plan), plan
