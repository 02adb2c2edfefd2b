"""The caveat names exactly the rules a replay applies, the ones it leaves out, and what it cannot do."""

from __future__ import annotations

import pytest

from reviewer.review.observer.caveats import CANNOT, RULES, caveat_summary, replay_caveats


def test_a_replay_that_applies_two_rules_is_told_which_others_it_leaves_out() -> None:
    got = replay_caveats(["code-skipped", "literal-phrases"])
    assert [(c.kind, c.rule) for c in got[:2]] == [
        ("reproduces", "literal-phrases"),
        ("reproduces", "code-skipped"),
    ]
    left_out = [c.rule for c in got if c.kind == "not-modelled"]
    assert left_out == [r for r in RULES if r not in ("literal-phrases", "code-skipped")]
    assert "no-read" in left_out and "filtered-clauses" in left_out
    assert [c.rule for c in got if c.kind == "cannot"] == [
        "grammar",
        "anchoring",
        "entity-resolution",
        "work-budget",
    ]


def test_a_replay_applying_every_rule_still_cannot_reproduce_grammar_anchoring_or_entities() -> None:
    got = replay_caveats(RULES)
    assert {c.kind for c in got} == {"reproduces", "cannot"}
    assert len([c for c in got if c.kind == "cannot"]) == len(CANNOT)


def test_an_unknown_rule_is_refused_rather_than_claimed() -> None:
    with pytest.raises(ValueError, match="strict-prose"):
        replay_caveats(["literal-phrases", "strict-prose"])


def test_summary_groups_by_kind_and_never_claims_the_language_rule_when_left_out() -> None:
    text = caveat_summary(replay_caveats(["literal-phrases"]))
    assert text.startswith("Reproduced: the literal phrase extension")
    reproduced = text.split("Not modelled by this replay:")[0]
    assert "language" not in reproduced
    assert "Cannot be reproduced: the framework's own English grammar" in text
