"""The drawing helpers on their own: spans mapped through inert(), bounded fields, run rows."""

from __future__ import annotations

import json

from rich.text import Text

from reviewer.review.inert import inert
from reviewer.ui.widgets.answer import CURRENT_SPAN, highlighted_answer, highlighted_fields
from reviewer.ui.widgets.run_list import WITHHELD_MARK, row_text
from reviewer.ui.widgets.safe import cell, inert_mapped, pretty_json, safe_text
from store.spans import utf16_span


def _finding(fid: str, text: str, clause: str, kind: str = "negative-claim") -> dict:
    start = text.index(clause)
    return {"id": fid, "kind": kind, "field": "answer", "span": {"start": start, "end": start + len(clause)}}


def test_inert_map_follows_lengthened_characters() -> None:
    raw = "a\u200bb\x1bc\u202ed🚀e"
    safe, mapping = inert_mapped(raw)
    assert safe == inert(raw) and mapping is not None and len(mapping) == len(raw) + 1
    for i, ch in enumerate(raw):
        assert safe[mapping[i] : mapping[i + 1]] == inert(ch)
    assert inert_mapped("plain 🚀 text") == ("plain 🚀 text", None)


def test_spans_land_on_their_clause_after_control_characters() -> None:
    answer = "\u200b\u200b\x07🚀 all good: no errors were found. \u202e and nothing else."
    findings = [_finding("f1", answer, "no errors were found"), _finding("f2", answer, "nothing else")]
    text, placed = highlighted_answer(answer, findings, current="f2")
    assert text.plain[slice(*placed["f1"])] == "no errors were found"
    assert text.plain[slice(*placed["f2"])] == "nothing else"
    assert any(s.style == CURRENT_SPAN and (s.start, s.end) == placed["f2"] for s in text.spans)


def test_long_answers_are_cut_with_a_marker_and_outside_spans_dropped() -> None:
    answer = "x" * 20_000 + " nothing found"
    text, placed = highlighted_answer(answer, [_finding("f", answer, "nothing found")], limit=1_000)
    assert len(text.plain) < 1_100 and "10,014 more characters" not in text.plain
    assert "19,014 more characters" in text.plain and placed == {}


def test_span_that_does_not_fit_is_not_drawn() -> None:
    bad = {"id": "f", "kind": "negative-claim", "field": "answer", "span": {"start": 5, "end": 500}}
    text, placed = highlighted_answer("short answer", [bad])
    assert placed == {} and text.spans == []


def test_recorded_text_is_never_markup() -> None:
    for value in ("[bold]x[/bold]", "[link=file:///etc/passwd]y[/link]", "\x1b[2J"):
        for rendered in (safe_text(value), cell(value, 30), pretty_json({"k": value})):
            assert isinstance(rendered, Text)
            assert all(str(s.style) == "dim italic" for s in rendered.spans)  # only our own "… more" marker
            assert "\x1b" not in rendered.plain
    assert safe_text("[b]x[/b]").plain == "[b]x[/b]"
    assert "more characters" in safe_text("y" * 50, limit=10).plain


def test_run_row_marks_withheld_and_fits_its_width() -> None:
    row = {
        "outcome": "refused",
        "delivered": False,
        "delivered_as": None,
        "started_at": "2026-11-30T01:27:03.213Z",
        "agent_id": "agent\x1b[31m" + "a" * 40,
        "tool_calls": 1,
        "findings": 2,
        "coverage_gaps": 0,
        "evictions": 0,
        "unlabelled": None,
        "tenant": None,
        "run_id": "run-1",
    }
    text = row_text(row, 160)
    assert text.plain.startswith(WITHHELD_MARK) and f"{WITHHELD_MARK} refused" in text.plain
    assert "\x1b" not in text.plain and "—" in text.plain
    assert text.cell_len <= 160


def test_typed_fields_highlight_inside_their_value_after_hostile_characters() -> None:
    about = "\x1b[31m\u200b🚀 [bold]red[/bold]: nothing open for checkout"
    answer = json.dumps({"summary": "ok", "negatives": [{"about": about}]}, ensure_ascii=False)
    clause = "nothing open for checkout"
    finding = {
        "id": "f",
        "kind": "negative-claim",
        "field": "negatives[0].about",
        "span_utf16": utf16_span(about, clause),
    }
    prose = {"id": "p", "kind": "negative-claim", "field": "answer", "span": {"start": 0, "end": 2}}
    drawn = highlighted_fields(answer, [finding, prose], current="f")
    assert drawn is not None
    text, placed = drawn
    assert text.plain.splitlines()[0] == "summary: ok"
    assert "[bold]red[/bold]" in text.plain and "\x1b" not in text.plain  # markup literal, escape inert
    assert text.plain[slice(*placed["f"])] == clause and "p" not in placed
    assert any(s.style == CURRENT_SPAN and (s.start, s.end) == placed["f"] for s in text.spans)
    assert highlighted_fields("plain prose", [finding]) is None
