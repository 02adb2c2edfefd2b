"""UTF-16 <-> str, once: the recordings' spans and the framework's length limits count UTF-16 code units.

JavaScript strings index UTF-16 code units; Python strings index code points. Every character outside
the Basic Multilingual Plane (most emoji) is two units in JavaScript and one in Python.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any


def utf16_len(text: str) -> int:
    """Length of `text` in UTF-16 code units, as JavaScript's `.length` reports it (a lone surrogate
    counts one unit, as in JavaScript)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _astral_positions(text: str) -> list[int]:
    return [i for i, ch in enumerate(text) if ord(ch) > 0xFFFF]


def utf16_to_index(text: str, unit: int) -> int | None:
    """Python index of UTF-16 offset `unit`; None if it is outside the text or splits a surrogate pair."""
    if unit < 0:
        return None
    if text.isascii():
        return unit if unit <= len(text) else None
    astral = _astral_positions(text)
    if not astral:
        return unit if unit <= len(text) else None
    # Index i has UTF-16 offset i + (number of astral chars before i).
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi) // 2
        if mid + bisect_left(astral, mid) < unit:
            lo = mid + 1
        else:
            hi = mid
    if lo > len(text) or lo + bisect_left(astral, lo) != unit:
        return None
    return lo


def index_to_utf16(text: str, index: int) -> int:
    """UTF-16 offset of Python index `index` (the inverse of `utf16_to_index`)."""
    return index + sum(1 for ch in text[:index] if ord(ch) > 0xFFFF)


def span_from_utf16(text: str | None, start: Any, end: Any) -> tuple[int, int] | None:
    """Convert a recorded UTF-16 span to Python indices, or None when it does not fit `text`.

    Never clamps: a span past the end, reversed, or splitting a surrogate pair is unplaceable.
    """
    if text is None or not isinstance(start, int) or not isinstance(end, int) or isinstance(start, bool):
        return None
    if isinstance(end, bool) or start > end:
        return None
    py_start = utf16_to_index(text, start)
    py_end = utf16_to_index(text, end)
    if py_start is None or py_end is None:
        return None
    return py_start, py_end


def utf16_span(text: str, clause: str, start_at: int = 0) -> dict[str, int]:
    """UTF-16 span {start, end} (end exclusive) of `clause` in `text`, first hit at or after `start_at`."""
    index = text.index(clause, start_at)
    start = index_to_utf16(text, index)
    return {"start": start, "end": start + utf16_len(clause)}


def slice_utf16(text: str, start: int, end: int) -> str:
    """The part of `text` a UTF-16 span covers; ValueError when the span does not fit."""
    span = span_from_utf16(text, start, end)
    if span is None:
        raise ValueError(f"span [{start}, {end}) does not fit a text of {utf16_len(text)} UTF-16 units")
    return text[span[0] : span[1]]
