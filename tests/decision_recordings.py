"""A hand-built run whose tool calls were denied, changed after the tool ran, declined at a check-in
and halted by a permission policy, beside a search that declares `complete` (recording-format.md section
17 points 3 and 5; the shapes follow src/core/agent/middleware/ledger.ts)."""

from __future__ import annotations

from typing import Any

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
            _start("c-hidden", "read_payroll", 12),
            _end("c-hidden", 12, {"salary": 1}),
            _ev(
                "middleware.decision",
                {
                    **mw,
                    "middleware": "pii-guard",
                    "moment": "after-tool",
                    "toolCallId": "c-hidden",
                    "outcome": "deny",
                    "changed": True,
                    "why": "payroll is private",
                },
                12,
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
