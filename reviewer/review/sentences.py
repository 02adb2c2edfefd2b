"""The sentence around a span: what the reviewer reads a flagged clause in."""

from __future__ import annotations

from typing import Any

#: Characters kept either side of the span at most, however long the sentence.
CONTEXT = 400


def sentence_around(text: str, start: int, end: int) -> dict[str, Any]:
    """The sentence around text[start:end]: from the previous sentence end to the next one, bounded.

    Returns `{start, end, text, span_start, span_end}` (the span's place inside the sentence's `text`).
    """
    left = max(text.rfind(p, 0, start) for p in (". ", "! ", "? ", "\n"))
    s = 0 if left < 0 else left + 2 if text[left] != "\n" else left + 1
    rights = [i for i in (text.find(p, end) for p in (". ", "! ", "? ", "\n")) if i >= 0]
    e = min(rights) + 1 if rights else len(text)
    s = max(s, start - CONTEXT)
    e = min(e, end + CONTEXT)
    return {"start": s, "end": e, "text": text[s:e], "span_start": start - s, "span_end": end - s}
