"""One stored finding judged by `licensing.judge`: the clause it flags, the reads of its turn, its refs.

Shared by the evidence panel and `findings --json`, so both give the same `assertion` and `licensing`.
The clause is the text under the span; when the heuristic cannot class that alone (a span on just
"not found", say) the sentence around it is classed instead. The reads of the turn are every tool
call of the run (a run is one turn of the agent).
"""

from __future__ import annotations

from typing import Any

from reviewer.review.licensing import APPLIES_TO, Licensing, classify_assertion, judge, reads_from_rows
from reviewer.review.sentences import sentence_around
from reviewer.review.typed_fields import place_span


def flagged_text(finding: dict[str, Any], answer: str | None) -> tuple[str | None, dict[str, Any] | None]:
    """(text the span selects, the sentence around it) in the text the span indexes, or (None, None).

    A prose finding indexes the answer (Python indices in `span`); a typed one names a JSON path in
    `field` and its UTF-16 span indexes that field's string value, never the answer's JSON text.
    """
    field = finding.get("field")
    if field not in (None, "answer"):
        u16 = finding.get("span_utf16") or {}
        placed = place_span(answer, field, u16.get("start"), u16.get("end"))
        if placed is None:
            return finding.get("span_text"), None
        sentence = sentence_around(placed.value, placed.start, placed.end)
        sentence["field"] = placed.path
        return placed.text, sentence
    span = finding.get("span")
    if not span or not isinstance(answer, str):
        return finding.get("span_text"), None
    start, end = int(span["start"]), int(span["end"])
    if not 0 <= start <= end <= len(answer):
        return finding.get("span_text"), None
    return answer[start:end], sentence_around(answer, start, end)


def license_finding(
    finding: dict[str, Any], run: dict[str, Any], sentence: dict[str, Any] | None = None
) -> Licensing:
    """The licensing of one finding from its run's `tool_calls` and `coverage` rows (and `answer`)."""
    clause = finding.get("span_text")
    if sentence is None:
        clause, sentence = flagged_text(finding, run.get("answer"))
        clause = clause or finding.get("span_text")
    if classify_assertion(clause) is None and sentence is not None:
        clause = str(sentence.get("text") or "") or clause
    refs = [r for r in finding.get("refs") or [] if isinstance(r, dict)]
    reads = reads_from_rows(run.get("tool_calls") or [], run.get("coverage") or [])
    return judge(str(finding.get("kind") or ""), clause, refs, reads)


def licensing_fields(finding: dict[str, Any], run: dict[str, Any]) -> dict[str, str | None]:
    """`assertion` and `licensing` as `findings --json` carries them (both null for other kinds)."""
    if finding.get("kind") not in APPLIES_TO:
        return {"assertion": None, "licensing": None}
    judged = license_finding(finding, run)
    return {"assertion": judged.assertion, "licensing": judged.licensing}
