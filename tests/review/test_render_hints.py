"""The framework's counter-word rule and the filter note, as pure functions."""

from __future__ import annotations

import pytest

from reviewer.review.render_hints import filter_note, is_counter_looking

# Worked from isCounterLookingAggregation: split on [^a-z]+ after lower-casing, token or token minus 's'.
AGGREGATIONS = [
    ("sum", True),
    ("Counts", True),
    ("running total", True),
    ("sum_of_bytes", True),
    ("rate(delta)", True),
    ("deltas per 5m", True),
    ("CUMULATIVE", True),
    ("summary of readings", False),
    ("summation", False),
    ("accounted", False),
    ("totally avg", False),
    ("countless", False),
    ("avg", False),
    ("", False),
    (None, False),
    (3, False),
]


@pytest.mark.parametrize(("aggregation", "expected"), AGGREGATIONS)
def test_counter_looking_is_decided_by_whole_words(aggregation: object, expected: bool) -> None:
    assert is_counter_looking(aggregation) is expected


def test_filter_note() -> None:
    assert filter_note({"filter_note": "replica targets excluded"}) == "replica targets excluded"
    assert filter_note({"filter_note": ""}) is None
    assert filter_note({}) is None
    assert filter_note(None) is None
