"""A typed answer's span lands on the exact characters of its field, after astral characters too."""

from __future__ import annotations

import json
from typing import Any

from reviewer.review.typed_fields import field_lines, line_highlight, place_span, string_fields
from tests.conftest import SAMPLES


def _typed_sample() -> tuple[str, dict[str, Any]]:
    """The `incident-desk-typed` run's answer and its one negative-claim finding, read with plain json."""
    doc = json.loads((SAMPLES / "typed-negatives-withheld.json").read_text())
    events = doc["events"]
    answer = next(e for e in events if e["type"] == "agentfootprint.agent.turn_end")["payload"][
        "finalContent"
    ]
    finding = next(e for e in events if e["type"] == "agentfootprint.findings.negative_claim")["payload"]
    return answer, finding


def test_the_incident_desk_span_selects_its_clause() -> None:
    answer, finding = _typed_sample()
    assert finding["field"] == "summary"
    span = finding["span"]
    placed = place_span(answer, finding["field"], span["start"], span["end"])
    assert placed is not None
    assert placed.text == "no open incidents for payments"
    # The bug this replaces: the same offsets on the JSON text, or on the value without UTF-16.
    assert answer[span["start"] : span["end"]] != placed.text
    assert placed.value[span["start"] : span["end"]] != placed.text


def test_the_answer_panel_lines_highlight_the_same_characters() -> None:
    answer, finding = _typed_sample()
    placed = place_span(answer, "summary", finding["span"]["start"], finding["span"]["end"])
    assert placed is not None
    lines = field_lines(answer)
    assert lines is not None and lines[0].startswith("summary: \U0001f9ef Payments")
    where = line_highlight(answer, placed)
    assert where is not None
    entry, start, end = where
    assert lines[entry][start:end] == "no open incidents for payments"


def test_fields_flatten_in_document_order() -> None:
    answer = json.dumps(
        {"summary": "s", "negatives": [{"about": "a", "restsOn": ["r1"]}], "n": 3, "ok": True}
    )
    assert string_fields(json.loads(answer)) == [
        ("summary", "s"),
        ("negatives[0].about", "a"),
        ("negatives[0].restsOn[0]", "r1"),
    ]


def test_nested_paths_and_astral_characters() -> None:
    about = "\U0001f680\U0001d518 nothing open for checkout"
    answer = json.dumps({"negatives": [{"about": "x"}, {"about": about}]}, ensure_ascii=False)
    start = len("\U0001f680\U0001d518 ".encode("utf-16-le")) // 2  # 5 units: two astral characters + space
    placed = place_span(answer, "negatives[1].about", start, start + len("nothing open"))
    assert placed is not None and placed.text == "nothing open"


def test_spans_that_do_not_fit_are_not_placed() -> None:
    answer = json.dumps({"summary": "\U0001f680 abc"})
    assert place_span(answer, "summary", 1, 3) is None  # splits the surrogate pair
    assert place_span(answer, "summary", 0, 99) is None  # past the end, never clamped
    assert place_span(answer, "missing", 0, 1) is None
    assert place_span(answer, "answer", 0, 1) is None  # prose spans are the answer's business
    assert place_span("plain prose", "summary", 0, 1) is None
    assert field_lines("plain prose") is None
