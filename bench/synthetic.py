"""Synthetic rows written straight into a review database, for benchmarks and the big-list tests only:
bare runs (no events, calls or findings) and bare answers with placed negative-claim findings. Never use
them on a reviewer's database. Kept out of `store`, whose modules only read and write real recordings."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import orjson
from sqlite_utils import Database

from store.db.connection import write_lock
from store.db.schema import COLUMNS, SEARCH_DOC_BITS
from store.db.writer import now_iso
from store.vocab import COVERAGE_GAP, DANGLING_REFERENCE, EVIDENCE_GATE, NEGATIVE_CLAIM, WITHHELD_ANSWER

_AGENTS = ("incident-desk", "oncall-assistant", "san-triage", "db-oncall", "support-desk", "billing-bot")

_TENANTS = ("acme-corp", "globex", "initech", None)

_OUTCOMES = (
    ("delivered", 80),
    ("refused", 5),
    ("denied", 4),
    ("withheld", 4),
    ("paused", 3),
    ("contract_unmet", 2),
    ("cut_short", 1),
    ("halted", 1),
    ("incomplete", 1),
)
#: what the person received after each synthetic outcome (delivered, delivered_as), as decide_delivery says
_RECEIVED = {
    "delivered": (1, "drafted"),
    "contract_unmet": (1, "raw"),
    "cut_short": (1, "fragment"),
}


def insert_synthetic_runs(
    db: Database, count: int, *, seed: int = 7, start_ms: int = 1_790_000_000_000
) -> int:
    """Insert `count` synthetic runs (one fake recording) for benchmarks. Returns the number inserted.

    Rows have plausible agents, outcomes and counts but no events, calls or findings rows; FTS is not fed.
    """
    rng = random.Random(seed)
    outcomes = [o for o, _ in _OUTCOMES]
    weights = [w for _, w in _OUTCOMES]
    sha = f"synthetic-{seed}-{count}"
    with write_lock(db):
        cur = db.execute(
            "INSERT INTO recordings (sha256, source, container, form, bytes, events, runs, has_snapshot, "
            "extractor_version, ingested_at) VALUES (?, ?, 'synthetic', 'bare', 0, 0, ?, 0, 0, ?)",
            [sha, f"synthetic://{seed}", count, now_iso()],
        )
        rec_id = int(cur.lastrowid or 0)
        cols = COLUMNS["runs"]
        sql = f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})"

        def rows() -> Any:
            for i in range(count):
                ms = start_ms + i * 1_000 + rng.randrange(1_000)
                outcome = rng.choices(outcomes, weights)[0]
                findings = rng.choice((0, 0, 0, 1, 2, 3, 5))
                run_id = f"run-{ms}-{i}"
                summary = "Delivered" if outcome == "delivered" else f"Synthetic {outcome}"
                values = {
                    "key": f"{run_id}@{sha[:10]}",
                    "recording_id": rec_id,
                    "recording_sha": sha,
                    "run_id": run_id,
                    "agent_id": rng.choice(_AGENTS),
                    "model": "mock-small",
                    "provider": "mock",
                    "tenant": rng.choice(_TENANTS),
                    "started_ms": ms,
                    "started_at": _iso_ms(ms),
                    "ended_ms": ms + 400,
                    "starts_mid_run": 0,
                    "events": 80,
                    "prompt": f"Synthetic prompt {i}: is anything failing for service {i % 97}?",
                    "answer": f"Synthetic answer {i}: there are no open incidents for service {i % 97}.",
                    "outcome": outcome,
                    "outcome_channel": None if outcome == "delivered" else "synthetic",
                    "delivered": _RECEIVED.get(outcome, (0, None))[0],
                    "delivered_as": _RECEIVED.get(outcome, (0, None))[1],
                    "outcome_detail": orjson.dumps({"outcome": outcome, "summary": summary}).decode(),
                    "iterations": rng.randint(1, 6),
                    "tokens_in": 300,
                    "tokens_out": 50,
                    "duration_ms": 400,
                    "tool_calls": rng.randint(0, 9),
                    "failed_calls": 0,
                    "findings": findings,
                    "negative_claims": findings,
                    "coverage_gaps": rng.choice((0, 0, 1, 2)),
                    "evictions": rng.choice((0, 0, 0, 1)),
                    "pack_versions": orjson.dumps(["en-negatives@3"] if findings else []).decode(),
                }
                yield [values.get(c) for c in cols]

        db.conn.executemany(sql, rows())
    return count


def _iso_ms(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def insert_synthetic_answers(
    db: Database,
    rows: Iterable[tuple[str, str, Sequence[tuple[int, int]]]],
    *,
    batch: int = 10_000,
    read_share: float = 0.0,
) -> int:
    """Insert bare `runs` rows (key, answer) with placed negative-claim findings, fast, for benchmarks;
    about `read_share` of them (decided by a seeded draw) also get one dispatched tool call.

    Not a recording: no original, no events, not searchable. Never use it on a reviewer's database."""
    run_sql = (
        "INSERT OR REPLACE INTO runs (key, recording_id, run_id, answer, outcome, negative_claims, findings) "
        "VALUES (?, 0, ?, ?, 'delivered', ?, ?)"
    )
    finding_sql = (
        "INSERT OR REPLACE INTO findings (id, run_key, run_id, seq, kind, field, span_start, span_end, "
        "span_text, placeable, pack_version) VALUES (?, ?, ?, ?, 'negative-claim', 'answer', ?, ?, ?, 1, ?)"
    )
    call_sql = (
        "INSERT OR REPLACE INTO tool_calls (run_key, call_id, seq, ordinal, tool_name, completed) "
        "VALUES (?, 'syn-call-1', 1, 1, 'search', 1)"
    )
    rng = random.Random(3)
    total = 0
    runs: list[tuple[Any, ...]] = []
    findings: list[tuple[Any, ...]] = []
    calls: list[tuple[Any, ...]] = []

    def flush() -> None:
        with write_lock(db):
            db.conn.executemany(run_sql, runs)
            db.conn.executemany(finding_sql, findings)
            db.conn.executemany(call_sql, calls)
        runs.clear()
        findings.clear()
        calls.clear()

    for key, answer, spans in rows:
        runs.append((key, key, answer, len(spans), len(spans)))
        if rng.random() < read_share:
            calls.append((key,))
        for seq, (start, end) in enumerate(spans):
            findings.append((f"syn-{key}-{seq}", key, key, seq, start, end, answer[start:end], "synthetic@1"))
        total += 1
        if len(runs) >= batch:
            flush()
    if runs:
        flush()
    return total


_KINDS = (
    (NEGATIVE_CLAIM, 60),
    (COVERAGE_GAP, 20),
    (EVIDENCE_GATE, 10),
    (DANGLING_REFERENCE, 6),
    (WITHHELD_ANSWER, 4),
)
_TOOLS = ("search_logs", "query_metrics", "list_incidents", "get_runbook", None)
_CODES = ("NO_ROWS", "EMPTY_LIST", "NOT_FOUND", "TIMEOUT")


def insert_synthetic_findings(db: Database, *, seed: int = 11, batch: int = 20_000) -> int:
    """Give every synthetic run its `findings` count of findings (kinds, codes, tools and pack versions drawn
    with fixed weights) and index its prompt and answer for full-text search. Returns the findings written."""
    rng = random.Random(seed)
    kinds = [k for k, _ in _KINDS]
    weights = [w for _, w in _KINDS]
    cols = COLUMNS["findings"]
    finding_sql = f"INSERT INTO findings ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})"
    written = 0
    last = ""
    while True:
        runs = db.execute(
            "SELECT key, run_id, findings, prompt, answer, rowid FROM runs WHERE key > ? ORDER BY key LIMIT ?",
            [last, batch],
        ).fetchall()
        if not runs:
            return written
        last = runs[-1][0]
        findings: list[tuple[Any, ...]] = []
        docs: list[tuple[Any, ...]] = []
        texts: list[tuple[Any, ...]] = []
        for key, run_id, n, prompt, answer, rowid in runs:
            for seq in range(int(n or 0)):
                kind = rng.choices(kinds, weights)[0]
                values = {
                    "id": f"f-{key}-{seq}",
                    "run_key": key,
                    "run_id": run_id,
                    "seq": seq,
                    "kind": kind,
                    "field": "answer",
                    "codes": orjson.dumps(rng.sample(_CODES, rng.randint(0, 2))).decode(),
                    "message": f"Synthetic {kind}",
                    "tool_name": rng.choice(_TOOLS),
                    "pack_version": "en-negatives@3" if kind == NEGATIVE_CLAIM else None,
                    "advisory": 0,
                    "truncated": 0,
                    "placeable": 0,
                }
                findings.append(tuple(values.get(c) for c in cols))
            for number, (ref, text) in enumerate((("prompt", prompt), ("answer", answer))):
                doc_id = (int(rowid) << SEARCH_DOC_BITS) + number
                docs.append((doc_id, key, ref, ref))
                texts.append((doc_id, text or ""))
        with write_lock(db):
            db.conn.executemany(finding_sql, findings)
            db.conn.executemany("INSERT INTO search_docs (id, run_key, kind, ref) VALUES (?, ?, ?, ?)", docs)
            db.conn.executemany("INSERT INTO search_text (id, text) VALUES (?, ?)", texts)
            db.conn.executemany("INSERT INTO search (rowid, text) VALUES (?, ?)", texts)
        written += len(findings)
