"""Edges as an adjacency list: each source node with its `from —kind→ to (via …)` links."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from rich.tree import Tree
from textual.widgets import Static

from .safe import as_list, line, show

#: Edges drawn at most.
MAX_EDGES = 500


def edge_line(edge: dict[str, Any]) -> str:
    """Pure: `from —kind→ to (via …)`, every part inert."""
    kind = edge.get("kind")
    arrow = f" —{show(kind, 60)}→ " if kind not in (None, "") else " → "
    text = f"{show(edge.get('from'), 120)}{arrow}{show(edge.get('to'), 120)}"
    via = edge.get("via")
    if via not in (None, ""):
        text += f" (via {show(via, 120)})"
    return text


def adjacency(edges: Any) -> dict[str, list[dict[str, Any]]]:
    """Pure: edges grouped by their source node, in first-seen order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for edge in as_list(edges):
        if isinstance(edge, dict):
            out.setdefault(show(edge.get("from"), 120), []).append(edge)
    return out


def edge_tree(edges: Any, *, max_edges: int = MAX_EDGES) -> Tree:
    """A rich Tree: root = counts, one branch per source node, one leaf per edge."""
    groups = adjacency(edges)
    total = sum(len(v) for v in groups.values())
    nodes = set(groups) | {show(e.get("to"), 120) for v in groups.values() for e in v}
    tree = Tree(Text(f"{total} edge{'' if total == 1 else 's'} between {len(nodes)} nodes", style="bold"))
    drawn = 0
    for source, group in groups.items():
        branch = tree.add(line((source, "bold")))
        for edge in group:
            if drawn >= max_edges:
                break
            branch.add(Text(edge_line(edge)))
            drawn += 1
    if total > drawn:
        tree.add(Text(f"… {total - drawn} more edges not shown", style="dim"))
    return tree


def graph_widget(edges: Any, chart_hint: Any = None) -> Static:
    tree = edge_tree(edges)
    if chart_hint not in (None, ""):
        tree.add(line(("layout hint: ", "dim"), (show(chart_hint, 200), "dim")))
    return Static(tree, classes="result-graph")
