"""The store's words and errors the UI and the CLI need, re-exported so neither imports `store` itself."""

from __future__ import annotations

from store.errors import NotFound, StoreError
from store.labels import FINDING_VERDICTS, MISSED_LISTS, WITHHELD_VERDICTS
from store.outcome import OUTCOMES
from store.packs import StoredPack

__all__ = [
    "FINDING_VERDICTS",
    "MISSED_LISTS",
    "OUTCOMES",
    "WITHHELD_VERDICTS",
    "NotFound",
    "StoreError",
    "StoredPack",
]
