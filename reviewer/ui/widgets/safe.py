"""Recorded text made safe to draw: inert, bounded, and always a `rich.text.Text` (never markup)."""

from __future__ import annotations

from typing import Any

import orjson
from rich.text import Text

from reviewer.review.inert import inert

#: Most characters of one recorded field a view draws.
FIELD_LIMIT = 10_000


def clip(value: str, limit: int) -> tuple[str, int]:
    """`value` cut to `limit` characters, and how many were cut."""
    if len(value) <= limit:
        return value, 0
    return value[:limit], len(value) - limit


def more_marker(cut: int) -> Text:
    return Text(f"… {cut:,} more characters", style="dim italic")


def safe_text(value: Any, *, limit: int = FIELD_LIMIT, style: str = "", one_line: bool = False) -> Text:
    """A recorded value as inert `Text`, at most `limit` characters, with a "… N more" marker when cut."""
    raw = "" if value is None else str(value)
    shown, cut = clip(raw, limit)
    text = Text(inert(shown, keep_newlines=not one_line), style=style)
    if cut:
        text.append(" " if one_line else "\n")
        text.append_text(more_marker(cut))
    return text


def cell(value: Any, width: int, *, style: str = "") -> Text:
    """One single-line table cell: inert, cut to `width` cells with an ellipsis, padded."""
    raw = "" if value is None else str(value)
    text = Text(inert(raw[: width * 4 + 8], keep_newlines=False), style=style, no_wrap=True, end="")
    text.truncate(width, overflow="ellipsis", pad=True)
    return text


def inert_mapped(value: str) -> tuple[str, list[int] | None]:
    """`inert(value)` and a map from each original index (0..len) to its index in the inert string.

    The map is `None` when inert changed nothing (indices are unchanged). `inert` replaces single characters,
    sometimes by a longer token (a zero-width space becomes `\\u200b`), so spans must go through the map.
    """
    out = inert(value)
    if out == value:
        return out, None
    mapping: list[int] = []
    pieces: list[str] = []
    pos = 0
    for ch in value:
        mapping.append(pos)
        piece = inert(ch) if not ch.isprintable() or ch in "\u200b\u200c\u200d\u200e\u200f\ufeff" else ch
        pieces.append(piece)
        pos += len(piece)
    mapping.append(pos)
    joined = "".join(pieces)
    if joined != out:  # a character class printable() misses: fall back to the exact per-character path
        mapping, pieces, pos = [], [], 0
        for ch in value:
            mapping.append(pos)
            piece = inert(ch)
            pieces.append(piece)
            pos += len(piece)
        mapping.append(pos)
        joined = "".join(pieces)
    return joined, mapping


def pretty_json(value: Any, *, limit: int = FIELD_LIMIT) -> Text:
    """Indented JSON of a recorded value as inert, bounded `Text` (strings stay strings)."""
    if isinstance(value, str):
        return safe_text(value, limit=limit)
    try:
        dumped = orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        dumped = repr(value)
    return safe_text(dumped, limit=limit)


def human_size(chars: int | None) -> str:
    if chars is None:
        return ""
    if chars < 1_000:
        return f"{chars} ch"
    if chars < 1_000_000:
        return f"{chars / 1_000:.1f} k"
    return f"{chars / 1_000_000:.1f} M"
