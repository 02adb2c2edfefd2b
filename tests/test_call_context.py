"""Extraction keeps what a call's own events cannot say: a read's declared `complete` basis and the
decisions that allowed, changed, declined or stopped it (recording-format.md section 17 point 5)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from store.db.ingest import ingest
from store.runs import run_header, tool_call
from tests.decision_recordings import RUN, decisions_recording


def test_completeness_and_decisions_are_kept_per_call(db: Database, tmp_path: Path) -> None:
    path = tmp_path / "decisions.json"
    path.write_text(json.dumps(decisions_recording()), encoding="utf-8")
    assert not ingest(db, [str(path)]).quarantined
    key = run_header(db, RUN)["run_key"]

    def call(call_id: str) -> dict[str, Any]:
        return tool_call(db, key, call_id)["call"]

    assert call("c-search")["complete"] == "within-arguments"
    assert call("c-search")["decisions"] is None
    assert call("c-denied")["complete"] is None
    [denied] = call("c-denied")["decisions"]
    assert denied == {
        **denied,
        "by": "refund-guard",
        "moment": "before-tool",
        "outcome": "deny",
        "why": "over the limit",
    }
    [redacted] = call("c-redacted")["decisions"]
    assert (redacted["moment"], redacted["changed"], redacted["why"]) == ("after-tool", True, "bearer token")
    [declined] = call("c-declined")["decisions"]
    assert (declined["outcome"], declined["by"], declined["why"]) == ("declined", "ops-lead", "not today")
    halted = call("c-halted")["decisions"]
    assert [(d["event"], d["outcome"]) for d in halted] == [
        ("permission.check", "halt"),
        ("permission.halt", "halt"),
    ]
    assert halted[1]["why"] == "wires need a human"
    assert run_header(db, RUN)["answer_negatives"]["sources"] == [{"toolName": "search", "checked": 1}]


def test_real_recordings_declare_no_completeness_and_no_tool_decisions(db: Database) -> None:
    """9.62.0 predates the search declaration's `complete`, and no real run here governs a tool call."""
    from tests.conftest import FIXTURE_RECORDINGS

    assert not ingest(db, [str(FIXTURE_RECORDINGS)]).quarantined
    calls, complete, decisions = db.execute(
        "SELECT count(*), count(complete), count(decisions) FROM tool_calls"
    ).fetchone()
    assert calls > 40 and (complete, decisions) == (0, 0)
