"""The clause and sentence splitter the observer judges: one unit per clause.

Cuts fall after a run of `.`, `!`, `?` or `;` followed by whitespace or the end of the text, at every
newline, and before a comma that introduces a contrastive conjunction. A colon never cuts, so
"Tests: 0 failed." stays one unit (the documentation filters it whole). A fenced code block (``` or ~~~,
to its closing fence or the end of the text) is one unit of its own, marked as code; punctuation inside
inline code does not cut. Spans are Python str indices, end exclusive, surrounding whitespace trimmed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)", re.S)
_INLINE = re.compile(r"`[^`\n]+`")
_CUT = re.compile(
    r"[.!?;]+(?=\s|\Z)|\n|,(?=[^\S\n]+(?:but|yet|although|though|whereas|while|however|except)\b)",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Unit:
    """One judged unit of a text: its span and whether it is recognised code (a fenced block)."""

    start: int
    end: int
    code: bool = False


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _inline_outside(text: str, fences: list[re.Match[str]]) -> list[tuple[int, int]]:
    if "`" not in text:
        return []
    fenced = [m.span() for m in fences]
    return [
        m.span()
        for m in _INLINE.finditer(text)
        if not any(fs < m.end() and m.start() < fe for fs, fe in fenced)
    ]


def inline_code_spans(text: str) -> list[tuple[int, int]]:
    """Inline `code` spans outside fenced blocks, as str index pairs."""
    if "`" not in text:
        return []
    return _inline_outside(text, list(_FENCE.finditer(text)))


def split_units(text: str) -> list[Unit]:
    """Every non-empty unit of `text`, in order (see the module docstring for the cuts)."""
    fences = list(_FENCE.finditer(text)) if ("`" in text or "~" in text) else []
    inline = _inline_outside(text, fences)
    units: list[Unit] = []
    pos = 0
    for fence in [*fences, None]:
        stop = fence.start() if fence is not None else len(text)
        units.extend(_prose_units(text, pos, stop, inline))
        if fence is not None:
            start, end = _trimmed(text, *fence.span())
            units.append(Unit(start, end, code=True))
            pos = fence.end()
    return units


def _prose_units(text: str, start: int, stop: int, all_inline: list[tuple[int, int]]) -> list[Unit]:
    inline = [s for s in all_inline if start <= s[0] and s[1] <= stop]
    cuts = [start]
    for m in _CUT.finditer(text, start, stop):
        if not inline or not any(cs < m.end() and m.start() < ce for cs, ce in inline):
            cuts.append(m.end())
    cuts.append(stop)
    out = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        s, e = _trimmed(text, a, b)
        if s < e:
            out.append(Unit(s, e))
    return out
