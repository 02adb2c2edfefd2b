"""Packs saved before content ids were over the exact export stay readable: the upgrade gives every
stored version its new id, re-points parents and trials, and two versions that shared an old id
(same phrases, other case or order) get two ids."""

from __future__ import annotations

import json
from pathlib import Path

from reviewer.review.phrase_pack import PhrasePack
from reviewer.service.pack_ops import baseline_for
from store import packs as store_packs
from store.db.connection import open_database
from store.pack_identity import legacy_pack_hash, pack_content_id


def _save(db: object, name: str, none: list[str], parent: str | None) -> str:
    old = legacy_pack_hash(none, [])
    store_packs.save_pack(db, name, content_hash=old, none=tuple(none), complete=(), parent_hash=parent)  # type: ignore[arg-type]
    return old


def test_an_old_database_upgrades_to_content_ids(db_path: Path) -> None:
    db = open_database(db_path)
    db.execute("DELETE FROM _sqlite_migrations WHERE name = 'm005_pack_content_ids'")
    v1 = _save(db, "ops", ["came up empty"], None)
    v2 = _save(db, "ops", ["came up empty", "No incidents"], v1)
    c1 = _save(db, "copy", ["no incidents", "came up empty"], None)
    assert c1 == v2  # the old id ignored case and order
    _save(db, "copy", ["no incidents", "came up empty", "zero results"], c1)
    store_packs.record_trial(db, v1, legacy_pack_hash([], []), "labels", {})
    store_packs.record_trial(db, v2, v1, "labels", {})
    db.conn.commit()
    db.close()

    db = open_database(db_path)  # applies the migration
    try:
        ops1, ops2 = store_packs.find_pack(db, "ops@1"), store_packs.find_pack(db, "ops@2")
        copy1, copy2 = store_packs.find_pack(db, "copy@1"), store_packs.find_pack(db, "copy@2")
        assert ops1.content_hash == pack_content_id(["came up empty"], [])
        assert ops1.content_hash == PhrasePack.create("x", ["came up empty"]).content_hash
        assert ops2.content_hash != copy1.content_hash  # they export different JSON
        assert ops2.parent_hash == ops1.content_hash and copy1.parent_hash is None
        assert copy2.parent_hash == copy1.content_hash  # the old id was shared: same name wins
        assert baseline_for(db, copy2) == copy1 and baseline_for(db, ops2) == ops1
        assert store_packs.find_pack(db, ops2.content_hash[:10]) == ops2
        trials = db.execute("SELECT candidate_hash, baseline_hash FROM pack_trials ORDER BY id").fetchall()
        # unambiguous old ids follow (the empty pack's too); the shared one is left as it was
        assert [tuple(t) for t in trials] == [
            (ops1.content_hash, PhrasePack.create("e").content_hash),
            (v2, ops1.content_hash),
        ]
        assert json.loads(json.dumps(ops2.as_dict()))["none"] == ["came up empty", "No incidents"]
    finally:
        db.close()


def test_cli_calls_it_a_content_id_never_a_version_hash(db_path: Path) -> None:
    from click.testing import CliRunner

    from reviewer.cli.main import cli

    def run(*args: str) -> str:
        result = CliRunner().invoke(cli, ["pack", *args, "--db", str(db_path)])
        assert result.exit_code == 0, result.output
        return result.output

    saved = run("new", "ops", "--none", "came up empty")
    pack_id = PhrasePack.create("ops", ["came up empty"]).content_hash
    assert f"(content id {pack_id[:12]})" in saved
    shown = run("show", "ops")
    assert f"content id {pack_id} (ours, not the framework's version hash)" in shown
    assert " hash " not in shown.replace("version hash", "")
