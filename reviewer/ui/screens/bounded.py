"""A list sized by a count that may be a lower bound ("10,000+", or a count its time budget cut short): it
grows as the reader reaches its end, the count is never below the rows already read, and it becomes exact once
the end is found. Shared by the runs list and the queue."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reviewer.ui.counts import AtLeast
from reviewer.ui.widgets.run_list import BLOCK, RunList

#: how many blocks past the rows read a list with a lower-bound total offers to scroll into
GROW_BLOCKS = 10


class BoundedTotal:
    """For a screen with `total` (what it shows), a list (`bounded_list`) sized by it, and `_show_status`."""

    total: int | None
    #: the least row count at which an empty block was read (the end is at or before it)
    _end_at_most: int | None = None

    #: redraws the screen's count (the screen's own; annotated only, so it never shadows a base class's)
    _show_status: Callable[[], None]

    def bounded_list(self) -> RunList:
        """The list the total sizes (the screen's)."""
        raise NotImplementedError

    def reset_bounded(self) -> None:
        """A new total: nothing is known of the list's end yet."""
        self._end_at_most = None

    def grow_bounded(self, block: int, rows: list[dict[str, Any]]) -> None:
        """Block `block` came back with `rows`: a total read only so far grows with the rows read, the list
        grows past them, and the total becomes exact once the end is found (a short block, an empty first
        block, or an empty one right after a full one)."""
        total = self.total
        if total is None or getattr(total, "exact", True):
            return
        listed = self.bounded_list()
        end = block * BLOCK + len(rows)
        if not rows:
            self._end_at_most = end if self._end_at_most is None else min(self._end_at_most, end)
        limit = self._end_at_most
        found = (
            0 < len(rows) < BLOCK
            or (rows and limit is not None and end >= limit)
            or (not rows and block == 0)  # nothing at all (a count that read none in its time: `0+`)
            or (not rows and block > 0 and listed.row_at(end - 1) is not None)
        )
        if found:
            self.total = end
            listed.resize_rows(end)
            self._show_status()
            return
        if rows and end > total:  # never less than the rows already read (a count cut short can be)
            self.total = AtLeast(end)
            self._show_status()
        if not rows:
            listed.resize_rows(min(listed.row_count, end))
        elif end >= listed.row_count:
            grown = end + GROW_BLOCKS * BLOCK
            listed.resize_rows(grown if limit is None else min(grown, limit))
