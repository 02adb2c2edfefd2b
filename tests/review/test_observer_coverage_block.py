"""The framework-appended coverage block is removed before observation, in the exact form
`composeAnswerWithCoverage` (agentfootprint 9.62.0, src/core/agent/coverage/answer.ts) writes."""

from __future__ import annotations

from reviewer.review.observer.coverage_block import strip_coverage_block

BLOCK = (
    "Coverage of this answer \u2014 declared by the tools that produced it, not by the model:\n\n"
    "Checked:\n- the incident store\n- payments \u2014 open only\n\n"
    "Cannot cover:\n- incidents filed by email \u2014 email reports never enter this store"
)


def test_the_appended_block_is_removed_and_the_answer_kept() -> None:
    answer = "No open incidents for payments were found."
    assert strip_coverage_block(f"{answer}\n\n---\n\n{BLOCK}") == answer


def test_a_block_alone_leaves_nothing() -> None:
    assert strip_coverage_block(BLOCK) == ""


def test_text_without_the_block_is_unchanged() -> None:
    text = "Coverage of this answer is good.\n\n---\n\nChecked: yes"
    assert strip_coverage_block(text) == text


def test_a_quoted_block_in_the_answer_is_kept_when_the_real_one_follows() -> None:
    body = f"Last time I said:\n\n---\n\n{BLOCK}\n\nToday there are no incidents."
    assert strip_coverage_block(f"{body}\n\n---\n\n{BLOCK}") == body


def test_a_heading_not_at_the_end_in_the_exact_form_is_not_removed() -> None:
    text = f"Intro\n\n---\n\n{BLOCK}\n\nand then the model kept talking."
    assert strip_coverage_block(text) == text
