"""The ordinary clauses the observer filters: "None.", "No action is needed." and "Tests: 0 failed."
match exactly after normalisation and produce nothing (no claim, no no-read note). Added words or a
separate negative clause remain eligible.

Normalisation (our reading; the documentation says "exact normalized" without defining it): Unicode
NFKC, case folded, runs of whitespace collapsed to one space, surrounding whitespace dropped. The final
punctuation is part of the clause: "None" without its full stop is not filtered.
"""

from __future__ import annotations

import unicodedata

FILTERED_CLAUSES: tuple[str, ...] = ("None.", "No action is needed.", "Tests: 0 failed.")


def normalize_clause(clause: str) -> str:
    """The comparison form of a clause (see the module docstring)."""
    return " ".join(unicodedata.normalize("NFKC", clause).casefold().split())


_FILTERED = frozenset(normalize_clause(c) for c in FILTERED_CLAUSES)


def is_filtered_clause(clause: str) -> bool:
    """Whether `clause` is one of the three ordinary clauses the observer ignores."""
    return normalize_clause(clause) in _FILTERED
