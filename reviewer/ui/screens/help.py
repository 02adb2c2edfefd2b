"""`?` help: every key binding of the screen below, generated from the bindings themselves (keymap applied)."""

from __future__ import annotations

from importlib.resources import files
from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingsMap, BindingType
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static


def binding_rows(app: Any, screen: Any) -> list[tuple[str, str, str, str]]:
    """(section, keys, description, binding id) for every binding with an id on the app, `screen` and its
    widgets, after the app's keymap. Keys of one binding id are joined ("j, down")."""
    nodes: list[DOMNode] = [screen, *screen.walk_children(with_self=False), app]
    rows: list[tuple[str, str, str, str]] = []
    seen: set[tuple[str, str]] = set()
    for node in nodes:
        section = _section(node, app, screen)
        for binding_id, group in bindings_by_id(app, node).items():
            if (section, binding_id) in seen:
                continue
            seen.add((section, binding_id))
            description = group[0].description or group[0].tooltip or group[0].action
            rows.append((section, shown_keys(app, group), description, binding_id))
    return rows


def bindings_by_id(app: Any, node: DOMNode) -> dict[str, list[Binding]]:
    """binding id -> the node's bindings with that id, after the app's keymap (bindings without an id left
    out)."""
    bindings: BindingsMap = node._bindings.copy()  # noqa: SLF001 - the merged BINDINGS of the node
    if app._keymap:  # noqa: SLF001
        bindings.apply_keymap(app._keymap)  # noqa: SLF001
    keys_by_id: dict[str, list[Binding]] = {}
    for _key, binding in bindings:
        if binding.id is not None:
            keys_by_id.setdefault(binding.id, []).append(binding)
    return keys_by_id


def shown_keys(app: Any, group: list[Binding]) -> str:
    """The keys of one binding id as the app displays them, joined ("j, down"); "" for none."""
    return ", ".join(dict.fromkeys(app.get_key_display(b) for b in group))


def _section(node: DOMNode, app: Any, screen: Any) -> str:
    if node is app:
        return "everywhere"
    if node is screen:
        return type(screen).__name__.replace("Screen", " screen").strip()
    return type(node).__name__


class HelpScreen(ModalScreen[None]):
    """Lists the bindings of the screen it was opened from, then the general help text."""

    CSS_PATH = "../styles/help.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "close", "Close help", id="help.close"),
    ]

    def __init__(self, for_screen: Any) -> None:
        super().__init__(id="help-screen")
        self.for_screen = for_screen
        self.rows: list[tuple[str, str, str, str]] = []

    def compose(self) -> ComposeResult:
        self.rows = binding_rows(self.app, self.for_screen)
        table = Table(box=None, expand=True, show_edge=False, pad_edge=False)
        table.add_column("where", style="dim", no_wrap=True)
        table.add_column("keys", style="bold cyan", no_wrap=True)
        table.add_column("does")
        table.add_column("binding id (for keymap.toml)", style="dim", no_wrap=True)
        for section, keys, description, binding_id in self.rows:
            table.add_row(Text(section), Text(keys), Text(description), Text(binding_id))
        with VerticalScroll(id="help-body"):
            yield Static(Text("Keys", style="bold"), id="help-title")
            yield Static(table, id="help-bindings")
            yield Markdown(
                files("reviewer.ui").joinpath("help.md").read_text(encoding="utf-8"), id="help-text"
            )

    def on_mount(self) -> None:
        self.query_one("#help-body").border_title = "Help — esc to close"

    def action_close(self) -> None:
        self.dismiss(None)
