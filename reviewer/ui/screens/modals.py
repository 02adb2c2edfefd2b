"""Modal dialogs: who is reviewing (asked once per session). Notes and missed negatives are asked inline
(`reviewer.ui.widgets.inline_prompts`), so they never hide what is being judged."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class ReviewerNameScreen(ModalScreen[str]):
    """Who is labelling in this session (asked per browser tab by `reviewer serve`). A name must be given:
    enter takes the typed one; escape keeps a suggested name only when there is one (a served tab suggests
    none, so it never labels as whoever started the server)."""

    DEFAULT_CSS = """
    ReviewerNameScreen { align: center middle; }
    ReviewerNameScreen > Vertical { width: 70; height: auto; border: round $accent; background: $surface; padding: 0 1; }
    ReviewerNameScreen #who-help { color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "keep", "Keep suggested name", id="who.keep"),
    ]

    def __init__(self, suggested: str = "") -> None:
        super().__init__(id="who-screen")
        self.suggested = suggested.strip()

    def compose(self) -> ComposeResult:
        help_text = (
            "enter: use this name · esc: keep the suggested one"
            if self.suggested
            else "type your name, then enter (labels need a name)"
        )
        with Vertical():
            yield Static(Text("Your name is kept with every label you make in this session."))
            yield Input(value=self.suggested, placeholder="your name", id="who-input", max_length=100)
            yield Static(Text(help_text), id="who-help")

    def on_mount(self) -> None:
        self.query_one(Vertical).border_title = "Who is reviewing?"
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        name = " ".join(event.value.split()) or self.suggested
        if name:
            self.dismiss(name)
        else:
            self._name_needed()

    def action_keep(self) -> None:
        if self.suggested:
            self.dismiss(self.suggested)
        else:
            self._name_needed()

    def _name_needed(self) -> None:
        self.notify("type your name first: every label carries it", severity="warning", markup=False)
        self.query_one(Input).focus()
