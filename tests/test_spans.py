"""UTF-16 spans from the framework become exact Python string indices, or are marked unplaceable."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from store.spans import index_to_utf16, span_from_utf16, utf16_len


def js_slice(text: str, start: int, end: int) -> str:
    """What JavaScript's text.slice(start, end) returns, computed on UTF-16 code units."""
    units = text.encode("utf-16-le")
    return units[start * 2 : end * 2].decode("utf-16-le")


def test_astral_characters_before_the_span_shift_it() -> None:
    text = "🚀 Deploy done 𝔘𝔘. There are no open incidents."
    start = js_units = utf16_len(text[: text.index("There")])
    end = utf16_len(text)
    assert js_units == text.index("There") + 3  # three astral characters before the span
    span = span_from_utf16(text, start, end)
    assert span is not None
    assert text[span[0] : span[1]] == "There are no open incidents."
    assert js_slice(text, start, end) == "There are no open incidents."


@pytest.mark.parametrize(
    ("start", "end"),
    [(0, 999), (-1, 3), (5, 2), (1, 2), ("0", 3), (None, 3), (True, 3)],
    ids=["past-end", "negative", "reversed", "splits-surrogate-pair", "string", "missing", "bool"],
)
def test_spans_that_do_not_fit_are_unplaceable_not_clamped(start: object, end: object) -> None:
    assert span_from_utf16("🚀abc", start, end) is None


def test_empty_span_at_the_end_is_placeable() -> None:
    assert span_from_utf16("a🚀", 3, 3) == (2, 2)


@given(st.text(max_size=40), st.data())
def test_round_trip_matches_javascript_slicing(text: str, data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(text)))
    j = data.draw(st.integers(i, len(text)))
    u_start, u_end = index_to_utf16(text, i), index_to_utf16(text, j)
    assert span_from_utf16(text, u_start, u_end) == (i, j)
    assert js_slice(text, u_start, u_end) == text[i:j]
