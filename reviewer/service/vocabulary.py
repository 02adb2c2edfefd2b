"""The store's words and errors the UI needs, re-exported so the UI never imports `store` itself."""

from __future__ import annotations

from store.errors import NotFound, StoreError
from store.outcome import OUTCOMES
from store.packs import StoredPack

__all__ = ["OUTCOMES", "NotFound", "StoreError", "StoredPack"]
