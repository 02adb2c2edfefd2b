"""The run row: identity, timing, counts and the outcome, one per run, plus the run's searchable text."""

from __future__ import annotations

from typing import Any

from store.reading.delivery import Delivery
from store.reading.extract.walk import (
    GAP_LISTS,
    RunWalk,
    as_dict,
    as_int,
    as_list,
    as_str,
    iso_from_ms,
)
from store.reading.text import as_text, bounded, dumps
from store.vocab import (
    call_failed,
)


def run_row(
    walk: RunWalk,
    calls: dict[str, dict[str, Any]],
    coverage: list[dict[str, Any]],
    evictions: list[dict[str, Any]],
    findings: list[dict[str, Any]],
    outcome: dict[str, Any],
    delivery: Delivery,
) -> None:
    """The `runs` row: identity (envelope first, then event meta, then the snapshot), timing, counts, outcome."""
    all_metas = walk.rec.metas
    metas = [all_metas[i] for i in walk.indexes]
    wanted = ("tenant", "principal", "sessionId", "traceId", "correlationId")
    firsts: dict[str, str] = {}
    for k in wanted:  # the first non-empty value of each identity key
        for m in metas:
            v = getattr(m, k)
            if v and isinstance(v, str):
                firsts[k] = v
                break

    def meta_value(key: str) -> str | None:
        return firsts.get(key)

    configured = walk.first("agent.run_configured") or {}
    config = walk.rec.configuration or {}
    agent_id = as_str(configured.get("agentId")) or as_str(config.get("agentId"))
    if agent_id is None:
        path = as_list(metas[0].compositionPath) if metas else []
        first = path[0] if path and isinstance(path[0], str) else ""
        agent_id = first.split(":", 1)[1] if first.startswith("Agent:") else None
    llm = as_dict(configured.get("llm")) or as_dict(as_dict(config.get("manifest")).get("llm"))
    walls = [w for m in metas if type(w := m.wallClockMs) is int]  # as_int: a JSON integer, not a bool
    start = walk.first("agent.turn_start") or {}
    end = walk.last("agent.turn_end") or {}
    identity = as_dict(walk.shared.runIdentity) if walk.shared is not None else {}
    env = walk.env_run
    started_at = as_str(env.get("startedAt")) or iso_from_ms(min(walls) if walls else None)
    gaps = sum(1 for c in coverage if c["list"] in GAP_LISTS)
    first_type = walk.shorts[walk.indexes[0]] if walk.indexes else None
    prompt = as_text(start.get("userPrompt"))
    row = {
        "key": walk.key,
        "recording_sha": walk.sha,
        "run_id": walk.run_id,
        "agent_id": agent_id,
        "model": as_str(llm.get("model")),
        "provider": as_str(llm.get("provider")),
        "tenant": as_str(env.get("tenant")) or meta_value("tenant") or as_str(identity.get("tenant")),
        "principal": as_str(env.get("principal"))
        or meta_value("principal")
        or as_str(identity.get("principal")),
        "session_id": as_str(env.get("sessionId")) or meta_value("sessionId"),
        "conversation_id": as_str(identity.get("conversationId")),
        "trace_id": meta_value("traceId"),
        "correlation_id": meta_value("correlationId"),
        "started_at": started_at,
        "started_ms": min(walls) if walls else None,
        "ended_ms": max(walls) if walls else None,
        "complete": int(env["complete"]) if isinstance(env.get("complete"), bool) else None,
        "dropped_events": as_int(env.get("droppedEvents")),
        "first_retained_index": as_int(env.get("firstRetainedEventIndex")),
        "starts_mid_run": int(first_type != "agent.run_configured"),
        "events": len(walk.indexes),
        "prompt": prompt,
        "answer": walk.answer,
        "outcome": outcome["outcome"],
        "outcome_channel": outcome.get("channel"),
        "outcome_detail": dumps(outcome),
        "iterations": as_int(end.get("iterationCount")) or len(walk.by_type.get("agent.iteration_start", [])),
        "tokens_in": as_int(end.get("totalInputTokens")),
        "tokens_out": as_int(end.get("totalOutputTokens")),
        "duration_ms": as_int(end.get("durationMs")),
        "tool_calls": len(calls),
        "failed_calls": sum(1 for c in calls.values() if call_failed(c["error"], c["status"])),
        "findings": len(findings),
        "negative_claims": sum(1 for f in findings if f["kind"].startswith("negative-claim")),
        "coverage_gaps": gaps,
        "evictions": len(evictions),
        "pack_versions": dumps(sorted({f["pack_version"] for f in findings if f["pack_version"]})),
        "answer_negatives": dumps(end["answerNegatives"])
        if isinstance(end.get("answerNegatives"), dict)
        else None,
        "delivered": int(delivery.delivered),
        "delivered_as": delivery.delivered_as,
        "delivery_headline": delivery.headline,
        "delivered_text": delivery.delivered_text,
        "disposition": _disposition(walk),
    }
    walk.out.runs.append(row)
    if prompt:
        walk.search("prompt", walk.key, prompt)
    if walk.answer:
        walk.search("answer", walk.key, walk.answer)


#: At most this many check rows of a disposition are kept (the framework files four).
DISPOSITION_ROWS = 64
_COUNTS = ("checked", "findings", "notApplicable", "unreachable", "synthetic")


def _disposition(walk: RunWalk) -> str | None:
    """The run's last `integrity.disposition` (section 9.2) as JSON, bounded to the keys a reader needs;
    None when the run recorded none (a capped recording may have lost it, a Parallel never files one)."""
    p = walk.last("integrity.disposition")
    if p is None:
        return None
    rows = []
    for r in as_list(p.get("rows"))[:DISPOSITION_ROWS]:
        r = as_dict(r)
        row: dict[str, Any] = {
            "check": bounded(as_str(r.get("check")) or "?", 120),
            "seam": bounded(as_str(r.get("seam")) or "?", 60),
        }
        row.update({k: as_int(r.get(k)) or 0 for k in _COUNTS})
        if (fired := as_int(r.get("lastFiredAt"))) is not None:
            row["lastFiredAt"] = fired
        rows.append(row)
    posture = as_str(p.get("posture"))
    work = p.get("workExisted")
    return dumps(
        {
            "posture": bounded(posture, 60) if posture else None,
            "workExisted": work if isinstance(work, bool) else None,
            "rows": rows,
            "rows_dropped": max(0, len(as_list(p.get("rows"))) - DISPOSITION_ROWS),
        }
    )
