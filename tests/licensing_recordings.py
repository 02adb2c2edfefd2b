"""A hand-built recording for judging a negative's wording: one search of the vault that found nothing,
another read of the turn that the findings do not name, then an absolute and a bounded negative naming
the search (negative-claims.md section 4: the essay's own failure case)."""

from __future__ import annotations

from typing import Any

from store.spans import utf16_span

VAULT_RUN = "run-tiny-vault-1"
ABSOLUTE = "I searched the vault and the programme does not exist."
BOUNDED = "The vault has no record of it either."
VAULT_ANSWER = f"{ABSOLUTE} {BOUNDED}"


def _ev(type_: str, payload: dict[str, Any], ms: int) -> dict[str, Any]:
    return {
        "type": "agentfootprint." + type_,
        "payload": payload,
        "meta": {"runId": VAULT_RUN, "wallClockMs": 1_900_000_200_000 + ms, "runtimeStageId": f"s#{ms}"},
    }


def vault_recording(*, complete: str | None = None) -> dict[str, Any]:
    """One search of the vault that found nothing, then an absolute and a bounded negative naming it."""
    absent = {
        "toolName": "search_vault",
        "toolCallId": "call-v1",
        "lookedFor": "the programme",
        "checked": [{"what": "the vault (tenant acme)"}],
        "cannotCover": [{"what": "programmes archived offline", "why": "never indexed"}],
    }
    if complete is not None:  # the search declaration's completeness basis (seed 000)
        absent["complete"] = complete
    ref = [{"handle": "r1", "toolName": "search_vault", "toolCallId": "call-v1"}]
    claim = {"kind": "negative-claim", "field": "answer", "iteration": 2, "turn": 0, "notes": []}
    return {
        "events": [
            _ev("agent.run_configured", {"agentId": "vault-desk"}, 0),
            _ev("agent.turn_start", {"userPrompt": "Does programme Aurora exist?"}, 1),
            _ev("agent.iteration_start", {"turnIndex": 0, "iterIndex": 1}, 2),
            _ev(
                "stream.tool_start",
                {"toolName": "search_vault", "toolCallId": "call-v1", "args": {"q": "Aurora"}},
                3,
            ),
            _ev("tools.absent", absent, 4),
            _ev("stream.tool_end", {"toolCallId": "call-v1", "result": {"hits": []}, "status": "absent"}, 5),
            _ev(
                "stream.tool_start",
                {"toolName": "list_owners", "toolCallId": "call-o1", "args": {"team": "research"}},
                6,
            ),
            _ev("stream.tool_end", {"toolCallId": "call-o1", "result": {"owners": ["kim"]}}, 7),
            _ev("agent.iteration_start", {"turnIndex": 0, "iterIndex": 2}, 8),
            _ev(
                "findings.negative_claim",
                {**claim, "span": utf16_span(VAULT_ANSWER, ABSOLUTE), "refs": ref},
                9,
            ),
            _ev(
                "findings.negative_claim",
                {**claim, "span": utf16_span(VAULT_ANSWER, BOUNDED), "refs": ref},
                10,
            ),
            _ev("agent.turn_end", {"finalContent": VAULT_ANSWER}, 11),
        ]
    }
