"""The detail panel: whatever the timeline cursor is on, in full (bounded)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from reviewer.ui.results import render_tool_result
from reviewer.ui.results.view import COMPACT_RESULTS
from reviewer.ui.widgets.safe import pretty_json, safe_text


def _field(label: str, value: Any, *, style: str = "") -> Text:
    return Text.assemble((f"{label}: ", "bold"), safe_text(value, limit=2_000, style=style), "\n")


def finding_detail(f: dict[str, Any]) -> Text:
    out = Text()
    out.append_text(Text.assemble(("⚑ ", "bold yellow"), (str(f.get("kind") or "?"), "bold yellow"), "\n"))
    out.append_text(_field("message", f.get("message") or ""))
    if f.get("span_text"):
        out.append_text(_field("span", f"“{f['span_text']}”", style="yellow"))
    span, u16 = f.get("span"), f.get("span_utf16")
    if span or u16:
        where = []
        if span:
            where.append(f"chars {span['start']}–{span['end']}")
        if u16:
            where.append(f"UTF-16 {u16.get('start')}–{u16.get('end')}")
        out.append_text(_field("position", ", ".join(where)))
    elif f.get("field"):
        out.append_text(_field("position", "unplaceable (the span does not fit the answer)", style="dim"))
    if f.get("field"):
        out.append_text(_field("field", f["field"]))
    if f.get("codes"):
        out.append_text(_field("codes", ", ".join(str(c) for c in f["codes"])))
    for label, key in (
        ("phrase pack", "pack_version"),
        ("iteration", "iteration"),
        ("tool", "tool_name"),
        ("call", "call_id"),
    ):
        if f.get(key) is not None:
            out.append_text(_field(label, f[key]))
    flags = [name for name in ("advisory", "truncated") if f.get(name)]
    if flags:
        out.append_text(_field("flags", ", ".join(flags)))
    if f.get("refs"):
        out.append_text(Text("refs:\n", style="bold"))
        out.append_text(pretty_json(f["refs"], limit=4_000))
        out.append("\n")
    out.append_text(_field("id", f.get("id"), style="dim"))
    return out


def iteration_detail(row: dict[str, Any]) -> Text:
    out = Text.assemble(("▸ iteration ", "bold cyan"), (str(row.get("iteration")), "bold cyan"), "\n")
    if row.get("stage"):
        out.append_text(_field("stage", row["stage"], style="dim"))
    out.append_text(Text("model said:\n", style="bold"))
    out.append_text(safe_text(row.get("text") or "(nothing)", limit=2_000))
    return out


def eviction_detail(row: dict[str, Any]) -> Text:
    out = Text("✂ eviction\n", style="bold magenta")
    for label, key in (
        ("strategy", "strategy"),
        ("iteration", "iteration"),
        ("stage", "stage"),
        ("dropped tools", "dropped_tools"),
        ("removed stages", "removed_stage_ids"),
        ("tool calls", "call_ids"),
        ("messages removed", "removed_messages"),
        ("from", "origin"),
    ):
        value = row.get(key)
        if value is not None:
            out.append_text(_field(label, ", ".join(map(str, value)) if isinstance(value, list) else value))
    return out


def call_heading(call: dict[str, Any]) -> Text:
    failed = bool(call.get("error"))
    return Text.assemble(
        ("✗ " if failed else "⚙ ", "bold red" if failed else "bold"),
        safe_text(call.get("tool_name"), limit=200, one_line=True, style="bold"),
        "  ",
        safe_text(call.get("call_id"), limit=200, one_line=True, style="dim"),
        "  ",
        ("status ", "bold red" if failed else ""),
        safe_text(call.get("status") or "?", limit=60, one_line=True, style="bold red" if failed else ""),
        (f"  iteration {call['iteration']}" if call.get("iteration") is not None else "", "dim"),
        (f"  {call['duration_ms']} ms" if call.get("duration_ms") is not None else "", "dim"),
    )


def fallback_result(call: dict[str, Any]) -> Widget:
    body = call_heading(call)
    body.append("\nargs:\n", style="bold")
    body.append_text(pretty_json(call.get("args"), limit=4_000))
    body.append("\nresult:\n", style="bold")
    body.append_text(pretty_json(call.get("result")))
    return Static(body, classes="result-fallback")


def result_widget(
    call: dict[str, Any], coverage: list[dict[str, Any]], *, now: datetime | None = None
) -> Widget:
    """The tool result drawn by its render hints; pretty JSON when the renderer fails (a bug must not hide
    the data)."""
    try:
        return render_tool_result(call, coverage, now=now)
    except Exception as exc:  # noqa: BLE001 - a renderer bug must not hide the data
        widget = fallback_result(call)
        widget.border_title = f"raw (renderer failed: {type(exc).__name__})"
        return widget


class DetailPanel(VerticalScroll, can_focus=True):
    """Shows one thing at a time: a Text, or a heading and a widget (a rendered tool result)."""

    HELP: ClassVar[str] = "Details of the timeline row under the cursor."
    #: the palette's Maximize and the z key may fill the screen with it
    ALLOW_MAXIMIZE = True
    DEFAULT_CSS = """
    DetailPanel { height: 1fr; }
    DetailPanel > Static.detail-text { width: 1fr; }
    """

    #: rows under which the panel is short: a tool result's caveats go brief above the data, in full after it
    SHORT_ROWS: ClassVar[int] = 18

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.showing: str | None = None

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.height < self.SHORT_ROWS, COMPACT_RESULTS)

    def compose(self) -> ComposeResult:
        yield Static(Text("move the cursor in the timeline", style="dim italic"), classes="detail-text")

    async def show_text(self, text: Text, *, key: str | None = None, keep_scroll: bool = False) -> None:
        """Show `text` (updating the text already shown in place, which is cheaper than a new widget)."""
        same = keep_scroll and key is not None and key == self.showing
        self.showing = key
        children = list(self.children)
        if len(children) == 1 and isinstance(children[0], Static) and children[0].has_class("detail-text"):
            children[0].update(text)
        else:
            await self.remove_children()
            await self.mount(Static(text, classes="detail-text"))
        if not same:
            self.scroll_home(animate=False)

    async def show_widgets(self, *widgets: Widget, key: str | None = None) -> None:
        self.showing = key
        await self.remove_children()
        await self.mount_all(widgets)
        self.scroll_home(animate=False)
