"""Write the deterministic sample recordings in `sample_recordings/`.

Run from the repository root:  python tools/make_samples.py [--templates DIR] [--out DIR]

Every sample is built from a REAL recording in /work/shared/recordings (the template): its `structure`
and the shape of its `snapshot` are copied, the snapshot is trimmed (subflowResults, commitLog and the
recorders' data are emptied; stageWrites/stageReads are dropped from the execution tree) and its
`sharedState` is rewritten for the new run, then the events are written afresh in the canonical order
of agentfootprint 9.62.0 (see /work/shared/docs/recording-format.md §4.4).

The newer-than-9.62.0 parts (`agentfootprint.findings.negative_claim`, `turn_end.answerNegatives`) follow
/work/shared/docs/negative-claims.md. Spans are in UTF-16 code units and are computed here from the
clause they flag (`utf16_span`), so the answers deliberately carry characters outside the BMP before them.

Output is byte-for-byte deterministic: fixed timestamps and ids, a fixed seed for the one binary file,
fixed zip member dates. `sample_recordings/README.md` describes every file.
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import hashlib
import io
import json
import random
import sys
import zipfile
import zlib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.corpus import ABSENT_NOTE, SEMANTICS_NOTE  # noqa: E402
from store.spans import slice_utf16, utf16_len, utf16_span  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TEMPLATES = Path(__file__).resolve().parents[2] / "shared" / "recordings"
PRODUCER = {"agentfootprintVersion": "9.62.0", "footprintjsVersion": "9.24.0"}
PACK = "en-negatives@3"
PACK_EXT = "en-negatives@3+ext:5d41402a"
DASH = " \u2014 "


# --------------------------------------------------------------------------------------------- helpers


def content_hash(text: str) -> str:
    return format(zlib.crc32(text.encode("utf-8")), "x")


def summary(text: str) -> str:
    return text if len(text) <= 80 else text[:80] + "\u2026"


def iso(ms: int) -> str:
    stamp = dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def compact(obj: Any) -> str:
    """JSON.stringify: compact, raw UTF-8 (no \\u escapes for non-ASCII)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def tool_schema(name: str, description: str, props: dict[str, str], required: list[str]) -> dict:
    return {
        "name": name,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": {k: {"type": v} for k, v in props.items()},
            "required": required,
        },
    }


def coverage_lists(cov: dict) -> dict:
    """semantic()/coverage() lists (snake_case) -> the event's camelCase lists (empty lists omitted)."""
    out = {}
    for src, dst in (("checked", "checked"), ("not_checked", "notChecked"), ("cannot_cover", "cannotCover")):
        if cov.get(src):
            out[dst] = cov[src]
    return out


def not_covered(cov: dict) -> list[str]:
    items = list(cov.get("not_checked", [])) + list(cov.get("cannot_cover", []))
    return [it["what"] + (DASH + it["why"] if it.get("why") else "") for it in items]


def semantic(**fields: Any) -> dict:
    """The full envelope as `tools.semantics_declared` records it (af_semantics + derived not_covered)."""
    env: dict[str, Any] = {"af_semantics": True}
    for key in ("series", "facts", "edges", "grain", "provenance", "coverage"):
        if key in fields:
            env[key] = fields[key]
    if "coverage" in fields:
        env["not_covered"] = not_covered(fields["coverage"])
    if "clarify" in fields:
        env["clarify"] = fields["clarify"]
    env["render"] = fields["render"]
    env["note"] = SEMANTICS_NOTE
    return env


def model_view(env: dict) -> dict:
    """What `tool_end.result` holds for a semantic envelope: no af_semantics/render/coverage/clarify:null."""
    out = {k: v for k, v in env.items() if k not in ("af_semantics", "render", "coverage")}
    if out.get("clarify", 0) is None:
        del out["clarify"]
    return out


def absent_result(what: str, checked: list, not_checked: list, cannot_cover: list, try_instead: str) -> dict:
    out: dict[str, Any] = {
        "af_absent": True,
        "outcome": "nothing_found",
        "looked_for": what,
        "checked": checked,
    }
    if not_checked:
        out["not_checked"] = not_checked
    if cannot_cover:
        out["cannot_cover"] = cannot_cover
    out["retry_returns_the_same"] = True
    out["try_instead"] = try_instead
    out["note"] = ABSENT_NOTE
    return out


def ledger_row(kind: str, name: str, call_id: str, iteration: int, cov: dict, looked_for: str | None = None):
    row: dict[str, Any] = {"kind": kind, "toolName": name, "toolCallId": call_id, "iteration": iteration}
    if looked_for is not None:
        row["lookedFor"] = looked_for
    row["checked"] = cov.get("checked", [])
    row["notChecked"] = cov.get("notChecked", cov.get("not_checked", []))
    row["cannotCover"] = cov.get("cannotCover", cov.get("cannot_cover", []))
    return row


def coverage_block(checked: list, not_checked: list, cannot_cover: list) -> str:
    """The block `.limitsTravelWithTheAnswer()` appends to the final answer."""

    def fmt(items: list) -> str:
        return "\n".join("- " + it["what"] + (DASH + it["why"] if it.get("why") else "") for it in items)

    parts = [
        "\n\n---\n\nCoverage of this answer \u2014 declared by the tools that produced it, not by the model:"
    ]
    if checked:
        parts.append("\n\nChecked:\n" + fmt(checked))
    if not_checked:
        parts.append("\n\nNot checked:\n" + fmt(not_checked))
    if cannot_cover:
        parts.append("\n\nCannot cover:\n" + fmt(cannot_cover))
    return "".join(parts)


class Call:
    """One tool call: the result as the model saw it plus the events filed between start and end."""

    def __init__(
        self,
        name: str,
        call_id: str,
        args: dict,
        result: Any,
        *,
        extras: list[tuple[str, dict]] | None = None,
        status: str | None = None,
        error: bool = False,
        duration_ms: int = 2,
    ) -> None:
        self.name, self.call_id, self.args, self.result = name, call_id, args, result
        self.extras = extras or []
        self.status, self.error, self.duration_ms = status, error, duration_ms

    def history_content(self) -> str:
        return self.result if isinstance(self.result, str) else compact(self.result)


# --------------------------------------------------------------------------------------------- runs


class RunBuilder:
    """Emits one run's events in the canonical 9.62.0 order, with real stage ids and meta keys."""

    def __init__(
        self,
        *,
        run_id: str,
        start_ms: int,
        agent_id: str,
        system_prompt: str,
        tools: list[dict],
        identity: dict[str, str] | None = None,
        prior_history: list[dict] | None = None,
        config_extra: dict | None = None,
    ) -> None:
        self.run_id, self.start_ms, self.agent_id = run_id, start_ms, agent_id
        self.system_prompt, self.tools = system_prompt, tools
        self.identity = identity or {}
        self.events: list[dict] = []
        self.offset = 0
        self.history: list[dict] = list(prior_history or [])
        self.in_tokens = self.out_tokens = 0
        self.llm_calls = 0
        self.iteration = 0
        self.last_results: list[dict] = []
        self.coverage_rows: list[dict] = []
        self.config_extra = config_extra or {}
        self.messages_injections: list[dict] = []
        self.tools_injections: list[dict] = []
        self.final_content = ""
        self.user_prompt = ""

    # meta -----------------------------------------------------------------------------------------
    def emit(self, type_: str, payload: dict, stage: str, dt_ms: int = 0) -> dict:
        self.offset += dt_ms
        sub = stage.split("#", 1)[0]
        meta: dict[str, Any] = {
            "wallClockMs": self.start_ms + self.offset,
            "runOffsetMs": self.offset,
            "runtimeStageId": stage,
            "subflowPath": [sub.split("/", 1)[0]] if "/" in sub else [],
            "compositionPath": [f"Agent:{self.agent_id}"],
            "runId": self.run_id,
        }
        for key in ("sessionId", "principal", "tenant"):
            if key in self.identity:
                meta[key] = self.identity[key]
        event = {"type": "agentfootprint." + type_, "payload": payload, "meta": meta}
        self.events.append(event)
        return event

    def manifest(self) -> dict:
        cfg = {
            "agentId": self.agent_id,
            "llm": {"provider": "mock", "model": "mock-small"},
            "reactMode": "dynamic",
            "memories": [],
        }
        cfg.update(self.config_extra)
        return cfg

    # phases -----------------------------------------------------------------------------------------
    def start(self, prompt: str) -> None:
        self.user_prompt = prompt
        self.emit("agent.run_configured", self.manifest(), "run-configured#0", 2)
        self.history.append({"role": "user", "content": prompt})
        self.emit("agent.turn_start", {"turnIndex": 0, "userPrompt": prompt}, "seed#0", 3)

    def _compose(self, base: int) -> None:
        it = self.iteration
        self.emit(
            "context.evaluated",
            {
                "iteration": it,
                "activeCount": 0,
                "skippedCount": 0,
                "evaluatedTotal": 0,
                "activeIds": [],
                "skippedDetails": [],
                "triggerKindCounts": {},
                "skillCatalog": [],
            },
            f"sf-injection-engine/evaluate#{base + 3}",
            4,
        )
        stage = f"sf-system-prompt/compose#{base + 8}"
        sp = self.system_prompt
        self.emit(
            "context.injected",
            {
                "contentSummary": summary(sp),
                "contentHash": content_hash(sp),
                "slot": "system-prompt",
                "source": "base",
                "reason": "Agent.system()",
                "rawContent": sp,
            },
            stage,
            1,
        )
        self.emit(
            "context.slot_composed",
            {
                "slot": "system-prompt",
                "iteration": it,
                "budget": {"cap": 4000, "used": len(sp), "headroomChars": 4000 - len(sp)},
                "sourceBreakdown": {"base": {"chars": len(sp), "count": 1}},
                "droppedCount": 0,
                "droppedSummaries": [],
            },
            stage,
        )
        stage = f"sf-messages/compose#{base + 10}"
        breakdown: dict[str, dict[str, int]] = {}
        used = 0
        self.messages_injections = []
        for pos, msg in enumerate(self.history):
            raw = msg["content"]
            source = {"user": "user", "assistant": "assistant", "tool": "tool-result"}[msg["role"]]
            payload = {
                "contentSummary": summary(raw),
                "contentHash": content_hash(f"{pos}:{msg['role']}:{raw}"),
                "slot": "messages",
                "source": source,
                "reason": f"conversation history [{pos}]",
                "rawContent": raw,
                "asRole": msg["role"],
                "asRecency": "latest" if pos == len(self.history) - 1 else "earlier",
                "position": pos,
            }
            if msg["role"] == "tool":
                payload["sourceId"] = msg["toolCallId"]
            self.emit("context.injected", payload, stage)
            self.messages_injections.append(payload)
            row = breakdown.setdefault(source, {"chars": 0, "count": 0})
            row["chars"] += len(raw)
            row["count"] += 1
            used += len(raw)
        self.emit(
            "context.slot_composed",
            {
                "slot": "messages",
                "iteration": it,
                "budget": {"cap": 10000, "used": used, "headroomChars": 10000 - used},
                "sourceBreakdown": breakdown,
                "orderingStrategy": "history-order",
                "droppedCount": 0,
                "droppedSummaries": [],
            },
            stage,
            1,
        )
        stage = f"sf-tools/compose#{base + 13}"
        used = 0
        self.tools_injections = []
        for pos, tool in enumerate(self.tools):
            raw = f"{tool['name']}: {tool['description']}"
            payload = {
                "contentSummary": summary(raw),
                "contentHash": content_hash(raw),
                "slot": "tools",
                "source": "registry",
                "sourceId": tool["name"],
                "reason": "tool registry",
                "rawContent": raw,
                "position": pos,
            }
            self.emit("context.injected", payload, stage)
            self.tools_injections.append(payload)
            used += len(raw)
        self.emit(
            "context.slot_composed",
            {
                "slot": "tools",
                "iteration": it,
                "budget": {"cap": 2000, "used": used, "headroomChars": 2000 - used},
                "sourceBreakdown": {"registry": {"chars": used, "count": len(self.tools)}}
                if self.tools
                else {},
                "orderingStrategy": "registry+injections",
                "droppedCount": 0,
                "droppedSummaries": [],
            },
            stage,
        )

    def _llm(self, base: int, content: str, n_calls: int) -> None:
        it = self.iteration
        stage = f"call-llm#{base + 18}"
        self.emit("agent.iteration_start", {"turnIndex": 0, "iterIndex": it}, stage, 2)
        prompt_chars = len(self.system_prompt) + sum(len(m["content"]) for m in self.history)
        self.emit(
            "stream.llm_start",
            {
                "iteration": it,
                "provider": "mock",
                "model": "mock-small",
                "systemPromptChars": len(self.system_prompt),
                "messagesCount": len(self.history),
                "toolsCount": len(self.tools),
                "tools": [{"name": t["name"], "description": t["description"]} for t in self.tools],
            },
            stage,
        )
        words = content.split(" ") if content else []
        for i, word in enumerate(words):
            piece = word if i == len(words) - 1 else word + " "
            self.emit("stream.token", {"iteration": it, "tokenIndex": i, "content": piece}, stage, 7)
        usage_in, usage_out = max(1, prompt_chars // 4), max(1, len(words) + 2)
        self.in_tokens += usage_in
        self.out_tokens += usage_out
        self.llm_calls += 1
        self.emit(
            "stream.llm_end",
            {
                "iteration": it,
                "content": content,
                "toolCallCount": n_calls,
                "usage": {"input": usage_in, "output": usage_out},
                "stopReason": "tool_use" if n_calls else "stop",
                "durationMs": 60 + 9 * len(words),
            },
            stage,
            5,
        )

    def tool_iteration(self, thought: str, calls: list[Call]) -> None:
        self.iteration += 1
        base = 22 * (self.iteration - 1)
        self._compose(base)
        self._llm(base, thought, len(calls))
        self.emit(
            "agent.route_decided",
            {
                "turnIndex": 0,
                "iterIndex": self.iteration,
                "chosen": "tool-calls",
                "rationale": f"LLM requested {len(calls)} tool call(s)",
            },
            f"sf-route#{base + 21}",
            1,
        )
        stage = f"tool-calls#{base + 22}"
        self.history.append(
            {
                "role": "assistant",
                "content": thought,
                "toolCalls": [{"id": c.call_id, "name": c.name, "args": c.args} for c in calls],
            }
        )
        self.last_results = []
        for call in calls:
            start: dict[str, Any] = {"toolName": call.name, "toolCallId": call.call_id, "args": call.args}
            if len(calls) > 1:
                start["parallelCount"] = len(calls)
            self.emit("stream.tool_start", start, stage, 1)
            for type_, payload in call.extras:
                self.emit(type_, {"toolName": call.name, "toolCallId": call.call_id, **payload}, stage, 1)
                if type_ == "tools.coverage_declared":
                    self.coverage_rows.append(
                        ledger_row("ledger", call.name, call.call_id, self.iteration, payload)
                    )
                elif type_ == "tools.absent":
                    self.coverage_rows.append(
                        ledger_row(
                            "absence",
                            call.name,
                            call.call_id,
                            self.iteration,
                            payload,
                            payload.get("lookedFor"),
                        )
                    )
            end: dict[str, Any] = {"toolCallId": call.call_id, "result": call.result}
            if call.error:
                end["error"] = True
            end["durationMs"] = call.duration_ms
            if call.status:
                end["status"] = call.status
            self.emit("stream.tool_end", end, stage, call.duration_ms)
            content = call.history_content()
            self.history.append(
                {"role": "tool", "content": content, "toolCallId": call.call_id, "toolName": call.name}
            )
            self.last_results.append({"toolName": call.name, "result": content, "toolCallId": call.call_id})
        self.emit(
            "agent.iteration_end",
            {
                "turnIndex": 0,
                "iterIndex": self.iteration,
                "toolCallCount": len(calls),
                "history": copy.deepcopy(self.history),
            },
            stage,
            1,
        )

    def final(
        self,
        answer: str,
        *,
        route_events: list[tuple[str, dict]] | None = None,
        tail_events: list[tuple[str, dict]] | None = None,
        turn_end_extra: dict | None = None,
        chosen: str = "final",
        rationale: str = "LLM produced no tool calls \u2014 final answer",
        pending_tool_calls: int = 0,
    ) -> None:
        """The answering iteration. `route_events` are filed at sf-route#N after route_decided (where the
        prose observer sees the terminal answer); `tail_events` at the pseudo stage findings#0 between
        turn_end and the disposition. `chosen`/`pending_tool_calls` describe a turn a budget stopped (the
        model still asked for tools; the route wrapped up or cut short)."""
        self.iteration += 1
        base = 22 * (self.iteration - 1)
        self._compose(base)
        self._llm(base, answer, pending_tool_calls)
        self.emit(
            "agent.route_decided",
            {
                "turnIndex": 0,
                "iterIndex": self.iteration,
                "chosen": chosen,
                "rationale": rationale,
            },
            f"sf-route#{base + 21}",
            1,
        )
        for type_, payload in route_events or []:
            self.emit(type_, payload, f"sf-route#{base + 21}")
        stage = f"final/prepare-final#{base + 23}"
        self.emit(
            "agent.iteration_end",
            {"turnIndex": 0, "iterIndex": self.iteration, "toolCallCount": 0},
            stage,
            1,
        )
        self.final_content = answer
        end = {
            "turnIndex": 0,
            "finalContent": answer,
            "totalInputTokens": self.in_tokens,
            "totalOutputTokens": self.out_tokens,
            "iterationCount": self.iteration,
            "durationMs": self.offset - 3,
        }
        end.update(turn_end_extra or {})
        self.emit("agent.turn_end", end, stage, 1)
        for type_, payload in tail_events or []:
            self.emit(type_, payload, "findings#0")
        self.emit("integrity.disposition", self.disposition(), "integrity-disposition#0", 2)

    def disposition(self) -> dict:
        def row(check: str, seam: str, checked: int) -> dict:
            return {
                "check": check,
                "seam": seam,
                "checked": checked,
                "findings": 0,
                "notApplicable": 0 if checked else 1,
                "unreachable": 0,
                "synthetic": 0,
            }

        return {
            "posture": "observe",
            "workExisted": True,
            "rows": [
                row("invariant-violation", "wire", self.llm_calls),
                row("invariant-violation", "compose", 0),
                row("dangling-reference", "compose", 0),
                row("unsupported-claim", "claim", 0),
            ],
        }


# --------------------------------------------------------------------------------------------- snapshot


def prune_tree(node: dict, shift: int) -> dict:
    """The template's execution tree without stageWrites/stageReads, timestamps moved to the new run."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("stageWrites", "stageReads"):
            continue
        if key == "next" and isinstance(value, dict):
            out[key] = prune_tree(value, shift)
        elif key == "children" and isinstance(value, list):
            out[key] = [prune_tree(c, shift) for c in value]
        elif key == "flowMessages" and isinstance(value, list):
            out[key] = [{**m, "timestamp": m["timestamp"] + shift} if "timestamp" in m else m for m in value]
        else:
            out[key] = value
    return out


def build_snapshot(
    template: dict,
    run: RunBuilder,
    *,
    turn_number: int = 1,
    conversation_id: str | None = None,
    shared_extra: dict | None = None,
):
    snap = template["snapshot"]
    old_ss = snap["sharedState"]
    shift = run.start_ms - old_ss["turnStartMs"]
    history = list(run.history)
    ss: dict[str, Any] = {}
    identity = {k: run.identity[k] for k in ("tenant", "principal") if k in run.identity}
    identity["conversationId"] = conversation_id or run.identity.get("sessionId") or run.run_id
    override = {
        "userMessage": run.user_prompt,
        "history": history,
        "runIdentity": identity,
        "newMessages": [],
        "turnNumber": turn_number,
        "iteration": run.iteration,
        "maxIterations": max(4, run.iteration + 1),
        "totalInputTokens": run.in_tokens,
        "totalOutputTokens": run.out_tokens,
        "turnStartMs": run.start_ms + 5,
        "systemPromptInjections": [
            {
                "contentSummary": summary(run.system_prompt),
                "contentHash": content_hash(run.system_prompt),
                "slot": "system-prompt",
                "source": "base",
                "reason": "Agent.system()",
                "rawContent": run.system_prompt,
            }
        ],
        "messagesInjections": run.messages_injections,
        "toolsInjections": run.tools_injections,
        "llmLatestContent": run.final_content,
        "llmLatestToolCalls": [],
        "dynamicToolSchemas": run.tools,
        "lastToolResult": (
            {"toolName": run.last_results[-1]["toolName"], "result": run.last_results[-1]["result"]}
            if run.last_results
            else None
        ),
        "toolResults": run.last_results,
    }
    feature_keys = {
        "coverageDeclared",
        "claimFacts",
        "compactions",
        "integrityFindingIds",
        "unsupportedValues",
    }
    for key, value in old_ss.items():
        if key in feature_keys or key in ("lastToolResult", "toolResults"):
            continue
        ss[key] = override.get(key, value)
    if run.coverage_rows:
        ss["coverageDeclared"] = run.coverage_rows
    ss.update(shared_extra or {})
    if run.last_results or "lastToolResult" in old_ss:
        ss["lastToolResult"] = override["lastToolResult"]
        ss["toolResults"] = override["toolResults"]
    out: dict[str, Any] = {}
    for key, value in snap.items():
        if key == "sharedState":
            out[key] = ss
        elif key == "executionTree":
            out[key] = prune_tree(value, shift)
        elif key == "commitLog":
            out[key] = []
        elif key == "subflowResults":
            out[key] = {}
        elif key == "recorders":
            out[key] = [{**rec, "data": []} for rec in value]
        elif key == "runId":
            out[key] = f"{run.start_ms + 3}-0000000001"
        else:
            out[key] = copy.deepcopy(value)
    return out


def bare(template: dict, runs: list[RunBuilder], **snap_kw: Any) -> dict:
    events = [e for r in runs for e in r.events]
    return {
        "snapshot": build_snapshot(template, runs[-1], **snap_kw),
        "events": events,
        "structure": template["structure"],
    }


def envelope(recording: dict, run: RunBuilder, fmt: str = "agentfootprint.recording.v1") -> dict:
    events = recording["events"]
    meta_run: dict[str, Any] = {"runId": run.run_id}
    for key in ("sessionId", "principal", "tenant"):
        if key in run.identity:
            meta_run[key] = run.identity[key]
    meta_run.update(
        {
            "startedAt": iso(events[0]["meta"]["wallClockMs"]),
            "endedAt": iso(events[-1]["meta"]["wallClockMs"]),
            "complete": True,
            "droppedEvents": 0,
            "firstRetainedEventIndex": 0,
        }
    )
    return {
        "format": fmt,
        "producer": PRODUCER,
        "run": meta_run,
        "configuration": {"agentId": run.agent_id, "manifest": run.manifest()},
        "privacy": {"mode": "full", "policyId": "agentfootprint.privacy.full.v1"},
        "recording": recording,
    }


# --------------------------------------------------------------------------------------------- tools

LIST_INCIDENTS = tool_schema(
    "list_incidents",
    "Read open incidents for one service in the caller tenant.",
    {"service": "string", "region": "string"},
    ["service"],
)
DEPLOY_LOG = tool_schema("deploy_log", "Recent deploys for one service", {"service": "string"}, ["service"])
SEARCH_ALERTS = tool_schema(
    "search_alerts",
    "Search fired alerts for one host over a time window",
    {"host": "string", "window": "string"},
    ["host"],
)
GET_INCIDENT = tool_schema("get_incident", "Fetch one incident by id", {"id": "string"}, ["id"])
INCIDENT_GAPS = [{"what": "incidents filed by email", "why": "email reports never enter this store"}]


def negative_claim(
    *,
    span: dict | None,
    pack: str,
    iteration: int,
    notes: list[str],
    refs: list[dict],
    field: str = "answer",
    truncated: bool = False,
) -> tuple[str, dict]:
    payload: dict[str, Any] = {"kind": "negative-claim", "field": field}
    if span is not None:
        payload["span"] = span
    payload.update(
        {
            "phrasePackVersion": pack,
            "iteration": iteration,
            "turn": 0,
            "notes": notes,
            "refs": refs,
            "truncated": truncated,
        }
    )
    return ("findings.negative_claim", payload)


def check_span(text: str, span: dict | list, clause: str) -> None:
    start, end = (span["start"], span["end"]) if isinstance(span, dict) else span
    got = slice_utf16(text, start, end)
    assert got == clause, (got, clause)
    assert text[start:end] != clause, "sample must defeat naive code-point indexing"


# --------------------------------------------------------------------------------------------- samples


def sample_prose(tpl: dict) -> tuple[dict, RunBuilder]:
    """negative-claims-prose.json: prose observer, pack en-negatives@3, spans after astral emoji."""
    run = RunBuilder(
        run_id="run-1796003100000-1",
        start_ms=1796003100000,
        agent_id="incident-desk",
        system_prompt="You are the on-call incident assistant. Answer from tool results only.",
        tools=[LIST_INCIDENTS, DEPLOY_LOG],
    )
    run.start("Is anything on fire for payments right now? The release train leaves at 14:00.")
    absent_payload = {
        "iteration": 1,
        "lookedFor": "open incidents for payments",
        "checked": [{"what": "the incident store (tenant acme-corp)"}],
        "notChecked": [
            {
                "what": "incidents opened in the last 5 minutes",
                "why": "the search index lags by up to 5 minutes",
            }
        ],
        "cannotCover": INCIDENT_GAPS,
    }
    run.tool_iteration(
        "Checking the incident store for payments.",
        [
            Call(
                "list_incidents",
                "call-inc-1",
                {"service": "payments"},
                absent_result(
                    "open incidents for payments",
                    absent_payload["checked"],
                    absent_payload["notChecked"],
                    INCIDENT_GAPS,
                    "Ask for a specific region, or check the email intake queue.",
                ),
                extras=[("tools.absent", absent_payload)],
                status="absent",
            )
        ],
    )
    code_line = "kubectl get pods -n payments --field-selector=status.phase!=Running"
    answer = (
        "\U0001f680 Release check for \U0001d518S-East payments: there are no open incidents for payments. "
        "\U0001f6f0\ufe0f I did not read the deploy log, but nothing is failing in eu-west-1 either.\n\n"
        f"```\n{code_line}\n```\n\nNo pods are pending. \u2705"
    )
    c1, c2 = "there are no open incidents for payments", "nothing is failing in eu-west-1"
    s1, s2, s3 = utf16_span(answer, c1), utf16_span(answer, c2), utf16_span(answer, code_line)
    for span, clause in ((s1, c1), (s2, c2), (s3, code_line)):
        check_span(answer, span, clause)
    n = utf16_len(answer)
    ref = {"handle": "r1", "toolName": "list_incidents", "toolCallId": "call-inc-1", "iteration": 1}
    findings = [
        negative_claim(span=s1, pack=PACK, iteration=2, notes=[], refs=[ref]),
        negative_claim(span=s2, pack=PACK, iteration=2, notes=["entity-unresolved"], refs=[]),
        (
            "findings.negative_claim",
            {
                "kind": "unread-unit",
                "field": "answer",
                "span": s3,
                "phrasePackVersion": PACK,
                "iteration": 2,
                "turn": 0,
                "code": "in-code-block",
                "truncated": False,
            },
        ),
        # deliberately does not fit the answer: must be shown unplaceable, never clamped
        negative_claim(
            span={"start": n + 12, "end": n + 31},
            pack=PACK,
            iteration=2,
            notes=["absence-kind-normalized"],
            refs=[ref],
            truncated=True,
        ),
    ]
    run.final(answer, route_events=findings)
    return bare(tpl, [run]), run


def sample_no_read(tpl: dict) -> tuple[dict, RunBuilder]:
    """envelope-negative-claim-no-read.json: no tool dispatched, one whole-answer no-read note (ext pack)."""
    run = RunBuilder(
        run_id="run-1796003160000-1",
        start_ms=1796003160000,
        agent_id="incident-desk",
        system_prompt="You are the on-call incident assistant. Answer from tool results only.",
        tools=[LIST_INCIDENTS],
        identity={"sessionId": "sess-41aa", "principal": "user-2207", "tenant": "globex"},
    )
    run.start("Quick check before the \U0001f4e6 release train: any incidents on payments or checkout?")
    answer = (
        "\U0001f4df Payments has no incidents. The checkout queue came up empty. "
        "There are no incidents anywhere."
    )
    note = (
        "findings.negative_claim",
        {
            "kind": "negative-claim-note",
            "field": "answer",
            "phrasePackVersion": PACK_EXT,
            "iteration": 1,
            "turn": 0,
            "code": "no-read",
            "truncated": False,
        },
    )
    run.final(answer, route_events=[note])
    rec = bare(tpl, [run])
    return envelope(rec, run), run


def sample_alt_spellings(tpl: dict) -> tuple[dict, RunBuilder]:
    """negative-claims-alt-spellings.json: `version`, `phraseVersion`, span as [start, end], `references`."""
    run = RunBuilder(
        run_id="run-1796003220000-1",
        start_ms=1796003220000,
        agent_id="db-oncall",
        system_prompt="You watch the database fleet. Cite the alert search for every statement.",
        tools=[SEARCH_ALERTS],
    )
    run.start("Did db-primary-2 page anyone overnight?")
    run.tool_iteration(
        "Searching alerts for db-primary-2.",
        [
            Call(
                "search_alerts",
                "call-alerts-1",
                {"host": "db-primary-2", "window": "24h"},
                {
                    "host": "db-primary-2",
                    "window": "24h",
                    "alerts": [],
                    "replica_lag_s": {"max": 1.4, "p50": 0.2},
                },
            )
        ],
    )
    answer = (
        "\U0001d518pdate on db-primary-2 \U0001f5c4\ufe0f: the alert search came up empty for the last 24h. "
        "No replicas are lagging \U0001f422 (max 1.4 s)."
    )
    c1, c2 = "the alert search came up empty for the last 24h", "No replicas are lagging"
    s1, s2 = utf16_span(answer, c1), utf16_span(answer, c2)
    check_span(answer, s1, c1)
    check_span(answer, s2, c2)
    findings = [
        (
            "findings.negative_claim",
            {
                "kind": "negative-claim",
                "field": "answer",
                "span": [s1["start"], s1["end"]],
                "version": PACK_EXT,
                "iteration": 2,
                "turn": 0,
                "notes": ["undeclared-empty"],
                "references": [{"handle": "r1", "toolName": "search_alerts", "toolCallId": "call-alerts-1"}],
                "truncated": False,
            },
        ),
        (
            "findings.negative_claim",
            {
                "kind": "negative-claim",
                "field": "answer",
                "span": s2,
                "phraseVersion": PACK_EXT,
                "iteration": 2,
                "turn": 0,
                "notes": ["entity-unresolved"],
                "refs": [],
                "truncated": False,
            },
        ),
    ]
    run.final(answer, tail_events=findings)
    return bare(tpl, [run]), run


def _typed_run(run_id: str, start_ms: int, identity: dict | None) -> RunBuilder:
    return RunBuilder(
        run_id=run_id,
        start_ms=start_ms,
        agent_id="incident-desk-typed",
        system_prompt="You are the on-call incident assistant. State negatives only through cited searches.",
        tools=[LIST_INCIDENTS],
        identity=identity,
        config_extra={},
    )


def sample_typed_withheld(tpl: dict) -> tuple[dict, RunBuilder]:
    """typed-negatives-withheld.json: answerNegatives delivery=withheld, claim refused on a contrary read."""
    run = _typed_run("run-1796003280000-1", 1796003280000, {"principal": "user-4471", "tenant": "acme-corp"})
    run.start("Can I tell the payments team they're clear of open incidents for the freeze?")
    eu_absent = {
        "iteration": 1,
        "lookedFor": "open incidents for payments in eu-west-1",
        "checked": [{"what": "the incident store (tenant acme-corp)"}, {"what": "region eu-west-1"}],
        "cannotCover": INCIDENT_GAPS,
    }
    run.tool_iteration(
        "Reading open incidents for payments.",
        [
            Call(
                "list_incidents",
                "call-inc-1",
                {"service": "payments", "region": "eu-west-1"},
                absent_result(
                    "open incidents for payments in eu-west-1",
                    eu_absent["checked"],
                    [],
                    INCIDENT_GAPS,
                    "Drop the region filter to read every region.",
                ),
                extras=[("tools.absent", eu_absent)],
                status="absent",
            )
        ],
    )
    run.tool_iteration(
        "Reading every region too.",
        [
            Call(
                "list_incidents",
                "call-inc-2",
                {"service": "payments"},
                {
                    "incidents": [
                        {
                            "id": "INC-7",
                            "service": "payments",
                            "region": "us-east-1",
                            "status": "open",
                            "severity": "sev2",
                            "title": "Card authorisations timing out for 3% of requests",
                        }
                    ]
                },
            )
        ],
    )
    summary_text = "\U0001f9ef Payments looks quiet: no open incidents for payments, so the freeze can start."
    draft = {
        "summary": summary_text,
        "negatives": [{"kind": "none", "about": "open incidents for payments", "restsOn": ["r1"]}],
    }
    answer = compact(draft)
    clause = "no open incidents for payments"
    span = utf16_span(summary_text, clause)
    check_span(summary_text, span, clause)
    account = {
        "delivery": "withheld",
        "templateVersion": 12,
        "claims": [
            {
                "kind": "none",
                "about": "payments",
                "restsOn": ["r1"],
                "verdict": "refused",
                "reason": "contrary-read",
                "contrary": [{"handle": "r2", "rows": ["INC-7"], "count": 1}],
                "gaps": INCIDENT_GAPS,
            }
        ],
        "sources": [{"toolName": "list_incidents", "checked": 2}],
        "diagnostics": [
            "claim 0 (none about payments) refused: read r2 (list_incidents, all regions) returned 1 open "
            "incident for payments (INC-7); r1 covered eu-west-1 only",
            "answer withheld (unestablished: withhold); the person received no answer",
        ],
    }
    finding = negative_claim(
        span=span,
        pack=PACK,
        iteration=3,
        notes=["entity-unresolved"],
        refs=[{"handle": "r1", "toolName": "list_incidents", "toolCallId": "call-inc-1", "iteration": 1}],
        field="summary",
    )
    run.final(answer, route_events=[finding], turn_end_extra={"answerNegatives": account})
    return bare(tpl, [run]), run


def sample_typed_as_checked(tpl: dict) -> tuple[dict, RunBuilder]:
    """envelope-typed-negatives-as-checked.json: answerNegatives delivery=as-checked, claim established."""
    run = _typed_run(
        "run-1796003340000-1",
        1796003340000,
        {"sessionId": "sess-9d03", "principal": "user-4471", "tenant": "acme-corp"},
    )
    run.start("Is checkout clear of open incidents for tonight's release window?")
    checked = [{"what": "the incident store (tenant acme-corp)"}, {"what": "all regions"}]
    absent_payload = {
        "iteration": 1,
        "lookedFor": "open incidents for checkout",
        "checked": checked,
        "cannotCover": INCIDENT_GAPS,
    }
    run.tool_iteration(
        "Reading open incidents for checkout.",
        [
            Call(
                "list_incidents",
                "call-inc-1",
                {"service": "checkout"},
                absent_result(
                    "open incidents for checkout", checked, [], INCIDENT_GAPS, "Ask about another service."
                ),
                extras=[("tools.absent", absent_payload)],
                status="absent",
            )
        ],
    )
    statement = "No open incidents for checkout were found in the incident store."
    delivered = {
        "kind": "none",
        "about": "checkout",
        "restsOn": ["r1"],
        "statement": statement,
        "delivery": "record-composed",
        "version": 7,
        "gaps": INCIDENT_GAPS,
    }
    answer = compact({"negatives": [delivered]})
    account = {
        "delivery": "as-checked",
        "templateVersion": 12,
        "claims": [{**delivered, "verdict": "established", "reason": None}],
        "sources": [{"toolName": "list_incidents", "checked": 1}],
        "diagnostics": [],
    }
    run.final(answer, turn_end_extra={"answerNegatives": account})
    rec = bare(tpl, [run])
    return envelope(rec, run), run


def sample_semantics(tpl: dict) -> tuple[dict, RunBuilder]:
    """semantics-render-defaults.json: table, chart (counter), graph + clarify, prose, unknown heatmap."""
    tools = [
        tool_schema(
            "volume_inventory",
            "List volumes on one storage array with capacity facts",
            {"array": "string"},
            ["array"],
        ),
        tool_schema(
            "port_crc_errors", "Hourly CRC error counters per switch port", {"switch": "string"}, ["switch"]
        ),
        tool_schema(
            "zoning_graph", "Zoning and masking paths for one initiator WWN", {"wwn": "string"}, ["wwn"]
        ),
        tool_schema("change_summary", "Summary of one change ticket", {"id": "string"}, ["id"]),
        tool_schema("latency_matrix", "Latency by array and hour", {"site": "string"}, ["site"]),
    ]
    run = RunBuilder(
        run_id="run-1796003400000-1",
        start_ms=1796003400000,
        agent_id="san-triage",
        system_prompt="You are a storage triage assistant for the change-advisory board.",
        tools=tools,
        identity={"tenant": "initech"},
    )
    run.start("Give me the SAN health picture for VMAX-0457 before tonight's change window (CHG-2291).")
    inv_cov = {
        "checked": [
            {"what": "all volumes on VMAX-0457"},
            {"what": "capacity counters", "why": "live REST query"},
        ],
        "not_checked": [{"what": "snapshot capacity", "why": "snapshot API timed out \u2014 ask again"}],
        "cannot_cover": [{"what": "host-side filesystem usage", "why": "no agent runs on the hosts"}],
    }
    table = semantic(
        facts=[
            {
                "entity": "vol-001",
                "array": "VMAX-0457",
                "size_gb": 512,
                "used_pct": 71.5,
                "tier": "gold",
                "replicated": True,
            },
            {
                "entity": "vol-002",
                "array": "VMAX-0457",
                "size_gb": 1024,
                "used_pct": 93.2,
                "tier": "silver",
                "replicated": False,
            },
            {
                "entity": "vol-003",
                "array": "VMAX-0457",
                "size_gb": 256,
                "used_pct": 12,
                "tier": "gold",
                "replicated": True,
            },
            {
                "entity": "vol-004",
                "array": "VMAX-0457",
                "size_gb": 2048,
                "used_pct": 88.0,
                "tier": "bronze",
                "replicated": False,
            },
        ],
        grain={"collapsed": "per-LUN rows collapsed to per-volume"},
        provenance={
            "measured_at": "2026-11-30T01:00:00Z",
            "age_seconds": 1800,
            "source": "Unisphere REST (array VMAX-0457)",
            "source_export_date": "2026-11-30",
        },
        coverage=inv_cov,
        clarify=None,
        render={
            "default": "table",
            "columns": ["entity", "size_gb", "used_pct", "tier", "replicated"],
            "sort": "used_pct desc",
            "filter_note": "replica-target volumes excluded",
        },
    )
    crc_cov = {
        "checked": [{"what": "ports fc1/1-fc1/4 on fabric A"}],
        "cannot_cover": [{"what": "fabric B", "why": "SANnav instance for fabric B is not connected"}],
    }
    series = []
    for port, values in (("fc1/1", (0, 0, 0, 1)), ("fc1/3", (12, 40, 131, 402)), ("fc1/4", (0, 2, 2, 3))):
        for hour, value in zip(("22", "23", "00", "01"), values, strict=True):
            day = "29" if hour in ("22", "23") else "30"
            series.append(
                {"t": f"2026-11-{day}T{hour}:00:00Z", "entity": port, "metric": "crc_errors", "value": value}
            )
    chart = semantic(
        series=series,
        grain={"interval": "1h", "aggregation": "sum", "is_counter": True},
        provenance={"measured_at": "2026-11-30T01:05:00Z", "age_seconds": 300, "source": "Brocade SANnav"},
        coverage=crc_cov,
        render={"default": "chart", "chart_hint": "line per entity", "sort": "t asc"},
    )
    graph = semantic(
        edges=[
            {"from": "10:00:00:90:fa:12:34:56", "to": "vol-002", "kind": "masked-to", "via": "view mv_prod"},
            {"from": "10:00:00:90:fa:12:34:56", "to": "vol-004", "kind": "masked-to", "via": "view mv_batch"},
            {"from": "host-esx-12", "to": "10:00:00:90:fa:12:34:56", "kind": "owns-initiator"},
            {
                "from": "10:00:00:90:fa:12:34:56",
                "to": "fc1/3",
                "kind": "zoned-through",
                "via": "zone z_esx12_a",
            },
        ],
        provenance={"measured_at": "2026-11-30T00:55:00Z", "source": "masking views export"},
        clarify={
            "question": "The WWN is masked to two volumes \u2014 which one is in CHG-2291's scope?",
            "candidates": ["vol-002", "vol-004"],
        },
        render={"default": "graph", "chart_hint": "node-link, initiator on the left"},
    )
    prose = semantic(
        facts=[
            {
                "entity": "CHG-2291",
                "title": "Firmware upgrade on switch sw-core-a",
                "window": "2026-11-30T22:00Z/2026-11-30T23:30Z",
                "risk": "medium",
                "summary": "Rolling upgrade; fabric A paths fail over to fabric B "
                "for about 4 minutes per blade.",
            }
        ],
        provenance={"measured_at": "2026-11-30T01:10:00Z", "source": "ServiceNow change CHG-2291"},
        clarify=None,
        render={"default": "prose"},
    )
    heat_cov = {
        "checked": [{"what": "arrays VMAX-0457 and VMAX-0460"}],
        "not_checked": [{"what": "hours before 22:00", "why": "retention window"}],
    }
    heat = semantic(
        series=[
            {"t": f"2026-11-{d}T{h}:00:00Z", "entity": arr, "metric": "read_latency_ms", "value": v}
            for arr, vals in (("VMAX-0457", (0.9, 1.1, 4.8, 1.2)), ("VMAX-0460", (0.7, 0.8, 0.8, 0.9)))
            for (d, h), v in zip((("29", "22"), ("29", "23"), ("30", "00"), ("30", "01")), vals, strict=True)
        ],
        grain={"interval": "1h", "aggregation": "p95", "is_counter": False},
        provenance={
            "measured_at": "2026-11-30T01:05:00Z",
            "age_seconds": 300,
            "source": "Unisphere performance API",
        },
        coverage=heat_cov,
        render={
            "default": "heatmap",
            "columns": ["entity", "t", "value"],
            "chart_hint": "rows per array, columns per hour",
        },
    )

    def call(name: str, cid: str, args: dict, env: dict, it: int) -> Call:
        extras: list[tuple[str, dict]] = []
        if "coverage" in env:
            extras.append(("tools.coverage_declared", {"iteration": it, **coverage_lists(env["coverage"])}))
        extras.append(("tools.semantics_declared", {"iteration": it, "semantics": env}))
        return Call(name, cid, args, model_view(env), extras=extras, duration_ms=3)

    run.tool_iteration(
        "Pulling capacity, port errors and zoning for VMAX-0457.",
        [
            call("volume_inventory", "call-inv-1", {"array": "VMAX-0457"}, table, 1),
            call("port_crc_errors", "call-crc-1", {"switch": "sw-core-a"}, chart, 1),
            call("zoning_graph", "call-zone-1", {"wwn": "10:00:00:90:fa:12:34:56"}, graph, 1),
        ],
    )
    run.tool_iteration(
        "Reading the change ticket and the latency picture.",
        [
            call("change_summary", "call-chg-1", {"id": "CHG-2291"}, prose, 2),
            call("latency_matrix", "call-lat-1", {"site": "dc-east"}, heat, 2),
        ],
    )
    checked = inv_cov["checked"] + crc_cov["checked"] + heat_cov["checked"]
    not_checked = inv_cov["not_checked"] + heat_cov["not_checked"]
    cannot = inv_cov["cannot_cover"] + crc_cov["cannot_cover"]
    answer = (
        "vol-002 is 93.2% used and vol-004 88%; fc1/3 CRC errors climbed to 402 in the last hour and "
        "VMAX-0457 read latency spiked to 4.8 ms at 00:00. "
        "Which volume is in CHG-2291's scope, vol-002 or vol-004?"
        + coverage_block(checked, not_checked, cannot)
    )
    run.final(answer)
    return bare(tpl, [run]), run


def sample_multi_run(tpl: dict) -> tuple[dict, list[RunBuilder]]:
    """multi-run-session.json: one recorder across run() + followUp(): two runIds, identity in meta."""
    identity = {"sessionId": "sess-7c1e", "principal": "user-4471", "tenant": "acme-corp"}
    tools = [
        tool_schema(
            "list_deploys",
            "Deploys for one service in a time window",
            {"service": "string", "since": "string"},
            ["service"],
        ),
        GET_INCIDENT,
    ]
    sp = "You are the on-call incident assistant for acme-corp."
    r1 = RunBuilder(
        run_id="run-1796003460000-1",
        start_ms=1796003460000,
        agent_id="oncall-assistant",
        system_prompt=sp,
        tools=tools,
        identity=identity,
    )
    r1.start("What changed on checkout-api in the last hour?")
    r1.tool_iteration(
        "Looking at the deploy log.",
        [
            Call(
                "list_deploys",
                "t1-c1",
                {"service": "checkout-api", "since": "1h"},
                {
                    "deploys": [
                        {
                            "id": "dep-5512",
                            "version": "v2.41.0",
                            "at": "2026-11-30T01:12:00Z",
                            "by": "ci-bot",
                            "status": "succeeded",
                        }
                    ]
                },
            )
        ],
    )
    r1.final("One deploy: checkout-api v2.41.0 (dep-5512) at 01:12 UTC by ci-bot, succeeded.")
    prior = r1.history + [{"role": "assistant", "content": r1.final_content}]
    r2 = RunBuilder(
        run_id="run-1796003520000-2",
        start_ms=1796003520000,
        agent_id="oncall-assistant",
        system_prompt=sp,
        tools=tools,
        identity=identity,
        prior_history=prior,
    )
    r2.start("Is INC-7 still open after that deploy?")
    r2.tool_iteration(
        "Fetching INC-7.",
        [
            Call(
                "get_incident",
                "t2-c1",
                {"id": "INC-7"},
                {
                    "id": "INC-7",
                    "service": "checkout-api",
                    "status": "mitigated",
                    "mitigated_at": "2026-11-30T01:20:00Z",
                },
            )
        ],
    )
    answer = (
        "INC-7 was mitigated at 01:20 UTC, eight minutes after v2.41.0 \U0001f389; "
        "no other incidents are open for checkout-api."
    )
    clause = "no other incidents are open for checkout-api"
    span = utf16_span(answer, clause)
    check_span(answer, span, clause)
    finding = negative_claim(
        span=span,
        pack=PACK,
        iteration=2,
        notes=["entity-unresolved"],
        refs=[{"handle": "r1", "toolName": "get_incident", "toolCallId": "t2-c1", "iteration": 1}],
    )
    r2.final(answer, route_events=[finding])
    return bare(tpl, [r1, r2], turn_number=2), [r1, r2]


def sample_bundle_run(tpl: dict) -> tuple[dict, RunBuilder]:
    """The run inside bugreport-negative-claim.zip."""
    run = RunBuilder(
        run_id="run-1796003580000-1",
        start_ms=1796003580000,
        agent_id="incident-desk",
        system_prompt="You are the on-call incident assistant. Answer from tool results only.",
        tools=[LIST_INCIDENTS],
        identity={"principal": "user-9012", "tenant": "acme-corp"},
    )
    run.start("Page me if anything is open on the ledger service.")
    checked = [{"what": "the incident store (tenant acme-corp)"}]
    absent_payload = {
        "iteration": 1,
        "lookedFor": "open incidents for ledger",
        "checked": checked,
        "cannotCover": INCIDENT_GAPS,
    }
    run.tool_iteration(
        "Reading open incidents for ledger.",
        [
            Call(
                "list_incidents",
                "call-inc-1",
                {"service": "ledger"},
                absent_result(
                    "open incidents for ledger", checked, [], INCIDENT_GAPS, "Check the email intake queue."
                ),
                extras=[("tools.absent", absent_payload)],
                status="absent",
            )
        ],
    )
    answer = (
        "\U0001f9fe Ledger: no open incidents were found in the incident store, "
        "and no page is needed. \U0001f4a4"
    )
    clause = "no open incidents were found in the incident store"
    span = utf16_span(answer, clause)
    check_span(answer, span, clause)
    finding = negative_claim(
        span=span,
        pack=PACK,
        iteration=2,
        notes=[],
        refs=[{"handle": "r1", "toolName": "list_incidents", "toolCallId": "call-inc-1", "iteration": 1}],
    )
    run.final(answer, route_events=[finding])
    return envelope(bare(tpl, [run]), run), run


# --------------------------------------------------------------------------------------------- what was delivered
# Samples for issue #12 point 1: answers delivered with a problem (raw, fallback, wrap-up, fragment), a run
# halted by a permission policy (nothing delivered), a delivered typed answer with a span and a delivered
# typed-negative fallback. Payloads follow src/events/payloads.ts and src/core/agent/stages/route.ts
# (recording-format.md section 10).

REFUND_ORDER = tool_schema(
    "refund_order", "Refund one order in full", {"order_id": "string", "amount": "string"}, ["order_id"]
)
GET_ORDER = tool_schema("get_order", "Read one order by id", {"order_id": "string"}, ["order_id"])
SCAN_HOSTS = tool_schema(
    "scan_hosts", "List hosts of one region with their patch level", {"region": "string"}, []
)
LOGIN_AUDIT = tool_schema(
    "login_audit",
    "Failed logins for one account over a window",
    {"account": "string", "window": "string"},
    [],
)


def _desk_run(run_id: str, start_ms: int, agent_id: str, tools: list[dict]) -> RunBuilder:
    return RunBuilder(
        run_id=run_id,
        start_ms=start_ms,
        agent_id=agent_id,
        system_prompt="You are the operations desk assistant. Answer from tool results only.",
        tools=tools,
        identity={"principal": "user-3318", "tenant": "initech"},
    )


def _hosts(region: str, names: list[str]) -> dict:
    return {"region": region, "hosts": [{"host": n, "patch": "2026-11"} for n in names]}


def sample_wrapped_up(tpl: dict) -> tuple[dict, RunBuilder]:
    """wrapped-up-max-iterations.json: maxIterations 2 reached with a call pending; the wrap-up answer
    (tools withheld, one more call) IS the turn's answer: delivered, marked wrappedUp."""
    run = _desk_run("run-1796003640000-1", 1796003640000, "ops-desk", [SCAN_HOSTS])
    run.start("Which hosts in eu-west-1 and us-east-1 are behind on patches?")
    run.tool_iteration(
        "Scanning eu-west-1.",
        [Call("scan_hosts", "call-scan-1", {"region": "eu-west-1"}, _hosts("eu-west-1", ["web-1", "web-2"]))],
    )
    run.tool_iteration(
        "Scanning us-east-1.",
        [Call("scan_hosts", "call-scan-2", {"region": "us-east-1"}, _hosts("us-east-1", ["api-1"]))],
    )
    stopped = {"reason": "max-iterations", "iteration": 3, "pendingToolCalls": 1}
    answer = "Summary so far: web-1, web-2 (eu-west-1) and api-1 (us-east-1) are on the 2026-11 patch level."
    run.final(
        answer,
        chosen="wrap-up",
        rationale="maxIterations reached \u2014 wrapping up with tools withheld",
        route_events=[
            ("cost.limit_hit", {"kind": "max_iterations", "limit": 3, "actual": 3, "action": "abort"}),
            (
                "agent.budget_exhausted",
                {
                    "reason": "max-iterations",
                    "iteration": 3,
                    "limit": 3,
                    "pendingToolCalls": 1,
                    "action": "wrapped-up",
                },
            ),
        ],
        turn_end_extra={"stoppedEarly": {**stopped, "wrappedUp": True}},
    )
    shared = {"stoppedEarly": {**stopped, "answerWasEmpty": False, "wrappedUp": True}, "wrapUpAsked": True}
    return bare(tpl, [run], shared_extra=shared), run


def sample_cut_short(tpl: dict) -> tuple[dict, RunBuilder]:
    """cut-short-max-iterations.json: maxIterations reached with no wrap-up configured; the caller got
    "whatever text rode the last call", a fragment (delivered, cut short)."""
    run = _desk_run("run-1796003700000-1", 1796003700000, "ops-desk", [SCAN_HOSTS])
    run.start("Which hosts in every region are behind on patches?")
    run.tool_iteration(
        "Scanning eu-west-1.",
        [Call("scan_hosts", "call-scan-1", {"region": "eu-west-1"}, _hosts("eu-west-1", ["web-1", "web-2"]))],
    )
    stopped = {"reason": "max-iterations", "iteration": 2, "pendingToolCalls": 1}
    fragment = "eu-west-1 looks patched; next I will scan"
    run.final(
        fragment,
        rationale="maxIterations reached \u2014 returning the last content",
        pending_tool_calls=1,
        route_events=[
            ("cost.limit_hit", {"kind": "max_iterations", "limit": 2, "actual": 2, "action": "abort"}),
            (
                "agent.budget_exhausted",
                {
                    "reason": "max-iterations",
                    "iteration": 2,
                    "limit": 2,
                    "pendingToolCalls": 1,
                    "action": "cut-short",
                },
            ),
        ],
        turn_end_extra={"stoppedEarly": stopped},
    )
    return bare(tpl, [run], shared_extra={"stoppedEarly": {**stopped, "answerWasEmpty": False}}), run


def _unmet(iteration: int, *, fallback: bool) -> dict:
    return {
        "stage": "schema-validate",
        "error": "Expected number, received string",
        "path": "refund.amount",
        "attempts": 2,
        "retriesSpent": 1,
        "fallbackConfigured": fallback,
        "iteration": iteration,
    }


def _refund_run(run_id: str, start_ms: int) -> RunBuilder:
    run = _desk_run(run_id, start_ms, "refund-desk", [GET_ORDER])
    run.start("How much would refunding ORD-31 return to the customer?")
    run.tool_iteration(
        "Reading the order.",
        [Call("get_order", "call-ord-1", {"order_id": "ORD-31"}, {"order_id": "ORD-31", "total": 42.5})],
    )
    return run


def _schema_retry(iteration: int) -> tuple[str, dict]:
    return (
        "agent.output_schema_retry",
        {
            "attempt": 1,
            "retriesLeft": 0,
            "stage": "schema-validate",
            "error": "Expected number, received string",
            "path": "refund.amount",
            "iteration": iteration,
        },
    )


RAW_REFUND = '{"refund": {"order_id": "ORD-31", "amount": "42.50 EUR"}}'


def sample_schema_failed_raw(tpl: dict) -> tuple[dict, RunBuilder]:
    """schema-failed-delivered-raw.json: the output contract stays unmet after one corrective re-ask and no
    fallback is configured; `run()` "does NOT throw": the caller received the raw answer."""
    run = _refund_run("run-1796003760000-1", 1796003760000)
    unmet = _unmet(2, fallback=False)
    run.final(RAW_REFUND, route_events=[_schema_retry(2), ("agent.output_contract_unmet", unmet)])
    return bare(tpl, [run], shared_extra={"outputContractUnmet": unmet}), run


def sample_output_fallback(tpl: dict) -> tuple[dict, RunBuilder]:
    """output-fallback-delivered.json: the same unmet contract with `.outputFallback()` configured; the
    fallback fired after the run (`resilience.output_fallback_triggered`, no meta, a top-level timestamp).
    Its value is never recorded: the recording cannot show what the caller received."""
    run = _refund_run("run-1796003820000-1", 1796003820000)
    unmet = _unmet(2, fallback=True)
    run.final(RAW_REFUND, route_events=[_schema_retry(2), ("agent.output_contract_unmet", unmet)])
    last = run.events[-1]["meta"]["wallClockMs"]
    run.events.append(
        {
            "type": "agentfootprint.resilience.output_fallback_triggered",
            "payload": {
                "stage": "schema-validate",
                "rawOutputPreview": RAW_REFUND[:200],
                "primaryErrorMessage": "Expected number, received string",
                "retriesSpent": 1,
            },
            "timestamp": last + 3,
        }
    )
    return bare(tpl, [run], shared_extra={"outputContractUnmet": unmet}), run


def sample_halted(tpl: dict) -> tuple[dict, RunBuilder]:
    """halted-by-permission-policy.json: a permission policy halts the run at refund_order (`permission.check`
    result halt, then `permission.halt`); Agent.run throws PolicyHaltError: no turn_end, nothing delivered,
    and no draft withheld. The halted call ends with neither error nor status."""
    run = _desk_run("run-1796003880000-1", 1796003880000, "refund-desk", [GET_ORDER, REFUND_ORDER])
    run.start("Refund ORD-77 in full, please.")
    run.tool_iteration(
        "Reading the order first.",
        [Call("get_order", "call-ord-1", {"order_id": "ORD-77"}, {"order_id": "ORD-77", "total": 1250.0})],
    )
    run.iteration += 1
    base = 22 * (run.iteration - 1)
    run._compose(base)
    run._llm(base, "Refunding the order.", 1)
    run.emit(
        "agent.route_decided",
        {
            "turnIndex": 0,
            "iterIndex": run.iteration,
            "chosen": "tool-calls",
            "rationale": "LLM requested 1 tool call(s)",
        },
        f"sf-route#{base + 21}",
        1,
    )
    stage = f"tool-calls#{base + 22}"
    reason = "refunds over 1000 need a supervisor"
    args = {"order_id": "ORD-77", "amount": "1250.00"}
    run.emit(
        "permission.check",
        {
            "capability": "tool_call",
            "actor": "refund-desk",
            "target": "refund_order",
            "result": "halt",
            "policyEngine": "custom",
            "policyRuleId": "refund-ceiling",
            "rationale": reason,
            "reason": "refund-ceiling",
        },
        stage,
        1,
    )
    run.emit(
        "stream.tool_start", {"toolName": "refund_order", "toolCallId": "call-ref-1", "args": args}, stage, 1
    )
    run.emit(
        "stream.tool_end",
        {"toolCallId": "call-ref-1", "result": f"[halted by policy: {reason}]", "durationMs": 0},
        stage,
        1,
    )
    run.emit(
        "permission.halt",
        {
            "target": "refund_order",
            "reason": reason,
            "tellLLM": "A supervisor must approve this refund.",
            "iteration": run.iteration,
            "sequenceLength": 2,
            "checkerId": "refund-ceiling",
        },
        stage,
        1,
    )
    run.emit("integrity.disposition", run.disposition(), "integrity-disposition#0", 2)
    shared = {
        "policyHaltReason": reason,
        "policyHaltTellLLM": "A supervisor must approve this refund.",
        "policyHaltTarget": "refund_order",
        "policyHaltArgs": args,
        "policyHaltIteration": run.iteration,
        "policyHaltCheckerId": "refund-ceiling",
    }
    return bare(tpl, [run], shared_extra=shared), run


def sample_typed_span_delivered(tpl: dict) -> tuple[dict, RunBuilder]:
    """typed-answer-span-delivered.json: a typed (JSON) answer delivered as drafted, with a negative-claim
    finding on `field: "summary"` whose UTF-16 span indexes that string, after 🛰️."""
    run = _desk_run("run-1796003940000-1", 1796003940000, "access-desk-typed", [LOGIN_AUDIT])
    run.start("Any failed logins for svc-backup this week?")
    run.tool_iteration(
        "Reading the login audit.",
        [
            Call(
                "login_audit",
                "call-aud-1",
                {"account": "svc-backup", "window": "7d"},
                {"account": "svc-backup", "window": "7d", "failed": []},
            )
        ],
    )
    summary_text = (
        "\U0001f6f0\ufe0f Audit read: no failed logins for svc-backup this week, per the login audit."
    )
    answer = compact({"summary": summary_text, "account": "svc-backup", "failed": 0})
    clause = "no failed logins for svc-backup"
    span = utf16_span(summary_text, clause)
    check_span(summary_text, span, clause)
    finding = negative_claim(
        span=span,
        pack=PACK,
        iteration=2,
        notes=[],
        refs=[{"handle": "r1", "toolName": "login_audit", "toolCallId": "call-aud-1", "iteration": 1}],
        field="summary",
    )
    run.final(answer, route_events=[finding])
    return bare(tpl, [run]), run


def sample_typed_state_searched(tpl: dict) -> tuple[dict, RunBuilder]:
    """typed-negatives-state-searched.json: the complete-list claim failed (not declared complete), so the
    person received the state-searched fallback sentence beside the one established absence."""
    run = _typed_run("run-1796004000000-1", 1796004000000, {"principal": "user-4471", "tenant": "acme-corp"})
    run.start("List every open incident for billing, or tell me there are none.")
    checked = [{"what": "the incident store (tenant acme-corp)"}, {"what": "all regions"}]
    absent_payload = {
        "iteration": 1,
        "lookedFor": "open incidents for billing",
        "checked": checked,
        "cannotCover": INCIDENT_GAPS,
    }
    run.tool_iteration(
        "Reading open incidents for billing.",
        [
            Call(
                "list_incidents",
                "call-inc-1",
                {"service": "billing"},
                absent_result(
                    "open incidents for billing", checked, [], INCIDENT_GAPS, "Ask about another service."
                ),
                extras=[("tools.absent", absent_payload)],
                status="absent",
            )
        ],
    )
    sentence = "The requested complete-list claim is not established; only this absence is."
    statement = "No open incidents for billing were found in the incident store."
    none_claim = {
        "kind": "none",
        "about": "billing",
        "restsOn": ["r1"],
        "statement": statement,
        "delivery": "record-composed",
        "version": 7,
        "gaps": INCIDENT_GAPS,
    }
    complete_claim = {"kind": "complete", "about": "open incidents for billing", "restsOn": ["r1"]}
    answer = compact(
        {"negatives": [none_claim, {**complete_claim, "statement": sentence, "delivery": "fallback"}]}
    )
    account = {
        "delivery": "state-searched",
        "templateVersion": 12,
        "fallback": sentence,
        "claims": [
            {**none_claim, "verdict": "established", "reason": None},
            {**complete_claim, "verdict": "refused", "reason": "not-declared", "gaps": INCIDENT_GAPS},
        ],
        "sources": [{"toolName": "list_incidents", "checked": 1}],
        "diagnostics": [
            "claim 1 (complete about open incidents for billing) refused: no read declares completeness"
        ],
    }
    run.final(answer, turn_end_extra={"answerNegatives": account})
    return bare(tpl, [run]), run


DELIVERY_SAMPLES = {
    "wrapped-up-max-iterations.json": sample_wrapped_up,
    "cut-short-max-iterations.json": sample_cut_short,
    "schema-failed-delivered-raw.json": sample_schema_failed_raw,
    "output-fallback-delivered.json": sample_output_fallback,
    "halted-by-permission-policy.json": sample_halted,
    "typed-answer-span-delivered.json": sample_typed_span_delivered,
    "typed-negatives-state-searched.json": sample_typed_state_searched,
}


# --------------------------------------------------------------------------------------------- writing


def write_json(path: Path, obj: Any) -> None:
    path.write_text(compact(obj), encoding="utf-8")


def zip_bytes(members: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(2026, 11, 30, 1, 33, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    return buf.getvalue()


def write_bundle(path: Path, env: dict, run: RunBuilder) -> None:
    envelope_json = json.dumps(env, ensure_ascii=False, indent=2).encode("utf-8")
    conversation = {
        "conversationId": run.run_id,
        "runs": [run.run_id],
        "messages": [
            {"role": "user", "content": run.user_prompt},
            {"role": "assistant", "content": run.final_content},
        ],
    }
    environment = {
        "agentfootprintVersion": PRODUCER["agentfootprintVersion"],
        "footprintjsVersion": PRODUCER["footprintjsVersion"],
        "runtime": "node",
        "runtimeVersion": "v22.11.0",
        "platform": "linux",
        "arch": "x64",
    }
    files = [
        ("envelope.json", envelope_json),
        ("conversation.json", json.dumps(conversation, ensure_ascii=False, indent=2).encode("utf-8")),
        ("environment.json", json.dumps(environment, indent=2).encode("utf-8")),
    ]
    manifest = {
        "manifestVersion": 2,
        "createdAt": iso(env["recording"]["events"][-1]["meta"]["wallClockMs"] + 4000),
        "producer": PRODUCER,
        "runId": run.run_id,
        "complete": True,
        "privacy": env["privacy"],
        "files": [
            {
                "name": n,
                "mediaType": "application/json",
                "bytes": len(b),
                "sha256": hashlib.sha256(b).hexdigest(),
            }
            for n, b in files
        ],
    }
    members = [("manifest.json", json.dumps(manifest, indent=2).encode("utf-8"))] + files
    path.write_bytes(zip_bytes(members))


def write_broken(out: Path, good: bytes) -> None:
    broken = out / "broken"
    broken.mkdir(parents=True, exist_ok=True)
    cut = len(good) // 2
    (broken / "truncated.json").write_bytes(good[:cut])
    (broken / "not-json.json").write_text(
        "run-1796003100000-1 finished at 01:25 UTC\nanswer: there are no open incidents for payments\n",
        encoding="utf-8",
    )
    (broken / "not-a-recording-object.json").write_text('{"hello": 1}', encoding="utf-8")
    (broken / "not-a-recording-array.json").write_text(
        '[{"type":"agentfootprint.agent.turn_start","payload":{"turnIndex":0},"meta":{"runId":"run-1-1"}}]',
        encoding="utf-8",
    )
    rng = random.Random(20261130)
    blob = bytearray(rng.randbytes(4096))
    blob[0:4] = b"\x00\xff\xfe\x00"
    blob[100] = 0
    (broken / "binary.json").write_bytes(bytes(blob))
    (broken / "deeply-nested.json").write_bytes(b"[" * 100_000 + b"]" * 100_000)
    v9 = {
        "format": "agentfootprint.recording.v9",
        "producer": {"agentfootprintVersion": "12.0.0", "footprintjsVersion": "11.2.0"},
        "run": {"runId": "run-1796009999000-1", "complete": True, "droppedEvents": 0},
        "privacy": {"mode": "full", "policyId": "agentfootprint.privacy.full.v1"},
        "recording": {"frames": [], "index": {"runs": 1}},
    }
    write_json(broken / "unknown-format-v9.json", v9)
    (broken / "empty.json").write_bytes(b"")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--templates", type=Path, default=DEFAULT_TEMPLATES)
    parser.add_argument("--out", type=Path, default=ROOT / "sample_recordings")
    args = parser.parse_args(argv)

    def load(name: str) -> dict:
        return json.loads((args.templates / name).read_text(encoding="utf-8"))

    ops = load("semantics-table-and-chart.json")
    conv = load("multi-turn-conversation-identity.json")
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    prose, _ = sample_prose(ops)
    write_json(out / "negative-claims-prose.json", prose)
    write_json(out / "envelope-negative-claim-no-read.json", sample_no_read(ops)[0])
    write_json(out / "negative-claims-alt-spellings.json", sample_alt_spellings(ops)[0])
    write_json(out / "typed-negatives-withheld.json", sample_typed_withheld(ops)[0])
    write_json(out / "envelope-typed-negatives-as-checked.json", sample_typed_as_checked(ops)[0])
    write_json(out / "semantics-render-defaults.json", sample_semantics(ops)[0])
    write_json(out / "multi-run-session.json", sample_multi_run(conv)[0])
    for name, build in DELIVERY_SAMPLES.items():
        write_json(out / name, build(ops)[0])
    env, run = sample_bundle_run(ops)
    write_bundle(out / "bugreport-negative-claim.zip", env, run)
    write_broken(out, compact(prose).encode("utf-8"))
    total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"wrote {out} ({total:,} bytes)")


if __name__ == "__main__":
    main()
