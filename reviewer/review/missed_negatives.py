"""Where a reviewer marking a missed negative starts: the clauses of an answer that look negative and that no
finding flagged, best first; the answer's sentences and clauses to jump between; and whether a span is
already flagged (a flagged clause is labelled on its finding, not marked as missed).

"Looks negative" is a heuristic over the same literal matching the phrase packs use (`reviewer.review.matching`:
case and whitespace tolerant, whole words, one clause, code skipped): cue phrases of absence ("no", "none",
"nothing", "not found", "came up empty", ...) and of completeness ("all of", "the only", "every", ...), plus
the phrases of any pack the caller passes. Each clause is scored by its cues (a longer cue counts more) and
labelled with the list its strongest cue belongs to.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from reviewer.review.matching import CompiledPack, TextLayout
from reviewer.review.phrase_pack import ListName, PhrasePack

#: Words and phrases that make a clause look like an absence claim ("none" list).
NONE_CUES: tuple[str, ...] = (
    "no",
    "none",
    "nothing",
    "nobody",
    "no one",
    "never",
    "not",
    "without",
    "zero",
    "empty",
    "absent",
    "not found",
    "found no",
    "there are no",
    "there is no",
    "came up empty",
    "did not find",
    "didn't find",
    "none of",
    "isn't",
    "aren't",
    "doesn't",
    "don't",
    "no longer",
    "no open",
)
#: ... and like a completeness claim ("complete" list).
COMPLETE_CUES: tuple[str, ...] = (
    "all of",
    "all the",
    "every",
    "the only",
    "only",
    "entire",
    "complete",
    "exhaustive",
    "that is all",
    "that's all",
    "the full list",
    "each of",
)


#: Cues that often say something else (a disclosure, "I did not read the log"; an emphasis, "only") count
#: half: a clause with a plain absence ("No pods are pending.") comes first.
WEAK_CUES: frozenset[str] = frozenset(
    {"not", "only", "never", "without", "every", "complete", "empty", "isn't", "aren't", "doesn't", "don't"}
)


def _weight(cue: str) -> float:
    return (0.5 if cue in WEAK_CUES else 1.0) + 0.5 * (len(cue.split()) - 1)


def _cue_packs() -> list[PhrasePack]:
    """The cues as phrase packs (a pack holds at most 32 phrases a list)."""
    size = 32
    packs = [
        PhrasePack.create(f"cues-none-{n}", none=NONE_CUES[n : n + size])
        for n in range(0, len(NONE_CUES), size)
    ]
    packs += [
        PhrasePack.create(f"cues-complete-{n}", complete=COMPLETE_CUES[n : n + size])
        for n in range(0, len(COMPLETE_CUES), size)
    ]
    return packs


_CUES: list[CompiledPack] = [CompiledPack(p) for p in _cue_packs()]


@dataclass(frozen=True, slots=True)
class Candidate:
    """One clause offered as a missed negative: answer[start:end] (Python str indices), its score and the
    list its cues suggest, with the cue phrases found."""

    start: int
    end: int
    score: float
    list_name: ListName
    cues: tuple[str, ...]


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def flagged_spans(findings: Iterable[Mapping[str, Any]]) -> list[tuple[str, tuple[int, int]]]:
    """(finding id, (start, end)) of every finding placed in the answer text (not in a typed field)."""
    out: list[tuple[str, tuple[int, int]]] = []
    for f in findings:
        span = f.get("span")
        if not span or f.get("field") not in (None, "answer"):
            continue
        start, end = span.get("start"), span.get("end")
        if isinstance(start, int) and isinstance(end, int) and start < end:
            out.append((str(f.get("id")), (start, end)))
    return out


def flagged_by(span: tuple[int, int], findings: Iterable[Mapping[str, Any]]) -> str | None:
    """The id of a finding whose span overlaps `span` (the words are flagged already), or None."""
    for fid, where in flagged_spans(findings):
        if _overlaps(span, where):
            return fid
    return None


def labelled_missed(span: tuple[int, int], missed: Iterable[Mapping[str, Any]]) -> bool:
    """Whether a missed-negative label (store row with span_start/span_end) already covers part of `span`."""
    for row in missed:
        start, end = row.get("span_start"), row.get("span_end")
        if isinstance(start, int) and isinstance(end, int) and _overlaps(span, (start, end)):
            return True
    return False


def negative_candidates(
    answer: str,
    findings: Iterable[Mapping[str, Any]] = (),
    *,
    missed: Iterable[Mapping[str, Any]] = (),
    packs: Iterable[PhrasePack] = (),
    limit: int | None = None,
) -> list[Candidate]:
    """The clauses of `answer` that look negative and that no finding flagged nor missed label covers, best
    first (more and longer cues first; then in text order)."""
    flagged = [where for _fid, where in flagged_spans(findings)]
    marked = list(missed)
    layout = TextLayout(answer)
    scores: dict[tuple[int, int], dict[str, ListName]] = {}
    for compiled in [*_CUES, *(CompiledPack(p) for p in packs)]:
        for hit in compiled.hits(answer, layout):
            clause = (hit.clause_start, hit.clause_end)
            scores.setdefault(clause, {})[hit.phrase.lower()] = hit.list_name
    out: list[Candidate] = []
    for clause, cues in scores.items():
        if any(_overlaps(clause, where) for where in flagged) or labelled_missed(clause, marked):
            continue
        # a cue inside a longer cue found in the same clause ("no" in "there are no") counts once
        kept = {c: n for c, n in cues.items() if not any(c != o and c in o for o in cues)}
        weight = {c: _weight(c) for c in kept}
        strongest = max(kept, key=lambda c: (weight[c], c))
        out.append(
            Candidate(
                clause[0], clause[1], sum(weight.values()), kept[strongest], tuple(sorted(kept, key=len))
            )
        )
    out.sort(key=lambda c: (-c.score, c.start))
    return out[:limit] if limit is not None else out


def clause_spans(answer: str) -> list[tuple[int, int]]:
    """Every clause of `answer` in text order (the matching rules' clauses: cut at `.!?;:`, newlines and a
    comma before a contrastive conjunction)."""
    return TextLayout(answer).clauses()


def sentence_spans(answer: str) -> list[tuple[int, int]]:
    """Every sentence of `answer` in text order: clauses joined up to one ending in `.`, `!` or `?` (or a
    line's end), trimmed."""
    out: list[tuple[int, int]] = []
    start: int | None = None
    for cs, ce in clause_spans(answer):
        start = cs if start is None else start
        after = answer[ce:].lstrip(" \t")[:1]  # "" at the end, "\n" at a line's end
        if answer[ce - 1] in ".!?" or after in ("", "\n"):
            out.append((start, ce))
            start = None
    if start is not None:  # the text ends in whitespace other than a newline
        out.append((start, len(answer.rstrip())))
    return out
