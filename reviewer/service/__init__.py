"""Typed use cases between the UI (or CLI) and the store: `ReviewService`, and the words the UI needs."""

from __future__ import annotations

from reviewer.service.facade import QUEUE_FILTERS, RUNS_BLOCK, ReviewService
from reviewer.service.settings import Settings
from reviewer.service.timeline_rows import TIMELINE_CAP, build_timeline
from reviewer.service.vocabulary import OUTCOMES, NotFound, StoredPack, StoreError

__all__ = [
    "OUTCOMES",
    "QUEUE_FILTERS",
    "RUNS_BLOCK",
    "TIMELINE_CAP",
    "NotFound",
    "ReviewService",
    "Settings",
    "StoreError",
    "StoredPack",
    "build_timeline",
]
