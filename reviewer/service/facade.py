"""The only bridge from the UI to the data: one async method per use case, reads beside the one writer.

Every method is `async` and returns plain data; nothing here knows about Textual. Reads go to a reader
thread, writes (labels, pack changes, a replay's trial record) to the one write thread, and a what-if
replay's figures to a worker process (`reviewer.service.replay_process`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from reviewer.review.evidence import assemble_evidence
from reviewer.service import pack_ops
from reviewer.service.replay_process import ReplayProcess
from reviewer.service.threads import DatabaseThreads
from reviewer.service.timeline_rows import TIMELINE_CAP, build_timeline
from reviewer.service.vocabulary import StoredPack
from store import changes, findings, labels, recordings, runs

#: Rows per block the runs list reads at a time.
RUNS_BLOCK = 100
#: Most quarantine rows the app lists at once (the count says how many there are in all).
QUARANTINE_LIMIT = 5_000
#: Queue filter names the service passes to `store.findings` (anything else is dropped).
QUEUE_FILTERS = ("kind", "code", "tool", "pack_version", "state", "run_key")


class ReviewService:
    """Async access to one review database. Create it, `await` its methods, `close()` it.

    Reads run on the reader threads (read-only connections), writes on the one write thread; see
    `reviewer.service.threads`. A replay's figures are computed in one worker process (started on the first
    replay), so its pure-Python loop never competes with a write for the GIL. There is deliberately no generic "run this function" method: each use case
    the UI has is a method here, so what the UI may do to the database is listed in one file.
    """

    def __init__(self, db_path: str | Path) -> None:
        self._threads = DatabaseThreads(db_path)
        self.db_path = self._threads.db_path
        self._replays = ReplayProcess(self.db_path, ready=self._threads.wait_open)

    @property
    def _closed(self) -> bool:
        return self._threads.closed

    def close(self) -> None:
        """Stop the database threads and the replay worker (does not wait for queued calls)."""
        self._replays.close()
        self._threads.close()

    # -- runs ---------------------------------------------------------------------------------------------------

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
            rows = runs.runs_page(db, sort=sort, after=after, offset=offset, limit=limit, **_clean(filters))
            counts = labels.unlabelled_counts(db, [r["run_key"] for r in rows])
            for r in rows:
                r["unlabelled"] = counts.get(r["run_key"])
            return rows

        return await self._threads.read(work)

    async def first_block(
        self, *, sort: str = "newest", limit: int = RUNS_BLOCK, **filters: Any
    ) -> tuple[int, list[dict[str, Any]]]:
        """The total and the first block, in one trip to a reader thread. The total is exact when the tallies
        answer it, else read up to `store.runs.COUNT_CAP` runs: then its `exact` is False ("10,000+")."""

        def work(db: Database) -> tuple[int, list[dict[str, Any]]]:
            clean = _clean(filters)
            total = runs.count_runs_at_most(db, **clean)
            rows = runs.runs_page(db, sort=sort, limit=limit, **clean)
            counts = labels.unlabelled_counts(db, [r["run_key"] for r in rows])
            for r in rows:
                r["unlabelled"] = counts.get(r["run_key"])
            return total, rows

        return await self._threads.read(work)

    async def data_version(self) -> changes.DataVersion:
        """(newest recording id, runs, findings): three index reads, cheap enough to poll every second or
        two; when it differs from the last one seen, something was ingested (`reviewer watch`, another
        process) and the screens read again."""
        return await self._threads.read(changes.data_version)

    async def runs_since(self, recording: int) -> int:
        """How many runs came from recordings stored after recording id `recording`."""
        return await self._threads.read(changes.runs_since, recording)

    async def facets(self) -> dict[str, list[str]]:
        """Values offered by the run filters: agents, tenants, finding kinds, phrase-pack versions."""
        return await self._threads.read(runs.run_facets)

    async def resolve_run(self, ident: str) -> str:
        """A run key from a run key or run id (raises `store.errors.NotFound`)."""
        return await self._threads.read(runs.resolve_run, ident)

    # -- quarantine ---------------------------------------------------------------------------------------------

    async def quarantine_count(self) -> int:
        """How many inputs could not be ingested (what the runs screen shows while any exist)."""
        return await self._threads.read(recordings.count_quarantine)

    async def quarantine(self, limit: int = QUARANTINE_LIMIT) -> dict[str, Any]:
        """`{total, rows}`: the quarantined inputs (`reviewer quarantine --json` rows, by path), the first
        `limit` of them, and how many there are in all, in one trip to a reader thread."""

        def work(db: Database) -> dict[str, Any]:
            return {
                "total": recordings.count_quarantine(db),
                "rows": recordings.list_quarantine(db, limit=limit),
            }

        return await self._threads.read(work)

    # -- one run ------------------------------------------------------------------------------------------------

    async def run_header(self, ident: str) -> dict[str, Any]:
        """The run row (prompt, answer, outcome, counts) and its findings: what the run screen draws first."""
        return await self._threads.read(runs.run_header, ident)

    async def run_timeline(self, run_key: str, findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The run's timeline rows in order: iterations, tool calls, evictions and `findings` (from the header),
        each finding row with its reviewers' current verdicts under "labels"."""

        def work(db: Database) -> tuple[dict[str, Any], dict[str, dict[str, str]]]:
            return runs.run_timeline_parts(db, run_key, max_rows=TIMELINE_CAP), labels.run_verdicts(
                db, run_key
            )

        parts, verdicts = await self._threads.read(work)
        rows = build_timeline(parts, findings)
        for row in rows:
            if row["kind"] == "finding":
                row["labels"] = verdicts.get(row["id"], {})
        return rows

    async def tool_call(self, run_key: str, call_id: str) -> dict[str, Any]:
        """`{"call": <get_run tool_calls element>, "coverage": [...]}` for one call."""
        return await self._threads.read(runs.tool_call, run_key, call_id)

    # -- findings queue -----------------------------------------------------------------------------------------

    async def queue_first(
        self, *, reviewer: str, limit: int = RUNS_BLOCK, sort: str | None = None, **filters: Any
    ) -> dict[str, Any]:
        """`{total, progress, rows, first_unlabelled}` for the queue under `filters` in `sort` order (see
        `store.findings.QUEUE_SORTS`; default by run), in one trip to a reader thread.

        `total` counts the rows shown (label-state filter included; `exact` False when it is a lower bound,
        see `store.findings.queue_count_at_most`); `progress` is `store.findings.queue_progress` over the same
        filters without the label state; `first_unlabelled` is `(finding id, row)` of the first finding
        `reviewer` has not labelled (where the queue opens), or None (also under a label-state filter)."""

        def work(db: Database) -> dict[str, Any]:
            clean = _queue_filters(filters, reviewer)
            total = findings.queue_count_at_most(db, **clean)
            rows = findings.queue_page(db, limit=limit, sort=sort, **clean)
            return {
                "total": total,
                # the same count serves the progress line unless a label state narrows the rows shown
                "progress": findings.queue_progress(db, total=None if "state" in clean else total, **clean),
                "rows": rows,
                # under a label-state filter the rows shown are chosen by it: the queue opens on the first
                # unlabelled one, looked for first among the rows just read (a walk fewer, or two)
                "first_unlabelled": (
                    None if "state" in clean else findings.first_unlabelled(db, sort=sort, head=rows, **clean)
                ),
            }

        return await self._threads.read(work)

    async def queue_block(
        self,
        *,
        reviewer: str,
        after: list[Any] | None = None,
        offset: int = 0,
        limit: int = RUNS_BLOCK,
        sort: str | None = None,
        **filters: Any,
    ) -> list[dict[str, Any]]:
        """One block of the queue: after the row whose `cursor` is `after` (keyset), else from row `offset`."""

        def work(db: Database) -> list[dict[str, Any]]:
            clean = _queue_filters(filters, reviewer)
            if after is not None:
                return findings.queue_page(db, after=after, limit=limit, sort=sort, **clean)
            return findings.queue_page_at(db, offset=offset, limit=limit, sort=sort, **clean)

        return await self._threads.read(work)

    async def queue_progress(self, *, reviewer: str, **filters: Any) -> dict[str, int]:
        return await self._threads.read(
            lambda db: findings.queue_progress(db, **_queue_filters(filters, reviewer))
        )

    async def queue_position(
        self, finding_id: str, *, reviewer: str, sort: str | None = None, **filters: Any
    ) -> int | None:
        """The row of `finding_id` in the filtered queue in `sort` order (None: filtered out)."""
        return await self._threads.read(
            lambda db: findings.queue_position(db, finding_id, sort=sort, **_queue_filters(filters, reviewer))
        )

    async def next_unlabelled(
        self,
        *,
        reviewer: str,
        after: str | None = None,
        sort: str | None = None,
        same_run: bool = False,
        **filters: Any,
    ) -> str | None:
        """The next finding after `after` in `sort` order (wrapping) that `reviewer` has not labelled, under the
        filters (the label-state filter is ignored: "unlabelled" is what is asked for); `same_run`: one of
        `after`'s run first."""

        def work(db: Database) -> str | None:
            clean = _queue_filters(filters, reviewer)
            clean.pop("state", None)
            clean.pop("reviewer", None)
            return findings.next_unlabelled(
                db, after=after, reviewer=reviewer, sort=sort, same_run=same_run, **clean
            )

        return await self._threads.read(work)

    async def queue_facets(self) -> dict[str, list[str]]:
        """Values offered by the queue filters: kinds, codes, tools, phrase-pack versions."""
        return await self._threads.read(findings.queue_facets)

    async def finding_evidence(self, finding_id: str) -> dict[str, Any]:
        """`reviewer.review.evidence.assemble_evidence` plus `current`: each reviewer's current label row."""

        def work(db: Database) -> dict[str, Any]:
            ev = assemble_evidence(**findings.evidence_rows(db, finding_id))
            ev["current"] = labels.current_verdicts(db, finding_id)
            return ev

        return await self._threads.read(work)

    # -- labels (writes: the store takes BEGIN IMMEDIATE and waits out other writers) ------------------------------

    async def label_finding(
        self, finding_id: str, verdict: str, reviewer: str, note: str | None = None
    ) -> dict[str, Any]:
        """Append a verdict; returns `{label, history, current}` read back after the write."""

        def work(db: Database) -> dict[str, Any]:
            row = labels.label_finding(db, finding_id, verdict, reviewer, note)
            return _label_state(db, finding_id, row)

        return await self._threads.write(work)

    async def undo_label(self, reviewer: str, target_id: str) -> dict[str, Any]:
        """Undo the reviewer's latest label on `target_id` by appending; `{label (None: nothing to undo),
        history, current}`."""

        def work(db: Database) -> dict[str, Any]:
            row = labels.undo_last(db, reviewer, target_id=target_id)
            return _label_state(db, target_id, row)

        return await self._threads.write(work)

    async def label_missed(
        self, run_key: str, start: int, end: int, list_name: str, reviewer: str, note: str | None = None
    ) -> dict[str, Any]:
        """Append a missed-negative label on answer[start:end] (Python str indices)."""
        return await self._threads.write(labels.label_missed, run_key, start, end, list_name, reviewer, note)

    async def missed_labels(self, run_key: str) -> list[dict[str, Any]]:
        """Current missed-negative labels on a run's answer."""
        return await self._threads.read(labels.missed_for_run, run_key)

    async def label_stats(self) -> dict[str, Any]:
        """`reviewer stats --json`: counts per kind and label state, Cohen's kappa per reviewer pair."""
        from reviewer.review.stats import label_stats

        states = await self._threads.read(labels.label_states)
        return label_stats(states)

    # -- exports ----------------------------------------------------------------------------------------------

    async def export_labels(self) -> list[dict[str, Any]]:
        """Every label row with its finding and run, oldest first (what `reviewer labels --json` prints)."""
        return await self._threads.read(labels.export_labels)

    # -- phrase packs -----------------------------------------------------------------------------------------

    async def packs_overview(self, name: str | None, holdout_share: float, seed: str) -> dict[str, Any]:
        """`{packs, name, stored, suggestions}`: every pack, the chosen one (else the latest updated), and
        suggestions for it."""
        return await self._threads.read(pack_ops.overview, name, holdout_share, seed)

    async def replay_pack(
        self,
        ref: str,
        *,
        holdout_share: float,
        seed: str,
        examples: int,
        progress: Callable[[int, int], None] | None = None,
        progress_every: int = 5_000,
    ) -> dict[str, Any]:
        """The what-if replay of `ref` (in the worker process: it can take seconds), then its trial record (a
        write). `progress(done, total)` is called on a relay thread; blocking in it holds the replay, raising
        in it stops the replay and the exception reaches the caller."""
        replay = await self._replays.run(
            ref,
            holdout_share=holdout_share,
            seed=seed,
            examples=examples,
            progress=progress,
            progress_every=progress_every,
        )
        return await self._threads.write(pack_ops.record_replay, replay)

    async def decide_suggestion(
        self, name: str, phrase: str, list_name: str, decision: str, who: str | None
    ) -> dict[str, Any]:
        """Accept (a new pack version) or reject a suggested phrase; `{pack (None when rejected), ...}`."""
        return await self._threads.write(pack_ops.decide, name, phrase, list_name, decision, who)

    async def create_pack(self, name: str, who: str | None, note: str | None = None) -> StoredPack:
        """Version 1 of a new, empty pack `name` (PackNameError for a bad name, StoreError if it exists)."""
        return await self._threads.write(pack_ops.create_pack, name, who=who, note=note)

    async def remove_phrase(self, name: str, phrase: str, who: str | None, note: str | None = None) -> None:
        """A new version of pack `name` without `phrase`."""
        await self._threads.write(pack_ops.change_pack, name, remove=[phrase], who=who, note=note)

    async def pack_versions(self) -> list[dict[str, Any]]:
        """The phrasePackVersion strings stored findings carry, with counts and their deployed pack."""
        from store.packs import version_strings

        return await self._threads.read(version_strings)

    async def pack_production(self) -> list[dict[str, Any]]:
        """`reviewer pack production --json`: measured precision beside the replay's, per linked version."""

        return await self._threads.read(pack_ops.production)

    async def phrase_ledger(self, ref: str) -> dict[str, Any]:
        """The per-phrase ledger of pack `ref`, false positives located for the run screen."""

        return await self._threads.read(pack_ops.ledger, ref)

    async def run_choices(self, limit: int = 20_000) -> list[dict[str, Any]]:
        """Run id, key, agent and outcome of the newest `limit` runs: what the palette matches "jump to run"
        against as the reviewer types (read once per palette opening, never per key)."""

        def work(db: Database) -> list[dict[str, Any]]:
            wanted = ("run_key", "run_id", "agent_id", "outcome", "started_at")
            return [{k: r.get(k) for k in wanted} for r in runs.list_runs(db, limit=limit)]

        return await self._threads.read(work)


def _queue_filters(filters: dict[str, Any], reviewer: str) -> dict[str, Any]:
    clean = {k: v for k, v in _clean(filters).items() if k in QUEUE_FILTERS}
    if clean.get("state") in (None, "any"):
        clean.pop("state", None)
    clean["reviewer"] = reviewer
    return clean


def _label_state(db: Database, target_id: str, row: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "label": row,
        "history": labels.history(db, target_id),
        "current": labels.current_verdicts(db, target_id),
    }


def _clean(filters: dict[str, Any]) -> dict[str, Any]:
    """Drop empty filter values so callers can pass a whole filter form."""
    return {k: v for k, v in filters.items() if v not in (None, "", False)}
