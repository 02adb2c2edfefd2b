"""A typed (JSON) answer as its string fields, and a finding's span placed inside one of them.

A finding on a typed answer names a JSON path in `field` (`summary`, `negatives[0].about`) and a span
in UTF-16 code units into that field's string value, not into the answer's JSON text. Placing the span
on the JSON text highlights the wrong characters (and after an astral character, shifted ones).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from store.spans import span_from_utf16

#: Fields listed from one answer, at most; a typed answer is a model's output, so bounded.
MAX_FIELDS = 2000
SEPARATOR = ": "


@dataclass(frozen=True)
class FieldSpan:
    """Where a span falls: the field's path and value, Python indices into the value, the text."""

    path: str
    value: str
    start: int
    end: int

    @property
    def text(self) -> str:
        return self.value[self.start : self.end]


def parse_typed(answer: str | None) -> Any:
    """The decoded typed answer, or None when `answer` is not a JSON object or array."""
    if not answer or answer.lstrip()[:1] not in ("{", "["):
        return None
    try:
        value = orjson.loads(answer)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict | list) else None


def string_fields(value: Any, limit: int = MAX_FIELDS) -> list[tuple[str, str]]:
    """Every string leaf as (path, value), in document order: `summary`, `negatives[0].about`."""
    out: list[tuple[str, str]] = []
    stack: list[tuple[str, Any]] = [("", value)]
    while stack and len(out) < limit:
        path, node = stack.pop()
        if isinstance(node, str):
            out.append((path, node))
        elif isinstance(node, dict):
            items = [(f"{path}.{k}" if path else str(k), v) for k, v in node.items()]
            stack.extend(reversed(items))
        elif isinstance(node, list):
            stack.extend(reversed([(f"{path}[{i}]", v) for i, v in enumerate(node)]))
    return out


def place_span(answer: str | None, field: str | None, start_u16: Any, end_u16: Any) -> FieldSpan | None:
    """The exact characters a finding's span selects inside its field, or None when it does not fit."""
    if not field or field == "answer":
        return None
    typed = parse_typed(answer)
    if typed is None:
        return None
    value = dict(string_fields(typed)).get(field)
    placed = span_from_utf16(value, start_u16, end_u16)
    if value is None or placed is None:
        return None
    return FieldSpan(field, value, placed[0], placed[1])


def field_lines(answer: str | None) -> list[str] | None:
    """The typed answer as `path: value` lines (what the answer panel shows), or None if not typed."""
    typed = parse_typed(answer)
    if typed is None:
        return None
    return [f"{path}{SEPARATOR}{value}" for path, value in string_fields(typed)]


def line_highlight(answer: str | None, placed: FieldSpan) -> tuple[int, int, int] | None:
    """(entry index, start, end) of `placed` within `field_lines(answer)`: where the panel highlights."""
    typed = parse_typed(answer)
    if typed is None:
        return None
    for number, (path, _value) in enumerate(string_fields(typed)):
        if path == placed.path:
            offset = len(path) + len(SEPARATOR)
            return number, offset + placed.start, offset + placed.end
    return None


def place_all(
    answer: str | None, spans: list[tuple[str, str | None, Any, Any]]
) -> dict[str, tuple[int, int, int]]:
    """For many findings at once (`(key, field, start_u16, end_u16)`): key -> (entry, start, end) in
    `field_lines(answer)`, parsing the answer once. Spans that do not fit their field are left out."""
    typed = parse_typed(answer)
    if typed is None:
        return {}
    entries = {path: (n, value) for n, (path, value) in enumerate(string_fields(typed))}
    out: dict[str, tuple[int, int, int]] = {}
    for key, field, start_u16, end_u16 in spans:
        if not field or field == "answer" or field not in entries:
            continue
        number, value = entries[field]
        placed = span_from_utf16(value, start_u16, end_u16)
        if placed is not None:
            offset = len(field) + len(SEPARATOR)
            out[key] = (number, offset + placed[0], offset + placed[1])
    return out
