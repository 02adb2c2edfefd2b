"""The store's words and errors the UI and the CLI need, re-exported so neither imports `store` itself."""

from __future__ import annotations

from store.changes import DataVersion
from store.errors import NotFound, StoreError, UnsupportedByBackend
from store.findings import QUEUE_SORT_TITLES
from store.packs import StoredPack
from store.vocab import (
    CLEARED,
    DISAGREEMENT,
    FINDING_VERDICTS,
    HALTED,
    INCOMPLETE,
    JUDGEMENTS,
    MISSED_LISTS,
    OUTCOMES,
    PAUSED,
    UNLABELLED,
    VERDICT_NAMES,
    VERDICTS,
    WITHHELD_ANSWER,
    WITHHELD_VERDICTS,
    call_failed,
    call_status,
    current_labels,
    disagreement,
    is_withheld,
    received_nothing,
    verdicts_for,
)

__all__ = [
    "QUEUE_SORT_TITLES",
    "CLEARED",
    "DISAGREEMENT",
    "DataVersion",
    "FINDING_VERDICTS",
    "HALTED",
    "INCOMPLETE",
    "JUDGEMENTS",
    "MISSED_LISTS",
    "NotFound",
    "OUTCOMES",
    "PAUSED",
    "StoreError",
    "StoredPack",
    "UnsupportedByBackend",
    "UNLABELLED",
    "VERDICTS",
    "VERDICT_NAMES",
    "WITHHELD_ANSWER",
    "WITHHELD_VERDICTS",
    "call_failed",
    "call_status",
    "current_labels",
    "disagreement",
    "is_withheld",
    "received_nothing",
    "verdicts_for",
]
