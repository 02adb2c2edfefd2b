"""Every real recording ingests, and what the store says matches an independent reading of the file.

The expected figures are computed here with plain `json` and the rules of recording-format.md, not by
calling the extractor.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from sqlite_utils import Database

from store.db.ingest import ingest
from store.runs import get_run, list_runs
from tests.conftest import FIXTURE_RECORDINGS
from tests.test_delivery import received

FILES = sorted(FIXTURE_RECORDINGS.glob("*.json"))

# Outcomes read from INDEX.md and the files themselves (section 10 of the format doc).
EXPECTED_OUTCOMES = {
    "answer-withheld-by-output-middleware.json": ["denied"],
    "evidence-gate-rails-refused.json": ["refused"],
    "output-schema-retry-then-contract-unmet.json": ["contract_unmet"],
    "paused-awaiting-human-args-invalid.json": ["paused"],
    "multi-turn-conversation-identity.json": ["delivered", "delivered", "delivered"],
}
#: outcomes whose draft was kept from the person (negative-claims.md section 3): only these get a
#: withheld-answer finding
WITHHOLDING_OUTCOMES = ("refused", "denied", "withheld")


def _events(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return (doc["recording"] if "format" in doc else doc)["events"]


def _t(e: dict[str, Any]) -> str:
    return e["type"].removeprefix("agentfootprint.")


def independent_reading(path: Path) -> dict[str, dict[str, Any]]:
    """Per run id: tool calls, coverage items, gap items, evictions, detector findings."""
    doc = json.loads(path.read_text())
    events = _events(doc)
    runs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    last = None
    for e in events:
        rid = e["meta"].get("runId")
        if rid == "consumer-scope":
            rid = last  # pause/resume belongs to the run it interrupts
        runs[rid].append(e)
        last = rid
    snapshot_run = last
    shared = (doc.get("recording", doc).get("snapshot") or {}).get("sharedState", {})
    out: dict[str, dict[str, Any]] = {}
    for rid, evs in runs.items():
        call_ids = {
            e["payload"]["toolCallId"] for e in evs if _t(e) in ("stream.tool_start", "stream.tool_end")
        }
        items = set()
        for e in evs:
            p = e["payload"]
            if _t(e) in ("tools.absent", "tools.coverage_declared"):
                for src, lst in (
                    ("checked", "checked"),
                    ("notChecked", "not_checked"),
                    ("cannotCover", "cannot_cover"),
                ):
                    items |= {(p["toolCallId"], lst, i["what"]) for i in p.get(src, [])}
            if _t(e) == "tools.semantics_declared":
                cov = p["semantics"].get("coverage", {})
                for lst in ("checked", "not_checked", "cannot_cover"):
                    items |= {(p["toolCallId"], lst, i["what"]) for i in cov.get(lst, [])}
        gaps = [i for i in items if i[1] != "checked"]
        compactions = shared.get("compactions", []) if rid == snapshot_run else []
        evictions = [c for c in compactions if c.get("removedMessageCount", 0) > 0]
        context_errors = [e for e in evs if _t(e) == "integrity.context_error"]
        gate = [e for e in evs if _t(e) == "agent.evidence_checked"]
        gate_findings = 1 if gate and gate[-1]["payload"]["unsupported"] else 0
        dispositions = [e["payload"] for e in evs if _t(e) == "integrity.disposition"]
        out[rid] = {
            "received": received(evs),
            "disposition": dispositions[-1]["rows"] if dispositions else None,
            "tool_calls": len(call_ids),
            "coverage": len(items),
            "gaps": len(gaps),
            "evictions": len(evictions),
            "context_errors": len(context_errors),
            "gate_findings": gate_findings,
        }
    return out


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Database:
    from store.db.connection import open_database

    path = tmp_path_factory.mktemp("real") / "real.db"
    db = open_database(path)
    report = ingest(db, [FIXTURE_RECORDINGS], db_path=str(path))
    assert report.quarantined == []
    assert report.stored == len(FILES)
    return db


def test_the_shared_corpus_is_present() -> None:
    assert len(FILES) >= 20, f"expected the real recordings at {FIXTURE_RECORDINGS}"


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_each_recording_matches_an_independent_reading(ingested: Database, path: Path) -> None:
    expected = independent_reading(path)
    rows = ingested.execute(
        "SELECT r.run_id, r.key, r.tool_calls, r.coverage_gaps, r.evictions, r.outcome FROM runs r "
        "JOIN run_sources s ON s.run_key = r.key JOIN recordings c ON c.id = s.recording_id "
        "WHERE c.source = ? ORDER BY r.started_ms",
        [str(path)],
    ).fetchall()
    # the runs read from this file (a run also read from another file, as a bare recording and its envelope
    # are, is stored once: it has the same events, so the same independent reading)
    assert {r[0] for r in rows} == set(expected), "run count and ids"
    received_by_store = {
        r["run_id"]: (r["delivered"], r["delivered_as"])
        for r in list_runs(ingested)
        if str(path) in r["sources"]
    }
    assert received_by_store == {rid: exp["received"] for rid, exp in expected.items()}
    for run_id, key, tool_calls, gaps, evictions, outcome in rows:
        exp = expected[run_id]
        stored = get_run(ingested, key)
        assert (stored["delivered"], stored["delivered_as"]) == exp["received"]
        rows_seen = (stored["disposition"] or {}).get("rows")
        if exp["disposition"] is None:
            assert rows_seen is None
        else:
            keys = ("check", "seam", "checked", "findings", "notApplicable", "unreachable", "synthetic")
            assert [{k: r[k] for k in keys} for r in rows_seen] == [
                {k: r.get(k, 0) for k in keys} for r in exp["disposition"]
            ]
        assert tool_calls == exp["tool_calls"]
        assert (
            ingested.execute("SELECT count(*) FROM tool_calls WHERE run_key = ?", [key]).fetchone()[0]
            == tool_calls
        )
        assert (
            ingested.execute("SELECT count(*) FROM coverage WHERE run_key = ?", [key]).fetchone()[0]
            == exp["coverage"]
        )
        assert gaps == exp["gaps"]
        assert evictions == exp["evictions"]
        kinds = dict(
            ingested.execute(
                "SELECT kind, count(*) FROM findings WHERE run_key = ? GROUP BY kind", [key]
            ).fetchall()
        )
        context_kinds = sum(
            v for k, v in kinds.items() if k not in ("coverage-gap", "withheld-answer", "evidence-gate")
        )
        assert context_kinds == exp["context_errors"]
        assert kinds.get("evidence-gate", 0) == exp["gate_findings"]
        assert kinds.get("coverage-gap", 0) == exp["gaps"]
        assert kinds.get("withheld-answer", 0) == (1 if outcome in WITHHOLDING_OUTCOMES else 0)
    outcomes = [r[5] for r in rows]
    assert outcomes == EXPECTED_OUTCOMES.get(path.name, ["delivered"] * len(rows))


def test_withheld_answers_are_never_reported_delivered(ingested: Database) -> None:
    rows = dict(
        ingested.execute(
            "SELECT c.source, r.outcome FROM runs r JOIN recordings c ON c.id = r.recording_id"
        ).fetchall()
    )
    refused = rows[str(FIXTURE_RECORDINGS / "evidence-gate-rails-refused.json")]
    denied = rows[str(FIXTURE_RECORDINGS / "answer-withheld-by-output-middleware.json")]
    assert (refused, denied) == ("refused", "denied")
    # the text that never reached the person is still kept, as the withheld draft
    answer = ingested.execute("SELECT answer FROM runs WHERE outcome = 'denied'").fetchone()[0]
    assert "hunter2" in answer


def test_dangling_reference_eviction_maps_back_to_the_dropped_call(ingested: Database) -> None:
    key = ingested.execute(
        "SELECT r.key FROM runs r JOIN recordings c ON c.id = r.recording_id WHERE c.source LIKE '%window-eviction%'"
    ).fetchone()[0]
    first = ingested.execute(
        "SELECT iteration, strategy, dropped_tools, call_ids FROM evictions WHERE run_key = ? ORDER BY ordinal",
        [key],
    ).fetchone()
    assert first[0] == 4 and first[1] == "sliding-window"
    assert json.loads(first[2]) == ["whats_here"]
    assert "h1" in json.loads(first[3])  # whats_here was call h1, run at stage tool-calls#23
    finding = ingested.execute(
        "SELECT tool_name, iteration, refs FROM findings WHERE run_key = ? AND kind = 'dangling-reference'",
        [key],
    ).fetchone()
    assert finding[0] == "screen_fire" and finding[1] == 4
    assert {"kind": "tool", "id": "whats_here"} in json.loads(finding[2])


def test_capped_envelope_states_what_was_dropped(ingested: Database, tmp_path: Path) -> None:
    from store.db.connection import open_database

    row = ingested.execute(
        "SELECT r.dropped_events, r.first_retained_index, r.complete, r.starts_mid_run FROM runs r "
        "JOIN run_sources s ON s.run_key = r.key JOIN recordings c ON c.id = s.recording_id "
        "WHERE c.source LIKE '%envelope-capped%'"
    ).fetchone()
    assert row == (
        184,
        184,
        1,
        1,
    )  # the one run, read from the bare recording too, keeps what its envelope states
    alone = open_database(tmp_path / "bare.db")
    ingest(
        alone, [FIXTURE_RECORDINGS / "capped-recording-maxEvents-150.json"], db_path=str(tmp_path / "bare.db")
    )
    bare = alone.execute("SELECT r.dropped_events, r.starts_mid_run FROM runs r").fetchone()
    assert bare == (
        None,
        1,
    )  # a bare capped recording cannot say how much it lost, only that it starts mid-run


def test_semantic_render_hints_are_kept(ingested: Database) -> None:
    rows = dict(ingested.execute("SELECT tool_name, render_default FROM semantics").fetchall())
    assert rows["volume_inventory"] == "table"
    assert rows["port_iops"] == "chart"
    render = json.loads(
        ingested.execute("SELECT render FROM semantics WHERE tool_name = 'volume_inventory'").fetchone()[0]
    )
    assert render["columns"] == ["entity", "size_gb", "used_pct", "tier", "replicated"]
    assert render["sort"] == "used_pct desc"


def test_identity_from_meta_and_snapshot(ingested: Database) -> None:
    row = ingested.execute(
        "SELECT tenant, principal, session_id, conversation_id, trace_id, correlation_id FROM runs r "
        "JOIN recordings c ON c.id = r.recording_id WHERE c.source LIKE '%with-trace-and-identity%'"
    ).fetchone()
    assert row == ("t-1", "alice", "sess-abc", "c-1", "4bf92f3577b34da6a3ce929d0e0e4736", "corr-123")


def test_originals_are_kept_byte_for_byte(ingested: Database) -> None:
    from store.recordings import original_bytes

    path = FIXTURE_RECORDINGS / "plain-tool-run.json"
    sha = ingested.execute("SELECT sha256 FROM recordings WHERE source = ?", [str(path)]).fetchone()[0]
    assert original_bytes(ingested, sha) == path.read_bytes()
