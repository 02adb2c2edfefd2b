"""The observer's rules, each on its own input, with the expected results worked by hand from the
sentences of the `.negativeClaims()` documentation (seed 000)."""

from __future__ import annotations

from reviewer.review.observer.budgets import MAX_CLAIMS_AND_UNITS, input_over_limit, too_many_claims
from reviewer.review.observer.filtered import is_filtered_clause
from reviewer.review.observer.language import language_unsupported
from reviewer.review.observer.no_read import DispatchedRead, needs_no_read_note
from reviewer.review.observer.units import split_units


def unit_texts(text: str) -> list[str]:
    return [text[u.start : u.end] for u in split_units(text)]


# -- filtered clauses ---------------------------------------------------------------------------------------


def test_the_three_ordinary_clauses_are_filtered_exactly_after_normalisation() -> None:
    assert is_filtered_clause("None.")
    assert is_filtered_clause("No action is needed.")
    assert is_filtered_clause("Tests: 0 failed.")
    # normalisation: case, surrounding and inner whitespace, compatibility forms (full-width colon)
    assert is_filtered_clause("  no   action is NEEDED. ")
    assert is_filtered_clause("Tests\uff1a 0 failed.")


def test_added_words_or_another_punctuation_remain_eligible() -> None:
    assert not is_filtered_clause("None found.")
    assert not is_filtered_clause("No action is needed today.")
    assert not is_filtered_clause("Tests: 0 failed, 2 skipped.")
    assert not is_filtered_clause("None")  # the full stop belongs to the clause
    assert not is_filtered_clause("None!")


# -- units ----------------------------------------------------------------------------------------------------


def test_splitter_keeps_tests_0_failed_whole() -> None:
    assert unit_texts("Tests: 0 failed.") == ["Tests: 0 failed."]
    assert unit_texts("Build ok. Tests: 0 failed. No action is needed.") == [
        "Build ok.",
        "Tests: 0 failed.",
        "No action is needed.",
    ]


def test_splitter_cuts_sentences_semicolons_newlines_and_contrastive_commas() -> None:
    text = "Payments has no incidents. There are no incidents anywhere!\nBilling: fine; ok, but slow."
    assert unit_texts(text) == [
        "Payments has no incidents.",
        "There are no incidents anywhere!",
        "Billing: fine;",
        "ok,",
        "but slow.",
    ]


def test_splitter_does_not_cut_inside_numbers_or_inline_code() -> None:
    assert unit_texts("Version 1.5 has `a. b` in it. Done.") == ["Version 1.5 has `a. b` in it.", "Done."]


def test_a_fenced_block_is_one_code_unit() -> None:
    text = "Before.\n```\nno rows. none.\n```\nAfter."
    units = split_units(text)
    assert [(text[u.start : u.end], u.code) for u in units] == [
        ("Before.", False),
        ("```\nno rows. none.\n```", True),
        ("After.", False),
    ]


def test_an_unclosed_fence_runs_to_the_end() -> None:
    units = split_units("Look:\n```\nno rows. x")
    assert [u.code for u in units] == [False, True]


# -- no-read --------------------------------------------------------------------------------------------------


def test_no_read_note_when_the_turn_has_no_dispatched_read() -> None:
    assert needs_no_read_note(2, [], turn=0)


def test_a_read_of_an_earlier_turn_does_not_suppress_it() -> None:
    assert needs_no_read_note(1, [DispatchedRead(turn=0, tool_name="list_incidents")], turn=1)


def test_a_recorded_read_suppresses_it_even_when_it_failed_or_was_kept_out() -> None:
    assert not needs_no_read_note(1, [DispatchedRead(turn=1, ok=False)], turn=1)
    assert not needs_no_read_note(1, [DispatchedRead(turn=1, kept_out=True)], turn=1)


def test_nothing_detected_means_no_note() -> None:
    assert not needs_no_read_note(0, [], turn=0)


# -- budgets --------------------------------------------------------------------------------------------------


def test_input_budget_is_65536_code_units_across_all_values() -> None:
    half = "x" * 32_768
    assert not input_over_limit([("a", half), ("b", half)])  # exactly 65,536
    assert input_over_limit([("a", half), ("b", half + "y")])
    # an emoji is 2 code units: 32,767 + 1 emoji = 32,769 code units, plus 32,768 = 65,537
    assert input_over_limit([("a", "x" * 32_767 + "\U0001f600"), ("b", half)])


def test_input_budget_is_at_most_256_string_values_and_4096_unit_paths() -> None:
    assert not input_over_limit([(f"f[{i}]", "x") for i in range(256)])
    assert input_over_limit([(f"f[{i}]", "x") for i in range(257)])
    assert not input_over_limit([("p" * 4096, "x")])
    assert input_over_limit([("p" * 4097, "x")])


def test_claim_budget_is_32_claims_and_unjudged_units_combined() -> None:
    assert MAX_CLAIMS_AND_UNITS == 32
    assert not too_many_claims(32)
    assert too_many_claims(33)


# -- language heuristic ---------------------------------------------------------------------------------------


def test_english_units_are_supported() -> None:
    assert not language_unsupported("There are no incidents for payments.")
    assert not language_unsupported("No.")
    assert not language_unsupported("1234 --- 5678")


def test_non_latin_script_is_unsupported() -> None:
    assert language_unsupported("Инцидентов не найдено.")
    assert language_unsupported("没有找到任何事件。")


def test_latin_script_in_another_language_is_unsupported_by_function_words() -> None:
    assert language_unsupported("Es gibt keine offenen Vorfälle für Zahlungen.")
    assert language_unsupported("No hay ningún incidente para los pagos.")
    # one foreign-looking word in English is not enough
    assert not language_unsupported("The die was cast, and there are no incidents.")
