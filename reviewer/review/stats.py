"""Label statistics: counts per finding kind and label state, and inter-reviewer agreement."""

from __future__ import annotations

from collections import Counter, defaultdict
from itertools import combinations
from typing import Any

from reviewer.review.agreement import cohens_kappa
from store.vocab import DISAGREEMENT, UNLABELLED, disagreement


def label_state(verdicts: dict[str, str]) -> str:
    """unlabelled | the agreed verdict | disagreement."""
    if not verdicts:
        return UNLABELLED
    if disagreement(verdicts.values()):
        return DISAGREEMENT
    return next(iter(verdicts.values()))


def label_stats(states: list[tuple[str, str, dict[str, str]]]) -> dict[str, Any]:
    """The `reviewer stats --json` document."""
    per_kind: dict[str, Counter[str]] = defaultdict(Counter)
    by_reviewer: dict[str, dict[str, str]] = defaultdict(dict)
    disagreements = []
    for target, kind, verdicts in states:
        state = label_state(verdicts)
        per_kind[kind][state] += 1
        per_kind[kind]["total"] += 1
        for reviewer, verdict in verdicts.items():
            by_reviewer[reviewer][target] = verdict
        if state == "disagreement":
            disagreements.append(
                {"target_id": target, "kind": kind, "verdicts": dict(sorted(verdicts.items()))}
            )
    pairs = []
    for a, b in combinations(sorted(by_reviewer), 2):
        agreement = cohens_kappa(by_reviewer[a], by_reviewer[b])
        if agreement.shared:
            pairs.append(
                {
                    "reviewers": [a, b],
                    "shared": agreement.shared,
                    "agreed": agreement.agreed,
                    "observed_agreement": agreement.raw,
                    "kappa": agreement.kappa,
                }
            )
    totals: Counter[str] = Counter()
    for counts in per_kind.values():
        totals.update(counts)
    return {
        "kinds": {k: dict(sorted(v.items())) for k, v in sorted(per_kind.items())},
        "totals": dict(sorted(totals.items())),
        "reviewers": {r: len(t) for r, t in sorted(by_reviewer.items())},
        "agreement": pairs,
        "disagreements": disagreements,
    }
