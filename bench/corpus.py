"""Deterministic generator of large recording corpora in the real agentfootprint 9.62.0 format.

Shaped like /work/shared/recordings (see /work/shared/docs/recording-format.md): bare recordings
`{snapshot, events, structure}` and `agentfootprint.recording.v1` envelopes, compact JSON written with
orjson, events in the canonical order, the snapshot carrying about 85-88 % of the bytes (a sharedState
with the transcript, an execution tree, a commit log, dual-keyed subflowResults and a boundary recorder
that repeat the history on every iteration, as the framework does).

Every file depends only on (seed, file index), so a corpus is reproducible byte for byte. The bulk of the
snapshot is made of references to the same history lists, so building it costs little Python work and
orjson does the byte-pushing.

    python -m bench.corpus OUT_DIR --mb 50
    python -m bench.corpus OUT_DIR --runs 1000 [--runs-per-file 10]

Content knobs (probabilities per recording) live in `FEATURES`. Negative-claim spans are UTF-16 code
unit offsets into the answer (or into the `summary` field of a typed JSON answer); `store.spans`
converts.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import multiprocessing
import os
import random
import sys
import time
import zlib
from bisect import bisect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from store.spans import utf16_span

FORMAT_V1 = "agentfootprint.recording.v1"
PRODUCER = {"agentfootprintVersion": "9.62.0", "footprintjsVersion": "9.24.0"}
PRIVACY = {"mode": "full", "policyId": "agentfootprint.privacy.full.v1"}
BASE_MS = 1_796_000_000_000  # 2026-11-29T22:13:20Z
FILES_PER_FOLDER = 1000

FEATURES = {
    "identity": 0.85,  # tenant + principal in meta
    "session": 0.5,  # sessionId in meta (given identity)
    "trace": 0.1,  # traceId + correlationId in meta
    "semantic": 0.4,  # a tool call returns a semantic envelope
    "coverage": 0.6,  # ... which declares coverage
    "absent": 0.12,  # a search-like call finds nothing (absent())
    "tool_error": 0.04,
    "window": 0.7,  # runs of >= 150 events use a sliding window (evictions); runs of >= 400 always do
    "dangling": 0.4,  # ... and an evicted ground leaves a dangling reference
    "typed": 0.08,  # typed JSON answer checked by a .claims() contract (unsupported-claim findings)
    "evidence_gate": 0.2,
    "middleware_deny": 0.05,
    "negative_claims": 0.35,
    "emoji": 0.4,  # the answer carries emoji (often outside the BMP) before its clauses
}

# ----------------------------------------------------------------------------------------- vocabulary

AGENTS = [
    "incident-desk", "oncall-assistant", "san-triage", "db-oncall", "k8s-doctor", "network-noc",
    "release-captain", "capacity-planner", "billing-ops", "edge-cdn-watch", "storage-ops",
    "security-triage", "payments-sre", "search-sre", "queue-keeper", "dns-guardian", "backup-auditor",
    "cost-sentinel", "change-advisor", "observability-bot",
]  # fmt: skip
TENANTS = [
    "acme-corp", "globex", "initech", "umbrella", "hooli", "stark-ind", "wayne-ent", "soylent",
    "tyrell", "cyberdyne",
]  # fmt: skip
SERVICES = [
    "payments", "checkout", "checkout-api", "ledger", "billing", "search", "catalog", "inventory",
    "auth", "sessions", "notifications", "email-relay", "cdn-edge", "image-resizer", "orders",
    "fulfilment", "pricing", "recommendations", "fraud-scoring", "reporting", "etl-nightly",
    "kafka-ingest", "metrics-gateway", "api-gateway", "user-profile", "feature-flags", "ledger-sync",
    "tax-engine", "shipping-quotes", "webhooks", "audit-log", "backup-agent", "dns-resolver",
    "vault-proxy", "queue-workers", "graphql-edge", "mobile-bff", "partner-api", "loyalty", "returns",
]  # fmt: skip
REGIONS = ["us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-south-1", "ap-northeast-1", "sa-east-1"]
HOST_ROLES = ["db-primary", "db-replica", "web", "worker", "cache", "kafka", "etcd", "ingress", "batch"]
NAMESPACES = ["payments", "checkout", "platform", "data", "edge", "identity", "observability"]
ARRAYS = ["VMAX-0457", "VMAX-0460", "PURE-12", "NETAPP-A7", "ISILON-3"]
PORTS = [f"fc{a}/{b}" for a in (1, 2) for b in range(1, 9)]
WINDOWS = ["15m", "1h", "6h", "24h", "7d"]
SYMPTOMS = [
    "slow", "throwing 5xx", "timing out", "paging", "degraded", "flapping", "lagging", "out of disk",
    "dropping connections", "returning stale data", "stuck on deploy", "burning error budget",
]  # fmt: skip
PROMPTS = [
    "Why is {service} {symptom} in {region}?",
    "Is anything on fire for {service} right now?",
    "What changed on {service} in the last {window}?",
    "Can we ship the {service} release tonight, or is something open?",
    "{host} is {symptom} \u2014 what do the alerts say?",
    "Summarise the incidents for {service} over the last {window}.",
    "Which volumes on {array} are nearly full, and is {port} busy?",
    "Is {service} healthy in {region}? The on-call says it is {symptom}.",
    "Did {host} page anyone overnight?",
    "Give me a go/no-go for the {service} change window.",
]
LEADS = [
    "{service} in {region} looks {state}",
    "{host} is {state} after the last deploy",
    "Error rate for {service} is {pct}% over the last {window}",
    "p99 latency for {service} peaked at {ms} ms",
    "{array} is at {pct}% capacity",
    "{port} shows {n} CRC errors in the last hour",
    "The last deploy of {service} was {version}",
    "INC-{inc} is {incstate} for {service}",
]
NEGATIVES = [
    "there are no open incidents for {service}",
    "nothing is failing in {region}",
    "no alerts fired for {host} in the last {window}",
    "the log search came up empty for {service}",
    "no pods are pending in {namespace}",
    "none of the replicas are lagging",
    "no deploys touched {service} since midnight",
    "I found no errors on {port}",
    "there is no sign of packet loss in {region}",
    "nothing else is open for {service}",
]
STATES = ["healthy", "degraded", "recovering", "stable", "noisy", "saturated"]
INC_STATES = ["open", "mitigated", "resolved", "acknowledged"]
EMOJI = ["\U0001f680", "\U0001f525", "\U0001f9ef", "\U0001f4df", "\U0001f6f0\ufe0f", "\U0001f422", "\U0001f4b8",
         "\U0001f9fe", "\u2705", "\u26a0\ufe0f", "\U0001d518", "\U0001f4e6", "\U0001f389", "\U0001f5c4\ufe0f"]  # fmt: skip
PACKS = [
    "en-negatives@3",
    "en-negatives@3",
    "en-negatives@3",
    "en-negatives@3+ext:5d41402a",
    "en-negatives@2",
]
NOTE_CODES = ["entity-unresolved", "absence-kind-normalized", "undeclared-empty", "in-code-block"]
_OPS_TEXT = (
    "the to of and in is for on with that it was at from by as this be are not all no we after before "
    "latency error errors timeout timeouts deploy deploys rollback rollout pod pods node nodes cluster "
    "replica replicas primary failover disk memory cpu throttling queue backlog consumer lag partition "
    "shard index cache hit miss ratio request requests response status code upstream downstream gateway "
    "ingress egress dns tls certificate expiry renewal quota limit budget burn rate slo sli alert alerts "
    "page pager oncall incident incidents postmortem mitigation mitigated resolved outage degraded "
    "capacity volume volumes snapshot backup restore replication sync async batch job cron retry retries "
    "circuit breaker fallback canary blue green feature flag config drift secret rotation token auth "
    "session login checkout payment payments ledger invoice refund order orders inventory search catalog "
    "region zone availability network packet loss jitter bandwidth saturation connection pool handshake "
    "heap gc pause leak restart crashloop oom evicted scheduler autoscaler hpa threshold spike regression "
    "baseline p50 p95 p99 median peak trend hourly daily weekly window metric metrics dashboard log logs "
    "trace traces span spans sampling exporter collector agent agents runbook playbook escalation owner "
    "team change ticket approval freeze release version build pipeline artifact registry image container "
    "kernel patch firmware switch port fabric zoning lun array storage iops throughput write read"
)
OPS_WORDS = _OPS_TEXT.split()


def _tail_words(n: int) -> list[str]:
    """A long tail of pronounceable made-up words (project names, hosts, jargon) for a realistic FTS spread."""
    rng = random.Random(90210)
    onsets = [
        "b",
        "c",
        "d",
        "f",
        "g",
        "k",
        "l",
        "m",
        "n",
        "p",
        "r",
        "s",
        "t",
        "v",
        "z",
        "br",
        "kr",
        "st",
        "tr",
    ]
    vowels = ["a", "e", "i", "o", "u", "ai", "ou", "y"]
    codas = ["", "", "n", "r", "s", "x", "l", "nd", "rk"]
    seen: set[str] = set(OPS_WORDS)
    out: list[str] = []
    while len(out) < n:
        word = "".join(
            rng.choice(onsets) + rng.choice(vowels) for _ in range(rng.randint(1, 3))
        ) + rng.choice(codas)
        if word not in seen:
            seen.add(word)
            out.append(word)
    return out


WORDS = OPS_WORDS + _tail_words(6000)
CUM_WEIGHTS = list(itertools.accumulate(1.0 / (rank + 1) ** 1.07 for rank in range(len(WORDS))))

SEMANTICS_NOTE = (
    "Typed data, not prose. `grain` and `provenance` are caveats that travel with the numbers: check "
    "`is_counter` before summing values from a series, read `measured_at` (and `age_seconds`) as how old "
    "the data is, and treat everything under `not_covered` as ground this result does NOT cover \u2014 a "
    "clean look here says nothing about it."
)
ABSENT_NOTE = (
    "The search ran and matched nothing. This is an ANSWER, not an error: nothing failed, nothing was "
    "substituted for what was asked, and calling this tool again with the same arguments returns this same "
    "result. `checked` is the ground this answer covers; anything under `not_checked` or `cannot_cover` is "
    "ground it does NOT cover, and reaching that needs a different question, not a retry."
)

# name, description, argument kinds, natural render default, searchable (may be absent)
TOOLS = [
    (
        "list_incidents",
        "Read open incidents for one service in the caller tenant.",
        ["service"],
        "table",
        True,
    ),
    (
        "search_alerts",
        "Search fired alerts for one host over a time window",
        ["host", "window"],
        "table",
        True,
    ),
    ("query_logs", "Search service logs for a pattern", ["service", "window"], "table", True),
    ("deploy_log", "Recent deploys for one service", ["service"], "table", True),
    ("get_metrics", "Hourly metrics for one service", ["service", "window"], "chart", False),
    ("port_crc_errors", "Hourly CRC error counters per switch port", ["port"], "chart", False),
    ("service_graph", "Upstream and downstream dependencies of a service", ["service"], "graph", False),
    ("zoning_graph", "Zoning and masking paths for one initiator WWN", ["port"], "graph", False),
    ("change_summary", "Summary of one change ticket", ["service"], "prose", False),
    ("runbook_lookup", "Find the runbook section for a symptom", ["service"], "prose", True),
    ("latency_matrix", "Latency by region and hour", ["service"], "heatmap", False),
    ("volume_inventory", "List volumes on one storage array with capacity facts", ["array"], "table", False),
    ("pod_status", "Pod phases in one namespace", ["namespace"], "table", True),
    ("cert_expiry", "TLS certificates expiring soon", ["service"], "table", True),
    ("queue_depth", "Consumer lag per partition", ["service"], "chart", False),
]
TOOL_BY_NAME = {t[0]: t for t in TOOLS}

# ----------------------------------------------------------------------------------------- helpers


def _hash(text: str) -> str:
    return format(zlib.crc32(text.encode("utf-8")), "x")


def _summary(text: str) -> str:
    return text if len(text) <= 80 else text[:80] + "\u2026"


def _iso(ms: int) -> str:
    stamp = dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _words(rng: random.Random, k: int) -> list[str]:
    return rng.choices(WORDS, cum_weights=CUM_WEIGHTS, k=k)


def _filler(rng: random.Random, k: int) -> str:
    words = _words(rng, k)
    words[0] = words[0].capitalize()
    return " ".join(words) + "."


class _Slots(dict):
    """Template slot values for one run (consistent service/host/region across prompt, tools and answer)."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__(
            service=rng.choice(SERVICES),
            region=rng.choice(REGIONS),
            host=f"{rng.choice(HOST_ROLES)}-{rng.randint(1, 40)}",
            namespace=rng.choice(NAMESPACES),
            array=rng.choice(ARRAYS),
            port=rng.choice(PORTS),
            window=rng.choice(WINDOWS),
            symptom=rng.choice(SYMPTOMS),
            state=rng.choice(STATES),
            incstate=rng.choice(INC_STATES),
            pct=f"{rng.uniform(0.1, 99):.1f}",
            ms=str(rng.randint(40, 9000)),
            n=str(rng.randint(1, 500)),
            inc=str(rng.randint(1, 9999)),
            version=f"v{rng.randint(1, 9)}.{rng.randint(0, 60)}.{rng.randint(0, 9)}",
        )

    def fill(self, template: str) -> str:
        return template.format_map(self)


# ----------------------------------------------------------------------------------------- structure

_SUB = {"type": "stage", "isSubflowRoot": True}


def _structure(window: bool) -> dict:
    route = {
        "name": "Route", "id": "sf-route", "type": "decider", "hasDecider": True, "description": "ReAct routing",
        "children": [
            {"name": "ToolCalls", "id": "tool-calls", "type": "stage", "isPausable": True,
             "description": "Tool execution (pausable via pauseHere)", "loopTarget": "sf-injection-engine",
             "next": {"name": "sf-injection-engine", "id": "sf-injection-engine", "type": "loop",
                      "isLoopReference": True}},
            {"name": "WrapUp", "id": "wrap-up", "type": "stage",
             "description": "Action budget exhausted \u2014 one last call with the tools withheld, for a real answer",
             "loopTarget": "sf-injection-engine"},
            {"name": "Final", "id": "final", **_SUB, "subflowId": "final", "subflowName": "Final",
             "subflowStructure": {"name": "PrepareFinal", "id": "prepare-final", "type": "stage",
                                  "description": "Capture turn payload (finalContent + newMessages)",
                                  "next": {"name": "BreakFinal", "id": "break-final", "type": "stage",
                                           "description": "Terminate the ReAct loop"}}},
        ],
        "branchIds": ["tool-calls", "wrap-up", "final"],
    }  # fmt: skip
    call_llm = {
        "name": "CallLLM", "id": "call-llm", "type": "stage", "description": "LLM invocation",
        "next": {"name": "NormalizeThinking", "id": "sf-thinking", **_SUB, "subflowId": "sf-thinking",
                 "subflowName": "NormalizeThinking",
                 "subflowStructure": {"name": "Normalize", "id": "thinking-mock", "type": "stage",
                                      "description": "Normalize mock thinking blocks"},
                 "next": route},
    }  # fmt: skip
    context = {
        "name": "Context", "id": "context", "type": "selector", "hasSelector": True,
        "description": "Assemble request context: system-prompt + messages + tools (parallel)",
        "children": [
            {"name": "System Prompt", "id": "sf-system-prompt", **_SUB, "subflowId": "sf-system-prompt",
             "subflowName": "System Prompt", "subflowStructure": {"name": "Compose", "id": "compose",
                                                                 "type": "stage",
                                                                 "description": "Compose system-prompt slot"}},
            {"name": "Messages", "id": "sf-messages", **_SUB, "subflowId": "sf-messages", "subflowName": "Messages",
             "subflowStructure": {"name": "Compose", "id": "compose", "type": "stage",
                                  "description": "Compose messages slot"}},
            {"name": "Tools", "id": "sf-tools", **_SUB, "subflowId": "sf-tools", "subflowName": "Tools",
             "subflowStructure": {"name": "Discover", "id": "discover", "type": "stage",
                                  "description": "Discover provider tools",
                                  "next": {"name": "Compose", "id": "compose", "type": "stage",
                                           "description": "Compose tools slot"}}},
        ],
        "branchIds": ["sf-system-prompt", "sf-messages", "sf-tools"],
        "next": {"name": "Cache", "id": "sf-cache", **_SUB, "subflowId": "sf-cache", "subflowName": "Cache",
                 "subflowStructure": {"name": "CacheDecision", "id": "decide-cache-markers", "type": "stage",
                                      "description": "CacheDecision: walk activeInjections, evaluate cache "
                                                     "directives, emit CacheMarker[]"},
                 "next": call_llm},
    }  # fmt: skip
    engine = {
        "name": "Injection Engine", "id": "sf-injection-engine", **_SUB, "subflowId": "sf-injection-engine",
        "subflowName": "Injection Engine",
        "subflowStructure": {
            "name": "Gather", "id": "gather", "type": "stage",
            "description": "Snapshot this turn's injection inputs (iteration, history, last tool, LLM-activated)",
            "next": {"name": "Evaluate", "id": "evaluate", "type": "stage",
                     "description": "Evaluate every Injection trigger; produce activeInjections + metadata"}},
        "next": context,
    }  # fmt: skip
    head: dict[str, Any] = engine
    if window:
        head = {
            "name": "Compact",
            "id": "compact",
            "type": "stage",
            "description": "Apply the 'sliding-window' window strategy to the live window",
            "next": engine,
        }
    return {
        "name": "Initialize",
        "id": "seed",
        "type": "stage",
        "description": "Agent: ReAct loop",
        "next": head,
    }


STRUCTURE = {False: _structure(False), True: _structure(True)}
SUBFLOWS = [
    ("sf-injection-engine", "Injection Engine"),
    ("sf-system-prompt", "System Prompt"),
    ("sf-messages", "Messages"),
    ("sf-tools", "Tools"),
    ("sf-cache", "Cache"),
    ("sf-thinking", "NormalizeThinking"),
]

# ----------------------------------------------------------------------------------------- tool results


def _tool_call(rng: random.Random, slots: _Slots, iteration: int, call_id: str) -> dict[str, Any]:
    """One tool call: args, model-view result, events between start and end, status, history text."""
    name, desc, arg_kinds, render_default, searchable = rng.choice(TOOLS)
    args: dict[str, Any] = {}
    for kind in arg_kinds:
        args[kind] = slots[kind] if rng.random() < 0.7 else _Slots(rng)[kind]
    call: dict[str, Any] = {
        "name": name,
        "id": call_id,
        "args": args,
        "extras": [],
        "status": None,
        "error": False,
    }
    measured = f"2026-11-{rng.randint(20, 29):02d}T{rng.randint(0, 23):02d}:00:00Z"
    provenance = {
        "measured_at": measured,
        "age_seconds": rng.choice([60, 300, 900, 3600]),
        "source": _source(name),
    }
    roll = rng.random()
    if roll < FEATURES["tool_error"]:
        call["error"] = True
        call["result"] = f"{name} failed: upstream returned 503 after {rng.randint(2, 30)}s"
        return call
    if searchable and roll < FEATURES["tool_error"] + FEATURES["absent"]:
        what = f"{name.replace('_', ' ')} for {next(iter(args.values()))}"
        checked = [{"what": f"{provenance['source']} (live query)"}]
        not_checked = [{"what": "records older than the retention window", "why": "archived to cold storage"}]
        cannot = [{"what": "reports filed by email", "why": "email reports never enter this store"}]
        payload: dict[str, Any] = {"iteration": iteration, "lookedFor": what, "checked": checked}
        if rng.random() < 0.6:
            payload["notChecked"] = not_checked
        payload["cannotCover"] = cannot
        call["extras"].append(("tools.absent", payload))
        result: dict[str, Any] = {
            "af_absent": True,
            "outcome": "nothing_found",
            "looked_for": what,
            "checked": checked,
        }
        if "notChecked" in payload:
            result["not_checked"] = not_checked
        result.update(
            {
                "cannot_cover": cannot,
                "retry_returns_the_same": True,
                "try_instead": "Widen the window or ask about a neighbouring service.",
                "note": ABSENT_NOTE,
            }
        )
        call.update(result=result, status="absent", coverage_row=("absence", payload))
        return call
    data_key, data = _data(rng, render_default, args, slots)
    if rng.random() >= FEATURES["semantic"]:
        call["result"] = {data_key: data, "source": provenance["source"]}
        return call
    env: dict[str, Any] = {"af_semantics": True, data_key: data}
    if data_key == "series":
        counter = name in ("port_crc_errors", "queue_depth")
        env["grain"] = {
            "interval": "1h",
            "aggregation": "sum" if counter else rng.choice(["avg", "max", "p95"]),
            "is_counter": counter,
        }
    elif data_key == "facts" and rng.random() < 0.3:
        env["grain"] = {"collapsed": "per-instance rows collapsed to per-service"}
    env["provenance"] = provenance
    cov = None
    if rng.random() < FEATURES["coverage"]:
        cov = {"checked": [{"what": f"{provenance['source']} for {next(iter(args.values()))}"}]}
        if rng.random() < 0.5:
            cov["not_checked"] = [{"what": "the last 5 minutes", "why": "ingest lag \u2014 ask again"}]
        cov["cannot_cover"] = [{"what": "the peer region", "why": "this collector is scoped to one region"}]
        env["coverage"] = cov
        env["not_covered"] = [
            it["what"] + (" \u2014 " + it["why"] if it.get("why") else "")
            for it in cov.get("not_checked", []) + cov["cannot_cover"]
        ]
    if data_key == "edges" and rng.random() < 0.5:
        env["clarify"] = {
            "question": f"{args[arg_kinds[0]]} has two candidate owners \u2014 which one do you mean?",
            "candidates": [data[0]["to"], data[-1]["to"]],
        }
    elif rng.random() < 0.5:
        env["clarify"] = None
    default = render_default if rng.random() < 0.95 else rng.choice(["sankey", "timeline", "heatmap"])
    render: dict[str, Any] = {"default": default}
    if data_key == "facts":
        render["columns"] = list(data[0].keys())[:5]
        render["sort"] = f"{list(data[0].keys())[-1]} desc"
        if rng.random() < 0.4:
            render["filter_note"] = "resolved rows excluded"
    elif data_key == "series":
        render["chart_hint"] = rng.choice(["line per entity", "line per metric", "stacked area per entity"])
        render["sort"] = "t asc"
    elif data_key == "edges":
        render["chart_hint"] = "node-link, caller on the left"
    env["render"] = render
    env["note"] = SEMANTICS_NOTE
    if cov is not None:
        lists = {
            dst: cov[src]
            for src, dst in (
                ("checked", "checked"),
                ("not_checked", "notChecked"),
                ("cannot_cover", "cannotCover"),
            )
            if cov.get(src)
        }
        call["extras"].append(("tools.coverage_declared", {"iteration": iteration, **lists}))
        call["coverage_row"] = ("ledger", lists)
    call["extras"].append(("tools.semantics_declared", {"iteration": iteration, "semantics": env}))
    view = {k: v for k, v in env.items() if k not in ("af_semantics", "render", "coverage")}
    if view.get("clarify", 0) is None:
        del view["clarify"]
    call["result"] = view
    return call


def _source(tool: str) -> str:
    return {
        "list_incidents": "incident store",
        "search_alerts": "Alertmanager",
        "query_logs": "Loki",
        "deploy_log": "ArgoCD",
        "get_metrics": "Prometheus",
        "port_crc_errors": "Brocade SANnav",
        "service_graph": "service catalog",
        "zoning_graph": "masking views export",
        "change_summary": "ServiceNow",
        "runbook_lookup": "runbook wiki",
        "latency_matrix": "Prometheus",
        "volume_inventory": "Unisphere REST",
        "pod_status": "Kubernetes API",
        "cert_expiry": "cert-manager",
        "queue_depth": "Kafka admin API",
    }[tool]


def _data(rng: random.Random, default: str, args: dict, slots: _Slots) -> tuple[str, list]:
    entity = str(next(iter(args.values())))
    if default in ("chart", "heatmap"):
        metric = rng.choice(["error_rate", "p99_ms", "rps", "crc_errors", "consumer_lag", "cpu_pct"])
        entities = [entity] + [f"{entity}-{i}" for i in range(rng.randint(0, 2))]
        hours = rng.randint(4, 12)
        return "series", [
            {
                "t": f"2026-11-29T{h:02d}:00:00Z",
                "entity": e,
                "metric": metric,
                "value": round(rng.uniform(0, 500), 1),
            }
            for e in entities
            for h in range(hours)
        ]
    if default == "graph":
        return "edges", [
            {
                "from": entity,
                "to": rng.choice(SERVICES),
                "kind": rng.choice(["calls", "reads-from", "publishes-to"]),
            }
            for _ in range(rng.randint(2, 12))
        ]
    if default == "prose":
        return "facts", [
            {
                "entity": f"CHG-{rng.randint(1000, 9999)}",
                "title": f"{rng.choice(['Upgrade', 'Rollback', 'Rotate', 'Resize'])} {entity}",
                "risk": rng.choice(["low", "medium", "high"]),
                "summary": " ".join(_filler(rng, rng.randint(8, 20)) for _ in range(rng.randint(1, 4))),
            }
        ]
    return "facts", [
        {
            "entity": f"{entity}-{i}",
            "status": rng.choice(["open", "firing", "ok", "pending", "resolved"]),
            "severity": rng.choice(["sev1", "sev2", "sev3", "info"]),
            "region": rng.choice(REGIONS),
            "detail": _filler(rng, rng.randint(3, 10)),
            "value": round(rng.uniform(0, 100), 2),
        }
        for i in range(rng.randint(1, 8))
    ]


# ----------------------------------------------------------------------------------------- one run


class _Run:
    """Builds one run's events (canonical order, real stage ids) and remembers what the snapshot needs."""

    def __init__(
        self,
        rng: random.Random,
        run_id: str,
        start_ms: int,
        agent_id: str,
        meta_extra: dict,
        history: list[dict],
        tools: list[tuple],
    ) -> None:
        self.rng = rng
        self.run_id, self.start_ms, self.agent_id = run_id, start_ms, agent_id
        self.meta_extra = meta_extra
        self.events: list[dict] = []
        self.offset = 0
        self.history = history
        self.in_tokens = self.out_tokens = self.llm_calls = 0
        self.iteration = 0
        self.stage_base = 0
        self.tools = tools
        self.tool_names = [t[0] for t in self.tools]
        self.system_prompt = (
            f"You are {agent_id[6:]}, an operations assistant for on-call engineers. "
            "Answer from tool results only and say what you did not check."
        )
        self.coverage_rows: list[dict] = []
        self.compactions: list[dict] = []
        self.window: int | None = None
        self.hash_of: dict[int, tuple[str, str, str]] = {}  # history index -> (contentHash, stage, tool)
        self.last_results: list[dict] = []
        self.stages: list[tuple[str, str]] = []  # (runtimeStageId, name) in execution order
        self.dangling_done = False
        self.dropped_tools: list[str] = []
        self.integrity_ids: list[str] = []
        self.dangling_passes = 0
        self.want_dangling = False
        self.evicted_upto = 0
        self.request_pos = 0
        self.findings = 0

    def emit(self, type_: str, payload: dict, stage: str, dt_ms: int = 0) -> None:
        self.offset += dt_ms
        slash = stage.find("/")
        meta = {
            "wallClockMs": self.start_ms + self.offset,
            "runOffsetMs": self.offset,
            "runtimeStageId": stage,
            "subflowPath": [stage[:slash]] if slash > 0 else [],
            "compositionPath": [self.agent_id],
            "runId": self.run_id,
        }
        if self.meta_extra:
            meta.update(self.meta_extra)
        self.events.append({"type": type_, "payload": payload, "meta": meta})

    # ------------------------------------------------------------------ phases
    def start(self, prompt: str, config: dict, middleware: bool) -> None:
        if self.window is not None:  # what earlier runs of the conversation already evicted
            self.evicted_upto = max(0, len(self.history) - self.window)
        self.emit("agentfootprint.agent.run_configured", config, "run-configured#0", 2)
        if middleware:
            for mw in ("trim-whitespace", "secret-scanner"):
                self.emit(
                    "agentfootprint.middleware.decision",
                    {"middleware": mw, "moment": "input", "at": "message", "phase": "input", "iteration": 0,
                     "outcome": "allow", "changed": False},
                    "seed#0",
                )  # fmt: skip
        self.request_pos = len(self.history)
        self.history.append({"role": "user", "content": prompt})
        self.emit("agentfootprint.agent.turn_start", {"turnIndex": 0, "userPrompt": prompt}, "seed#0", 3)
        self.stages.append(("seed#0", "Initialize"))

    def _compose(self) -> None:
        it, base = self.iteration, self.stage_base
        self.stages.append((f"sf-injection-engine#{base + 1}", "Injection Engine"))
        self.emit(
            "agentfootprint.context.evaluated",
            {"iteration": it, "activeCount": 0, "skippedCount": 0, "evaluatedTotal": 0, "activeIds": [],
             "skippedDetails": [], "triggerKindCounts": {}, "skillCatalog": []},
            f"sf-injection-engine/evaluate#{base + 3}",
            3,
        )  # fmt: skip
        stage = f"sf-system-prompt/compose#{base + 8}"
        sp = self.system_prompt
        self.emit(
            "agentfootprint.context.injected",
            {"contentSummary": _summary(sp), "contentHash": _hash(sp), "slot": "system-prompt", "source": "base",
             "reason": "Agent.system()", "rawContent": sp},
            stage,
            1,
        )  # fmt: skip
        self.emit(
            "agentfootprint.context.slot_composed",
            {"slot": "system-prompt", "iteration": it, "budget": {"cap": 4000, "used": len(sp),
             "headroomChars": 4000 - len(sp)}, "sourceBreakdown": {"base": {"chars": len(sp), "count": 1}},
             "droppedCount": 0, "droppedSummaries": []},
            stage,
        )  # fmt: skip
        stage = f"sf-messages/compose#{base + 10}"
        first = 0 if self.window is None else max(0, len(self.history) - self.window)
        positions = range(first, len(self.history))
        if first > self.request_pos:  # the current request is never windowed out
            positions = [self.request_pos, *positions]
        breakdown: dict[str, dict[str, int]] = {}
        used = 0
        last = len(self.history) - 1
        for slot_pos, pos in enumerate(positions):
            msg = self.history[pos]
            raw = msg["content"]
            role = msg["role"]
            source = "tool-result" if role == "tool" else role
            known = self.hash_of.get(pos)
            chash = known[0] if known else _hash(f"{pos}{raw}")
            payload = {
                "contentSummary": _summary(raw), "contentHash": chash, "slot": "messages", "source": source,
                "reason": f"conversation history [{pos}]", "rawContent": raw, "asRole": role,
                "asRecency": "latest" if pos == last else "earlier", "position": slot_pos,
            }  # fmt: skip
            if role == "tool":
                payload["sourceId"] = msg["toolCallId"]
            self.emit("agentfootprint.context.injected", payload, stage)
            row = breakdown.setdefault(source, {"chars": 0, "count": 0})
            row["chars"] += len(raw)
            row["count"] += 1
            used += len(raw)
        self.emit(
            "agentfootprint.context.slot_composed",
            {"slot": "messages", "iteration": it, "budget": {"cap": 24000, "used": used,
             "headroomChars": max(0, 24000 - used)}, "sourceBreakdown": breakdown,
             "orderingStrategy": "history-order", "droppedCount": first, "droppedSummaries": []},
            stage,
            1,
        )  # fmt: skip
        stage = f"sf-tools/compose#{base + 13}"
        used = 0
        for pos, tool in enumerate(self.tools):
            raw = f"{tool[0]}: {tool[1]}"
            used += len(raw)
            self.emit(
                "agentfootprint.context.injected",
                {"contentSummary": _summary(raw), "contentHash": _hash(raw), "slot": "tools", "source": "registry",
                 "sourceId": tool[0], "reason": "tool registry", "rawContent": raw, "position": pos},
                stage,
            )  # fmt: skip
        self.emit(
            "agentfootprint.context.slot_composed",
            {"slot": "tools", "iteration": it, "budget": {"cap": 4000, "used": used, "headroomChars": 4000 - used},
             "sourceBreakdown": {"registry": {"chars": used, "count": len(self.tools)}},
             "orderingStrategy": "registry+injections", "droppedCount": 0, "droppedSummaries": []},
            stage,
        )  # fmt: skip
        for sid, name in SUBFLOWS[1:5]:
            self.stages.append((f"{sid}#{base + 7 + SUBFLOWS.index((sid, name)) * 2}", name))

    def _llm(self, content: str, n_calls: int) -> None:
        it = self.iteration
        stage = f"call-llm#{self.stage_base + 18}"
        self.stages.append((stage, "CallLLM"))
        self.emit("agentfootprint.agent.iteration_start", {"turnIndex": 0, "iterIndex": it}, stage, 2)
        prompt_chars = len(self.system_prompt) + sum(len(m["content"]) for m in self.history[-24:])
        self.emit(
            "agentfootprint.stream.llm_start",
            {"iteration": it, "provider": "mock", "model": "mock-small", "systemPromptChars": len(self.system_prompt),
             "messagesCount": len(self.history), "toolsCount": len(self.tools),
             "tools": [{"name": t[0], "description": t[1]} for t in self.tools]},
            stage,
        )  # fmt: skip
        if self.want_dangling and self.dropped_tools:
            self.dangling_passes += 1  # every failing pass counts; the finding is filed once per run
            if not self.dangling_done:
                self.emit_dangling(stage)
        words = content.split(" ")
        last = len(words) - 1
        for i, word in enumerate(words):
            self.emit(
                "agentfootprint.stream.token",
                {"iteration": it, "tokenIndex": i, "content": word if i == last else word + " "},
                stage,
                3,
            )
        usage_in, usage_out = prompt_chars // 4 + 1, len(words) + 2
        self.in_tokens += usage_in
        self.out_tokens += usage_out
        self.llm_calls += 1
        self.emit(
            "agentfootprint.stream.llm_end",
            {"iteration": it, "content": content, "toolCallCount": n_calls, "usage": {"input": usage_in,
             "output": usage_out}, "stopReason": "tool_use" if n_calls else "stop",
             "durationMs": 40 + 7 * len(words)},
            stage,
            4,
        )  # fmt: skip

    def live_window(self) -> list[dict]:
        """The transcript the next call sees: all of it, or the request plus the last `window` messages."""
        if self.window is None or len(self.history) <= self.window:
            return list(self.history)
        tail = self.history[-self.window :]
        return (
            tail
            if len(self.history) - self.window <= self.request_pos
            else [self.history[self.request_pos], *tail]
        )

    # ------------------------------------------------------------------ dangling reference
    def emit_dangling(self, stage: str) -> None:
        ground = self.dropped_tools[0]
        offered = next((t for t in self.tool_names if t != ground), ground)
        self.dangling_done = True
        self.integrity_ids.append(f"dangling-reference @compose [tool {offered} + tool {ground}]  ")
        self.emit(
            "agentfootprint.integrity.context_error",
            {
                "kind": "dangling-reference",
                "seam": "compose",
                "subjects": [{"kind": "tool", "id": offered}, {"kind": "tool", "id": ground}],
                "witnesses": [
                    {
                        "subject": {"kind": "tool", "id": offered},
                        "predicate": "argument-ground",
                        "value": f"results of '{ground}' evicted, not re-established",
                        "epoch": self.iteration,
                        "stratum": "asserted",
                        "provenance": f"window ledger: '{ground}' in droppedObservations, no result in window",
                    }
                ],
                "epoch": self.iteration,
                "message": f"'{offered}' is being offered while the results that ground its arguments have left "
                f"the window ({ground}) and were not re-established. A call the model makes with remembered "
                f"values cannot be checked against evidence nobody can see \u2014 re-fetching (calling {ground} "
                "again) re-grounds it; nothing here withholds the tool.",
                "iteration": self.iteration,
            },
            stage,
        )
        self.findings += 1

    # ------------------------------------------------------------------ iterations
    def tool_iteration(self, slots: _Slots, n_calls: int, thought_words: int) -> None:
        rng = self.rng
        self.iteration += 1
        self._compose()
        thought = _filler(rng, thought_words)
        calls = [
            _tool_call(rng, slots, self.iteration, f"call-{self.iteration}-{i + 1}") for i in range(n_calls)
        ]
        self._llm(thought, n_calls)
        base = self.stage_base
        self.emit(
            "agentfootprint.agent.route_decided",
            {"turnIndex": 0, "iterIndex": self.iteration, "chosen": "tool-calls",
             "rationale": f"LLM requested {n_calls} tool call(s)"},
            f"sf-route#{base + 21}",
            1,
        )  # fmt: skip
        self.stages.append((f"sf-route#{base + 21}", "Route"))
        stage = f"tool-calls#{base + 22}"
        self.stages.append((stage, "ToolCalls"))
        self.history.append(
            {"role": "assistant", "content": thought,
             "toolCalls": [{"id": c["id"], "name": c["name"], "args": c["args"]} for c in calls]}
        )  # fmt: skip
        self.last_results = []
        for c in calls:
            start: dict[str, Any] = {"toolName": c["name"], "toolCallId": c["id"], "args": c["args"]}
            if n_calls > 1:
                start["parallelCount"] = n_calls
            self.emit("agentfootprint.stream.tool_start", start, stage, 1)
            for type_, payload in c["extras"]:
                self.emit(
                    "agentfootprint." + type_,
                    {"toolName": c["name"], "toolCallId": c["id"], **payload},
                    stage,
                )
            if "coverage_row" in c:
                kind, lists = c["coverage_row"]
                row = {
                    "kind": kind,
                    "toolName": c["name"],
                    "toolCallId": c["id"],
                    "iteration": self.iteration,
                }
                if kind == "absence":
                    row["lookedFor"] = lists["lookedFor"]
                row.update(
                    checked=lists.get("checked", []),
                    notChecked=lists.get("notChecked", []),
                    cannotCover=lists.get("cannotCover", []),
                )
                self.coverage_rows.append(row)
            duration = rng.randint(1, 900)
            end: dict[str, Any] = {"toolCallId": c["id"], "result": c["result"]}
            if c["error"]:
                end["error"] = True
            end["durationMs"] = duration
            if c["status"]:
                end["status"] = c["status"]
            self.emit("agentfootprint.stream.tool_end", end, stage, duration)
            content = c["result"] if isinstance(c["result"], str) else orjson.dumps(c["result"]).decode()
            pos = len(self.history)
            self.history.append(
                {"role": "tool", "content": content, "toolCallId": c["id"], "toolName": c["name"]}
            )
            self.hash_of[pos] = (_hash(f"{pos}{content}"), stage, c["name"])
            self.last_results.append({"toolName": c["name"], "result": content, "toolCallId": c["id"]})
        self.emit(
            "agentfootprint.agent.iteration_end",
            {
                "turnIndex": 0,
                "iterIndex": self.iteration,
                "toolCallCount": n_calls,
                "history": self.live_window(),
            },
            stage,
            1,
        )
        self.stage_base += 22
        if self.window is not None:
            self._compact()

    def _compact(self) -> None:
        """Sliding window: evict what fell out of the window; file context.evicted + a WindowRecord."""
        stage = f"compact#{self.stage_base + 1}"
        self.stage_base += 1
        first_kept = max(0, len(self.history) - self.window)
        already = self.evicted_upto
        removed = list(range(already, first_kept))
        self.evicted_upto = max(already, first_kept)
        record: dict[str, Any] = {
            "strategy": "sliding-window",
            "iteration": self.iteration + 1,
            "keepRecentTurns": 2,
            "removedStageIds": [],
            "removedMessageCount": len(removed),
            "windowCharsBefore": sum(len(m["content"]) for m in self.history[already:]),
            "windowCharsAfter": sum(len(m["content"]) for m in self.history[first_kept:]),
            "refusals": [{"reason": "current-request", "turnIndex": 0, "messageIndex": self.request_pos}],
        }
        dropped: list[str] = []
        for pos in removed:
            known = self.hash_of.get(pos)
            if pos == self.request_pos:
                continue
            if known:
                chash, tool_stage, tool = known
                if tool_stage not in record["removedStageIds"]:
                    record["removedStageIds"].append(tool_stage)
                if tool not in dropped:
                    dropped.append(tool)
            else:
                chash = _hash(f"{pos}{self.history[pos]['content']}")
            self.emit(
                "agentfootprint.context.evicted",
                {
                    "slot": "messages",
                    "contentHash": chash,
                    "reason": "budget",
                    "survivalMs": self.rng.randint(5, 900),
                },
                stage,
            )
        if dropped:
            record["droppedObservations"] = dropped
            for tool in dropped:
                if tool not in self.dropped_tools:
                    self.dropped_tools.append(tool)
        record["observations"] = {"pinned": [], "yielded": 0, "limit": 2}
        self.compactions.append(record)
        self.stages.append((stage, "Compact"))

    def final(
        self, answer: str, route_events: list[tuple[str, dict]], after_route: list[tuple[str, dict]]
    ) -> None:
        self.iteration += 1
        self._compose()
        self._llm(answer, 0)
        base = self.stage_base
        route = f"sf-route#{base + 21}"
        for type_, payload in route_events:
            self.emit(type_, payload, route)
        self.emit(
            "agentfootprint.agent.route_decided",
            {"turnIndex": 0, "iterIndex": self.iteration, "chosen": "final",
             "rationale": "LLM produced no tool calls \u2014 final answer"},
            route,
            1,
        )  # fmt: skip
        self.stages.append((route, "Route"))
        for type_, payload in after_route:
            self.emit(type_, payload, route)
        stage = f"final/prepare-final#{base + 23}"
        self.stages.append((f"final#{base + 22}", "Final"))
        self.emit(
            "agentfootprint.agent.iteration_end",
            {"turnIndex": 0, "iterIndex": self.iteration, "toolCallCount": 0},
            stage,
        )
        self.emit(
            "agentfootprint.agent.turn_end",
            {"turnIndex": 0, "finalContent": answer, "totalInputTokens": self.in_tokens,
             "totalOutputTokens": self.out_tokens, "iterationCount": self.iteration, "durationMs": self.offset - 3},
            stage,
            1,
        )  # fmt: skip

    def disposition(self, typed_checked: int, claim_findings: int) -> None:
        def row(check: str, seam: str, checked: int, findings: int) -> dict:
            return {"check": check, "seam": seam, "checked": checked, "findings": findings,
                    "notApplicable": 0 if checked else 1, "unreachable": 0, "synthetic": 0}  # fmt: skip

        dangling_checked = self.iteration if self.window is not None else 0
        self.emit(
            "agentfootprint.integrity.disposition",
            {
                "posture": "observe",
                "workExisted": True,
                "rows": [
                    row("invariant-violation", "wire", self.llm_calls, 0),
                    row("invariant-violation", "compose", 0, 0),
                    row(
                        "dangling-reference",
                        "compose",
                        dangling_checked,
                        self.dangling_passes if self.dangling_done else 0,
                    ),
                    row("unsupported-claim", "claim", typed_checked, claim_findings),
                ],
            },
            "integrity-disposition#0",
            2,
        )


# ----------------------------------------------------------------------------------------- answers


def _answer(
    rng: random.Random, slots: _Slots, n_words: int, negatives: int, emoji: bool
) -> tuple[str, list[str]]:
    """Prose answer of about n_words words; returns the text and the negative clauses it contains."""
    parts: list[str] = []
    clauses: list[str] = []
    if emoji:
        parts.append(rng.choice(EMOJI))
    parts.append(slots.fill(rng.choice(LEADS)) + ".")
    words = sum(len(p.split()) for p in parts)
    for _ in range(negatives):
        clause = slots.fill(rng.choice(NEGATIVES))
        if clause in clauses:
            continue
        if emoji and rng.random() < 0.5:
            parts.append(rng.choice(EMOJI))
        lead = rng.choice(["Also,", "As far as I can tell,", "For the record,", "Good news:", "Checked:"])
        parts.append(f"{lead} {clause}.")
        clauses.append(clause)
        words += len(lead.split()) + len(clause.split())
    while words < n_words:
        k = min(rng.randint(6, 18), max(3, n_words - words))
        parts.insert(rng.randint(1, len(parts)), _filler(rng, k))
        words += k
    return " ".join(parts), clauses


def _negative_events(
    rng: random.Random,
    text: str,
    clauses: list[str],
    field_name: str,
    iteration: int,
    refs: list[dict],
    no_read: bool,
) -> list[tuple[str, dict]]:
    pack = rng.choice(PACKS)
    out: list[tuple[str, dict]] = []
    if no_read:
        payload = {"kind": "negative-claim-note", "field": field_name, "phrasePackVersion": pack,
                   "iteration": iteration, "turn": 0, "code": "no-read", "truncated": False}  # fmt: skip
        return [("agentfootprint.findings.negative_claim", payload)]
    for clause in clauses:
        payload = {
            "kind": "negative-claim",
            "field": field_name,
            "span": utf16_span(text, clause),
            "phrasePackVersion": pack,
            "iteration": iteration,
            "turn": 0,
            "notes": [] if rng.random() < 0.5 else [rng.choice(NOTE_CODES)],
            "refs": rng.sample(refs, min(len(refs), rng.randint(1, 3))) if refs else [],
            "truncated": rng.random() < 0.05,
        }
        out.append(("agentfootprint.findings.negative_claim", payload))
    if rng.random() < 0.05:
        sentence = text.split(". ")[0]
        out.append(
            (
                "agentfootprint.findings.negative_claim",
                {"kind": "unread-unit", "field": field_name, "span": utf16_span(text, sentence),
                 "phrasePackVersion": pack, "iteration": iteration, "turn": 0, "code": "language-unsupported",
                 "truncated": False},
            )
        )  # fmt: skip
    return out


# ----------------------------------------------------------------------------------------- snapshot


def _snapshot(run: _Run, *, heavy: bool, target_bytes: int, extra_state: dict, identity: dict) -> dict:
    history = run.history
    shared: dict[str, Any] = {
        "userMessage": next(m["content"] for m in reversed(history) if m["role"] == "user"),
        "history": history,
        "runIdentity": identity,
        "newMessages": [],
        "turnNumber": extra_state.pop("_turnNumber", 1),
        "contextTokensRemaining": 32000,
        "iteration": run.iteration,
        "maxIterations": max(8, run.iteration + 2),
        "totalInputTokens": run.in_tokens,
        "totalOutputTokens": run.out_tokens,
        "turnStartMs": run.start_ms + 5,
        "systemPromptInjections": [],
        "messagesInjections": [],
        "toolsInjections": [],
        "llmLatestContent": extra_state.pop("_answer", ""),
        "llmLatestToolCalls": [],
        "thinkingBlocks": [],
        "pausedToolCallId": "",
        "pausedToolName": "",
        "pausedToolStartMs": 0,
        "cumTokensInput": run.in_tokens,
        "cumTokensOutput": run.out_tokens,
        "cumEstimatedUsd": 0,
        "costBudgetHit": False,
        "activeInjections": [],
        "activatedInjectionIds": [],
        "dynamicToolSchemas": [
            {"name": t[0], "description": t[1],
             "inputSchema": {"type": "object", "properties": {k: {"type": "string"} for k in t[2]}, "required": t[2]}}
            for t in run.tools
        ],
        "deliveredMessageKeys": [],
        "cacheMarkers": [{"field": "system", "boundaryIndex": 0, "ttl": "short",
                          "reason": "system stable prefix (1 entries, ending at base system prompt)"}],
        "cachingDisabled": False,
        "skillHistory": [],
        "activeByslot": {"systemPrompt": [], "messages": [], "tools": []},
    }  # fmt: skip
    if run.coverage_rows:
        shared["coverageDeclared"] = run.coverage_rows
    if run.compactions:
        shared["compactions"] = run.compactions
    if run.integrity_ids:
        shared["integrityFindingIds"] = run.integrity_ids
    shared.update(extra_state)
    if run.last_results:
        shared["lastToolResult"] = {
            "toolName": run.last_results[-1]["toolName"],
            "result": run.last_results[-1]["result"],
        }
        shared["toolResults"] = run.last_results
    snap: dict[str, Any] = {"sharedState": shared}
    ts = run.start_ms + 6
    msg_sizes = [len(orjson.dumps(m)) + 1 for m in history] if heavy else []
    prefix_sizes = list(itertools.accumulate(msg_sizes, initial=1))

    def hist(upto: int, cap: int) -> list[dict]:
        """history[:upto], trimmed from the front to about `cap` bytes (a windowed view)."""
        lo = bisect(prefix_sizes, prefix_sizes[upto] - cap)
        return history[min(lo, upto) : upto]

    n_hist = len(history)
    iters = max(1, run.iteration)
    tree_cap = max(1000, target_bytes // (10 * iters))
    stages = run.stages[:64]
    tree = None
    for rsid, name in reversed(stages):
        node = {"id": rsid.split("#")[0], "runtimeStageId": rsid, "name": name, "isDecider": name == "Route",
                "isFork": False, "logs": {}, "errors": {}, "metrics": {}, "evals": {}}  # fmt: skip
        if heavy:
            node["stageWrites"] = (
                {"iteration": run.iteration, "history": hist(n_hist, tree_cap)} if name == "ToolCalls" else {}
            )
        node["flowMessages"] = [{"type": "next", "description": f"Moving to {name} stage", "timestamp": ts,
                                 "targetStage": name}]  # fmt: skip
        if tree is not None:
            node["next"] = tree
        tree = node
    snap["executionTree"] = tree
    snap["initialState"] = {}
    snap["commitLog"] = []
    snap["commitValues"] = "delta"
    snap["writeProvenance"] = "off"
    snap["runId"] = f"{run.start_ms + 3}-{run.start_ms % 10_000_000_000:010d}"
    snap["subflowResults"] = {}
    snap["recorders"] = []
    if not heavy:
        return snap
    # Heavy part: repeat the transcript the way footprintjs does (commit log, subflow results, boundary log),
    # using references to shared prefixes of `history` so building costs little. Sized to `target_bytes`.
    have = len(orjson.dumps(snap))
    budget = max(0, target_bytes - have)
    unit_cap = max(2000, budget // max(8, iters * 3))
    commit: list[dict] = []
    subflows: dict[str, Any] = {}
    boundary: list[dict] = []
    spent = 0
    goals = (budget * 0.14, budget * 0.66, budget)  # commitLog, subflowResults, recorders
    idx = 0
    step = 0
    while spent < goals[0]:
        upto = min(n_hist, 1 + (idx % iters) * max(1, n_hist // iters))
        h = hist(upto, unit_cap)
        entry = {"overwrite": {}, "updates": {"history": h, "iteration": idx % iters + 1}, "redactedPaths": [],
                 "trace": [{"path": "history", "verb": "set"}, {"path": "iteration", "verb": "set"}],
                 "stage": "ToolCalls", "stageId": "tool-calls", "runtimeStageId": f"tool-calls#{22 * idx + 22}",
                 "idx": idx}  # fmt: skip
        commit.append(entry)
        spent += 240 + prefix_sizes[upto] - prefix_sizes[upto - len(h)]
        idx += 1
    while spent < goals[1]:
        it = step // len(SUBFLOWS) % iters + 1
        sid, sname = SUBFLOWS[step % len(SUBFLOWS)]
        upto = min(n_hist, 1 + (it - 1) * max(1, n_hist // iters))
        h = hist(upto, unit_cap)
        value = {
            "subflowId": sid,
            "subflowName": sname,
            "treeContext": {
                "globalContext": {"iteration": it, "maxIterations": shared["maxIterations"],
                                  "userMessage": shared["userMessage"], "history": h,
                                  "activatedInjectionIds": [],
                                  "priorActiveByslot": {"systemPrompt": [], "messages": [], "tools": []}},
                "stageContexts": {"id": f"{sid}/compose", "runtimeStageId": f"{sid}/compose#{step + 2}",
                                  "name": f"{sid}/Compose", "isDecider": False, "isFork": False, "logs": {},
                                  "errors": {}, "metrics": {}, "evals": {}},
                "history": [],
            },
            "parentStageId": f"{sid}#{step + 1}",
        }  # fmt: skip
        subflows[f"{sid}#{step + 1}"] = value
        subflows[sid] = value
        spent += 560 + prefix_sizes[upto] - prefix_sizes[upto - len(h)]
        step += 1
    n = 0
    while spent < goals[2]:
        upto = min(n_hist, 1 + n % max(1, n_hist))
        h = hist(upto, unit_cap)
        kind = ("subflow.entry", "llm.start", "llm.end", "tool.end")[n % 4]
        boundary.append(
            {"type": kind, "runtimeStageId": f"sf-messages#{9 + 22 * n}", "subflowPath": ["__root__", "sf-messages"],
             "depth": 1, "ts": ts + n, "commitIdxBefore": n, "commitIdxAfter": n + 1,
             "payload": {"iteration": n % iters + 1, "history": h}}
        )  # fmt: skip
        spent += 260 + prefix_sizes[upto] - prefix_sizes[upto - len(h)]
        n += 1
    snap["commitLog"] = commit
    snap["subflowResults"] = subflows
    snap["recorders"] = [
        {"id": "boundary-1", "name": "BoundaryEvents",
         "description": "Unified domain event log \u2014 run/subflow boundaries + LLM/tool/context events",
         "preferredOperation": "translate", "data": boundary, "meta": {"mode": "full"}}
    ]  # fmt: skip
    return snap


# ----------------------------------------------------------------------------------------- recordings


def _run_id(index: int) -> tuple[str, int]:
    start_ms = BASE_MS + index * 61_000 + (index * 7919) % 997
    return f"run-{start_ms}-{index + 1}", start_ms


def _build_runs(
    rng: random.Random, first_index: int, n_runs: int, events: int, snapshot_heavy: bool
) -> tuple[list[_Run], dict]:
    """n_runs runs of one recorder (a conversation); returns the runs and the last run's snapshot."""
    agent = rng.choice(AGENTS)
    identity: dict[str, str] = {}
    if rng.random() < FEATURES["identity"]:
        identity = {"principal": f"user-{rng.randint(1000, 9999)}", "tenant": rng.choice(TENANTS)}
        if rng.random() < FEATURES["session"] or n_runs > 1:
            identity = {"sessionId": f"sess-{rng.getrandbits(16):04x}", **identity}
    meta_extra: dict[str, str] = {}
    if rng.random() < FEATURES["trace"]:
        meta_extra["traceId"] = f"{rng.getrandbits(128):032x}"
        meta_extra["correlationId"] = f"corr-{rng.getrandbits(24):06x}"
    meta_extra.update({k: identity[k] for k in ("sessionId", "principal", "tenant") if k in identity})
    history: list[dict] = []
    runs: list[_Run] = []
    snapshot: dict = {}
    tools = rng.sample(TOOLS, rng.randint(2, 3 if events <= 60 else 7))
    for r in range(n_runs):
        run_id, start_ms = _run_id(first_index + r)
        run = _Run(rng, run_id, start_ms, f"Agent:{agent}", meta_extra, history, tools)
        slots = _Slots(rng)
        long_run = events >= 150
        typed = rng.random() < FEATURES["typed"]
        gate = rng.choice(["assist", "rails"]) if rng.random() < FEATURES["evidence_gate"] else None
        deny = rng.random() < FEATURES["middleware_deny"]
        if (long_run and rng.random() < FEATURES["window"]) or r > 0 or events >= 400:
            run.window = rng.randint(5, 12)  # later turns of a conversation always run windowed
            run.want_dangling = long_run and rng.random() < FEATURES["dangling"]
        config: dict[str, Any] = {"agentId": agent, "llm": {"provider": "mock", "model": "mock-small"},
                                  "reactMode": "dynamic", "memories": []}  # fmt: skip
        if run.window is not None:
            config["window"] = "sliding-window"
        if gate:
            config["evidenceGate"] = gate
        run.start(slots.fill(rng.choice(PROMPTS)), config, deny)
        # tool iterations while they fit, then an answer sized so the run lands near `events`
        if events >= 48 or rng.random() < 0.5:
            run.tool_iteration(slots, 1 if events < 70 else rng.randint(1, 2), rng.randint(3, 8))
        while True:
            msgs = min(len(run.history) + 3, (run.window or 10**6) + 1)
            next_cost = 14 + len(tools) + msgs + 14 + 8
            final_cost = 14 + len(tools) + msgs + 20
            if len(run.events) + next_cost + final_cost > events:
                break
            run.tool_iteration(slots, rng.choice((1, 1, 1, 2, 2, 3)), rng.randint(3, 14))
        overhead = 12 + len(run.tools) + min(len(run.history) + 1, (run.window or 10**6) + 1)
        n_words = max(8, events - len(run.events) - overhead + 1)
        n_neg = 0
        if rng.random() < FEATURES["negative_claims"]:
            n_neg = min(rng.choice((1, 1, 1, 2, 3)), max(1, n_words // 12))
        prose, clauses = _answer(rng, slots, n_words, n_neg, rng.random() < FEATURES["emoji"])
        field_name, answer = "answer", prose
        refs = [
            {"handle": f"r{i + 1}", "toolName": m["toolName"], "toolCallId": m["toolCallId"]}
            for i, m in enumerate(x for x in run.history[run.request_pos :] if x["role"] == "tool")
        ][:16]
        route_events: list[tuple[str, dict]] = []
        after_route: list[tuple[str, dict]] = []
        extra_state: dict[str, Any] = {"_answer": "", "_turnNumber": r + 1}
        claim_findings = 0
        if typed:
            body = {"service": slots["service"], "state": slots["state"], "error_rate": float(slots["pct"]),
                    "summary": prose}  # fmt: skip
            answer, field_name = orjson.dumps(body).decode(), "summary"
            for pred, value, told in (
                ("state", rng.choice(STATES), slots["state"]),
                ("error_rate", 0.4, slots["pct"]),
            ):
                if rng.random() < 0.6:
                    continue
                claim_findings += 1
                subject = {"kind": "entity", "id": slots["service"]}
                src = refs[0]["toolName"] if refs else "get_metrics"
                route_events.append(
                    (
                        "agentfootprint.integrity.context_error",
                        {"kind": "unsupported-claim", "seam": "claim", "subjects": [subject], "predicate": pred,
                         "witnesses": [
                             {"subject": subject, "predicate": pred, "value": value, "epoch": run.iteration,
                              "stratum": "asserted", "provenance": f"{src} (iteration 1)"},
                             {"subject": subject, "predicate": pred, "value": told, "epoch": run.iteration,
                              "stratum": "asserted", "provenance": f"answer field '{pred}'"}],
                         "epoch": run.iteration,
                         "message": f"The answer's '{pred}' claims \"{told}\" but the run's settled fact is "
                                    f"{pred}({slots['service']}) = \"{value}\" ({src}).",
                         "iteration": run.iteration + 1},
                    )
                )  # fmt: skip
        if gate:
            values = [
                {"value": slots["pct"], "shape": "number"},
                {"value": slots["version"], "shape": "version"},
            ]
            action = rng.choice(
                ["grounded", "grounded", "flagged", "refused"] if gate == "rails" else ["grounded", "flagged"]
            )
            unsupported = [] if action == "grounded" else values[: rng.randint(1, 2)]
            route_events.append(
                (
                    "agentfootprint.agent.evidence_checked",
                    {"iteration": run.iteration + 1, "posture": gate, "candidates": rng.randint(2, 9),
                     "unsupported": unsupported, "action": action, "afterRevision": action == "refused"},
                )
            )  # fmt: skip
            if unsupported:
                extra_state["unsupportedValues"] = {"values": unsupported, "candidates": 3,
                                                    "revised": action == "refused", "refused": action == "refused",
                                                    "posture": gate}  # fmt: skip
        if deny:
            decisions = [
                {"middleware": "trim-whitespace", "moment": "output", "at": "message", "phase": "output",
                 "iteration": run.iteration + 1, "outcome": "allow", "changed": False},
                {"middleware": "secret-scanner", "moment": "output", "at": "message", "phase": "output",
                 "iteration": run.iteration + 1, "outcome": "deny", "changed": False,
                 "why": "answer contains a credential"},
            ]  # fmt: skip
            after_route += [("agentfootprint.middleware.decision", d) for d in decisions]
            extra_state.update(messageDeniedReason="answer contains a credential", messageDeniedPhase="output",
                               messageDeniedBy="secret-scanner", middlewareDecisions=decisions)  # fmt: skip
        if clauses or (n_neg and not refs):
            text = body["summary"] if typed else answer
            after_route += _negative_events(rng, text, clauses, field_name, run.iteration + 1, refs, not refs)
        run.final(answer, route_events, after_route)
        run.findings += claim_findings
        run.disposition(1 if typed else 0, claim_findings)
        extra_state["_answer"] = answer
        runs.append(run)
        if r == n_runs - 1:
            identity_row = {k: identity[k] for k in ("tenant", "principal") if k in identity}
            identity_row["conversationId"] = identity.get("sessionId", runs[0].run_id)
            ev_bytes = len(orjson.dumps([e for x in runs for e in x.events]))
            share = rng.uniform(0.85, 0.88)
            target = int(ev_bytes * share / (1 - share))
            snapshot = _snapshot(
                run, heavy=snapshot_heavy, target_bytes=target, extra_state=extra_state, identity=identity_row
            )
        else:
            history.append({"role": "assistant", "content": answer})
    return runs, snapshot


def make_recording(rng: random.Random, index: int, *, events: int, snapshot_heavy: bool = True) -> dict:
    """One bare recording `{snapshot, events, structure}` holding one run of about `events` events.

    `index` fixes the run id (`run-<ms>-<index+1>`) and its wall clock, so ids are unique across a corpus."""
    return _make_multi(rng, index, 1, events=events, snapshot_heavy=snapshot_heavy)


def _make_multi(
    rng: random.Random, first_index: int, n_runs: int, *, events: int, snapshot_heavy: bool
) -> dict:
    runs, snapshot = _build_runs(rng, first_index, n_runs, events, snapshot_heavy)
    all_events = [e for r in runs for e in r.events]
    return {"snapshot": snapshot, "events": all_events, "structure": STRUCTURE[runs[-1].window is not None]}


def to_envelope(recording: dict) -> dict:
    """Wrap a single-run bare recording as persistRecording would (`agentfootprint.recording.v1`)."""
    events = recording["events"]
    meta = events[0]["meta"]
    run: dict[str, Any] = {"runId": meta["runId"]}
    for key in ("sessionId", "principal", "tenant"):
        if key in meta:
            run[key] = meta[key]
    run.update(
        startedAt=_iso(meta["wallClockMs"]),
        endedAt=_iso(events[-1]["meta"]["wallClockMs"]),
        complete=True,
        droppedEvents=0,
        firstRetainedEventIndex=0,
    )
    manifest = events[0]["payload"]
    return {
        "format": FORMAT_V1,
        "producer": PRODUCER,
        "run": run,
        "configuration": {"agentId": manifest["agentId"], "manifest": manifest},
        "privacy": PRIVACY,
        "recording": recording,
    }


# ----------------------------------------------------------------------------------------- corpus


@dataclass
class CorpusInfo:
    files: int
    bytes: int
    events: int
    runs: int
    paths: list[Path]


def _events_for(rng: random.Random, small: bool) -> int:
    if small:
        return rng.randint(40, 60)
    roll = rng.random()
    if roll < 0.9:
        return int(40 + (rng.betavariate(1.3, 3.0) * 260))  # mostly 40-300, skewed low
    return rng.randint(300, 1500)


def _write_file(job: tuple) -> tuple[str, int, int, int]:
    """Build and write file `i` of a corpus; its content depends only on the job tuple."""
    out_dir, seed, i, n_runs, runs_per_file, small, heavy, envelope_share = job
    rng = random.Random(seed * 1_000_003 + i)
    rec = _make_multi(rng, i * runs_per_file, n_runs, events=_events_for(rng, small), snapshot_heavy=heavy)
    folder = out_dir / f"part-{i // FILES_PER_FOLDER:04d}"
    if i % FILES_PER_FOLDER == 0 or not folder.is_dir():
        folder.mkdir(parents=True, exist_ok=True)
    if n_runs == 1 and rng.random() < envelope_share:
        path = folder / f"{rec['events'][0]['meta']['runId']}.json"
        data = orjson.dumps(to_envelope(rec))
    else:
        path = folder / f"rec-{i:07d}.json"
        data = orjson.dumps(rec)
    path.write_bytes(data)
    return str(path), len(data), len(rec["events"]), n_runs


def generate_corpus(
    out_dir: Path,
    *,
    target_bytes: int | None = None,
    runs: int | None = None,
    seed: int = 0,
    snapshot_heavy: bool | None = None,
    envelope_share: float = 0.3,
    runs_per_file: int = 1,
    workers: int | None = None,
) -> CorpusInfo:
    """Write a corpus into `out_dir` (in folders `part-NNNN` of 1,000 files) and describe it.

    Exactly one of `target_bytes` (write files until the corpus reaches it; the last file overshoots by
    less than one recording) or `runs` (that many runs of 40-60 events each) must be given.
    `snapshot_heavy` defaults to True for `target_bytes` and False for `runs`. `runs_per_file` > 1 packs
    consecutive runs into one multi-run bare recording (one recorder across several runs, which the format
    allows; such files are never enveloped). File i depends only on (seed, i, the options), so the output
    is the same for any `workers` (default: all cores for big jobs, 1 for small ones)."""
    if (target_bytes is None) == (runs is None):
        raise ValueError("give exactly one of target_bytes or runs")
    if runs_per_file < 1:
        raise ValueError("runs_per_file must be >= 1")
    small = runs is not None
    heavy = (not small) if snapshot_heavy is None else snapshot_heavy
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if runs is not None:
        n_files = -(-runs // runs_per_file)
        big = n_files >= 2000
    else:
        n_files = None
        big = (target_bytes or 0) >= 100_000_000
    if workers is None:
        workers = min(4, os.cpu_count() or 1) if big else 1
    info = CorpusInfo(files=0, bytes=0, events=0, runs=0, paths=[])

    def job(i: int) -> tuple:
        n_runs = runs_per_file if runs is None else min(runs_per_file, runs - i * runs_per_file)
        return (out_dir, seed, i, n_runs, runs_per_file, small, heavy, envelope_share)

    def add(result: tuple[str, int, int, int]) -> None:
        info.files += 1
        info.bytes += result[1]
        info.events += result[2]
        info.runs += result[3]
        info.paths.append(Path(result[0]))

    pool = multiprocessing.get_context("fork").Pool(workers) if workers > 1 else None
    try:
        if n_files is not None:
            jobs = (job(i) for i in range(n_files))
            results = pool.imap(_write_file, jobs, chunksize=64) if pool else map(_write_file, jobs)
            for result in results:
                add(result)
        else:
            assert target_bytes is not None
            batch = 4 * workers
            i = 0
            while info.bytes < target_bytes:
                jobs = [job(k) for k in range(i, i + batch)]
                results = pool.map(_write_file, jobs) if pool else [_write_file(jobs[0])]
                for result in results:
                    if info.bytes < target_bytes:
                        add(result)
                    else:  # written ahead by a parallel batch, beyond the target: not part of the corpus
                        Path(result[0]).unlink()
                i += len(results)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    return info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.corpus", description="Generate a synthetic corpus."
    )
    parser.add_argument("out_dir", type=Path)
    size = parser.add_mutually_exclusive_group(required=True)
    size.add_argument("--mb", type=float, help="target corpus size in MB (10**6 bytes)")
    size.add_argument("--runs", type=int, help="number of small runs (40-60 events each)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs-per-file", type=int, default=1)
    parser.add_argument("--envelope-share", type=float, default=0.3)
    parser.add_argument("--workers", type=int, default=None, help="processes (default: cores, for big jobs)")
    heavy = parser.add_mutually_exclusive_group()
    heavy.add_argument("--heavy", dest="snapshot_heavy", action="store_true", default=None)
    heavy.add_argument("--light", dest="snapshot_heavy", action="store_false")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    info = generate_corpus(
        args.out_dir,
        target_bytes=None if args.mb is None else int(args.mb * 1_000_000),
        runs=args.runs,
        seed=args.seed,
        snapshot_heavy=args.snapshot_heavy,
        envelope_share=args.envelope_share,
        runs_per_file=args.runs_per_file,
        workers=args.workers,
    )
    took = time.perf_counter() - started
    print(
        f"{info.files:,} files, {info.runs:,} runs, {info.events:,} events, {info.bytes / 1e6:,.1f} MB "
        f"in {took:.1f} s ({info.bytes / 1e6 / took:,.1f} MB/s, {info.files / took:,.0f} files/s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
