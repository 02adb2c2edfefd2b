"""In-app exports: a browser download when served; in a terminal, a file in the downloads folder, never
outside it (the name is sanitised: a pack may be named `../../outside/escaped`) and never over an existing
file without an explicit yes."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from reviewer.ui.widgets.safe import safe_text

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
MAX_NAME = 120


def safe_filename(name: str, fallback: str = "export") -> str:
    """`name` as one plain file name: no folder part, no `..`, no hidden file, no control characters."""
    cleaned = _UNSAFE_NAME.sub("_", name).lstrip("._")
    if len(cleaned) > MAX_NAME:
        stem, dot, ext = cleaned.rpartition(".")
        cleaned = (
            (stem[: MAX_NAME - len(ext) - 1] + dot + ext) if dot and len(ext) <= 10 else cleaned[:MAX_NAME]
        )
    return cleaned or fallback


def downloads_folder() -> Path:
    """Where a terminal app saves what it delivers (Textual's own choice)."""
    from platformdirs import user_downloads_path

    return Path(user_downloads_path())


class ConfirmOverwrite(ModalScreen[bool]):
    """ "y" replaces the existing file; "n" or escape keeps it (nothing is written)."""

    DEFAULT_CSS = """
    ConfirmOverwrite { align: center middle; }
    ConfirmOverwrite > Vertical { width: 90; height: auto; border: round $warning; background: $surface; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Replace it", id="overwrite.yes"),
        Binding("n,escape", "answer(False)", "Keep it", id="overwrite.no"),
    ]

    def __init__(self, target: Path) -> None:
        super().__init__(id="confirm-overwrite")
        self.target = target

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text.assemble("A file is already there: ", safe_text(str(self.target), limit=300)))
            yield Static(Text("y: replace it · n / esc: keep it (nothing is exported)"), id="overwrite-help")

    def on_mount(self) -> None:
        self.query_one(Vertical).border_title = "Replace?"

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


async def deliver_export(app: Any, text: str, filename: str, mime_type: str) -> str | None:
    """Deliver `text` under a sanitised `filename`; returns the name used, or None when the reviewer kept an
    existing file. Must run in a worker (it may wait for the reviewer's answer)."""
    name = safe_filename(filename)
    folder = downloads_folder()
    exists = not getattr(app, "is_web", False) and (folder / name).exists()
    if exists and not await app.push_screen_wait(ConfirmOverwrite(folder / name)):
        return None
    app.deliver_text(io.StringIO(text), save_directory=folder, save_filename=name, mime_type=mime_type)
    return name
