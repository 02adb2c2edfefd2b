"""Small modal dialogs for labelling: a note, and the list a missed negative belongs to."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from reviewer.ui.widgets.safe import safe_text

MISSED_CHOICES: tuple[tuple[str, str], ...] = (
    ("none", "none — an absence (“there is no …”, “nothing …”) the detector did not flag"),
    ("complete", "complete — a completeness claim (“that is all of them”, “the only …”) it did not flag"),
)


class NoteScreen(ModalScreen[str | None]):
    """One line of text: the reviewer's note on a label. Enter keeps it, escape cancels (returns None)."""

    DEFAULT_CSS = """
    NoteScreen { align: center middle; }
    NoteScreen > Vertical { width: 90; height: auto; border: round $accent; background: $surface; padding: 0 1; }
    NoteScreen #note-help { color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="note.cancel"),
    ]

    def __init__(self, value: str = "", *, about: Text | None = None) -> None:
        super().__init__(id="note-screen")
        self.value = value
        self.about = about

    def compose(self) -> ComposeResult:
        with Vertical():
            if self.about is not None:
                yield Static(self.about, id="note-about")
            yield Input(value=self.value, placeholder="why (optional)", id="note-input", max_length=2_000)
            yield Static(Text("enter: keep · esc: cancel · an empty note clears it"), id="note-help")

    def on_mount(self) -> None:
        self.query_one(Vertical).border_title = "Note"
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


class MissedChooser(ModalScreen[str | None]):
    """Which list a missed negative belongs to: `none` or `complete` (n / c, or pick and enter)."""

    DEFAULT_CSS = """
    MissedChooser { align: center middle; }
    MissedChooser > Vertical { width: 96; height: auto; border: round $accent; background: $surface; padding: 0 1; }
    MissedChooser OptionList { height: auto; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="missed.cancel"),
        Binding("n", "choose('none')", "none", id="missed.none"),
        Binding("c", "choose('complete')", "complete", id="missed.complete"),
    ]

    def __init__(self, selected: str) -> None:
        super().__init__(id="missed-chooser")
        self.selected = selected

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                Text.assemble(
                    ("missed negative: ", "bold"),
                    "“",
                    safe_text(self.selected, limit=300, one_line=True, style="bold yellow"),
                    "”",
                )
            )
            yield OptionList(
                *(Option(Text(label), id=value) for value, label in MISSED_CHOICES), id="missed-list"
            )
            yield Static(Text("n / c, or enter on a line · esc cancels", style="dim"))

    def on_mount(self) -> None:
        self.query_one(Vertical).border_title = "Label a missed negative"
        self.query_one(OptionList).focus()

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_choose(self, value: str) -> None:
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)


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
