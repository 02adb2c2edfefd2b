"""A line-API list with one cursor: draws only the visible rows, so its cost does not grow with the row count."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip


class CursorList(ScrollView, can_focus=True):
    """Rows drawn by `render_row(index)`; subclasses say how many rows there are with `set_row_count`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j,down", "cursor_down", "Down", show=False, id="list.down"),
        Binding("k,up", "cursor_up", "Up", show=False, id="list.up"),
        Binding("pagedown,ctrl+d", "page_down_rows", "Page down", show=False, id="list.page-down"),
        Binding("pageup,ctrl+u", "page_up_rows", "Page up", show=False, id="list.page-up"),
        Binding("home,g", "first", "First", show=False, id="list.first"),
        Binding("end,G", "last", "Last", show=False, id="list.last"),
        Binding("enter", "select", "Open", id="list.select"),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {"cursor-list--cursor", "cursor-list--placeholder"}
    DEFAULT_CSS = """
    CursorList { height: 1fr; overflow-x: hidden; }
    CursorList > .cursor-list--cursor { background: $boost; text-style: bold; }
    CursorList:focus > .cursor-list--cursor { background: $primary 60%; text-style: bold; }
    CursorList > .cursor-list--placeholder { color: $text-muted; }
    """

    cursor: reactive[int] = reactive(0, always_update=False, init=False)

    @dataclass
    class Highlighted(Message):
        """The cursor moved to `index`."""

        cursor_list: CursorList
        index: int

        @property
        def control(self) -> CursorList:
            return self.cursor_list

    @dataclass
    class Selected(Message):
        """The row at `index` was chosen (enter or double click)."""

        cursor_list: CursorList
        index: int

        @property
        def control(self) -> CursorList:
            return self.cursor_list

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._row_count = 0
        self.empty_text = Text("nothing here", style="dim italic")

    # -- data -------------------------------------------------------------------------------------------------

    @property
    def row_count(self) -> int:
        return self._row_count

    def set_row_count(self, count: int, *, cursor: int = 0) -> None:
        self._row_count = max(0, count)
        self.virtual_size = Size(self.size.width, self._row_count)
        self.set_reactive(CursorList.cursor, self._clamp(cursor))
        self.scroll_to(y=0, animate=False, immediate=True)
        self.refresh()
        if self._row_count:
            self.post_message(self.Highlighted(self, self.cursor))

    def resize_rows(self, count: int) -> None:
        """Change how many rows there are without moving the cursor or the scroll (unless the cursor's row is gone)."""
        self._row_count = max(0, count)
        self.virtual_size = Size(self.size.width, self._row_count)
        if self.cursor >= self._row_count:
            self.set_reactive(CursorList.cursor, self._clamp(self.cursor))
        self.refresh()

    def render_row(self, index: int, width: int) -> Text | None:  # pragma: no cover - abstract
        """The row's text, or `None` when it is not loaded yet (a placeholder is drawn)."""
        raise NotImplementedError

    # -- drawing ----------------------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_y = self.scroll_offset.y
        index = scroll_y + y
        width = self.scrollable_content_region.width or self.size.width
        base = self.rich_style
        if index >= self._row_count:
            if self._row_count == 0 and y == 0:
                return self._strip(self.empty_text, width, base)
            return Strip.blank(width, base)
        text = self.render_row(index, width)
        if text is None:
            text = Text("…", style=self.get_component_rich_style("cursor-list--placeholder"))
        if index == self.cursor:
            cursor_style = self.get_component_rich_style("cursor-list--cursor")
            text = text.copy()
            text.stylize(Style(bgcolor=cursor_style.bgcolor, bold=cursor_style.bold))
            return self._strip(text, width, base + Style(bgcolor=cursor_style.bgcolor))
        return self._strip(text, width, base)

    def _strip(self, text: Text, width: int, style: Style) -> Strip:
        text.no_wrap = True
        text.end = ""
        segments = [
            Segment(s.text.replace("\n", " "), style + s.style if s.style else style, s.control)
            for s in text.render(self.app.console)
        ]
        return Strip(segments).adjust_cell_length(width, style)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self.refresh()

    # -- cursor -----------------------------------------------------------------------------------------------

    def _clamp(self, index: int) -> int:
        return max(0, min(index, self._row_count - 1)) if self._row_count else 0

    def validate_cursor(self, value: int) -> int:
        return self._clamp(value)

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh_line(old)
        self.refresh_line(new)
        self.scroll_cursor_visible()
        self.post_message(self.Highlighted(self, new))

    def scroll_cursor_visible(self) -> None:
        height = max(1, self.scrollable_content_region.height)
        top = self.scroll_offset.y
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    def on_resize(self, event: events.Resize) -> None:
        """A panel that shrinks (the run screen making room for a tool result) keeps its cursor in view."""
        self.call_after_refresh(self.scroll_cursor_visible)

    def move_to(self, index: int) -> None:
        self.cursor = self._clamp(index)

    def action_cursor_down(self) -> None:
        self.move_to(self.cursor + 1)

    def action_cursor_up(self) -> None:
        self.move_to(self.cursor - 1)

    def action_page_down_rows(self) -> None:
        step = max(1, self.scrollable_content_region.height - 1)
        self.scroll_to(y=self.scroll_offset.y + step, animate=False, immediate=True)
        self.move_to(self.cursor + step)

    def action_page_up_rows(self) -> None:
        step = max(1, self.scrollable_content_region.height - 1)
        self.scroll_to(y=max(0, self.scroll_offset.y - step), animate=False, immediate=True)
        self.move_to(self.cursor - step)

    def action_first(self) -> None:
        self.move_to(0)

    def action_last(self) -> None:
        self.move_to(self._row_count - 1)

    def action_select(self) -> None:
        if self._row_count:
            self.post_message(self.Selected(self, self.cursor))

    async def on_click(self, event: events.Click) -> None:
        index = self.scroll_offset.y + event.y - self.gutter.top
        if 0 <= index < self._row_count:
            self.move_to(index)
            if event.chain >= 2:
                self.post_message(self.Selected(self, index))
