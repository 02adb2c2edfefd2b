"""Extraction keeps what a call's own events cannot say: a read's declared `complete` basis and the
decisions that allowed, changed, declined or stopped it (recording-format.md section 17 point 5)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from store.db.ingest import ingest
from store.runs import run_header, tool_call

RUN = "run-tiny-decisions-1"


def _ev(type_: str, payload: dict[str, Any], ms: int) -> dict[str, Any]:
    return {
        "type": "agentfootprint." + type_,
        "payload": payload,
        "meta": {"runId": RUN, "wallClockMs": 1_900_000_300_000 + ms, "runtimeStageId": f"s#{ms}"},
    }


def _start(call_id: str, tool: str, ms: int) -> dict[str, Any]:
    return _ev("stream.tool_start", {"toolName": tool, "toolCallId": call_id, "args": {"id": call_id}}, ms)


def _end(call_id: str, ms: int, result: Any = "ok") -> dict[str, Any]:
    return _ev("stream.tool_end", {"toolCallId": call_id, "result": result}, ms)


def decisions_recording() -> dict[str, Any]:
    mw = {"at": "tool", "iteration": 1}
    account = {"delivery": "as-checked", "claims": [], "sources": [{"toolName": "search", "checked": 1}]}
    return {
        "events": [
            _ev("agent.run_configured", {"agentId": "gov"}, 0),
            _ev("agent.turn_start", {"userPrompt": "go"}, 1),
            _ev("agent.iteration_start", {"turnIndex": 0, "iterIndex": 1}, 2),
            _start("c-search", "search", 3),
            _ev(
                "tools.absent",
                {
                    "toolName": "search",
                    "toolCallId": "c-search",
                    "checked": ["the vault"],
                    "complete": "within-arguments",
                },
                4,
            ),
            _end("c-search", 5, {"hits": []}),
            _start("c-denied", "refund", 6),
            _ev(
                "middleware.decision",
                {
                    **mw,
                    "middleware": "refund-guard",
                    "moment": "before-tool",
                    "toolCallId": "c-denied",
                    "outcome": "deny",
                    "changed": False,
                    "why": "over the limit",
                },
                7,
            ),
            _end("c-denied", 8, "denied: over the limit"),
            _start("c-redacted", "read_secret", 9),
            _end("c-redacted", 10, {"token": "sk-live-1"}),
            _ev(
                "middleware.decision",
                {
                    **mw,
                    "middleware": "redactor",
                    "moment": "after-tool",
                    "toolCallId": "c-redacted",
                    "outcome": "allow",
                    "changed": True,
                    "why": "bearer token",
                },
                11,
            ),
            _start("c-declined", "delete_user", 12),
            _ev(
                "checkin.decision",
                {
                    "toolName": "delete_user",
                    "toolCallId": "c-declined",
                    "iteration": 1,
                    "approved": False,
                    "by": "ops-lead",
                    "note": "not today",
                },
                13,
            ),
            _end("c-declined", 14, "declined"),
            _start("c-halted", "wire_money", 15),
            _ev(
                "permission.check",
                {
                    "capability": "tool",
                    "actor": "agent",
                    "target": "wire_money",
                    "result": "halt",
                    "policyRuleId": "no-wires",
                },
                16,
            ),
            _ev(
                "permission.halt",
                {"target": "wire_money", "reason": "wires need a human", "iteration": 1},
                17,
            ),
            _ev("agent.turn_end", {"finalContent": "{}", "answerNegatives": account}, 18),
        ]
    }


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
