"""Tool results drawn by their render hints (table / chart / graph / prose), with their caveats always visible.

Everything recorded is untrusted: every string goes through `reviewer.review.inert.inert()` into a
`rich.text.Text`; no recorded string is ever parsed as markup.
"""

from __future__ import annotations

from .chart import chart_series
from .view import ToolResultView, build_drawn, render_tool_result

__all__ = ["ToolResultView", "build_drawn", "chart_series", "render_tool_result"]
