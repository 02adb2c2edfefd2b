"""Pure: which views a semantic envelope gets, from its render hint and the data it carries."""

from __future__ import annotations

from typing import Any

from .safe import as_dict, as_list, show

KNOWN_HINTS = ("table", "chart", "graph", "prose")
#: The natural view of each data part, used without a hint and for parts the hinted view does not draw.
NATURAL = {"facts": "table", "series": "chart", "edges": "graph"}


def data_parts(semantics: dict[str, Any] | None) -> list[str]:
    sem = as_dict(semantics)
    return [part for part in ("facts", "series", "edges") if as_list(sem.get(part))]


def plan_views(semantics: dict[str, Any] | None) -> tuple[list[tuple[str, str]], list[str]]:
    """Pure: ([(view, part), ...], notes). view ∈ table/chart/graph/prose; part ∈ facts/series/edges/all.

    The hinted view comes first; every other data part follows in its natural view, so no data is hidden.
    """
    sem = as_dict(semantics)
    parts = data_parts(sem)
    notes: list[str] = []
    hint = as_dict(sem.get("render")).get("default")
    hint = hint.strip().lower() if isinstance(hint, str) and hint.strip() else None
    if hint is not None and hint not in KNOWN_HINTS:
        notes.append(
            f"unknown render hint '{show(as_dict(sem.get('render')).get('default'), 60)}': shown as a table"
        )
        hint = "table"
    if not parts:
        if as_dict(sem.get("clarify")):
            notes.append("no data: the tool handed back a question instead (see clarify)")
        else:
            notes.append("no data in the envelope")
        return [], notes
    if hint == "prose":
        return [("prose", "all")], notes
    views: list[tuple[str, str]] = []
    if hint == "table":
        views.append(("table", parts[0]))
    elif hint == "chart" or hint == "graph":
        wanted = "series" if hint == "chart" else "edges"
        if wanted in parts:
            views.append((hint, wanted))
        else:
            notes.append(f"render hint '{hint}' but no {wanted}: shown as a table")
            views.append(("table", parts[0]))
    for part in parts:
        if not any(p == part for _, p in views):
            views.append((NATURAL[part], part))
    return views, notes
