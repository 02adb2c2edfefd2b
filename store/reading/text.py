"""Recorded values as stored text: bounded JSON that never raises, display text, marked cuts."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import orjson


def dumps(value: Any) -> str | None:
    """JSON text of a recorded value for a TEXT column; never raises on hostile input."""
    if value is None:
        return None
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        pass
    try:  # integers past 64 bits (JavaScript writes 1e21 as 1000000000000000000000): kept exactly
        return msgspec.json.encode(value).decode()
    except (TypeError, ValueError, msgspec.EncodeError):
        return orjson.dumps({"af_reviewer_unstorable": repr(value)[:2000]}).decode()


def canonical(value: Any) -> bytes:
    """`value` as JSON with sorted keys, the same bytes for the same value however it was serialised (key
    order, whitespace, escapes); a number past 64 bits or a lone surrogate, which orjson refuses, takes the
    standard library's slower path."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return json.dumps(value, sort_keys=True, ensure_ascii=True, default=repr).encode("ascii")


def bounded(text: str | None, limit: int) -> str | None:
    """Cut `text` to at most `limit` characters, marking the cut."""
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"… [{len(text) - limit:,} more characters]"


def as_text(value: Any) -> str | None:
    """A recorded value as display text: strings as they are, anything else as compact JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return dumps(value)
