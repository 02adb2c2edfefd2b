"""A typed negative's account as the framework delivers it: markers, answer-level delivery, fallback."""

from __future__ import annotations

import json
from typing import Any

from reviewer.review.typed_negatives import FALLBACK_SENTENCE, Gap, read_account
from tests.conftest import SAMPLES


def _turn_end(name: str) -> dict[str, Any]:
    doc = json.loads((SAMPLES / name).read_text())
    events = (doc["recording"] if "format" in doc else doc)["events"]
    return next(e for e in events if e["type"] == "agentfootprint.agent.turn_end")["payload"]


def test_as_checked_statement_carries_its_marker() -> None:
    account = read_account(_turn_end("envelope-typed-negatives-as-checked.json"))
    assert account is not None
    assert (account.delivery, account.known_delivery, account.template_version) == ("as-checked", True, "12")
    (claim,) = account.delivered
    assert claim.statement == "No open incidents for checkout were found in the incident store."
    assert (claim.delivery, claim.version, claim.verdict, claim.about) == (
        "record-composed",
        "7",
        "established",
        "checkout",
    )
    assert claim.rests_on == ("r1",)
    assert claim.gaps and all(isinstance(g, Gap) and g.what for g in claim.gaps)
    assert [(s.tool_name, s.checked) for s in account.sources] == [("list_incidents", 1)]
    assert account.failed == () and account.fallback is None and account.diagnostics == ()


def test_withheld_delivers_nothing_and_keeps_the_failed_claim() -> None:
    account = read_account(_turn_end("typed-negatives-withheld.json"))
    assert account is not None
    assert account.delivery == "withheld"
    assert account.delivered == ()
    (failed,) = account.failed
    assert (failed.verdict, failed.reason) == ("refused", "contrary-read")
    assert [(c.handle, c.rows, c.count) for c in failed.contrary] == [("r2", ("INC-7",), 1)]
    assert [(s.tool_name, s.checked) for s in account.sources] == [("list_incidents", 2)]
    assert len(account.diagnostics) == 2 and "the person received no answer" in account.diagnostics[1]


def test_state_searched_keeps_the_fallback_sentence_and_the_failed_verdict() -> None:
    absence = {
        "kind": "none",
        "about": "payments",
        "restsOn": ["r1"],
        "verdict": "established",
        "statement": "No open incidents for payments were found in the incident store.",
        "delivery": "record-composed",
        "version": 7,
    }
    complete = {
        "kind": "complete",
        "restsOn": ["r1"],
        "verdict": "refused",
        "reason": "not-declared",
        "gaps": ["email"],
    }
    account = read_account(
        {"answerNegatives": {"delivery": "state-searched", "claims": [complete, absence], "sources": []}}
    )
    assert account is not None
    assert account.fallback == FALLBACK_SENTENCE
    assert [c.index for c in account.kept_verdicts] == [0]
    assert account.kept_verdicts[0].gaps == (Gap("email", None),)
    assert [c.delivery for c in account.delivered] == ["record-composed"]


def test_recorded_and_unknown_deliveries_and_hostile_values() -> None:
    recorded = read_account({"answerNegatives": {"delivery": "recorded", "claims": []}})
    assert recorded is not None and (recorded.delivery, recorded.known_delivery) == ("recorded", True)
    odd = read_account(
        {
            "answerNegatives": {
                "delivery": "teleported",
                "claims": [{"statement": "x" * 10_000, "verdict": "established", "restsOn": "r1"}, "junk"],
                "sources": [{"toolName": "[b]t[/b]", "checked": True}],
                "diagnostics": [{"nested": 1}, "[red]plain[/red]"],
            }
        }
    )
    assert odd is not None and odd.known_delivery is False
    first, junk = odd.claims
    assert first.statement is not None and len(first.statement) < 2100 and first.rests_on == ()
    assert junk.statement is None and junk.verdict is None
    assert [(s.tool_name, s.checked) for s in odd.sources] == [("[b]t[/b]", None)]
    assert odd.diagnostics == ("[red]plain[/red]",)  # kept as plain text; escaping is the view's job
    assert read_account({"finalContent": "x"}) is None
    assert read_account(None) is None
