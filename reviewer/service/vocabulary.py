"""The store's words and errors the UI needs, re-exported so the UI never imports `store` itself."""

from __future__ import annotations

from store.errors import NotFound, StoreError
from store.ingest import default_db_path
from store.outcome import OUTCOMES
from store.packs import StoredPack

__all__ = ["OUTCOMES", "NotFound", "StoreError", "StoredPack", "default_db_path"]
