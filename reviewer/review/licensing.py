"""Does the evidence license a negative claim's wording? (negative-claims.md section 4)

Two separate steps. First the class of what the clause *asserts*: absolute ("does not exist", "there
is no", "none exist", "no such") or bounded to a source ("not found in", "the vault has no record of").
The class comes from the negative predicate itself, never from whether the sentence mentions a search:
"I searched the vault and the programme does not exist" is absolute. It is a heuristic over English
wording and says so. Then the evidence: only the reads the finding names (its refs). Other reads of the
turn are context and never count. An absolute negative is licensed only by a declared `complete` basis;
a `checked` list says what was looked at, not that it is the whole universe.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

HEURISTIC_NOTE = "heuristic: classed from the clause's wording, not understood"
VERDICTS = {
    "outruns": "absolute wording, no declared completeness basis: outruns its evidence",
    "licensed-absolute": "absolute wording on a declared completeness basis: licensed by the record",
    "licensed": "bounded to the searched sources: licensed by the record",
    "unjudgeable": "no read named: cannot be judged from the record",
    "unclassed": "wording neither absolute nor bounded by the heuristic: judge it by hand",
}
#: Finding kinds a licensing verdict applies to.
APPLIES_TO = frozenset({"negative-claim"})

_ABSOLUTE = re.compile(
    r"\b(?:"
    r"(?:does|do|did)\s*(?:not|n't)\s+exist|doesn't\s+exist|don't\s+exist|never\s+existed|"
    r"there\s+(?:is|are|was|were)\s+no\b|there's\s+no\b|there\s+(?:isn't|aren't|wasn't|weren't)\s+any|"
    r"none\s+(?:exists?|existed)|no\s+such|nothing\s+(?:exists|like\s+that)|no\s+\w+(?:\s+\w+)?\s+exists?"
    r")",
    re.IGNORECASE,
)
_BOUNDED = re.compile(
    r"\b(?:"
    r"not\s+(?:be\s+)?found\s+in|(?:was|were)\s+found\s+in|(?:found|returned|shows?|lists?|holds?)\s+no\b|"
    r"no\s+record(?:s)?\s+(?:of|in|for)|(?:has|have|had|holds?)\s+no\s+(?:record|entry|entries|trace|rows?)|"
    r"in\s+(?:the|these|this|those|our|its)\s+(?:[\w-]+\s+){0,3}"
    r"(?:sources?|store|vault|database|db|index|log|logs|records?|system|registry|catalog(?:ue)?|results?|search(?:es)?)\b|"
    r"according\s+to|(?:the|my|our)\s+search(?:es)?\s+(?:found|returned|shows?)\s+no"
    r")",
    re.IGNORECASE,
)
_SPLIT = re.compile(r"[;,:.!?]|\s(?:and|but|so|because|while)\s", re.IGNORECASE)


def classify_assertion(clause: str | None) -> str | None:
    """`absolute`, `bounded` or None, from the negative predicate of `clause` (a heuristic).

    The clause is cut into parts; a part with an absolute predicate is bounded only when the scope
    follows that predicate inside the same part, so a search named before it cannot bound it.
    """
    if not clause:
        return None
    classes = set()
    for part in _SPLIT.split(clause.replace("\u2019", "'")):
        absolute = _ABSOLUTE.search(part)
        if absolute is not None:
            classes.add("bounded" if _BOUNDED.search(part, absolute.end()) else "absolute")
        elif _BOUNDED.search(part):
            classes.add("bounded")
    if "absolute" in classes:
        return "absolute"
    return "bounded" if classes else None


@dataclass(frozen=True)
class Read:
    """One dispatched read of the turn, as the licensing question needs it."""

    call_id: str | None
    tool_name: str | None
    handle: str | None = None
    checked: tuple[str, ...] = ()
    gaps: tuple[str, ...] = ()
    complete: str | None = None


@dataclass(frozen=True)
class Licensing:
    """The class of the wording, the evidence the finding names, and a one-line verdict."""

    assertion: str | None
    licensing: str | None
    verdict: str
    evidence: tuple[Read, ...] = ()
    context: tuple[Read, ...] = ()
    gaps: tuple[str, ...] = ()
    note: str = field(default=HEURISTIC_NOTE)

    def as_dict(self) -> dict[str, Any]:
        return {"assertion": self.assertion, "licensing": self.licensing, "verdict": self.verdict}


def _named(read: Read, refs: Sequence[Mapping[str, Any]]) -> bool:
    for ref in refs:
        if read.call_id and ref.get("toolCallId") == read.call_id:
            return True
        if read.handle and ref.get("handle") == read.handle:
            return True
    return False


def judge(
    kind: str, clause: str | None, refs: Sequence[Mapping[str, Any]], reads: Iterable[Read]
) -> Licensing:
    """Judge one finding: `refs` are the finding's refs, `reads` every read of its turn."""
    assertion = classify_assertion(clause)
    if kind not in APPLIES_TO:
        return Licensing(assertion, None, "")
    all_reads = tuple(reads)
    evidence = tuple(r for r in all_reads if _named(r, refs))
    context = tuple(r for r in all_reads if r not in evidence)
    gaps = tuple(dict.fromkeys(g for r in evidence for g in r.gaps))
    if not evidence:
        return Licensing(assertion, "unjudgeable", VERDICTS["unjudgeable"], (), context, ())
    if assertion == "absolute":
        if any(r.complete for r in evidence):
            return Licensing(assertion, "licensed", VERDICTS["licensed-absolute"], evidence, context, gaps)
        return Licensing(assertion, "outruns", VERDICTS["outruns"], evidence, context, gaps)
    if assertion == "bounded":
        return Licensing(assertion, "licensed", VERDICTS["licensed"], evidence, context, gaps)
    return Licensing(None, None, VERDICTS["unclassed"], evidence, context, gaps)


def reads_from_rows(calls: Iterable[Mapping[str, Any]], coverage: Iterable[Mapping[str, Any]]) -> list[Read]:
    """Reads from the store's tool-call and coverage rows (`complete` only where a row carries one)."""
    by_call: dict[str | None, list[Mapping[str, Any]]] = {}
    for row in coverage:
        by_call.setdefault(row.get("call_id"), []).append(row)
    reads = []
    for call in calls:
        rows = by_call.get(call.get("call_id"), [])
        complete = call.get("complete") or next((r.get("complete") for r in rows if r.get("complete")), None)
        reads.append(
            Read(
                call_id=call.get("call_id"),
                tool_name=call.get("tool_name"),
                handle=call.get("handle"),
                checked=tuple(str(r["what"]) for r in rows if r.get("list") == "checked"),
                gaps=tuple(
                    f"{r['what']}: {r['why']}" if r.get("why") else str(r["what"])
                    for r in rows
                    if r.get("list") in ("not_checked", "cannot_cover")
                ),
                complete=str(complete) if complete else None,
            )
        )
    return reads
