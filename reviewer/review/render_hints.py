"""Render-hint rules the framework states exactly (src/lib/semantics/envelope.ts, types.ts).

Kept here, not in the widgets, so every view and any export apply the same reading.
"""

from __future__ import annotations

import re
from typing import Any

#: The framework's COUNTER_AGGREGATION_WORDS: the words that make `grain.is_counter` required.
COUNTER_AGGREGATION_WORDS = ("sum", "count", "total", "cumulative", "counter", "delta")
_NOT_LETTERS = re.compile(r"[^a-z]+")


def is_counter_looking(aggregation: Any) -> bool:
    """Whole-token match, singular or plural, case-insensitive: 'Counts' is, 'summary' is not.

    Mirrors `isCounterLookingAggregation`: lower-case, split on anything but a-z, and match a token
    or a token with its final 's' removed.
    """
    if not isinstance(aggregation, str):
        return False
    tokens = _NOT_LETTERS.split(aggregation.lower())
    return any(
        t in COUNTER_AGGREGATION_WORDS or (t.endswith("s") and t[:-1] in COUNTER_AGGREGATION_WORDS)
        for t in tokens
    )


def filter_note(render: Any) -> str | None:
    """The render hint's `filter_note` when it says something; it belongs beside every view."""
    note = render.get("filter_note") if isinstance(render, dict) else None
    if note is None or note == "":
        return None
    return note if isinstance(note, str) else str(note)
