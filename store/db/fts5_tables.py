"""FTS5's character tables (`store.db.fts5_chars`, generated from SQLite by `tools/fts5_chars.py`) read as
code points, and the range arithmetic both their writer and PostgreSQL's tokenizer (schema m015) use."""

from __future__ import annotations

from store.db.fts5_chars import FOLDS, SEPARATORS


def ranges(points: list[int]) -> list[tuple[int, int]]:
    """Code points as (first, last) runs of consecutive ones, in order."""
    out: list[tuple[int, int]] = []
    for c in sorted(points):
        if out and out[-1][1] == c - 1:
            out[-1] = (out[-1][0], c)
        else:
            out.append((c, c))
    return out


def separator_ranges() -> list[tuple[int, int]]:
    """SEPARATORS as (first, last) code points."""
    out = []
    for item in SEPARATORS.split():
        first, _, last = item.partition("-")
        out.append((int(first, 16), int(last or first, 16)))
    return out


def folds() -> dict[int, int | None]:
    """FOLDS as {code point: folded code point, or None when removed}."""
    out: dict[int, int | None] = {}
    for item in FOLDS.split():
        source, _, target = item.partition(">")
        out[int(source, 16)] = int(target, 16) if target else None
    return out
