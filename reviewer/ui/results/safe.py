"""Turn untrusted recorded values into inert display strings and `rich.text.Text` (never markup)."""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text

from reviewer.review.inert import inert

#: Longest string shown in one table cell / tree label before it is cut.
CELL_LIMIT = 200


def truncate(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, saying how many were left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… {len(text) - limit} more chars"


def scalar_str(value: Any) -> str:
    """A JSON-ish spelling of one recorded value (strings as-is, not quoted)."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def show(value: Any, limit: int = CELL_LIMIT, *, one_line: bool = True) -> str:
    """An inert, bounded display string for any recorded value."""
    return inert(truncate(scalar_str(value), limit), keep_newlines=not one_line)


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def cell(value: Any, limit: int = CELL_LIMIT) -> Text:
    """A table cell: numbers right-aligned, null dimmed; always plain Text."""
    if value is None:
        return Text("null", style="dim")
    if is_number(value):
        return Text(show(value, limit), justify="right")
    return Text(show(value, limit))


def line(*parts: str | tuple[str, str]) -> Text:
    """Assemble Text from plain strings and (string, style) pairs; every string is made inert first."""
    out = Text()
    for part in parts:
        if isinstance(part, tuple):
            out.append(inert(part[0]), style=part[1])
        else:
            out.append(inert(part))
    return out


def item_str(item: Any) -> str:
    """A coverage item `{what, why?}` as "what — why" (plain strings pass through)."""
    if isinstance(item, dict):
        what = scalar_str(item.get("what", ""))
        why = item.get("why")
        return f"{what} — {scalar_str(why)}" if why not in (None, "") else what
    return scalar_str(item)


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
