"""App-wide messages (widget-specific ones live on their widget classes)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message


@dataclass
class OpenRun(Message):
    """Open the run with this run key or run id (from the runs list, the palette, or a link)."""

    ident: str
    #: True when `ident` is a run key just read from the database (no need to resolve it first)
    resolved: bool = False
    #: a finding id to put the timeline cursor on once the run is drawn
    finding: str | None = None


@dataclass
class ApplyRunFilters(Message):
    """Change the runs screen's filters: `changes` maps a filter name to its new value (None clears it).

    `replace=True` clears every other filter first. `search` and `sort` are filters too.
    """

    changes: dict[str, Any] = field(default_factory=dict)
    replace: bool = False
