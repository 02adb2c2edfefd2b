"""The only bridge from the UI to the data: an async facade running every store call on ONE database thread.

The thread opens the database itself (`store.db.open_database` in the executor's initializer), so the
sqlite connection is only ever used by the thread that made it, and reads and writes are serialised.
Every method is `async` and returns plain dicts; nothing here knows about Textual.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from sqlite_utils import Database

from store import labels, queries, queue, ui_queries
from store.db import open_database

T = TypeVar("T")

#: Rows per block the runs list reads at a time.
RUNS_BLOCK = 100
#: Most timeline rows built for one run (each kind is capped at this in the store too).
TIMELINE_CAP = 5_000
#: Queue filter names the service passes to `store.queue` (anything else is dropped).
QUEUE_FILTERS = ("kind", "code", "tool", "pack_version", "state", "run_key")


class ReviewService:
    """Async access to one review database. Create it, `await` its methods, `close()` it."""

    def __init__(self, db_path: str | Path) -> None:
        self.db_path = Path(db_path)
        self._local = threading.local()
        self._executor = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="reviewer-db", initializer=self._open
        )
        self._closed = False

    # -- plumbing ---------------------------------------------------------------------------------------------

    def _open(self) -> None:
        # A failing initializer would break the pool with an unhelpful error; keep the real one for each call.
        try:
            self._local.db = open_database(self.db_path)
            self._local.error = None
        except Exception as exc:  # noqa: BLE001 - re-raised by every call
            self._local.db = None
            self._local.error = exc

    def _db(self) -> Database:
        db = getattr(self._local, "db", None)
        if db is None:
            error = getattr(self._local, "error", None)
            raise error if error is not None else RuntimeError("the database is closed")
        return db

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`fn(db, *args, **kwargs)` on the database thread: the one way UI code reaches the store."""
        return await self._call(fn, *args, **kwargs)

    async def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        if self._closed:
            raise RuntimeError("the review service is closed")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: fn(self._db(), *args, **kwargs))

    def close(self) -> None:
        """Close the connection on its own thread and stop the thread (does not wait for queued calls)."""
        if self._closed:
            return
        self._closed = True

        def _close() -> None:
            db = getattr(self._local, "db", None)
            if db is not None:
                db.close()
                self._local.db = None

        self._executor.submit(_close)
        self._executor.shutdown(wait=False, cancel_futures=False)

    # -- runs ---------------------------------------------------------------------------------------------------

    async def count_runs(self, **filters: Any) -> int:
        return await self._call(queries.count_runs, **_clean(filters))

    async def runs_block(
        self,
        *,
        sort: str = "newest",
        after: list[Any] | None = None,
        offset: int = 0,
        limit: int = RUNS_BLOCK,
        **filters: Any,
    ) -> list[dict[str, Any]]:
        """One block of runs in `sort` order, each with `cursor` (keyset token) and `unlabelled`."""

        def work(db: Database) -> list[dict[str, Any]]:
            rows = ui_queries.runs_page(
                db, sort=sort, after=after, offset=offset, limit=limit, **_clean(filters)
            )
            counts = ui_queries.unlabelled_counts(db, [r["run_key"] for r in rows])
            for r in rows:
                r["unlabelled"] = counts.get(r["run_key"])
            return rows

        return await self._call(work)

    async def first_block(
        self, *, sort: str = "newest", limit: int = RUNS_BLOCK, **filters: Any
    ) -> tuple[int, list[dict[str, Any]]]:
        """The total and the first block, in one trip to the database thread."""

        def work(db: Database) -> tuple[int, list[dict[str, Any]]]:
            clean = _clean(filters)
            total = queries.count_runs(db, **clean)
            rows = ui_queries.runs_page(db, sort=sort, limit=limit, **clean)
            counts = ui_queries.unlabelled_counts(db, [r["run_key"] for r in rows])
            for r in rows:
                r["unlabelled"] = counts.get(r["run_key"])
            return total, rows

        return await self._call(work)

    async def unlabelled_counts(self, keys: list[str]) -> dict[str, int | None]:
        """Findings still unlabelled per run key (`None`: unknown). Filled in by the labelling issue."""
        return await self._call(ui_queries.unlabelled_counts, list(keys))

    async def facets(self) -> dict[str, list[str]]:
        """Values offered by the run filters: agents, tenants, finding kinds, phrase-pack versions."""
        return await self._call(ui_queries.run_facets)

    async def resolve_run(self, ident: str) -> str:
        """A run key from a run key or run id (raises `store.errors.NotFound`)."""
        return await self._call(queries.resolve_run, ident)

    # -- one run ------------------------------------------------------------------------------------------------

    async def run_header(self, ident: str) -> dict[str, Any]:
        """The run row (prompt, answer, outcome, counts) and its findings: what the run screen draws first."""
        return await self._call(ui_queries.run_header, ident)

    async def run_timeline(self, run_key: str, findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The run's timeline rows in order: iterations, tool calls, evictions and `findings` (from the header),
        each finding row with its reviewers' current verdicts under "labels"."""

        def work(db: Database) -> tuple[dict[str, Any], dict[str, dict[str, str]]]:
            return ui_queries.run_timeline_parts(db, run_key, max_rows=TIMELINE_CAP), queue.run_verdicts(
                db, run_key
            )

        parts, verdicts = await self._call(work)
        rows = build_timeline(parts, findings)
        for row in rows:
            if row["kind"] == "finding":
                row["labels"] = verdicts.get(row["id"], {})
        return rows

    async def tool_call(self, run_key: str, call_id: str) -> dict[str, Any]:
        """`{"call": <get_run tool_calls element>, "coverage": [...]}` for one call."""
        return await self._call(ui_queries.tool_call, run_key, call_id)

    async def get_run(self, ident: str) -> dict[str, Any]:
        """Everything about one run (heavy: every tool result). Prefer `run_header` + `run_timeline`."""
        return await self._call(queries.get_run, ident)

    # -- findings queue -----------------------------------------------------------------------------------------

    async def queue_first(self, *, reviewer: str, limit: int = RUNS_BLOCK, **filters: Any) -> dict[str, Any]:
        """`{total, progress, rows}` for the queue under `filters`, in one trip to the database thread.

        `total` counts the rows shown (label-state filter included); `progress` is `store.queue.queue_progress`
        over the same filters without the label state."""

        def work(db: Database) -> dict[str, Any]:
            clean = _queue_filters(filters, reviewer)
            return {
                "total": queue.queue_count(db, **clean),
                "progress": queue.queue_progress(db, **clean),
                "rows": _with_cursor(queue.queue_page(db, limit=limit, **clean)),
            }

        return await self._call(work)

    async def queue_block(
        self,
        *,
        reviewer: str,
        after: str | None = None,
        offset: int = 0,
        limit: int = RUNS_BLOCK,
        **filters: Any,
    ) -> list[dict[str, Any]]:
        """One block of the queue: after the finding id `after` (keyset), else from row `offset`."""

        def work(db: Database) -> list[dict[str, Any]]:
            clean = _queue_filters(filters, reviewer)
            if after is not None:
                return _with_cursor(queue.queue_page(db, after=after, limit=limit, **clean))
            return _with_cursor(queue.queue_page_at(db, offset=offset, limit=limit, **clean))

        return await self._call(work)

    async def queue_progress(self, *, reviewer: str, **filters: Any) -> dict[str, int]:
        return await self._call(lambda db: queue.queue_progress(db, **_queue_filters(filters, reviewer)))

    async def queue_position(self, finding_id: str, *, reviewer: str, **filters: Any) -> int | None:
        """The row of `finding_id` in the filtered queue (None: filtered out)."""
        return await self._call(
            lambda db: queue.queue_position(db, finding_id, **_queue_filters(filters, reviewer))
        )

    async def next_unlabelled(self, *, reviewer: str, after: str | None = None, **filters: Any) -> str | None:
        """The next finding after `after` (wrapping) that `reviewer` has not labelled, under the filters
        (the label-state filter is ignored: "unlabelled" is what is asked for)."""

        def work(db: Database) -> str | None:
            clean = _queue_filters(filters, reviewer)
            clean.pop("state", None)
            clean.pop("reviewer", None)
            return queue.next_unlabelled(db, after=after, reviewer=reviewer, **clean)

        return await self._call(work)

    async def queue_facets(self) -> dict[str, list[str]]:
        """Values offered by the queue filters: kinds, codes, tools, phrase-pack versions."""
        return await self._call(queue.queue_facets)

    async def finding_evidence(self, finding_id: str) -> dict[str, Any]:
        """`store.queue.finding_evidence` plus `current`: each reviewer's current label row."""

        def work(db: Database) -> dict[str, Any]:
            ev = queue.finding_evidence(db, finding_id)
            ev["current"] = queue.current_verdicts(db, finding_id)
            return ev

        return await self._call(work)

    # -- labels (writes: the store takes BEGIN IMMEDIATE and waits out other writers) ------------------------------

    async def label_finding(
        self, finding_id: str, verdict: str, reviewer: str, note: str | None = None
    ) -> dict[str, Any]:
        """Append a verdict; returns `{label, history, current}` read back after the write."""

        def work(db: Database) -> dict[str, Any]:
            row = labels.label_finding(db, finding_id, verdict, reviewer, note)
            return _label_state(db, finding_id, row)

        return await self._call(work)

    async def undo_label(self, reviewer: str, target_id: str) -> dict[str, Any]:
        """Undo the reviewer's latest label on `target_id` by appending; `{label (None: nothing to undo),
        history, current}`."""

        def work(db: Database) -> dict[str, Any]:
            row = labels.undo_last(db, reviewer, target_id=target_id)
            return _label_state(db, target_id, row)

        return await self._call(work)

    async def label_missed(
        self, run_key: str, start: int, end: int, list_name: str, reviewer: str, note: str | None = None
    ) -> dict[str, Any]:
        """Append a missed-negative label on answer[start:end] (Python str indices)."""
        return await self._call(labels.label_missed, run_key, start, end, list_name, reviewer, note)

    async def missed_labels(self, run_key: str) -> list[dict[str, Any]]:
        """Current missed-negative labels on a run's answer."""
        return await self._call(queue.missed_for_run, run_key)

    async def label_stats(self) -> dict[str, Any]:
        """`reviewer stats --json`: counts per kind and label state, Cohen's kappa per reviewer pair."""
        from reviewer.review.stats import label_stats

        states = await self._call(labels.label_states)
        return label_stats(states)

    async def run_choices(self, limit: int = 20_000) -> list[dict[str, Any]]:
        """Run id, key, agent and outcome of the newest `limit` runs: what the palette matches "jump to run"
        against as the reviewer types (read once per palette opening, never per key)."""

        def work(db: Database) -> list[dict[str, Any]]:
            wanted = ("run_key", "run_id", "agent_id", "outcome", "started_at")
            return [{k: r.get(k) for k in wanted} for r in queries.list_runs(db, limit=limit)]

        return await self._call(work)


def _queue_filters(filters: dict[str, Any], reviewer: str) -> dict[str, Any]:
    clean = {k: v for k, v in _clean(filters).items() if k in QUEUE_FILTERS}
    if clean.get("state") in (None, "any"):
        clean.pop("state", None)
    clean["reviewer"] = reviewer
    return clean


def _with_cursor(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for r in rows:
        r["cursor"] = r["id"]
    return rows


def _label_state(db: Database, target_id: str, row: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "label": row,
        "history": labels.history(db, target_id),
        "current": queue.current_verdicts(db, target_id),
    }


def _clean(filters: dict[str, Any]) -> dict[str, Any]:
    """Drop empty filter values so callers can pass a whole filter form."""
    return {k: v for k, v in filters.items() if v not in (None, "", False)}


def build_timeline(parts: dict[str, Any], findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Merge a run's pieces into one ordered list of rows `{kind, seq, iteration, ...}`.

    Rows with an event position (`seq`) sort by it. A finding without one follows the tool call it names, or
    its iteration's start; anything else goes last, in its original order.
    """
    rows: list[dict[str, Any]] = []
    iter_seq: dict[int, int] = {}
    thoughts: dict[int, str] = {}
    for ev in parts.get("iterations", []):
        if ev["type"].endswith("stream.llm_end") and ev.get("iteration") is not None:
            thoughts.setdefault(int(ev["iteration"]), ev.get("summary") or "")
    for ev in parts.get("iterations", []):
        if ev["type"].endswith("iteration_start"):
            it = ev.get("iteration")
            if it is not None:
                iter_seq.setdefault(int(it), ev["seq"])
            rows.append(
                {
                    "kind": "iteration",
                    "seq": ev["seq"],
                    "iteration": it,
                    "text": thoughts.get(int(it), "") if it is not None else "",
                    "stage": ev.get("stage"),
                }
            )
    call_seq: dict[str, int] = {}
    for c in parts.get("tool_calls", []):
        if c.get("seq") is not None:
            call_seq[c["call_id"]] = c["seq"]
        rows.append({"kind": "tool_call", **c})
    for e in parts.get("evictions", []):
        rows.append({"kind": "eviction", **e})
    for f in findings:
        rows.append(
            {
                "kind": "finding",
                "finding": f,
                "seq": f.get("seq"),
                "iteration": f.get("iteration"),
                "id": f["id"],
            }
        )

    big = float("inf")

    def position(index_row: tuple[int, dict[str, Any]]) -> tuple[float, float, int]:
        index, row = index_row
        seq = row.get("seq")
        if seq is not None:
            return (float(seq), 0.0, index)
        call_id = row.get("call_id") or (row.get("finding") or {}).get("call_id")
        if call_id in call_seq:
            return (float(call_seq[call_id]), 0.5, index)
        it = row.get("iteration")
        if it is not None and int(it) in iter_seq:
            return (float(iter_seq[int(it)]), 0.5, index)
        return (big, 0.0, index)

    ordered = [row for _, row in sorted(enumerate(rows), key=position)]
    return ordered[: TIMELINE_CAP * 4]
