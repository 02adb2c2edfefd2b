"""Recorded text made safe to draw: inert, bounded, and always a `rich.text.Text` (never markup)."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.color import Color
from textual.filter import LineFilter

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


def safe_text(
    value: Any, *, limit: int = FIELD_LIMIT, style: str | Style = "", one_line: bool = False
) -> Text:
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
    except TypeError:  # an integer past 64 bits: still its JSON, never a Python repr
        dumped = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return safe_text(dumped, limit=limit)


def human_size(chars: int | None) -> str:
    if chars is None:
        return ""
    if chars < 1_000:
        return f"{chars} ch"
    if chars < 1_000_000:
        return f"{chars / 1_000:.1f} k"
    return f"{chars / 1_000_000:.1f} M"


# -- one width for every terminal -------------------------------------------------------------------------------

#: an emoji presentation selector (VS16) and what it belongs to (a base character and an optional keycap mark)
_VS16 = re.compile("(.)\ufe0f(\u20e3?)", re.DOTALL)
#: a text presentation selector (VS15) and the skin-tone modifiers: zero cells for Rich, not for every terminal
_DROPPED = re.compile("[\ufe0e\U0001f3fb-\U0001f3ff]")


def agreed_cells(text: str) -> str:
    """`text` as drawn on the screen: the same characters, spelled so that a terminal that counts cells code
    point by code point (xterm.js in the browser, tmux, most terminals) and one that counts grapheme clusters
    (Rich, which lays out the screen) give it the same width.

    An emoji presentation sequence such as "🛰️" (U+1F6F0 and VS16) is 2 cells to Rich but 1 to a terminal that
    ignores the selector, which pulls every border after it one column left. The selector is dropped and the
    cell it asked for is kept as a space after the emoji ("🛰" + " "), so the glyph has its two cells and every
    count agrees. Text selectors (VS15) and skin-tone modifiers, zero cells to Rich but not to terminals, are
    dropped. Nothing else changes, and when the result would not keep Rich's width the text is returned as is.
    """
    if text.isascii() or not (_DROPPED.search(text) or "\ufe0f" in text):
        return text

    def pad(match: re.Match[str]) -> str:
        base, mark = match.group(1), match.group(2)
        kept = base + mark
        return kept + " " * max(0, cell_len(match.group(0)) - cell_len(kept))

    shown = _VS16.sub(pad, _DROPPED.sub("", text)).replace("\ufe0f", "")
    return shown if cell_len(shown) == cell_len(text) else text


class AgreedCells(LineFilter):
    """The app's screen line filter: every segment's text through `agreed_cells` (styles and widths kept)."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if all(seg.control or seg.text.isascii() for seg in segments):
            return segments  # the common line: nothing to respell, no new segments built
        return [
            Segment(agreed_cells(seg.text), seg.style, seg.control) if not seg.control else seg
            for seg in segments
        ]
