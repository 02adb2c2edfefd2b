"""Label exports from the app served in a browser go through App.deliver_text (a download), in the
same format as `reviewer labels --json/--csv`."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from store import labels
from store.db.connection import open_database
from tests.ui.conftest import SIZE, wait_until


async def test_export_labels_is_delivered_not_written(app_factory, ui_db: Path, monkeypatch) -> None:
    db = open_database(ui_db)
    fid = db.execute(
        "SELECT id FROM findings WHERE kind = 'unsupported-claim' ORDER BY id LIMIT 1"
    ).fetchone()[0]
    labels.label_finding(db, fid, "fp", "bob", note="bounded search only")
    db.close()
    app = app_factory(reviewer="ann")
    delivered: list[dict[str, Any]] = []

    def fake_deliver(stream: io.StringIO, *, save_filename: str, mime_type: str, **_: Any) -> None:
        delivered.append({"text": stream.read(), "name": save_filename, "mime": mime_type})

    monkeypatch.setattr(app, "deliver_text", fake_deliver)
    monkeypatch.setattr(type(app), "is_web", property(lambda _self: True))  # served in a browser
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+e")
        await wait_until(pilot, lambda: len(delivered) == 1)
        app.action_export_labels("csv")
        await wait_until(pilot, lambda: len(delivered) == 2)
    as_json, as_csv = delivered
    assert (as_json["name"], as_json["mime"]) == ("labels.json", "application/json")
    [row] = json.loads(as_json["text"])
    assert (row["target_id"], row["verdict"], row["reviewer"], row["note"]) == (
        fid,
        "fp",
        "bob",
        "bounded search only",
    )
    assert row["finding_kind"] == "unsupported-claim"
    assert as_csv["name"] == "labels.csv" and as_csv["text"].splitlines()[0].startswith("uid,target_id")
    assert fid in as_csv["text"]


async def test_a_failed_export_is_reported_and_the_app_keeps_running(app_factory, ui_db: Path) -> None:
    app = app_factory(reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.runs_screen is not None and app.runs_screen.run_list.loaded)
        db = open_database(ui_db)
        db.execute("ALTER TABLE labels RENAME TO labels_gone")  # the export's query now fails
        db.close()
        await pilot.press("ctrl+e")
        await wait_until(
            pilot,
            lambda: any("export-labels failed" in (n.title or "") for n in app._notifications),
            timeout=60,
        )
        [note] = [n for n in app._notifications if "export-labels failed" in (n.title or "")]
        assert "no such table" in note.message and note.severity == "error"
        assert app.is_running and app.return_code is None
        await pilot.press("question_mark")  # still answering keys
        await wait_until(pilot, lambda: type(app.screen).__name__ == "HelpScreen", timeout=60)
