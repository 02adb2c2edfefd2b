"""One decoded recording -> rows for every review table.

Pure: no SQL, no I/O. The reading follows `shared/docs/recording-format.md` (sections cited inline)
and `shared/docs/negative-claims.md`. Every key is treated as optional; an unknown event type is kept
in the timeline and never fatal.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from store.decode import Recording, SharedState
from store.outcome import classify_outcome
from store.spans import span_from_utf16
from store.text import as_text, bounded, dumps
from store.vocab import (
    COVERAGE_GAP,
    DANGLING_REFERENCE,
    EVIDENCE_GATE,
    NEGATIVE_CLAIM,
    WITHHELD_ANSWER,
    call_failed,
    is_withheld,
)

PREFIX = "agentfootprint."
CONSUMER_SCOPE = "consumer-scope"
#: Timeline rows keep a short summary; the full payload stays in the compressed original.
SUMMARY_CHARS = 160
GAP_LISTS = ("not_checked", "cannot_cover")
#: High-volume events the timeline table leaves out: their content is in tool_calls, coverage, semantics
#: and evictions, or is mechanical (tokens, context composition). Every event stays in the original.
NOT_IN_TIMELINE = frozenset(
    {
        "stream.token",
        "stream.tool_start",
        "stream.tool_end",
        "stream.tool_progress",
        "context.injected",
        "context.slot_composed",
        "context.evaluated",
        "tools.semantics_declared",
        "tools.coverage_declared",
        "stream.thinking_delta",
    }
)


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


def short_type(event_type: str) -> str:
    return event_type[len(PREFIX) :] if event_type.startswith(PREFIX) else event_type


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _iso(ms: int | None) -> str | None:
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
    return f"{run_id}@{sha256[:10]}"


# --------------------------------------------------------------------------- grouping (section 4.2/4.3)


def group_runs(events: list[dict[str, Any]]) -> dict[str, list[int]]:
    """Event indexes per run id, in first-seen order.

    `consumer-scope` (pause/resume) and run-less events belong to the run they interrupt: the run of
    the nearest preceding event with a real id (or the next one, at the very start).
    """
    groups: dict[str, list[int]] = {}
    pending: list[int] = []
    current: str | None = None
    for index, event in enumerate(events):
        run_id = _str(_dict(event.get("meta")).get("runId"))
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


def extract(rec: Recording, *, sha256: str, origin: str, container: str, size: int) -> Extracted:
    """Every row of one recording. `sha256` names the content and seeds every stable id."""
    events = rec.events
    cache: dict[str, str] = {}
    shorts = [cache.get(t) or cache.setdefault(t, short_type(t)) for t in (e["type"] for e in events)]
    payloads = [p if isinstance(p := e.get("payload"), dict) else {} for e in events]
    groups = group_runs(events)
    snapshot_run = _last_real_run(groups)
    env_run = rec.envelope_run or {}
    producer = rec.producer or {}
    out = Extracted(
        recording={
            "sha256": sha256,
            "source": origin,
            "container": container,
            "form": rec.form,
            "bytes": size,
            "events": len(events),
            "skipped_events": rec.skipped_events,
            "runs": len(groups),
            "has_snapshot": int(rec.has_snapshot),
            "agentfootprint_version": _str(producer.get("agentfootprintVersion")),
            "footprintjs_version": _str(producer.get("footprintjsVersion")),
            "envelope_run": dumps(rec.envelope_run),
        }
    )
    for run_id, indexes in groups.items():
        shared = rec.shared_state if run_id == snapshot_run else None
        run_env = env_run if (env_run and (env_run.get("runId") == run_id or len(groups) == 1)) else {}
        _RunExtractor(out, rec, run_id, indexes, shared, run_env, sha256, shorts, payloads).extract()
    return out


def _last_real_run(groups: dict[str, list[int]]) -> str | None:
    real = [(idx[-1], rid) for rid, idx in groups.items() if rid != CONSUMER_SCOPE and idx]
    return max(real)[1] if real else None


class _RunExtractor:
    """Extracts one run (one meta.runId) of a recording."""

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

    # -- helpers
    def ev(self, index: int) -> dict[str, Any]:
        return self.rec.events[index]

    def payload(self, index: int) -> dict[str, Any]:
        return self.payloads[index]

    def of_types(self, *prefixes: str) -> list[int]:
        """Indexes (in event order) of this run's events whose short type starts with one of `prefixes`."""
        found = [i for t, idx in self.by_type.items() if t.startswith(prefixes) for i in idx]
        found.sort()
        return found

    def meta(self, index: int) -> dict[str, Any]:
        return _dict(self.ev(index).get("meta"))

    def first(self, etype: str) -> dict[str, Any] | None:
        found = self.by_type.get(etype)
        return self.payload(found[0]) if found else None

    def last(self, etype: str) -> dict[str, Any] | None:
        found = self.by_type.get(etype)
        return self.payload(found[-1]) if found else None

    # -- main
    def extract(self) -> None:
        self.iteration_at = self._iterations()
        self.answer = self._answer()
        calls = self._tool_calls()
        coverage = self._coverage(calls)
        evictions = self._evictions(calls)
        outcome = classify_outcome(self)
        findings = self._findings(calls, coverage, outcome)
        self._timeline(calls)
        self._run_row(calls, coverage, evictions, findings, outcome)

    # -- iterations (section 4.1)
    def _iterations(self) -> _IterationIndex:
        starts = self.by_type.get("agent.iteration_start", [])
        values = [_int(self.payload(i).get("iterIndex")) for i in starts]
        return _IterationIndex(starts, values, self.shorts, self.payloads)

    def _answer(self) -> str | None:
        end = self.last("agent.turn_end")
        if end is not None:
            return as_text(end.get("finalContent"))
        return None

    # -- tool calls (section 5)
    def _tool_calls(self) -> dict[str, dict[str, Any]]:
        calls: dict[str, dict[str, Any]] = {}
        order = 0

        def call_for(call_id: str, index: int) -> dict[str, Any]:
            nonlocal order
            if call_id not in calls:
                order += 1
                calls[call_id] = {
                    "run_key": self.key,
                    "call_id": call_id,
                    "seq": index,
                    "ordinal": order,
                    "tool_name": None,
                    "args": None,
                    "result": None,
                    "error": 0,
                    "status": None,
                    "duration_ms": None,
                    "iteration": self.iteration_at.get(index),
                    "stage": _str(self.meta(index).get("runtimeStageId")),
                    "parallel_count": None,
                    "completed": 0,
                    "refused": None,
                    "args_invalid": None,
                    "repeated": None,
                    "has_semantics": 0,
                    "absent": 0,
                    "_result_value": None,
                }
            return calls[call_id]

        for i in self.of_types("stream.tool_", "tools.", "validation.args_invalid"):
            t = self.shorts[i]
            p = self.payload(i)
            call_id = _str(p.get("toolCallId"))
            if call_id is None:
                continue
            if t == "stream.tool_start":
                c = call_for(call_id, i)
                c["tool_name"] = _str(p.get("toolName")) or c["tool_name"]
                c["args"] = dumps(p.get("args"))
                c["parallel_count"] = _int(p.get("parallelCount"))
                c["seq"] = min(c["seq"], i)
            elif t == "stream.tool_end":
                c = call_for(call_id, i)
                c["completed"] = 1
                c["_result_value"] = p.get("result")
                c["result"] = dumps(p.get("result"))
                c["error"] = 1 if p.get("error") is True else 0
                c["status"] = _str(p.get("status"))
                c["duration_ms"] = _int(p.get("durationMs"))
                if c["stage"] is None:
                    c["stage"] = _str(self.meta(i).get("runtimeStageId"))
            elif t in ("stream.tool_progress",):
                continue
            else:
                c = call_for(call_id, i)
                c["tool_name"] = c["tool_name"] or _str(p.get("toolName"))
                it = _int(p.get("iteration"))
                if it is not None:
                    c["iteration"] = it
                if t == "tools.result_refused":
                    c["refused"] = dumps({k: v for k, v in p.items() if k not in ("toolName", "toolCallId")})
                elif t == "validation.args_invalid":
                    c["args_invalid"] = dumps(p.get("issues"))
                elif t == "tools.repeated_call":
                    c["repeated"] = _int(p.get("occurrences")) or 2
                elif t == "tools.semantics_declared":
                    c["has_semantics"] = 1
                    self._semantics_row(call_id, c, p, i)
                elif t == "tools.absent":
                    c["absent"] = 1
        for c in calls.values():
            value = c["_result_value"]
            if c["status"] == "absent" or (isinstance(value, dict) and value.get("af_absent") is True):
                c["absent"] = 1
        self.out.tool_calls.extend(
            {k: v for k, v in c.items() if not k.startswith("_")} for c in calls.values()
        )
        for c in calls.values():
            text = as_text(c["_result_value"])
            if text:
                self._search("result", c["call_id"], text)
        return calls

    def _semantics_row(self, call_id: str, call: dict[str, Any], p: dict[str, Any], index: int) -> None:
        sem = _dict(p.get("semantics"))
        render = _dict(sem.get("render"))
        self.out.semantics.append(
            {
                "run_key": self.key,
                "call_id": call_id,
                "seq": index,
                "tool_name": _str(p.get("toolName")),
                "render_default": _str(render.get("default")),
                "render": dumps(render) if render else None,
                "grain": dumps(sem.get("grain")),
                "provenance": dumps(sem.get("provenance")),
                "clarify": dumps(sem.get("clarify")) if "clarify" in sem else None,
                "clarify_considered": int("clarify" in sem),
                "facts_count": len(_list(sem.get("facts"))),
                "series_count": len(_list(sem.get("series"))),
                "edges_count": len(_list(sem.get("edges"))),
                "envelope": dumps(sem),
            }
        )

    # -- coverage (sections 6, 7)
    def _coverage(self, calls: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        seen: set[tuple[str, str, str]] = set()

        def add(call_id: str | None, tool: str | None, lst: str, item: Any, origin: str, looked: Any) -> None:
            what: str | None
            why: str | None
            if isinstance(item, str):
                what, why = item, None
            else:
                d = _dict(item)
                what, why = _str(d.get("what")), as_text(d.get("why"))
            if not what:
                return
            k = (call_id or "", lst, what)
            if k in seen:
                return
            seen.add(k)
            rows.append(
                {
                    "run_key": self.key,
                    "call_id": call_id,
                    "tool_name": tool or (calls[call_id]["tool_name"] if call_id in calls else None),
                    "list": lst,
                    "what": what,
                    "why": why,
                    "origin": origin,
                    "looked_for": as_text(looked),
                }
            )

        def add_lists(
            p: dict[str, Any], origin: str, camel: bool, call_id: str | None, tool: str | None
        ) -> None:
            names = (
                ("checked", "checked"),
                ("notChecked" if camel else "not_checked", "not_checked"),
                ("cannotCover" if camel else "cannot_cover", "cannot_cover"),
            )
            looked = p.get("lookedFor") if camel else p.get("looked_for")
            for src, lst in names:
                for item in _list(p.get(src)):
                    add(call_id, tool, lst, item, origin, looked)

        for i in self.of_types("tools.absent", "tools.coverage_declared", "tools.semantics_declared"):
            t = self.shorts[i]
            p = self.payload(i)
            call_id, tool = _str(p.get("toolCallId")), _str(p.get("toolName"))
            if t == "tools.absent":
                add_lists(p, "absent", True, call_id, tool)
            elif t == "tools.coverage_declared":
                add_lists(p, "coverage", True, call_id, tool)
            elif t == "tools.semantics_declared":
                add_lists(_dict(_dict(p.get("semantics")).get("coverage")), "semantics", False, call_id, tool)
        for call_id, c in calls.items():  # older recordings: the model view still carries the lists
            value = c.get("_result_value")
            if isinstance(value, dict):
                if value.get("af_absent") is True:
                    add_lists(value, "result", False, call_id, c["tool_name"])
                elif isinstance(value.get("af_coverage"), dict):
                    add_lists(value["af_coverage"], "result", False, call_id, c["tool_name"])
        if self.shared is not None:
            for row in _list(self.shared.coverageDeclared):
                r = _dict(row)
                add_lists(r, "snapshot", True, _str(r.get("toolCallId")), _str(r.get("toolName")))
        self.out.coverage.extend(rows)
        return rows

    # -- evictions (section 8)
    def _evictions(self, calls: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
        stage_to_calls: dict[str, list[str]] = defaultdict(list)
        for c in calls.values():
            if c["stage"]:
                stage_to_calls[c["stage"]].append(c["call_id"])
        hash_to_call: dict[str, str] = {}
        evicted_by_stage: dict[str, list[int]] = defaultdict(list)
        for i in self.of_types("context.injected", "context.evicted"):
            t = self.shorts[i]
            p = self.payload(i)
            if t == "context.injected" and p.get("source") == "tool-result":
                h, sid = _str(p.get("contentHash")), _str(p.get("sourceId"))
                if h and sid:
                    hash_to_call[h] = sid
            elif t == "context.evicted":
                evicted_by_stage[_str(self.meta(i).get("runtimeStageId")) or f"#{i}"].append(i)
        rows: list[dict[str, Any]] = []
        records = [_dict(r) for r in _list(self.shared.compactions)] if self.shared is not None else []
        records = [
            r
            for r in records
            if (_int(r.get("removedMessageCount")) or 0) > 0 or r.get("droppedObservations")
        ]
        stage_groups = list(evicted_by_stage.items())
        if records:
            for n, r in enumerate(records):
                removed = [s for s in _list(r.get("removedStageIds")) if isinstance(s, str)]
                call_ids = [cid for s in removed for cid in stage_to_calls.get(s, [])]
                group = stage_groups[n] if n < len(stage_groups) else None
                if group:
                    call_ids += [
                        cid
                        for j in group[1]
                        if (cid := hash_to_call.get(_str(self.payload(j).get("contentHash")) or ""))
                        is not None
                    ]
                rows.append(
                    self._eviction_row(
                        n,
                        iteration=_int(r.get("iteration")),
                        strategy=_str(r.get("strategy")),
                        dropped=[x for x in _list(r.get("droppedObservations")) if isinstance(x, str)],
                        removed=removed,
                        call_ids=call_ids,
                        messages=_int(r.get("removedMessageCount")),
                        stage=group[0] if group else None,
                        seq=group[1][0] if group else None,
                        origin="snapshot",
                        record=r,
                    )
                )
        else:
            for n, (stage, idxs) in enumerate(stage_groups):
                call_ids = [
                    cid
                    for j in idxs
                    if (cid := hash_to_call.get(_str(self.payload(j).get("contentHash")) or "")) is not None
                ]
                rows.append(
                    self._eviction_row(
                        n,
                        iteration=self.iteration_at.get(idxs[0]),
                        strategy=None,
                        dropped=sorted(
                            {calls[c]["tool_name"] for c in call_ids if c in calls and calls[c]["tool_name"]}
                        ),
                        removed=[],
                        call_ids=call_ids,
                        messages=len(idxs),
                        stage=stage,
                        seq=idxs[0],
                        origin="events",
                        record=None,
                    )
                )
        self.out.evictions.extend(rows)
        return rows

    def _eviction_row(self, n: int, **kw: Any) -> dict[str, Any]:
        ordered = list(dict.fromkeys(kw["call_ids"]))
        return {
            "id": stable_id("e", self.sha, self.run_id, n),
            "run_key": self.key,
            "ordinal": n + 1,
            "seq": kw["seq"],
            "iteration": kw["iteration"],
            "strategy": kw["strategy"],
            "stage": kw["stage"],
            "dropped_tools": dumps(kw["dropped"]),
            "removed_stage_ids": dumps(kw["removed"]),
            "call_ids": dumps(ordered),
            "removed_messages": kw["messages"],
            "origin": kw["origin"],
            "record": dumps(kw["record"]),
        }

    # -- findings (sections 9, 10, 15 and negative-claims.md)
    def _findings(
        self, calls: dict[str, dict[str, Any]], coverage: list[dict[str, Any]], outcome: dict[str, Any]
    ) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for i in self.of_types("integrity.context_error", "findings."):
            t = self.shorts[i]
            if t == "integrity.context_error":
                rows.append(self._context_error(i))
            elif t.startswith("findings."):
                rows.append(self._negative_claim(i, t))
        gate = self.by_type.get("agent.evidence_checked")
        if gate:
            p = self.payload(gate[-1])
            unsupported = [_dict(u) for u in _list(p.get("unsupported"))]
            if unsupported:
                values = ", ".join(f"{as_text(u.get('value'))} ({u.get('shape')})" for u in unsupported)
                action = _str(p.get("action")) or "?"
                rows.append(
                    self._finding(
                        gate[-1],
                        kind=EVIDENCE_GATE,
                        codes=[action]
                        + ([f"posture:{p['posture']}"] if isinstance(p.get("posture"), str) else []),
                        message=f"Evidence gate {action}: {len(unsupported)} value(s) appear in no tool result: "
                        f"{values}",
                        refs=unsupported,
                        truncated=p.get("evidenceTruncated") is True,
                    )
                )
        for cov in coverage:
            if cov["list"] in GAP_LISTS:
                tool = cov["tool_name"] or "?"
                label = "not checked" if cov["list"] == "not_checked" else "cannot cover"
                rows.append(
                    self._finding(
                        None,
                        kind=COVERAGE_GAP,
                        anchor=(cov["call_id"], cov["list"], cov["what"]),
                        codes=[cov["list"]],
                        message=f"{tool} {label}: {cov['what']}" + (f" — {cov['why']}" if cov["why"] else ""),
                        refs=[{"toolName": cov["tool_name"], "toolCallId": cov["call_id"]}],
                        tool_name=cov["tool_name"],
                        call_id=cov["call_id"],
                    )
                )
        if is_withheld(outcome["outcome"]):
            rows.append(
                self._finding(
                    outcome.get("seq"),
                    kind=WITHHELD_ANSWER,
                    anchor=("outcome",),
                    codes=[outcome["outcome"]] + ([outcome["channel"]] if outcome.get("channel") else []),
                    message=outcome["summary"],
                    refs=outcome.get("refs") or [],
                    field="answer",
                )
            )
        self.out.findings.extend(rows)
        for r in rows:
            if r["message"]:
                self._search("finding", r["id"], r["message"])
        return rows

    def _finding(
        self, seq: int | None, *, kind: str, anchor: tuple[Any, ...] = (), **kw: Any
    ) -> dict[str, Any]:
        row = {
            "id": stable_id("f", self.sha, self.run_id, kind, seq if seq is not None else "", *anchor),
            "run_key": self.key,
            "run_id": self.run_id,
            "seq": seq,
            "kind": kind,
            "field": kw.get("field"),
            "codes": dumps(kw.get("codes") or []),
            "message": kw.get("message"),
            "span_start_u16": None,
            "span_end_u16": None,
            "span_start": None,
            "span_end": None,
            "span_text": None,
            "placeable": None,
            "pack_version": kw.get("pack_version"),
            "iteration": self.iteration_at.get(seq) if seq is not None else None,
            "refs": dumps(kw.get("refs") or []),
            "advisory": int(bool(kw.get("advisory"))),
            "truncated": int(bool(kw.get("truncated"))),
            "tool_name": kw.get("tool_name"),
            "call_id": kw.get("call_id"),
            "payload": dumps(self.payload(seq)) if seq is not None else None,
        }
        return row

    def _context_error(self, i: int) -> dict[str, Any]:
        p = self.payload(i)
        kind = _str(p.get("kind")) or "context-error"
        codes = [c for c in (_str(p.get("seam")), "advisory" if p.get("advisory") is True else None) if c]
        if p.get("synthetic") is True:
            codes.append("synthetic")
        subjects = [_dict(s) for s in _list(p.get("subjects"))]
        field_name = _str(p.get("predicate"))
        for w in _list(p.get("witnesses")):
            prov = _str(_dict(w).get("provenance")) or ""
            if prov.startswith("answer field '") and prov.endswith("'"):
                field_name = prov[len("answer field '") : -1]
        offered = _str(subjects[0].get("id")) if subjects else None
        return self._finding(
            i,
            kind=kind,
            codes=codes,
            message=as_text(p.get("message")),
            refs=subjects,
            advisory=p.get("advisory") is True,
            field=field_name,
            tool_name=offered if kind == DANGLING_REFERENCE else None,
        )

    def _negative_claim(self, i: int, t: str) -> dict[str, Any]:
        p = self.payload(i)
        kind = _str(p.get("kind")) or t.split(".", 1)[1].replace("_", "-")
        if kind == NEGATIVE_CLAIM:
            codes = [c for c in _list(p.get("notes")) if isinstance(c, str)]
        else:
            codes = [c for c in (_str(p.get("code")),) if c] + [
                c for c in _list(p.get("notes")) if isinstance(c, str)
            ]
        refs = p.get("refs") if "refs" in p else p.get("references")
        version = p.get("phrasePackVersion", p.get("version", p.get("phraseVersion")))
        field_name = _str(p.get("field")) or "answer"
        row = self._finding(
            i,
            kind=kind,
            codes=codes,
            message=None,
            refs=_list(refs),
            pack_version=as_text(version),
            truncated=p.get("truncated") is True,
            field=field_name,
        )
        it = _int(p.get("iteration"))
        if it is not None:
            row["iteration"] = it
        start, end = _span_bounds(p.get("span"))
        row["span_start_u16"], row["span_end_u16"] = start, end
        if start is not None or end is not None or "span" in p:
            text = self._field_text(field_name)
            placed = span_from_utf16(text, start, end)
            row["placeable"] = int(placed is not None)
            if placed is not None and text is not None:
                row["span_start"], row["span_end"] = placed
                row["span_text"] = text[placed[0] : placed[1]]
        tool_names = sorted({_str(_dict(r).get("toolName")) or "" for r in _list(refs)} - {""})
        row["tool_name"] = tool_names[0] if len(tool_names) == 1 else (",".join(tool_names) or None)
        codes_text = ", ".join(codes) if codes else "no codes"
        where = (
            f"“{row['span_text']}”"
            if row["span_text"]
            else ("whole answer" if "span" not in p else "unplaceable span")
        )
        row["message"] = f"{kind} ({codes_text}) in {field_name}: {where}"
        return row

    def _field_text(self, field_name: str) -> str | None:
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

    # -- timeline
    def _timeline(self, calls: dict[str, dict[str, Any]]) -> None:
        """One bounded row per narrative event (see NOT_IN_TIMELINE for what is left out, and why)."""
        for i in self.indexes:
            t = self.shorts[i]
            if t in NOT_IN_TIMELINE:
                continue
            e = self.ev(i)
            m = self.meta(i)
            p = self.payload(i)
            self.out.events.append(
                {
                    "run_key": self.key,
                    "seq": i,
                    "type": e["type"],
                    "stage": _str(m.get("runtimeStageId")),
                    "wall_ms": _int(m.get("wallClockMs")),
                    "iteration": self.iteration_at.get(i),
                    "call_id": _str(p.get("toolCallId")),
                    "summary": _summary(t, p),
                }
            )

    def _search(self, kind: str, ref: str, text: str) -> None:
        self.out.search.append({"run_key": self.key, "kind": kind, "ref": ref, "text": text[:65536]})

    # -- the run row
    def _run_row(
        self,
        calls: dict[str, dict[str, Any]],
        coverage: list[dict[str, Any]],
        evictions: list[dict[str, Any]],
        findings: list[dict[str, Any]],
        outcome: dict[str, Any],
    ) -> None:
        metas = [self.meta(i) for i in self.indexes]
        wanted = ("tenant", "principal", "sessionId", "traceId", "correlationId")
        firsts: dict[str, str] = {}
        for m in metas:  # one pass: the first non-empty value of each identity key
            for k in wanted:
                if k not in firsts and (v := _str(m.get(k))):
                    firsts[k] = v
            if len(firsts) == len(wanted):
                break

        def meta_value(key: str) -> str | None:
            return firsts.get(key)

        configured = self.first("agent.run_configured") or {}
        config = self.rec.configuration or {}
        agent_id = _str(configured.get("agentId")) or _str(config.get("agentId"))
        if agent_id is None:
            path = _list(metas[0].get("compositionPath")) if metas else []
            first = path[0] if path and isinstance(path[0], str) else ""
            agent_id = first.split(":", 1)[1] if first.startswith("Agent:") else None
        llm = _dict(configured.get("llm")) or _dict(_dict(config.get("manifest")).get("llm"))
        walls = [w for m in metas if (w := _int(m.get("wallClockMs"))) is not None]
        start = self.first("agent.turn_start") or {}
        end = self.last("agent.turn_end") or {}
        identity = _dict(self.shared.runIdentity) if self.shared is not None else {}
        env = self.env_run
        started_at = _str(env.get("startedAt")) or _iso(min(walls) if walls else None)
        gaps = sum(1 for c in coverage if c["list"] in GAP_LISTS)
        first_type = self.shorts[self.indexes[0]] if self.indexes else None
        prompt = as_text(start.get("userPrompt"))
        row = {
            "key": self.key,
            "recording_sha": self.sha,
            "run_id": self.run_id,
            "agent_id": agent_id,
            "model": _str(llm.get("model")),
            "provider": _str(llm.get("provider")),
            "tenant": _str(env.get("tenant")) or meta_value("tenant") or _str(identity.get("tenant")),
            "principal": _str(env.get("principal"))
            or meta_value("principal")
            or _str(identity.get("principal")),
            "session_id": _str(env.get("sessionId")) or meta_value("sessionId"),
            "conversation_id": _str(identity.get("conversationId")),
            "trace_id": meta_value("traceId"),
            "correlation_id": meta_value("correlationId"),
            "started_at": started_at,
            "started_ms": min(walls) if walls else None,
            "ended_ms": max(walls) if walls else None,
            "complete": int(env["complete"]) if isinstance(env.get("complete"), bool) else None,
            "dropped_events": _int(env.get("droppedEvents")),
            "first_retained_index": _int(env.get("firstRetainedEventIndex")),
            "starts_mid_run": int(first_type != "agent.run_configured"),
            "events": len(self.indexes),
            "prompt": prompt,
            "answer": self.answer,
            "outcome": outcome["outcome"],
            "outcome_channel": outcome.get("channel"),
            "outcome_detail": dumps(outcome),
            "iterations": _int(end.get("iterationCount"))
            or len(self.by_type.get("agent.iteration_start", [])),
            "tokens_in": _int(end.get("totalInputTokens")),
            "tokens_out": _int(end.get("totalOutputTokens")),
            "duration_ms": _int(end.get("durationMs")),
            "tool_calls": len(calls),
            "failed_calls": sum(1 for c in calls.values() if call_failed(c["error"], c["status"])),
            "findings": len(findings),
            "negative_claims": sum(1 for f in findings if f["kind"].startswith("negative-claim")),
            "coverage_gaps": gaps,
            "evictions": len(evictions),
            "pack_versions": dumps(sorted({f["pack_version"] for f in findings if f["pack_version"]})),
        }
        self.out.runs.append(row)
        if prompt:
            self._search("prompt", self.key, prompt)
        if self.answer:
            self._search("answer", self.key, self.answer)


class _IterationIndex:
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
            explicit = _int(self.payloads[index].get("iteration"))
            if explicit is not None:
                return explicit
        at = bisect_right(self.starts, index) - 1
        return self.values[at] if at >= 0 else default


def _span_bounds(span: Any) -> tuple[int | None, int | None]:
    if isinstance(span, dict):
        return _int(span.get("start")), _int(span.get("end"))
    if isinstance(span, list) and len(span) == 2:
        return _int(span[0]), _int(span[1])
    return None, None


def _path_parts(path: str) -> list[str | int]:
    parts: list[str | int] = []
    for chunk in path.replace("]", "").split("."):
        name, *indexes = chunk.split("[")
        if name:
            parts.append(name)
        parts.extend(int(x) for x in indexes if x.isdigit())
    return parts


def _summary(t: str, p: dict[str, Any]) -> str | None:
    """A one-line, bounded description of an event for the timeline."""
    pick = {
        "agent.turn_start": "userPrompt",
        "agent.turn_end": "finalContent",
        "stream.llm_end": "content",
        "stream.tool_start": "toolName",
        "stream.tool_end": "result",
        "agent.route_decided": "chosen",
        "integrity.context_error": "message",
        "pause.request": "reason",
        "middleware.decision": "outcome",
        "agent.evidence_checked": "action",
        "context.evicted": "contentHash",
        "tools.absent": "lookedFor",
    }.get(t)
    value = p.get(pick) if pick else None
    if value is None:
        keys = ", ".join(list(p)[:6])
        return bounded(keys, SUMMARY_CHARS) if keys else None
    text = as_text(value) or ""
    return bounded(" ".join(text.split()), SUMMARY_CHARS)
