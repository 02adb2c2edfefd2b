"""Tiny hand-built recordings for the UI tests: an answer with emoji, control characters and a zero-width
space BEFORE its flagged spans (spans given in UTF-16 code units, as the framework records them), a recorded
prompt that looks like Rich markup, one tool call, and a run whose answer was denied by output middleware."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from store.spans import utf16_span

# "🚀" and "🛰" are outside the BMP (2 UTF-16 units, 1 str index); "\u200b" is zero-width (inert shows it as
# 6 characters); "\x1b" is an escape (inert shows "␛"). All of them come before the flagged clauses.
ANSWER = (
    "🚀 Release check 🛰\u200b\x1b[31m for payments: there are no open incidents for payments. "
    "I did not read the deploy log, but nothing is failing in eu-west-1 either. ✅"
)
CLAUSE_1 = "there are no open incidents for payments"
CLAUSE_2 = "nothing is failing in eu-west-1"
PROMPT = "[bold red]Is anything on fire?[/] [link=http://x]click[/link]"
EMOJI_RUN = "run-tiny-emoji-1"
DENIED_RUN = "run-tiny-denied-1"
DENIED_ANSWER = "The refund of 250 was approved."


def _ev(run_id: str, type_: str, payload: dict[str, Any], ms: int, stage: str = "x#1") -> dict[str, Any]:
    return {
        "type": "agentfootprint." + type_,
        "payload": payload,
        "meta": {"runId": run_id, "wallClockMs": ms, "runtimeStageId": stage},
    }


def emoji_recording() -> dict[str, Any]:
    r, t = EMOJI_RUN, 1_900_000_000_000
    claim = {
        "kind": "negative-claim",
        "field": "answer",
        "phrasePackVersion": "en-negatives@3",
        "iteration": 2,
        "turn": 0,
    }
    return {
        "events": [
            _ev(
                r,
                "agent.run_configured",
                {"agentId": "tiny-agent", "llm": {"model": "m", "provider": "p"}},
                t,
            ),
            _ev(r, "agent.turn_start", {"userPrompt": PROMPT}, t + 1),
            _ev(r, "agent.iteration_start", {"turnIndex": 0, "iterIndex": 1}, t + 2, "call-llm#1"),
            _ev(r, "stream.llm_end", {"iteration": 1, "content": "Checking incidents."}, t + 3, "call-llm#1"),
            _ev(
                r,
                "stream.tool_start",
                {"toolName": "list_incidents", "toolCallId": "call-1", "args": {"service": "payments"}},
                t + 4,
                "tool-calls#2",
            ),
            _ev(
                r,
                "stream.tool_end",
                {"toolCallId": "call-1", "result": {"incidents": [], "note": "[b]none[/b]"}, "durationMs": 3},
                t + 5,
                "tool-calls#2",
            ),
            _ev(r, "agent.iteration_start", {"turnIndex": 0, "iterIndex": 2}, t + 6, "call-llm#3"),
            _ev(r, "stream.llm_end", {"iteration": 2, "content": ANSWER}, t + 7, "call-llm#3"),
            _ev(
                r,
                "findings.negative_claim",
                {
                    **claim,
                    "span": utf16_span(ANSWER, CLAUSE_1),
                    "notes": [],
                    "refs": [{"handle": "r1", "toolName": "list_incidents", "toolCallId": "call-1"}],
                },
                t + 8,
                "sf-route#4",
            ),
            _ev(
                r,
                "findings.negative_claim",
                {**claim, "span": utf16_span(ANSWER, CLAUSE_2), "notes": ["entity-unresolved"]},
                t + 9,
                "sf-route#4",
            ),
            _ev(r, "agent.turn_end", {"finalContent": ANSWER}, t + 10, "final#5"),
        ]
    }


def denied_recording() -> dict[str, Any]:
    r, t = DENIED_RUN, 1_900_000_100_000
    return {
        "events": [
            _ev(
                r,
                "agent.run_configured",
                {"agentId": "tiny-agent", "llm": {"model": "m", "provider": "p"}},
                t,
            ),
            _ev(r, "agent.turn_start", {"userPrompt": "Refund 250 please."}, t + 1),
            _ev(r, "agent.iteration_start", {"turnIndex": 0, "iterIndex": 1}, t + 2),
            _ev(
                r,
                "middleware.decision",
                {
                    "phase": "output",
                    "outcome": "deny",
                    "middleware": "refund-guard",
                    "why": "refunds over 100 need a human",
                },
                t + 3,
            ),
            _ev(r, "agent.turn_end", {"finalContent": DENIED_ANSWER}, t + 4),
        ]
    }


def write_tiny_recordings(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for name, rec in (("tiny-emoji.json", emoji_recording()), ("tiny-denied.json", denied_recording())):
        path = folder / name
        path.write_text(json.dumps(rec), encoding="utf-8")
        out.append(path)
    return out
