"""The store operations the command line runs directly on an open database (synchronous, one process).

The CLI is a script, not an app: it needs no threads, so it calls these on the connection it opened. They are
named here, beside the service, so that every import of `store` from the `reviewer` package lives in
`reviewer/service/` and a regrouped store is re-pointed in one folder.
"""

from __future__ import annotations

from store import labels, packs
from store.db.connection import locate, open_database, shown
from store.db.ingest import IngestReport, ingest
from store.db.postgres import check_supported
from store.db.reextract import reextract
from store.findings import licensing_runs, list_findings
from store.reading.buckets import is_bucket_url
from store.recordings import list_quarantine
from store.runs import get_run, list_runs, resolve_run
from store.watch import WatchTotals, watch_bucket, watch_folder

__all__ = [
    "IngestReport",
    "check_supported",
    "get_run",
    "ingest",
    "is_bucket_url",
    "labels",
    "licensing_runs",
    "list_findings",
    "list_quarantine",
    "list_runs",
    "locate",
    "shown",
    "open_database",
    "packs",
    "reextract",
    "resolve_run",
    "WatchTotals",
    "watch_bucket",
    "watch_folder",
]
