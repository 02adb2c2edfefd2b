"""Deployed packs measured in production (issue #13 points 4 and 5): the phrasePackVersion strings stored
findings carry, a link from a version string to the stored pack it was deployed from, and the precision of
its labelled findings beside what the replay had predicted for that pack, and for the version it replaced."""

from __future__ import annotations

from pathlib import Path

from store import labels as store_labels
from store.db.connection import open_database
from store.db.ingest import ingest
from tests.test_pack_cli import data, hand_path, run
from tests.test_packs_store import finding_id, write_recording

__all__ = ["hand_path"]  # the fixture, shared with the replay tests

OLD_VERSION = "en-negatives@2"
NEW_VERSION = "en-negatives@3"  # what the by-hand corpus's findings carry


def add_old_version_run(db_path: Path, folder: Path) -> None:
    """One run whose finding carries the older version string, labelled a false positive."""
    folder.mkdir()
    write_recording(folder, "run-old", "No pods are pending.", ["No pods are pending"], version=OLD_VERSION)
    db = open_database(db_path)
    assert not ingest(db, [folder], workers=1).quarantined
    key = db.execute("SELECT key FROM runs WHERE run_id = 'run-old'").fetchone()[0]
    store_labels.label_finding(db, finding_id(db, key, "No pods are pending"), "fp", "ann")
    db.close()


def test_production_precision_beside_the_replay_prediction(
    hand_path: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    db_path, _keys = hand_path
    add_old_version_run(db_path, tmp_path / "old")
    # the version strings the stored findings carry, with findings and labels, none linked yet
    versions = {v["version"]: v for v in data(db_path, "versions")}
    assert versions[NEW_VERSION] == {
        "version": NEW_VERSION, "findings": 4, "negative_claims": 4, "labelled_findings": 4, "labels": 4,
        "deployed_from": None,
    }  # fmt: skip
    assert versions[OLD_VERSION]["findings"] == 1 and versions[OLD_VERSION]["labels"] == 1
    assert "no stored pack linked" in run(db_path, "list").output

    # the replay's predictions: ops@1 against the empty pack, ops@4 against ops@1
    # ops@1 {nothing found, no incidents}: claims r2 "There are no incidents." (tp), r3 (tp) -> 100%
    assert (
        data(db_path, "replay", "ops@1", "--against-empty", "--holdout", "0")["figures"]["all"]["candidate"][
            "precision"
        ]
        == 1.0
    )
    # ops@4: r1 (missed), r2b (fp), r3 (tp), r4 (fp) -> 50% (test_replay_figures_by_hand)
    data(db_path, "replay", "ops@4", "--against", "ops@1", "--holdout", "0")

    linked = data(db_path, "deployed", "ops@1", OLD_VERSION)
    assert linked["pack"] == "ops@1" and linked["replaces"] is None
    linked = data(db_path, "deployed", "ops@4", NEW_VERSION)
    assert linked["pack"] == "ops@4" and linked["replaces"] == OLD_VERSION  # the newest other link of "ops"
    assert [p["deployed_as"] for p in data(db_path, "list")] == [[OLD_VERSION, NEW_VERSION]]
    assert "deployed from ops@4" in run(db_path, "list").output

    rows = {r["version"]: r for r in data(db_path, "production")}
    new = rows[NEW_VERSION]
    # measured on en-negatives@3's labelled findings: r2 "no incidents" tp, r2 "came up empty" fp,
    # r3 "Nothing found" tp, r4 "the full list" fp -> 2/4
    assert new["pack"] == "ops@4"
    assert new["measured"] == {"labelled_findings": 4, "tp": 2, "fp": 2, "unsure": 0, "precision": 0.5}
    assert new["predicted"]["precision"] == 0.5
    # the version it replaced: its one labelled finding is a false positive -> 0%, predicted 100%
    old = new["replaces"]
    assert old["version"] == OLD_VERSION and old["pack"] == "ops@1"
    assert old["measured"]["precision"] == 0.0 and old["predicted"]["precision"] == 1.0
    text = run(db_path, "production", NEW_VERSION).output
    assert (
        "en-negatives@3 (ops@4): measured 50% (2/4 labelled findings), replay predicted 50%; "
        "replaced en-negatives@2 (ops@1): measured 0% (0/1 labelled findings), replay predicted 100%"
    ) in text
    shown = data(db_path, "show", "ops@4")["production"]
    assert [r["version"] for r in shown] == [NEW_VERSION]
    # a new label moves the measured figure, not the prediction
    db = open_database(db_path)
    key = db.execute("SELECT key FROM runs WHERE run_id = 'run-r4'").fetchone()[0]
    store_labels.label_finding(db, finding_id(db, key, "the full list"), "tp", "ann")
    db.close()
    again = data(db_path, "production", NEW_VERSION)[0]
    assert again["measured"]["precision"] == 0.75 and again["predicted"]["precision"] == 0.5
    run(db_path, "production", "en-negatives@9", code=1)
    run(db_path, "deployed", "nope@1", NEW_VERSION, code=1)
