"""A recording whose agent, prompt and answer hold what terminals disagree about: emoji presentation sequences
("🛰️" is U+1F6F0 and VS16), a warning sign with VS16, a skin-tone modifier, CJK (two cells each) and combining
accents (no cell). Used by the terminal width tests and the browser test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

WIDE_RUN = "run-wide-cells-1"
WIDE_AGENT = "🛰️ 衛星-agent"
WIDE_PROMPT = "Is the 🛰️ uplink 正常? Cafe\u0301 team asks ⚠️"
WIDE_ANSWER = (
    "🛰️ Uplink status: 衛星通信は正常です. The cafe\u0301 e\u0301quipe confirmed ⚠️ nothing is down 👍🏽. "
    "Every ground station reported in."
)


def _ev(type_: str, payload: dict[str, Any], ms: int, stage: str) -> dict[str, Any]:
    return {
        "type": "agentfootprint." + type_,
        "payload": payload,
        "meta": {"runId": WIDE_RUN, "wallClockMs": ms, "runtimeStageId": stage},
    }


def wide_recording() -> dict[str, Any]:
    t = 1_900_000_200_000
    return {
        "events": [
            _ev(
                "agent.run_configured",
                {"agentId": WIDE_AGENT, "llm": {"model": "m", "provider": "p"}},
                t,
                "x#0",
            ),
            _ev("agent.turn_start", {"userPrompt": WIDE_PROMPT}, t + 1, "x#0"),
            _ev("agent.iteration_start", {"turnIndex": 0, "iterIndex": 1}, t + 2, "call-llm#1"),
            _ev("stream.llm_end", {"iteration": 1, "content": WIDE_ANSWER}, t + 3, "call-llm#1"),
            _ev("agent.turn_end", {"finalContent": WIDE_ANSWER}, t + 4, "final#2"),
        ]
    }


def write_wide_recording(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "wide-cells.json"
    path.write_text(json.dumps(wide_recording(), ensure_ascii=False), encoding="utf-8")
    return path
