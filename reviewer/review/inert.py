"""Make recorded text safe to show: escape sequences and control characters become visible, inert text."""

from __future__ import annotations

import re

#: C0 controls except tab/newline, DEL, C1 controls, bidi overrides/isolates, and zero-width characters.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def _show(match: re.Match[str]) -> str:
    ch = match.group()
    code = ord(ch)
    if code == 0x1B:
        return "␛"
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ␀ ␁ ...
    return f"\\u{code:04x}"


def inert(text: str, *, keep_newlines: bool = True) -> str:
    """`text` with every control, escape, bidi-override and zero-width character replaced by a visible token."""
    out = _UNSAFE.sub(_show, text)
    if not keep_newlines:
        out = out.replace("\n", "⏎").replace("\t", " ")
    return out
