"""A delivered typed negative on the run screen as the framework delivered it (issue 12 point 5): each
statement with its delivery marker, the answer-level delivery, the state-searched fallback sentence with
the failed complete-list verdict it keeps, checked counts per source, diagnostics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.widgets import Static

from reviewer.ui.app import ReviewerApp
from store.db.connection import open_database
from store.db.ingest import ingest
from tests.conftest import SAMPLES
from tests.ui.conftest import SIZE, jump_to_run

RUN = "run-1796003340000-1"  # sample_recordings/envelope-typed-negatives-as-checked.json
STATEMENT = "No open incidents for checkout were found in the incident store."
FALLBACK = "The requested complete-list claim is not established; only this absence is."


def _sample() -> dict[str, Any]:
    return json.loads((SAMPLES / "envelope-typed-negatives-as-checked.json").read_text())


def _account(doc: dict[str, Any]) -> dict[str, Any]:
    end = next(e for e in reversed(doc["recording"]["events"]) if e["type"].endswith("agent.turn_end"))
    return end["payload"]["answerNegatives"]


def _state_searched() -> dict[str, Any]:
    """The same run, its complete-list claim refused: the framework states the fallback instead."""
    doc = _sample()
    account = _account(doc)
    account["delivery"] = "state-searched"
    account["claims"].append(
        {
            "kind": "complete",
            "about": "checkout releases",
            "restsOn": ["r1"],
            "verdict": "refused",
            "reason": "not-declared",
            "statement": FALLBACK,
            "delivery": "record-composed",
            "version": 7,
        }
    )
    account["diagnostics"] = ["claim 1 (complete about checkout releases) refused: no complete declaration"]
    return doc


async def _typed_panel(app_factory: Any, tmp_path: Path, doc: dict[str, Any]) -> str:
    path = tmp_path / "typed.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    db_path = tmp_path / "typed.db"
    db = open_database(db_path)
    assert not ingest(db, [str(path)], db_path=str(db_path)).quarantined
    db.close()
    app: ReviewerApp = app_factory(db_path=db_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await jump_to_run(pilot, RUN)
        panel = screen.query_one("#typed-negatives", Static)
        assert panel.display
        return str(panel.content.plain)


async def test_as_checked_statement_shows_its_marker_and_counts(app_factory, tmp_path: Path) -> None:
    text = await _typed_panel(app_factory, tmp_path, _sample())
    assert "delivery as-checked  the person received only the library's checked statements" in text
    assert f"✓ “{STATEMENT}”  [record-composed v7]" in text
    assert "none about checkout  rests on r1" in text
    assert "gap incidents filed by email  — email reports never enter this store" in text
    assert "list_incidents: 1 checked" in text
    assert "fallback" not in text


async def test_state_searched_shows_the_fallback_and_the_verdict_it_keeps(
    app_factory, tmp_path: Path
) -> None:
    text = await _typed_panel(app_factory, tmp_path, _state_searched())
    assert "delivery state-searched  the person received the fallback sentence" in text
    assert f"fallback delivered: “{FALLBACK}”" in text
    assert "keeps the failed complete-list verdict: complete about checkout releases" in text
    assert "refused (not-declared)" in text
    assert "claim 1 (complete about checkout releases) refused: no complete declaration" in text
    assert f"✓ “{STATEMENT}”  [record-composed v7]" in text  # the established absence is still delivered


async def test_a_run_without_typed_negatives_has_no_panel(app_factory) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await jump_to_run(pilot, "run-tiny-emoji-1")
        assert not screen.query_one("#typed-negatives", Static).display
