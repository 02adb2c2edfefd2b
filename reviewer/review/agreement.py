"""Inter-reviewer agreement: Cohen's kappa, so label quality is measured before labels drive a pack."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True, slots=True)
class Agreement(Generic[K]):
    """Agreement over the items both reviewers labelled; figures are None when there are none."""

    shared: int
    agreed: int
    raw: float | None
    kappa: float | None
    disagreements: tuple[K, ...]


def cohens_kappa(a: Mapping[K, str], b: Mapping[K, str]) -> Agreement[K]:
    """Kappa = (po - pe) / (1 - pe) over shared keys. When chance agreement is total (both reviewers
    used one and the same category everywhere) the formula is 0/0; that is perfect agreement, so 1.0."""
    shared = [k for k in a if k in b]
    n = len(shared)
    if n == 0:
        return Agreement(0, 0, None, None, ())
    disagreements = tuple(k for k in shared if a[k] != b[k])
    agreed = n - len(disagreements)
    po = agreed / n
    count_a = Counter(a[k] for k in shared)
    count_b = Counter(b[k] for k in shared)
    pe = sum(count_a[c] * count_b[c] for c in count_a) / (n * n)
    kappa = 1.0 if pe == 1.0 else (po - pe) / (1.0 - pe)
    return Agreement(n, agreed, po, kappa, disagreements)
