"""The exact recorded JSON of a call (result + full semantics envelope), pretty-printed and bounded."""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from reviewer.review.inert import inert

#: Characters of pretty JSON shown per section at most.
MAX_RAW_CHARS = 100_000


def raw_json(value: Any, *, limit: int = MAX_RAW_CHARS) -> str:
    """Pure: `value` as pretty JSON (indent 2, non-ASCII kept), inert and cut at `limit` characters."""
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    if len(text) > limit:
        text = text[:limit] + f"\n… {len(text) - limit} more chars (truncated for display)"
    return inert(text)


def raw_sections(call: dict[str, Any]) -> list[tuple[str, str]]:
    """Pure: (heading, pretty JSON) for the arguments sent, what the model read and, when recorded, the full
    envelope."""
    out = [("result — what the model read (tool_end.result)", raw_json(call.get("result")))]
    if call.get("semantics") is not None:
        out.append(("semantics — the full envelope (tools.semantics_declared)", raw_json(call["semantics"])))
    if "args" in call:
        out.append(("args — what was sent to the tool", raw_json(call["args"])))
    return out


class RawView(Vertical):
    DEFAULT_CSS = """
    RawView { height: auto; }
    RawView .result-raw-heading { text-style: bold; margin-top: 1; }
    """

    def __init__(self, call: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.call = call

    def compose(self) -> ComposeResult:
        yield Static(Text("raw recorded JSON — press r for the drawn view", style="dim italic"))
        for heading, body in raw_sections(self.call):
            yield Static(Text(heading, style="bold"), classes="result-raw-heading")
            yield Static(Text(body), classes="result-raw-json")
