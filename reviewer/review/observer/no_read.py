"""The no-read rule: when an eligible negative is detected and no dispatched native read is recorded
for the current turn, the observer files one `no-read` note per answer. A recorded dispatched read
suppresses it even if the read failed or its result was kept out (a presence check, not evidence); a
read from an earlier turn does not. The ledger can be incomplete, so the note does not prove that no
read happened.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DispatchedRead:
    """A native tool read the run recorded as dispatched, with the turn it ran in and how it ended."""

    turn: int
    tool_name: str = ""
    ok: bool = True
    kept_out: bool = False


def read_recorded_in_turn(reads: Iterable[DispatchedRead], turn: int) -> bool:
    """Whether any dispatched read is recorded for `turn` (failed or kept-out reads count)."""
    return any(r.turn == turn for r in reads)


def needs_no_read_note(detected_negatives: int, reads: Iterable[DispatchedRead], turn: int) -> bool:
    """Whether the answer gets its one `no-read` note: something was detected and the turn read nothing."""
    return detected_negatives > 0 and not read_recorded_in_turn(reads, turn)
