"""Bars that ask for a note or a missed negative's list inside the screen, below what is being judged.

Mounted at the bottom of the screen's layout (not a modal over it), they take their few lines from the
panels, which shrink: the finding, its evidence and the answer stay on screen while the reviewer types.
When done they remove themselves, give the focus back, and call `on_done` (None: cancelled).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from reviewer.ui.widgets.safe import safe_text

MISSED_CHOICES: tuple[tuple[str, str], ...] = (
    ("none", "none — an absence (“there is no …”, “nothing …”) the detector did not flag"),
    ("complete", "complete — a completeness claim (“that is all of them”, “the only …”) it did not flag"),
)


class InlinePrompt(Vertical):
    """One question at the bottom of the screen; `finish(value)` ends it."""

    DEFAULT_CSS = """
    InlinePrompt { height: auto; border: round $accent; background: $surface; padding: 0 1; margin: 0 1; }
    InlinePrompt .prompt-help { color: $text-muted; }
    """

    def __init__(self, on_done: Callable[[str | None], None], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.on_done = on_done
        self._return_focus: Widget | None = None
        self._done = False

    def on_mount(self) -> None:
        self._return_focus = self.screen.focused

    def finish(self, value: str | None) -> None:
        if self._done:
            return
        self._done = True
        back = self._return_focus
        self.remove()
        if back is not None and back.is_attached and back is not self and self not in back.ancestors:
            back.focus()
        self.on_done(value)


class InputBar(InlinePrompt):
    """A one-line answer: its Input is focused on mount, enter gives `answer_of` the typed value, escape
    cancels (subclasses bind escape to `cancel` under their own binding id)."""

    #: the bar's border title
    TITLE: ClassVar[str] = ""

    def on_mount(self) -> None:
        super().on_mount()
        self.border_title = self.TITLE
        self.query_one(Input).focus()

    def answer_of(self, typed: str) -> str:
        """What the typed value answers (as typed by default)."""
        return typed

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.finish(self.answer_of(event.value))

    def action_cancel(self) -> None:
        self.finish(None)


class NoteBar(InputBar):
    """One line of text: the reviewer's note on a label. Enter keeps it, escape cancels."""

    TITLE = "Note"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="note.cancel"),
    ]

    def __init__(self, value: str, *, about: Text | None, on_done: Callable[[str | None], None]) -> None:
        super().__init__(on_done, id="note-bar")
        self.value = value
        self.about = about

    def compose(self) -> ComposeResult:
        if self.about is not None:
            yield Static(self.about, id="note-about")
        yield Input(value=self.value, placeholder="why (optional)", id="note-input", max_length=2_000)
        yield Static(Text("enter: keep · esc: cancel · an empty note clears it"), classes="prompt-help")

    def answer_of(self, typed: str) -> str:
        return typed.strip()


class PackNameBar(InputBar):
    """The name of a new phrase pack: one line. Enter makes it, escape cancels."""

    TITLE = "New phrase pack"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="pack-name.cancel"),
    ]

    def __init__(self, *, on_done: Callable[[str | None], None]) -> None:
        super().__init__(on_done, id="pack-name-bar")

    def compose(self) -> ComposeResult:
        yield Input(placeholder="name of the new pack", id="pack-name-input", max_length=200)
        yield Static(
            Text("enter: make the pack (version 1, no phrases yet) · esc: cancel"), classes="prompt-help"
        )


class MissedBar(InlinePrompt):
    """Which list a missed negative belongs to: `none` or `complete` (n / c, or pick and enter)."""

    DEFAULT_CSS = """
    MissedBar OptionList { height: auto; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="missed.cancel"),
        Binding("n", "choose('none')", "none", id="missed.none"),
        Binding("c", "choose('complete')", "complete", id="missed.complete"),
    ]

    def __init__(
        self, selected: str, *, suggested: str | None = None, on_done: Callable[[str | None], None]
    ) -> None:
        super().__init__(on_done, id="missed-bar")
        self.selected = selected
        #: the list the clause's cues suggest: highlighted, so enter takes it
        self.suggested = suggested if suggested in {v for v, _ in MISSED_CHOICES} else None

    def compose(self) -> ComposeResult:
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
        hint = "n / c, or enter on a line · esc cancels"
        if self.suggested:
            hint = f"its words suggest “{self.suggested}”: enter takes it · " + hint
        yield Static(Text(hint), classes="prompt-help")

    def on_mount(self) -> None:
        super().on_mount()
        self.border_title = "Label a missed negative"
        options = self.query_one(OptionList)
        if self.suggested:
            options.highlighted = [v for v, _ in MISSED_CHOICES].index(self.suggested)
        options.focus()

    def check_consume_key(self, key: str, character: str | None) -> bool:
        """While it asks, a printable key is a choice or nothing: never a key of the screen behind (`1` would
        judge the finding under the bar, `]` walk away from it)."""
        return character is not None and character.isprintable()

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.finish(event.option.id)

    def action_choose(self, value: str) -> None:
        self.finish(value)

    def action_cancel(self) -> None:
        self.finish(None)
