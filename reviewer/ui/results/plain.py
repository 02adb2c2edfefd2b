"""Results without semantics: a folding JSON tree, strings, absent(), coverage() wrappers, errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static, Tree
from textual.widgets.tree import TreeNode

from reviewer.review.inert import inert

from .caveats import coverage_from_rows
from .safe import as_dict, as_list, item_str, line, scalar_str, show

#: Bounds that keep a huge result from freezing the UI.
MAX_DEPTH = 10
MAX_CHILDREN = 100
MAX_NODES = 2000
MAX_LABEL = 160
MAX_TEXT = 20_000


@dataclass
class FoldNode:
    """One line of the folding JSON view; `children` is None for a leaf."""

    label: str
    children: list[FoldNode] | None = None
    style: str = ""
    notes: list[str] = field(default_factory=list)


def _summary(value: Any) -> str:
    if isinstance(value, dict):
        return f"{{{len(value)} keys}}"
    return f"[{len(value)} items]"


def fold_json(
    value: Any,
    *,
    max_depth: int = MAX_DEPTH,
    max_children: int = MAX_CHILDREN,
    max_nodes: int = MAX_NODES,
    max_label: int = MAX_LABEL,
) -> FoldNode:
    """Pure: the value as a bounded tree of inert labels (depth, children per node and node total capped)."""
    budget = [max_nodes]

    def leaf(prefix: str, v: Any) -> FoldNode:
        if isinstance(v, str):
            shown = '"' + inert(v[:max_label], keep_newlines=False) + '"'
            if len(v) > max_label:
                shown += f"… {len(v) - max_label} more chars"
            return FoldNode(prefix + shown, style="green")
        return FoldNode(prefix + show(v, max_label), style="dim" if v is None else "cyan")

    def build(prefix: str, v: Any, depth: int) -> FoldNode:
        budget[0] -= 1
        if not isinstance(v, dict | list):
            return leaf(prefix, v)
        kids: list[FoldNode] = []
        node = FoldNode(prefix + _summary(v), children=kids)
        if depth >= max_depth:
            kids.append(FoldNode("… deeper levels not shown (press r for the raw JSON)", style="dim"))
            return node
        items = list(v.items()) if isinstance(v, dict) else list(enumerate(v))
        for count, (key, child) in enumerate(items):
            if count >= max_children or budget[0] <= 0:
                rest = len(items) - count
                kids.append(FoldNode(f"… {rest} more items (press r for the raw JSON)", style="dim"))
                break
            key_text = f"{show(key, 80)}: " if isinstance(v, dict) else f"[{key}] "
            kids.append(build(key_text, child, depth + 1))
        return node

    return build("", value, 0)


class JsonTree(Tree[None]):
    """A Tree of a JSON value: objects/arrays fold; labels are plain Text."""

    DEFAULT_CSS = """
    JsonTree { height: auto; max-height: 30; }
    """

    def __init__(self, value: Any, *, label: str = "result", **kwargs: Any) -> None:
        self.fold = fold_json(value)
        super().__init__(
            Text(f"{label} {self.fold.label}" if self.fold.children is not None else label), **kwargs
        )
        self.show_root = True

    def on_mount(self) -> None:
        if self.fold.children is None:
            self.root.add_leaf(Text(self.fold.label, style=self.fold.style))
        else:
            self._add(self.root, self.fold.children, depth=1)
        self.root.expand()

    def _add(self, parent: TreeNode[None], children: list[FoldNode], depth: int) -> None:
        for child in children:
            if child.children is None:
                parent.add_leaf(Text(child.label, style=child.style))
            else:
                node = parent.add(Text(child.label), expand=depth <= 2)
                self._add(node, child.children, depth + 1)


def value_widget(value: Any, *, label: str = "result") -> Widget:
    """A string as bounded inert text; anything else as a folding JSON tree."""
    if isinstance(value, str):
        return Static(Text(show(value, MAX_TEXT, one_line=False)), classes="result-text")
    return JsonTree(value, label=label, classes="result-json")


def _section(title: str, style: str, items: list[str]) -> list[Text]:
    if not items:
        return []
    return [line((title, style))] + [line("  • ", item) for item in items[:100]]


def absent_lines(result: Any, rows: list[dict[str, Any]] | None, call_id: Any) -> list[Text]:
    """Pure: "Nothing found", what was looked for, and the checked / not checked / cannot cover lists."""
    res = as_dict(result)
    from_rows = coverage_from_rows([r for r in rows or [] if r.get("origin") in (None, "absent")], call_id)
    looked_for = res.get("looked_for")
    if looked_for is None:
        looked_for = next(
            (r.get("looked_for") for r in rows or [] if r.get("call_id") == call_id and r.get("looked_for")),
            None,
        )
    out = [
        line(
            ("Nothing found", "bold reverse yellow"),
            ("  — the search ran and matched nothing (an answer, not an error)", "dim"),
        )
    ]
    if looked_for is not None:
        out.append(line(("looked for: ", "bold"), show(looked_for, 500)))
    for title, key, style in (
        ("checked:", "checked", "bold green"),
        ("not checked:", "not_checked", "bold yellow"),
        ("cannot cover:", "cannot_cover", "bold red"),
    ):
        items = [item_str(i) for i in as_list(res.get(key))] or from_rows[key]
        out += _section(title, style, [show(i, 500) for i in items])
    if res.get("try_instead") is not None:
        out.append(line(("try instead: ", "bold"), show(res["try_instead"], 500)))
    if res.get("retry_returns_the_same") is True:
        out.append(Text("retrying with the same arguments returns the same result", style="dim"))
    return out


def coverage_wrapper_lines(wrapper: Any) -> list[Text]:
    """Pure: the lists of a coverage() wrapper (`result.af_coverage`)."""
    cov = as_dict(wrapper)
    out: list[Text] = []
    for title, key, style in (
        ("checked:", "checked", "bold green"),
        ("not checked:", "not_checked", "bold yellow"),
        ("cannot cover:", "cannot_cover", "bold red"),
    ):
        out += _section(title, style, [show(item_str(i), 500) for i in as_list(cov.get(key))])
    return out or [Text("coverage() wrapper with no lists", style="dim")]


def error_lines(call: dict[str, Any]) -> list[Text]:
    """Pure: the error message, prominently, and any argument-validation problems."""
    result = call.get("result")
    message = result if isinstance(result, str) else scalar_str(result)
    out = [
        line(("✖ the tool call failed", "bold white on red")),
        line((show(message, MAX_TEXT, one_line=False), "bold red")),
    ]
    for problem in as_list(call.get("args_invalid")):
        p = as_dict(problem)
        if p:
            out.append(
                line(
                    "  • ",
                    (show(p.get("path"), 120), "bold"),
                    f": expected {show(p.get('expected'), 80)}, got {show(p.get('got'), 80)}",
                )
            )
    return out
