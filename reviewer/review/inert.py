"""Make recorded text safe to show: escape sequences and control characters become visible, inert text."""

from __future__ import annotations

import re

#: C0 controls except tab/newline, DEL, C1 controls, bidi overrides/isolates and marks (U+061C, U+200E/F),
#: zero-width and invisible characters (U+200B-U+200D, U+2060-U+2064 joiners and invisible operators, the
#: soft hyphen, the Hangul fillers, U+180E, the BOM), line/paragraph separators (U+2028/U+2029) and the Unicode
#: tag characters (U+E0000-U+E007F, which can spell hidden text).
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u2069\u3164\ufeff\uffa0\U000e0000-\U000e007f]"
)


def _show(match: re.Match[str]) -> str:
    ch = match.group()
    code = ord(ch)
    if code == 0x1B:
        return "␛"
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ␀ ␁ ...
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def inert(text: str, *, keep_newlines: bool = True) -> str:
    """`text` with every control, escape, bidi-override and zero-width character replaced by a visible token."""
    out = _UNSAFE.sub(_show, text)
    if not keep_newlines:
        out = out.replace("\n", "⏎").replace("\t", " ")
    return out


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # outside the BMP, JSON spells a UTF-16 surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_inert(text: str) -> str:
    """Serialized JSON whose strings hold no raw control or invisible character: each is written as its
    `\\uXXXX` escape, which parses back to the very same value (C0 controls are escaped by every JSON writer
    already; DEL, C1 controls such as U+009B, a CSI to some terminals, bidi and separator characters are not)."""
    return _UNSAFE.sub(_json_escape, text)
