"""In-app exports (ctrl+e, the packs screen): a browser download when served; in a terminal, a file where the
reviewer says.

In a terminal a bar under the panels (not a modal: the finding and its evidence stay in view) asks for the
path, filled in with the export's sanitised name in the current folder (a pack may be named
`../../outside/escaped`; its default file is `outside_escaped-v1.json` here). A typed folder gets that name
inside it. Nothing is created but the one file typed: a missing folder is reported, never made. An existing
file is replaced only after an explicit `y`. The toast says where the file went (its absolute path) or why
nothing was written.
"""

from __future__ import annotations

import asyncio
import io
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Input, Static

from reviewer.ui.widgets.inline_prompts import InlinePrompt, InputBar
from reviewer.ui.widgets.safe import safe_text

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
MAX_NAME = 120
#: Most characters of a typed path the bar and the toasts show.
PATH_LIMIT = 300


def safe_filename(name: str, fallback: str = "export") -> str:
    """`name` as one plain file name: no folder part, no `..`, no hidden file, no control characters."""
    cleaned = _UNSAFE_NAME.sub("_", name).lstrip("._")
    if len(cleaned) > MAX_NAME:
        stem, dot, ext = cleaned.rpartition(".")
        cleaned = (
            (stem[: MAX_NAME - len(ext) - 1] + dot + ext) if dot and len(ext) <= 10 else cleaned[:MAX_NAME]
        )
    return cleaned or fallback


class ExportPathBar(InputBar):
    """Where to write the export: one line, filled in with the default path. Enter writes, escape cancels."""

    TITLE = "Export to"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="export.cancel"),
    ]

    def __init__(self, default: Path, *, what: str, on_done: Callable[[str | None], None]) -> None:
        super().__init__(on_done, id="export-bar")
        self.default = default
        self.what = what

    def compose(self) -> ComposeResult:
        yield Static(
            Text.assemble(("export ", "dim"), safe_text(self.what, limit=200, one_line=True, style="bold"))
        )
        yield Input(value=str(self.default), id="export-path", max_length=4_096)
        yield Static(
            Text("enter: save here · a folder: saved in it under this name · esc: cancel"),
            classes="prompt-help",
        )

    def on_unmount(self) -> None:
        _gone(self)


class ReplaceBar(InlinePrompt):
    """ "y" replaces the existing file; "n" or escape keeps it (nothing is written)."""

    can_focus = True
    DEFAULT_CSS = """
    ReplaceBar { border: round $warning; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer('yes')", "Replace it", id="overwrite.yes"),
        Binding("n,escape", "answer('no')", "Keep it", id="overwrite.no"),
    ]

    def __init__(self, target: Path, *, on_done: Callable[[str | None], None]) -> None:
        super().__init__(on_done, id="replace-bar")
        self.target = target

    def compose(self) -> ComposeResult:
        yield Static(
            Text.assemble("A file is already there: ", safe_text(str(self.target), limit=PATH_LIMIT)),
            id="replace-target",
        )
        yield Static(Text("y: replace it · n / esc: keep it (nothing is exported)"), classes="prompt-help")

    def on_mount(self) -> None:
        super().on_mount()
        self.border_title = "Replace?"
        self.focus()

    def on_unmount(self) -> None:
        _gone(self)

    def check_consume_key(self, key: str, character: str | None) -> bool:
        """While it asks, a printable key is an answer or nothing: never a key of the screen behind (a label
        key, `q` for the queue)."""
        return character is not None and character.isprintable()

    def action_answer(self, answer: str) -> None:
        self.finish(answer)


def _gone(bar: InlinePrompt) -> None:
    """A bar removed with its question open (its screen closed): the answer is "cancel", nothing is written."""
    if not bar._done:  # noqa: SLF001 - InlinePrompt's own flag: finish() was not called
        bar._done = True  # noqa: SLF001
        bar.on_done(None)


async def _ask(app: Any, make_bar: Callable[[Callable[[str | None], None]], InlinePrompt]) -> str | None:
    """Mount a bar on the current screen and wait for its answer (None: cancelled, or the bar went away)."""
    answer: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()

    def done(value: str | None) -> None:
        if not answer.done():
            answer.set_result(value)

    bar = make_bar(done)
    for old in app.screen.query(InlinePrompt):
        if isinstance(old, ExportPathBar | ReplaceBar):
            old.finish(None)  # one export question at a time
    await app.screen.mount(bar)
    try:
        return await answer
    finally:
        if bar.is_attached:
            bar.finish(None)


@dataclass(frozen=True)
class Place:
    """What is at a target path, read off the UI thread."""

    target: Path
    folder_exists: bool
    exists: bool
    is_dir: bool


def target_path(typed: str, name: str, cwd: Path) -> Path:
    """The file a typed answer names: `~` expanded, relative to `cwd`, `name` inside a typed folder (an
    existing folder, or a path ending in a separator). Absolute, `..` folded; links are not followed."""
    raw = typed.strip()
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = cwd / path
    if raw.endswith(("/", os.sep)) or path.is_dir():
        path = path / name
    return Path(os.path.abspath(path))


def _look(typed: str, name: str, cwd: Path) -> Place:
    target = target_path(typed, name, cwd)
    return Place(target, target.parent.is_dir(), target.exists(), target.is_dir())


def _write(target: Path, text: str, *, replace: bool) -> None:
    """Write `text` to `target`, creating only that file (`x` mode: never over a file unless `replace`)."""
    with open(target, "w" if replace else "x", encoding="utf-8", newline="") as handle:
        handle.write(text)


def _shown(path: Path | str) -> str:
    return str(safe_text(str(path), limit=PATH_LIMIT, one_line=True))


async def deliver_export(app: Any, text: str, filename: str, mime_type: str) -> str | None:
    """Deliver `text` under a sanitised `filename`: a browser download when served, else a file at the path
    the reviewer gives. Returns where it went ("to /abs/path", or "as NAME (a browser download)"), or None
    when nothing was written (cancelled, an existing file kept, or a failure: each reported here as a toast).
    Must run in a worker (it waits for the reviewer's answers)."""
    name = safe_filename(filename)
    if getattr(app, "is_web", False):
        app.deliver_text(io.StringIO(text), save_filename=name, mime_type=mime_type)
        return f"as {name} (a browser download)"
    cwd = Path(await asyncio.to_thread(os.getcwd))
    typed = await _ask(app, lambda done: ExportPathBar(cwd / name, what=name, on_done=done))
    if typed is None or not typed.strip():
        app.notify("export cancelled: nothing was written", markup=False)
        return None
    try:
        place = await asyncio.to_thread(_look, typed, name, cwd)
    except (OSError, ValueError) as exc:
        app.notify(f"not exported: {exc}"[:500], title="export failed", severity="error", markup=False)
        return None
    target = place.target
    if not place.folder_exists:
        app.notify(
            f"not exported: the folder {_shown(target.parent)} does not exist (nothing was created)",
            title="export failed",
            severity="error",
            markup=False,
        )
        return None
    if place.is_dir:
        app.notify(
            f"not exported: {_shown(target)} is a folder",
            title="export failed",
            severity="error",
            markup=False,
        )
        return None
    replace = False
    if place.exists:
        if await _ask(app, lambda done: ReplaceBar(target, on_done=done)) != "yes":
            app.notify(f"not exported: {_shown(target)} was kept as it was", markup=False)
            return None
        replace = True
    try:
        await asyncio.to_thread(_write, target, text, replace=replace)
    except FileExistsError:
        app.notify(
            f"not exported: a file appeared at {_shown(target)} meanwhile; it was kept",
            title="export failed",
            severity="error",
            markup=False,
        )
        return None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        app.notify(
            f"not exported to {_shown(target)}: {reason}"[:500],
            title="export failed",
            severity="error",
            markup=False,
        )
        return None
    return f"to {_shown(target)}"
