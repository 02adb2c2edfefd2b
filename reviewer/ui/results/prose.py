"""Readable sentences: facts as "entity: key=value, …", series points and edges as lines, or the note."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from .graph import edge_line
from .safe import as_dict, as_list, show

#: Sentences written at most.
MAX_SENTENCES = 300


def fact_sentence(fact: dict[str, Any]) -> str:
    """Pure: `entity: key=value, key=value`."""
    rest = ", ".join(f"{show(k, 60)}={show(v)}" for k, v in fact.items() if k != "entity")
    head = show(fact.get("entity"), 120) if "entity" in fact else "(no entity)"
    return f"{head}: {rest}" if rest else head


def series_sentence(point: dict[str, Any]) -> str:
    return (
        f"{show(point.get('entity'), 120)} {show(point.get('metric'), 60)} at {show(point.get('t'), 60)}"
        f" = {show(point.get('value'))}"
    )


def prose_lines(semantics: dict[str, Any] | None, *, limit: int = MAX_SENTENCES) -> list[str]:
    """Pure: every fact, series point and edge as one sentence; the note when there is no data."""
    sem = as_dict(semantics)
    out = [fact_sentence(f) for f in as_list(sem.get("facts")) if isinstance(f, dict)]
    out += [series_sentence(p) for p in as_list(sem.get("series")) if isinstance(p, dict)]
    out += [edge_line(e) for e in as_list(sem.get("edges")) if isinstance(e, dict)]
    if not out and isinstance(sem.get("note"), str):
        out = [show(sem["note"], 4000, one_line=False)]
    if len(out) > limit:
        out = out[:limit] + [f"… {len(out) - limit} more sentences not shown"]
    return out


def prose_widget(semantics: dict[str, Any]) -> Static:
    return Static(Text("\n".join(prose_lines(semantics))), classes="result-prose")
