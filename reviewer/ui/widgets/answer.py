"""The answer, with every flagged span highlighted in place, and a clear mark when it was withheld."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from reviewer.ui.widgets.safe import FIELD_LIMIT, clip, inert_mapped, more_marker

#: style per finding kind (anything else gets DEFAULT_SPAN)
SPAN_STYLES: dict[str, Style] = {
    "negative-claim": Style(bgcolor="dark_orange3", color="white"),
    "negative-claim-note": Style(bgcolor="grey35", color="white"),
    "unread-unit": Style(bgcolor="purple4", color="white"),
}
DEFAULT_SPAN = Style(bgcolor="dark_goldenrod", color="black")
CURRENT_SPAN = Style(bgcolor="yellow", color="black", bold=True, underline=True)


def span_style(kind: str | None) -> Style:
    return SPAN_STYLES.get(kind or "", DEFAULT_SPAN)


def highlighted_answer(
    answer: str | None, findings: list[dict[str, Any]], *, current: str | None = None, limit: int = FIELD_LIMIT
) -> tuple[Text, dict[str, tuple[int, int]]]:
    """The answer as inert Text with each placeable answer span styled; also where each span landed.

    Finding spans are Python `str` indices into the recorded answer (the store converted the UTF-16 span);
    they are mapped through `inert` (which may lengthen control characters) before styling. A span past the
    drawn part (long answers are cut at `limit`) is left out of the returned positions.
    """
    raw = answer or ""
    shown, cut = clip(raw, limit)
    safe, mapping = inert_mapped(shown)
    text = Text(safe)
    placed: dict[str, tuple[int, int]] = {}
    ordered = sorted(
        (f for f in findings if f.get("span") and f.get("field") in (None, "answer")),
        key=lambda f: (f["span"]["start"], f["span"]["end"]),
    )
    for f in ordered:
        start, end = int(f["span"]["start"]), int(f["span"]["end"])
        if not (0 <= start <= end <= len(shown)):
            continue
        if mapping is not None:
            start, end = mapping[start], mapping[end]
        placed[f["id"]] = (start, end)
        text.stylize(span_style(f.get("kind")), start, end)
    if current and current in placed:
        start, end = placed[current]
        text.stylize(CURRENT_SPAN, start, end)
    if cut:
        text.append("\n")
        text.append_text(more_marker(cut))
    return text, placed


class AnswerView(Static):
    """Draws `highlighted_answer`; keeps the Text (`answer_text`) and span positions for tests and scrolling."""

    DEFAULT_CSS = """
    AnswerView { width: 1fr; height: auto; }
    """
    HELP: ClassVar[str] = "The run's answer. Highlighted spans are findings; `[`/`]` walk them."

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(Text("loading…", style="dim italic"), id=id, classes=classes)
        self.answer: str | None = None
        self.findings: list[dict[str, Any]] = []
        self.current: str | None = None
        self.answer_text: Text = Text()
        self.placed: dict[str, tuple[int, int]] = {}

    def show(self, answer: str | None, findings: list[dict[str, Any]], *, current: str | None = None) -> None:
        self.answer, self.findings, self.current = answer, findings, current
        self._draw()

    def set_current(self, finding_id: str | None) -> None:
        if finding_id != self.current:
            self.current = finding_id
            self._draw()

    def _draw(self) -> None:
        if not self.answer:
            self.answer_text, self.placed = Text("(no answer recorded)", style="dim italic"), {}
        else:
            self.answer_text, self.placed = highlighted_answer(self.answer, self.findings, current=self.current)
        self.update(self.answer_text)

    def line_of(self, finding_id: str) -> int | None:
        """The wrapped line the finding's span starts on, at the current width (for scrolling to it)."""
        span = self.placed.get(finding_id)
        if span is None:
            return None
        width = max(1, self.content_region.width or self.size.width or 80)
        lines = self.answer_text.wrap(self.app.console, width)
        offset = 0
        for number, line in enumerate(lines):
            length = len(line.plain)
            # wrap() drops the newline and one break space at each line end; allow for it
            if span[0] <= offset + length:
                return number
            offset += length + (1 if offset + length < len(self.answer_text.plain)
                                and self.answer_text.plain[offset + length] in " \n" else 0)
        return None
