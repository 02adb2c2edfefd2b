"""The per-phrase ledger: for each phrase of a pack, what it hits and what the labels say about those
hits, so a curator can keep, fix or drop phrases one at a time (what weak-supervision users ask of a
rule: coverage, and how often it is right where someone checked).

Per phrase, counted over clauses (a phrase hitting one clause twice counts once):
- `hits`: clauses the phrase hits, labelled or not;
- `true_positives` / `false_positives`: hit clauses that overlap a finding labelled tp / fp;
- `misses_covered`: missed-negative labels whose span a clause hit by the phrase overlaps;
- `false_positive_clauses`: where those false positives are, in order, to step through them.
Labels and spans are the replay's (`FindingLabel`, `MissedLabel`, Python str indices).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from reviewer.review.matching import compile_pack
from reviewer.review.phrase_pack import ListName, PhrasePack
from reviewer.review.replay import FindingLabel, MissedLabel, spans_overlap

ClauseLocation = tuple[str, int, int]  # (answer key, clause start, clause end)


@dataclass(frozen=True, slots=True)
class PhraseLedgerRow:
    """One phrase's figures (see the module docstring)."""

    phrase: str
    list_name: ListName
    hits: int = 0
    true_positives: int = 0
    false_positives: int = 0
    misses_covered: int = 0
    false_positive_clauses: tuple[ClauseLocation, ...] = field(default=())

    @property
    def precision(self) -> float | None:
        """True share of the labelled hits (None when no hit is labelled tp or fp)."""
        judged = self.true_positives + self.false_positives
        return self.true_positives / judged if judged else None


@dataclass
class _Row:
    hits: int = 0
    tp: int = 0
    fp: int = 0
    covered: set[int] = field(default_factory=set)
    fp_at: list[ClauseLocation] = field(default_factory=list)


def phrase_ledger(
    pack: PhrasePack,
    answers: Iterable[tuple[str, str]],
    findings: Iterable[FindingLabel] = (),
    misses: Iterable[MissedLabel] = (),
) -> list[PhraseLedgerRow]:
    """The ledger of every phrase of `pack` over `answers` ((key, text) pairs), in the pack's order."""
    by_key_f: dict[str, list[FindingLabel]] = {}
    for f in findings:
        by_key_f.setdefault(f.answer_key, []).append(f)
    by_key_m: dict[str, list[tuple[int, MissedLabel]]] = {}
    for i, m in enumerate(misses):
        by_key_m.setdefault(m.answer_key, []).append((i, m))
    compiled = compile_pack(pack)
    rows = {p: _Row() for _, p in pack.phrases()}
    for key, text in answers:
        clauses = {(h.phrase, h.clause_start, h.clause_end) for h in compiled.hits(text)}
        for phrase, cs, ce in sorted(clauses, key=lambda c: (c[1], c[2], c[0])):
            row = rows[phrase]
            row.hits += 1
            labels = by_key_f.get(key, [])
            if any(f.verdict == "tp" and spans_overlap(f.start, f.end, cs, ce) for f in labels):
                row.tp += 1
            if any(f.verdict == "fp" and spans_overlap(f.start, f.end, cs, ce) for f in labels):
                row.fp += 1
                row.fp_at.append((key, cs, ce))
            row.covered |= {i for i, m in by_key_m.get(key, []) if spans_overlap(m.start, m.end, cs, ce)}
    return [
        PhraseLedgerRow(p, n, r.hits, r.tp, r.fp, len(r.covered), tuple(r.fp_at))
        for n, p in pack.phrases()
        for r in (rows[p],)
    ]
