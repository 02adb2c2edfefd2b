"""What the run screen tells a reviewer about a flagged negative (issue 12 points 2 and 3): the exact
characters of a typed answer's span, and whether the evidence licenses the clause's wording."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.widgets import Static

from reviewer.ui.app import ReviewerApp
from reviewer.ui.widgets.answer import CURRENT_SPAN, AnswerView
from reviewer.ui.widgets.detail import DetailPanel
from store.db.connection import open_database
from store.db.ingest import ingest
from tests.conftest import SAMPLES
from tests.licensing_recordings import ABSOLUTE, BOUNDED, VAULT_RUN, vault_recording
from tests.ui.conftest import SIZE, jump_to_run, wait_until

TYPED_RUN = "run-1796003280000-1"  # sample_recordings/typed-negatives-withheld.json
TYPED_CLAUSE = "no open incidents for payments"


def current_span_text(text: Text) -> list[str]:
    return [text.plain[s.start : s.end] for s in text.spans if s.style == CURRENT_SPAN]


def detail_texts(screen: Any) -> list[Text]:
    return [w.content for w in screen.query_one(DetailPanel).query(Static) if isinstance(w.content, Text)]


def detail_plain(screen: Any) -> str:
    return "\n".join(t.plain for t in detail_texts(screen))


async def evidence_drawn(pilot: Any, screen: Any) -> None:
    """Wait until the detail panel shows the finding under the cursor with its evidence loaded."""
    await wait_until(
        pilot,
        lambda: (
            screen.current_finding in screen.evidence
            and screen.query_one(DetailPanel).showing == f"finding:{screen.current_finding}"
            and "LABEL HISTORY" in detail_plain(screen)
        ),
        timeout=60,
    )


async def open_finding(pilot: Any, screen: Any, finding: dict[str, Any]) -> str:
    """Put the timeline cursor on `finding`, wait for its evidence; returns the detail panel's text."""
    screen.timeline.move_to(
        next(i for i, r in enumerate(screen.timeline.rows) if r.get("id") == finding["id"])
    )
    await evidence_drawn(pilot, screen)
    assert screen.current_finding == finding["id"]
    return detail_plain(screen)


async def test_typed_answer_span_is_highlighted_at_its_field_characters(app_factory, label_db: Path) -> None:
    app: ReviewerApp = app_factory(db_path=label_db)
    async with app.run_test(size=SIZE) as pilot:
        screen = await jump_to_run(pilot, TYPED_RUN)
        answer = screen.query_one(AnswerView)
        claim = next(f for f in screen.findings if f["kind"] == "negative-claim")
        await open_finding(pilot, screen, claim)

        # the answer panel draws the typed answer as its fields, the span inside the summary's value
        assert answer.answer_text.plain.startswith("summary: \U0001f9ef Payments looks quiet")
        assert "negatives[0].about: open incidents for payments" in answer.answer_text.plain
        assert current_span_text(answer.answer_text) == [TYPED_CLAUSE]
        # the detail panel marks the same characters (it used to mark "ooks quiet: no open incidents ")
        marked = [m for t in detail_texts(screen) for m in current_span_text(t)]
        assert marked == [TYPED_CLAUSE]
        assert "FLAGGED CLAUSE, IN ITS SENTENCE (field summary)" in detail_plain(screen)


async def test_absolute_negative_after_a_search_outruns_its_evidence(app_factory, tmp_path: Path) -> None:
    path = tmp_path / "vault.json"
    path.write_text(json.dumps(vault_recording()), encoding="utf-8")
    db_path = tmp_path / "review.db"
    db = open_database(db_path)
    assert not ingest(db, [str(path)], db_path=str(db_path)).quarantined
    db.close()
    app: ReviewerApp = app_factory(db_path=db_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await jump_to_run(pilot, VAULT_RUN)
        absolute, bounded = (
            next(f for f in screen.findings if f.get("span_text") == clause) for clause in (ABSOLUTE, BOUNDED)
        )
        text = await open_finding(pilot, screen, absolute)
        assert ABSOLUTE in text
        assert "wording asserts ABSOLUTE" in text and "heuristic" in text
        assert "verdict:  absolute wording, no declared completeness basis: outruns its evidence" in text
        evidence, context = text.split("EVIDENCE: THE READS THE FINDING NAMES")[1].split(
            "CONTEXT: OTHER READS"
        )
        # the named search is the evidence, with what it checked, its gap and no completeness basis
        assert "search_vault" in evidence and "the vault (tenant acme)" in evidence
        assert "programmes archived offline" in evidence
        assert "declares no completeness (a checked list is not one)" in evidence
        # the other read of the turn is shown apart, never as evidence
        assert "list_owners" in context and "list_owners" not in evidence

        await pilot.press("right_square_bracket")
        await wait_until(
            pilot, lambda: BOUNDED in detail_plain(screen) and "LABEL HISTORY" in detail_plain(screen)
        )
        await evidence_drawn(pilot, screen)
        text = detail_plain(screen)
        assert "wording asserts BOUNDED" in text
        assert "verdict:  bounded to the searched sources: licensed by the record" in text


NO_READ_RUN = "run-1796003160000-1"  # sample_recordings/envelope-negative-claim-no-read.json


def _ingested(tmp_path: Path, name: str, recording: dict[str, Any]) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(recording), encoding="utf-8")
    db_path = tmp_path / f"{name}.db"
    db = open_database(db_path)
    assert not ingest(db, [str(path)], db_path=str(db_path)).quarantined
    db.close()
    return db_path


async def test_no_read_says_what_was_recorded_and_when_the_ledger_is_incomplete(
    app_factory, tmp_path: Path
) -> None:
    whole = json.loads((SAMPLES / "envelope-negative-claim-no-read.json").read_text())
    capped = json.loads(json.dumps(whole))
    capped["run"].update(complete=False, droppedEvents=12, firstRetainedEventIndex=12)
    for name, recording, incomplete in (("whole", whole, False), ("capped", capped, True)):
        app: ReviewerApp = app_factory(db_path=_ingested(tmp_path, name, recording))
        async with app.run_test(size=SIZE) as pilot:
            screen = await jump_to_run(pilot, NO_READ_RUN)
            note = next(f for f in screen.findings if "no-read" in (f.get("codes") or []))
            text = await open_finding(pilot, screen, note)
            assert "no read was recorded for this turn" in text
            assert "nothing was searched" not in text
            assert ("the ledger is incomplete" in text) is incomplete, name
