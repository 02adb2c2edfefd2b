"""The answer, with every flagged span highlighted in place, and a clear mark when it was withheld."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.geometry import Region
from textual.message import Message
from textual.widgets import Static

from reviewer.review.missed_negatives import (
    Candidate,
    clause_spans,
    negative_candidates,
    sentence_spans,
)
from reviewer.review.typed_fields import field_lines, place_all
from reviewer.ui.widgets.safe import FIELD_LIMIT, clip, inert_mapped, more_marker

#: style per finding kind (anything else gets DEFAULT_SPAN)
SPAN_STYLES: dict[str, Style] = {
    "negative-claim": Style(bgcolor="dark_orange3", color="white"),
    "negative-claim-note": Style(bgcolor="grey35", color="white"),
    "unread-unit": Style(bgcolor="purple4", color="white"),
}
DEFAULT_SPAN = Style(bgcolor="dark_goldenrod", color="black")
CURRENT_SPAN = Style(bgcolor="yellow", color="black", bold=True, underline=True)
#: the words being selected as a missed negative
SELECTION_STYLE = Style(bgcolor="cyan", color="black", bold=True)
#: words already labelled as a missed negative (by anyone)
MISSED_STYLE = Style(underline=True, bold=True, color="magenta")
#: a word: letters/digits, with inner punctuation kept ("eu-west-1", "fc1/3", "don't", "20:00:00:25")
WORD = re.compile(r"\w(?:[\w'’./:@-]*\w)?")


def word_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) Python str indices of every word of `text`."""
    return [m.span() for m in WORD.finditer(text)]


def span_style(kind: str | None) -> Style:
    return SPAN_STYLES.get(kind or "", DEFAULT_SPAN)


def highlighted_answer(
    answer: str | None,
    findings: list[dict[str, Any]],
    *,
    current: str | None = None,
    limit: int = FIELD_LIMIT,
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


def highlighted_fields(
    answer: str | None,
    findings: list[dict[str, Any]],
    *,
    current: str | None = None,
    limit: int = FIELD_LIMIT,
) -> tuple[Text, dict[str, tuple[int, int]]] | None:
    """A typed (JSON) answer as its `path: value` lines, each finding on a field highlighted at the exact
    characters of its UTF-16 span inside that field's value; None when the answer is not typed.

    Positions returned index the drawn Text. Lines past `limit` drawn characters are left out, said so.
    """
    lines = field_lines(answer)
    if lines is None:
        return None
    spans = [
        (
            f["id"],
            f.get("field"),
            (f.get("span_utf16") or {}).get("start"),
            (f.get("span_utf16") or {}).get("end"),
        )
        for f in findings
        if f.get("span_utf16")
    ]
    where = place_all(answer, spans)
    by_line: dict[int, list[tuple[str, int, int]]] = {}
    for key, (number, start, end) in where.items():
        by_line.setdefault(number, []).append((key, start, end))
    kinds = {f["id"]: f.get("kind") for f in findings}
    text = Text()
    placed: dict[str, tuple[int, int]] = {}
    drawn = 0
    for number, line in enumerate(lines):
        if drawn >= limit:
            text.append_text(more_marker(sum(len(rest) for rest in lines[number:])))
            break
        shown, cut = clip(line, limit - drawn)
        safe, mapping = inert_mapped(shown)
        base = len(text.plain)
        text.append(safe)
        for key, start, end in sorted(by_line.get(number, []), key=lambda m: (m[1], m[2])):
            if end > len(shown):
                continue
            if mapping is not None:
                start, end = mapping[start], mapping[end]
            placed[key] = (base + start, base + end)
            text.stylize(span_style(kinds.get(key)), base + start, base + end)
        drawn += len(shown)
        if cut:
            text.append(" ")
            text.append_text(more_marker(cut))
        text.append("\n")
    if current and current in placed:
        text.stylize(CURRENT_SPAN, *placed[current])
    text.rstrip()
    return text, placed


class AnswerView(Static, can_focus=False):
    """Draws `highlighted_answer`; keeps the Text (`answer_text`) and span positions for tests and scrolling.

    Also the selection of words for a missed negative: `start_selection` makes it focusable and shows the
    selected words (the unflagged clause that looks most negative, when there is one); `tab`/`shift+tab`
    offer the next/previous such clause, `}`/`{` jump by clause and `)`/`(` by sentence, its other keys move
    the ends word by word; `enter` posts `MissedChosen` with Python `str` indices into the recorded answer;
    `escape` posts `SelectionEnded`.
    """

    DEFAULT_CSS = """
    AnswerView { width: 1fr; height: auto; }
    """
    HELP: ClassVar[str] = (
        "The run's answer (a typed answer as its fields). Highlighted spans are findings; `[`/`]` walk them; "
        "`m` selects words (of the recorded text)."
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right,l", "extend(1)", "End →", show=False, id="answer.extend"),
        Binding("left,h", "extend(-1)", "End ←", show=False, id="answer.shrink"),
        Binding("shift+right,L", "move_start(1)", "Start →", show=False, id="answer.start-right"),
        Binding("shift+left,H", "move_start(-1)", "Start ←", show=False, id="answer.start-left"),
        Binding("tab", "offer(1)", "Next negative-looking clause", id="answer.offer-next"),
        Binding("shift+tab", "offer(-1)", "Previous offered clause", show=False, id="answer.offer-prev"),
        Binding(
            "right_curly_bracket", "jump('clause', 1)", "Next clause", show=False, id="answer.clause-next"
        ),
        Binding(
            "left_curly_bracket", "jump('clause', -1)", "Previous clause", show=False, id="answer.clause-prev"
        ),
        Binding(
            "right_parenthesis", "jump('sentence', 1)", "Next sentence", show=False, id="answer.sentence-next"
        ),
        Binding(
            "left_parenthesis",
            "jump('sentence', -1)",
            "Previous sentence",
            show=False,
            id="answer.sentence-prev",
        ),
        Binding("home", "first_word", "First word", show=False, id="answer.first-word"),
        Binding("enter", "choose", "Label missed…", id="answer.choose"),
        Binding("escape", "cancel_selection", "Cancel selection", id="answer.cancel"),
    ]

    @dataclass
    class MissedChosen(Message):
        """The reviewer chose these words (answer[start:end], Python str indices) as a missed negative."""

        answer_view: AnswerView
        start: int
        end: int
        text: str
        #: the list the clause's cues suggest, when the selection is an offered clause
        suggested: str | None = None

    @dataclass
    class SelectionEnded(Message):
        """Selection mode was left without labelling."""

        answer_view: AnswerView

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(Text("loading…", style="dim italic"), id=id, classes=classes)
        self.answer: str | None = None
        self.findings: list[dict[str, Any]] = []
        self.current: str | None = None
        self.answer_text: Text = Text()
        self.placed: dict[str, tuple[int, int]] = {}
        #: (first word, last word) indices into `words` while selecting, else None
        self.selection: tuple[int, int] | None = None
        self.words: list[tuple[int, int]] = []
        #: current missed-negative labels on this answer (store rows)
        self.missed: list[dict[str, Any]] = []
        #: unflagged clauses that look negative, best first (`reviewer.review.missed_negatives`), while selecting
        self.candidates: list[Candidate] = []
        #: which of `candidates` is selected (None: the selection is not an offered clause)
        self.offered: int | None = None
        self._mapping: list[int] | None = None
        self._shown = 0
        self._drawn_plain: str | None = None
        #: a typed answer drawn as its `path: value` lines (drawn indices are not answer indices then)
        self.showing_fields = False
        self._fields: tuple[Text, dict[str, tuple[int, int]]] | None = None

    def show(self, answer: str | None, findings: list[dict[str, Any]], *, current: str | None = None) -> None:
        self.answer, self.findings, self.current = answer, findings, current
        shown, _cut = clip(answer or "", FIELD_LIMIT)
        self._shown = len(shown)
        self._mapping = inert_mapped(shown)[1]
        self.words = word_spans(shown)
        # a typed answer is parsed once; moving between findings only restyles the drawn fields
        self._fields = highlighted_fields(answer, findings) if answer else None
        self._draw()

    def set_current(self, finding_id: str | None) -> None:
        if finding_id != self.current:
            self.current = finding_id
            self._draw()

    def set_missed(self, missed: list[dict[str, Any]]) -> None:
        self.missed = list(missed)
        self._draw()

    def _to_text(self, index: int) -> int:
        """A Python index into the answer -> its index in the drawn (inert) text."""
        return self._mapping[index] if self._mapping is not None else index

    def _to_answer(self, index: int) -> int:
        """An index into the drawn (inert) text -> the answer index of the character drawn there."""
        if self._mapping is None:
            return min(index, self._shown)
        return max(0, min(bisect_right(self._mapping, index) - 1, self._shown))

    def _draw(self) -> None:
        typed = None if self.selecting or not self.answer else self._fields
        self.showing_fields = typed is not None
        if not self.answer:
            self.answer_text, self.placed = Text("(no answer recorded)", style="dim italic"), {}
        elif typed is not None:  # a typed answer as its fields; selecting words shows the recorded JSON
            self.answer_text, self.placed = typed[0].copy(), typed[1]
            if self.current in self.placed:
                self.answer_text.stylize(CURRENT_SPAN, *self.placed[self.current])
        else:
            self.answer_text, self.placed = highlighted_answer(
                self.answer, self.findings, current=self.current
            )
            for row in self.missed:
                start, end = row.get("span_start"), row.get("span_end")
                if isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= self._shown:
                    self.answer_text.stylize(MISSED_STYLE, self._to_text(start), self._to_text(end))
            span = self.selection_span
            if span is not None:
                self.answer_text.stylize(SELECTION_STYLE, self._to_text(span[0]), self._to_text(span[1]))
        # restyling (the current finding, a selection) keeps the size: skip the layout pass
        same_text = self.answer_text.plain == self._drawn_plain
        self._drawn_plain = self.answer_text.plain
        self.update(self.answer_text, layout=not same_text)

    def _line_starts(self) -> list[int]:
        """Where each wrapped line starts in `answer_text`, at the current width."""
        width = max(1, self.content_region.width or self.size.width or 80)
        lines = self.answer_text.wrap(self.app.console, width)
        plain = self.answer_text.plain
        starts: list[int] = []
        offset = 0
        for line in lines:
            starts.append(offset)
            length = len(line.plain)
            # wrap() drops the newline and one break space at each line end; allow for it
            offset += length + (1 if offset + length < len(plain) and plain[offset + length] in " \n" else 0)
        return starts

    def line_of(self, finding_id: str) -> int | None:
        """The wrapped line the finding's span starts on, at the current width (for scrolling to it)."""
        span = self.placed.get(finding_id)
        if span is None:
            return None
        return self._line_at(span[0])

    def _line_at(self, text_index: int) -> int | None:
        starts = self._line_starts()
        for number in range(len(starts)):
            end = starts[number + 1] if number + 1 < len(starts) else len(self.answer_text.plain) + 1
            if text_index < end:
                return number
        return None

    def offset_of_line(self, line: int) -> int:
        """The answer index of the first character on wrapped line `line`."""
        starts = self._line_starts()
        if not starts or self.showing_fields:
            return 0
        return self._to_answer(starts[max(0, min(line, len(starts) - 1))])

    # -- selecting words for a missed negative ----------------------------------------------------------------

    @property
    def selecting(self) -> bool:
        return self.selection is not None

    @property
    def selection_span(self) -> tuple[int, int] | None:
        """answer[start:end] of the selected words (Python str indices), or None."""
        if self.selection is None or not self.words:
            return None
        first, last = self.selection
        return self.words[first][0], self.words[last][1]

    @property
    def selected_text(self) -> str:
        span = self.selection_span
        return (self.answer or "")[span[0] : span[1]] if span else ""

    def mouse_span(self) -> tuple[int, int] | None:
        """The answer indices under a mouse selection in this widget, if there is one."""
        selection = self.text_selection
        if selection is None or not self.answer or self.showing_fields:
            return None
        lines = self.answer_text.plain.split("\n")
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line) + 1)

        def index(offset: Any, default: int) -> int:
            if offset is None:
                return default
            y = max(0, min(offset.y, len(lines) - 1))
            return starts[y] + max(0, min(offset.x, len(lines[y])))

        start = index(selection.start, 0)
        end = index(selection.end, len(self.answer_text.plain))
        if end <= start:
            return None
        return self._to_answer(start), self._to_answer(end - 1) + 1

    def word_at(self, index: int) -> int | None:
        """The word containing answer index `index`, else the next word, else the last one."""
        if not self.words:
            return None
        for n, (_start, end) in enumerate(self.words):
            if index < end:
                return n
        return len(self.words) - 1

    def start_selection(
        self, *, at: int = 0, span: tuple[int, int] | None = None, offer: bool = True
    ) -> bool:
        """Enter selection mode on the words covering `span`, else (with `offer`) the unflagged clause that
        looks most negative, else the word at answer index `at`."""
        if not self.words:
            return False
        shown = (self.answer or "")[: self._shown]
        # a typed answer's findings sit in its fields, not at answer indices: nothing is offered there
        typed = self._fields is not None
        self.candidates = [] if typed else negative_candidates(shown, self.findings, missed=self.missed)
        self.offered = None
        if span is not None:
            self._select_span(span)
        if self.selection is None and offer and self.candidates:
            self.offered = 0
            self._select_span((self.candidates[0].start, self.candidates[0].end))
        if self.selection is None:
            word = self.word_at(at)
            if word is None:
                return False
            self.selection = (word, word)
        self.can_focus = True
        self._draw()
        self._scroll_to_selection()
        return True

    def _select_span(self, span: tuple[int, int]) -> bool:
        inside = [n for n, (s, e) in enumerate(self.words) if s < span[1] and e > span[0]]
        if inside:
            self.selection = (inside[0], inside[-1])
        return bool(inside)

    @property
    def suggested_list(self) -> str | None:
        """The list the selected offered clause's cues suggest (None: not an offered clause)."""
        if self.offered is None or self.offered >= len(self.candidates):
            return None
        candidate = self.candidates[self.offered]
        return candidate.list_name if self.selection_span == self._words_span(candidate) else None

    def _words_span(self, candidate: Candidate) -> tuple[int, int] | None:
        return self._words_in((candidate.start, candidate.end))

    def _words_in(self, span: tuple[int, int]) -> tuple[int, int] | None:
        """answer[start:end] of the words inside `span` (None: it holds no word)."""
        inside = [(s, e) for s, e in self.words if s < span[1] and e > span[0]]
        return (inside[0][0], inside[-1][1]) if inside else None

    def action_offer(self, step: int) -> None:
        """Select the next (previous) unflagged clause that looks negative, in rank order, wrapping."""
        if self.selection is None:
            return
        if not self.candidates:
            self.app.bell()
            return
        n = len(self.candidates)
        self.offered = (step if step < 0 else 0) % n if self.offered is None else (self.offered + step) % n
        candidate = self.candidates[self.offered]
        self._select_span((candidate.start, candidate.end))
        self._draw()
        self._scroll_to_selection()

    def action_jump(self, unit: str, step: int) -> None:
        """Select the whole next (previous) clause or sentence after (before) the selection."""
        span = self.selection_span
        if span is None:
            return
        shown = (self.answer or "")[: self._shown]
        pieces = clause_spans(shown) if unit == "clause" else sentence_spans(shown)
        # each clause or sentence as the words it holds (what a selection can be)
        spans = list(dict.fromkeys(w for p in pieces if (w := self._words_in(p)) is not None))
        if step > 0:
            target = next((s for s in spans if s[0] > span[0]), None)
        else:
            target = next((s for s in reversed(spans) if s[0] < span[0]), None)
        if target is None or not self._select_span(target):
            self.app.bell()
            return
        self.offered = None
        self._draw()
        self._scroll_to_selection()

    def action_first_word(self) -> None:
        if self.selection is not None:
            self.selection = (0, 0)
            self.offered = None
            self._draw()
            self._scroll_to_selection()

    def stop_selection(self) -> None:
        self.selection = None
        self.candidates, self.offered = [], None
        self.can_focus = False
        self._draw()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in (
            "extend",
            "move_start",
            "choose",
            "cancel_selection",
            "offer",
            "jump",
            "first_word",
        ):
            return self.selection is not None
        return True

    def action_extend(self, step: int) -> None:
        """Move the END of the selection by a word (collapsed at one word, `left` moves the word)."""
        if self.selection is None:
            return
        first, last = self.selection
        if step > 0:
            last = min(last + 1, len(self.words) - 1)
        elif last > first:
            last -= 1
        else:
            first = last = max(0, first - 1)
        self.selection = (first, last)
        self._draw()
        self._scroll_to_selection()

    def action_move_start(self, step: int) -> None:
        """Move the START of the selection by a word (collapsed at one word, `right` moves the word)."""
        if self.selection is None:
            return
        first, last = self.selection
        if step < 0:
            first = max(0, first - 1)
        elif first < last:
            first += 1
        else:
            first = last = min(len(self.words) - 1, last + 1)
        self.selection = (first, last)
        self._draw()
        self._scroll_to_selection()

    def _scroll_to_selection(self) -> None:
        span = self.selection_span
        if span is None or self.parent is None:
            return
        line = self._line_at(self._to_text(span[1]))
        if line is not None:
            self.parent.scroll_to_region(Region(0, line, 1, 1), animate=False)  # type: ignore[attr-defined]

    def action_choose(self) -> None:
        span = self.selection_span
        if span is not None:
            self.post_message(
                self.MissedChosen(self, span[0], span[1], self.selected_text, suggested=self.suggested_list)
            )

    def action_cancel_selection(self) -> None:
        self.stop_selection()
        self.post_message(self.SelectionEnded(self))
