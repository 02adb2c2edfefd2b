"""The core walk: a recording's events grouped into runs (section 4.2/4.3), each run indexed by event type
and iteration, and the small value readers every part of extraction shares. Pure: no SQL, no I/O."""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from store.reading.decode import MetaView, Recording, SharedState
from store.reading.decode import short_type as short_type  # re-exported: the walk's callers read it here
from store.reading.text import as_text

CONSUMER_SCOPE = "consumer-scope"
#: coverage lists that name a gap in what a call could see
GAP_LISTS = ("not_checked", "cannot_cover")


@dataclass
class Extracted:
    """Rows for one recording, keyed by table name."""

    recording: dict[str, Any]
    runs: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    semantics: list[dict[str, Any]] = field(default_factory=list)
    coverage: list[dict[str, Any]] = field(default_factory=list)
    evictions: list[dict[str, Any]] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    search: list[dict[str, Any]] = field(default_factory=list)
    #: run key -> the run's content identity (`store.reading.identity`), taken with its rows (none if it
    #: could not be): the same run read from two containers has one identity, so it is stored once
    identities: dict[str, str] = field(default_factory=dict)


def as_dict(value: Any) -> dict[str, Any]:
    """`value` if it is an object, else an empty one (every recorded key is optional)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """`value` if it is a list, else an empty one."""
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str | None:
    """`value` if it is a string, else None."""
    return value if isinstance(value, str) else None


def as_int(value: Any) -> int | None:
    """`value` if it is an integer (not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def iso_from_ms(ms: int | None) -> str | None:
    """An epoch-milliseconds time as ISO 8601 UTC, or None when it is out of range."""
    if ms is None:
        return None
    try:
        return (
            datetime.fromtimestamp(ms / 1000, tz=UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z")
        )
    except (OverflowError, OSError, ValueError):
        return None


def stable_id(prefix: str, *parts: Any) -> str:
    """An id that depends only on the recording's content and the item's place in it."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8", "surrogatepass")).hexdigest()
    return f"{prefix}-{digest[:20]}"


def run_key_for(run_id: str, sha256: str) -> str:
    """The key of a run in one recording: a run id may recur across recordings."""
    return f"{run_id}@{sha256[:10]}"


# --------------------------------------------------------------------------- grouping (section 4.2/4.3)


def run_groups(rec: Recording) -> dict[str, list[int]]:
    """`group_runs` of the recording, worked out on first use and kept on it."""
    if rec.groups is None:
        rec.groups = group_runs(rec.metas)
    return rec.groups


def group_runs(metas: Sequence[MetaView]) -> dict[str, list[int]]:
    """Event indexes per run id, in first-seen order (`group_run_ids` of each event's `meta.runId`)."""
    return group_run_ids([meta.runId for meta in metas])


def group_run_ids(run_ids: Sequence[Any]) -> dict[str, list[int]]:
    """Event indexes per run id (each event's recorded `meta.runId`, in event order), in first-seen order.

    `consumer-scope` (pause/resume) and run-less events belong to the run they interrupt: the run of
    the nearest preceding event with a real id (or the next one, at the very start).
    """
    groups: dict[str, list[int]] = {}
    pending: list[int] = []
    current: str | None = None
    for index, run_id in enumerate(run_ids):
        if not isinstance(run_id, str):
            run_id = None
        if run_id is None or run_id == CONSUMER_SCOPE:
            if current is None:
                pending.append(index)
            else:
                groups[current].append(index)
            continue
        groups.setdefault(run_id, [])
        if pending:
            groups[run_id].extend(pending)
            pending = []
        groups[run_id].append(index)
        current = run_id
    if pending:
        groups.setdefault(CONSUMER_SCOPE, []).extend(pending)
    for indexes in groups.values():
        indexes.sort()
    return groups


# --------------------------------------------------------------------------- the extractor


def last_real_run(groups: dict[str, list[int]]) -> str | None:
    """The run the snapshot belongs to: the one with the latest event (a recorder keeps only the last run)."""
    real = [(idx[-1], rid) for rid, idx in groups.items() if rid != CONSUMER_SCOPE and idx]
    return max(real)[1] if real else None


class RunWalk:
    """One run (one meta.runId) of a recording: its events by type, iteration and answer, for the parts."""

    def __init__(
        self,
        out: Extracted,
        rec: Recording,
        run_id: str,
        indexes: list[int],
        shared: SharedState | None,
        env_run: dict[str, Any],
        sha256: str,
        shorts: list[str],
        payloads: list[dict[str, Any]],
    ) -> None:
        self.out = out
        self.shorts = shorts
        self.payloads = payloads
        self.rec = rec
        self.run_id = run_id
        self.indexes = indexes
        self.shared = shared
        self.env_run = env_run
        self.sha = sha256
        self.key = run_key_for(run_id, sha256)
        self.by_type: dict[str, list[int]] = defaultdict(list)
        for i in indexes:
            self.by_type[shorts[i]].append(i)
        self.iteration_at = self._iterations()
        self.answer = self._answer()

    # -- helpers
    def payload(self, index: int) -> dict[str, Any]:
        return self.payloads[index]

    def of_types(self, *prefixes: str) -> list[int]:
        """Indexes (in event order) of this run's events whose short type starts with one of `prefixes`."""
        found = [i for t, idx in self.by_type.items() if t.startswith(prefixes) for i in idx]
        found.sort()
        return found

    def meta(self, index: int) -> MetaView:
        return self.rec.metas[index]

    def first(self, etype: str) -> dict[str, Any] | None:
        found = self.by_type.get(etype)
        return self.payload(found[0]) if found else None

    def last(self, etype: str) -> dict[str, Any] | None:
        found = self.by_type.get(etype)
        return self.payload(found[-1]) if found else None

    # -- iterations (section 4.1) and the answer
    def _iterations(self) -> IterationIndex:
        starts = self.by_type.get("agent.iteration_start", [])
        values = [as_int(self.payload(i).get("iterIndex")) for i in starts]
        return IterationIndex(starts, values, self.shorts, self.payloads)

    def _answer(self) -> str | None:
        end = self.last("agent.turn_end")
        if end is not None:
            return as_text(end.get("finalContent"))
        return None

    # -- shared by the parts
    def field_text(self, field_name: str) -> str | None:
        """The text a finding's span indexes: the answer, or a field of a typed (JSON) answer."""
        if field_name == "answer" or self.answer is None:
            return self.answer
        try:
            value: Any = orjson.loads(self.answer)
        except orjson.JSONDecodeError:
            return None
        for part in _path_parts(field_name):
            if isinstance(part, int) and isinstance(value, list) and 0 <= part < len(value):
                value = value[part]
            elif isinstance(part, str) and isinstance(value, dict) and part in value:
                value = value[part]
            else:
                return None
        return value if isinstance(value, str) else None

    def search(self, kind: str, ref: str, text: str) -> None:
        self.out.search.append({"run_key": self.key, "kind": kind, "ref": ref, "text": text[:65536]})


class IterationIndex:
    """Iteration of an event: its payload's own `iteration`, else the preceding iteration_start's."""

    def __init__(
        self, starts: list[int], values: list[int | None], shorts: list[str], payloads: list[dict[str, Any]]
    ) -> None:
        # plain lists, no reference back to the extractor: no cycle for a paused collector to leak
        self.starts = starts
        self.values = values
        self.shorts = shorts
        self.payloads = payloads

    def get(self, index: int | None, default: int | None = None) -> int | None:
        if index is None:
            return default
        if self.shorts[index] != "agent.iteration_start":
            explicit = as_int(self.payloads[index].get("iteration"))
            if explicit is not None:
                return explicit
        at = bisect_right(self.starts, index) - 1
        return self.values[at] if at >= 0 else default


def _path_parts(path: str) -> list[str | int]:
    parts: list[str | int] = []
    for chunk in path.replace("]", "").split("."):
        name, *indexes = chunk.split("[")
        if name:
            parts.append(name)
        parts.extend(int(x) for x in indexes if x.isdigit())
    return parts
