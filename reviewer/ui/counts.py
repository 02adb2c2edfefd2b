"""How a screen writes a count it was given: `1,234`, or `10,000+` when the store only read that far."""

from __future__ import annotations


def count_text(n: int) -> str:
    """`n` with thousands separators, and `+` when it is a lower bound (the service's count has `exact` False)."""
    return f"{n:,}" + ("" if getattr(n, "exact", True) else "+")


class AtLeast(int):
    """A lower bound a screen learned itself: the rows it has read past a count the store gave (a count cut
    short by its time budget can be below the rows a list has already shown)."""

    exact = False
