"""A deployed pack measured in production: precision of the labelled findings that carry its
`phrasePackVersion` string, beside what the replay had predicted for the pack it was deployed from.

This closes the loop from labels to a deployed pack and back to labels. Reviewers' verdicts on one
finding resolve as in the replay (`pack_replay.consensus`: tp or fp when every decided verdict agrees,
else unsure, which is not counted). The prediction is the replay's own figure for that pack (the
candidate's precision on the labelled answers it read), taken from the newest recorded trial.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from reviewer.review.pack_replay import consensus


@dataclass(frozen=True, slots=True)
class MeasuredPrecision:
    """Labelled findings of one version string, by resolved verdict."""

    tp: int = 0
    fp: int = 0
    unsure: int = 0

    @property
    def labelled(self) -> int:
        return self.tp + self.fp + self.unsure

    @property
    def precision(self) -> float | None:
        """tp / (tp + fp); None when no finding resolved to tp or fp."""
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "labelled_findings": self.labelled,
            "tp": self.tp,
            "fp": self.fp,
            "unsure": self.unsure,
            "precision": None if self.precision is None else round(self.precision, 4),
        }


def measured_precision(verdicts: Iterable[tuple[str, str]]) -> MeasuredPrecision:
    """Precision over (finding id, verdict) rows, one per reviewer, each finding resolved to one verdict."""
    by_finding: dict[str, list[str]] = {}
    for finding, verdict in verdicts:
        by_finding.setdefault(finding, []).append(verdict)
    resolved = [consensus(v) for v in by_finding.values()]
    return MeasuredPrecision(resolved.count("tp"), resolved.count("fp"), resolved.count("unsure"))


def predicted_precision(trial: dict[str, Any] | None) -> dict[str, Any] | None:
    """The replay's prediction for a pack from its newest trial (None when it was never replayed)."""
    if trial is None:
        return None
    figures = trial.get("figures", {}).get("figures", {})

    def candidate(part: str) -> Any:
        return figures.get(part, {}).get("candidate", {}).get("precision")

    return {
        "trial": trial["id"],
        "created_at": trial["created_at"],
        "labels_fingerprint": trial["labels_fingerprint"],
        "precision": candidate("all"),
        "holdout_precision": candidate("holdout"),
    }


def _pct(x: Any) -> str:
    return "n/a" if x is None else f"{x:.0%}"


def production_line(row: dict[str, Any]) -> str:
    """One version's measured precision beside the prediction, and the same for the version it replaced."""

    def side(
        version: str, pack: str | None, measured: dict[str, Any], predicted: dict[str, Any] | None
    ) -> str:
        pred = "not replayed" if predicted is None else f"replay predicted {_pct(predicted['precision'])}"
        return (
            f"{version} ({pack or 'no stored pack'}): measured {_pct(measured['precision'])} "
            f"({measured['tp']}/{measured['tp'] + measured['fp']} labelled findings), {pred}"
        )

    out = side(row["version"], row["pack"], row["measured"], row["predicted"])
    old = row.get("replaces")
    if old:
        out += "; replaced " + side(old["version"], old["pack"], old["measured"], old["predicted"])
    return out
