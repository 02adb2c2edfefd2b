"""Precision and recall on the observer's prediction shape, against the reviewers' labels.

- A `negative-claim` is *labelled* when its span overlaps a finding labelled tp or fp, or a
  missed-negative label; *confirmed* when it overlaps a tp finding or a missed-negative label.
  Precision: confirmed / labelled claims.
- Recall: the share of missed-negative labels a claim's span overlaps. A missed negative in an answer
  that got a whole-answer note (no-read, too-many-claims, input-limit) is counted apart: the person was
  warned about the answer, not about that clause.
- Notes are counted by code; they have no clause to be right or wrong about.
Spans and labels are Python str indices into the same field text (the replay's labels are on "answer").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from reviewer.review.observer.predict import Prediction
from reviewer.review.replay import FindingLabel, MissedLabel, spans_overlap


@dataclass(frozen=True, slots=True)
class ObserverScore:
    """The figures of one set of predictions (see the module docstring)."""

    claims: int = 0
    labelled_claims: int = 0
    confirmed_claims: int = 0
    fp_claims: int = 0
    misses: int = 0
    misses_covered: int = 0
    misses_in_noted_answers: int = 0
    notes: dict[str, int] = field(default_factory=dict)

    @property
    def precision(self) -> float | None:
        return self.confirmed_claims / self.labelled_claims if self.labelled_claims else None

    @property
    def recall(self) -> float | None:
        return self.misses_covered / self.misses if self.misses else None


def score_predictions(
    predictions: Iterable[tuple[str, Prediction]],
    findings: Iterable[FindingLabel] = (),
    misses: Iterable[MissedLabel] = (),
) -> ObserverScore:
    """Score (answer key, prediction) pairs against the labels of the same answers."""
    by_key: dict[str, list[Prediction]] = {}
    for key, p in predictions:
        by_key.setdefault(key, []).append(p)
    labels: dict[str, list[FindingLabel]] = {}
    for f in findings:
        labels.setdefault(f.answer_key, []).append(f)
    missed = list(misses)
    claims = labelled = confirmed = fp = 0
    notes: Counter[str] = Counter()
    for key, preds in by_key.items():
        for p in preds:
            if p.kind != "negative-claim" or p.start is None or p.end is None:
                notes[p.code or p.kind] += 1
                continue
            claims += 1
            span = (p.start, p.end)
            tp = any(f.verdict == "tp" and spans_overlap(f.start, f.end, *span) for f in labels.get(key, []))
            bad = any(f.verdict == "fp" and spans_overlap(f.start, f.end, *span) for f in labels.get(key, []))
            miss = any(m.answer_key == key and spans_overlap(m.start, m.end, *span) for m in missed)
            labelled += tp or bad or miss
            confirmed += tp or miss
            fp += bad
    covered = in_noted = 0
    for m in missed:
        preds = by_key.get(m.answer_key, [])
        if any(
            p.kind == "negative-claim" and spans_overlap(m.start, m.end, p.start or 0, p.end or 0)
            for p in preds
        ):
            covered += 1
        elif any(p.kind != "negative-claim" and p.start is None for p in preds):
            in_noted += 1
    return ObserverScore(claims, labelled, confirmed, fp, len(missed), covered, in_noted, dict(notes))
