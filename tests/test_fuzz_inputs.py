"""Property-based: mutated real recordings either ingest or are quarantined with a reason; never a crash,
and the database always passes its integrity check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.db.connection import open_database
from store.db.ingest import ingest
from tests.conftest import FIXTURE_RECORDINGS

BASES = {
    name: json.loads((FIXTURE_RECORDINGS / name).read_text())
    for name in (
        "plain-tool-run.json",
        "unsupported-claim-findings.json",
        "envelope-conversation-turn1.json",
        "paused-awaiting-human-args-invalid.json",
    )
}
ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.text(max_size=30),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


def _events(doc: dict[str, Any]) -> list[Any]:
    rec = doc.get("recording", doc)
    return rec["events"] if isinstance(rec, dict) and isinstance(rec.get("events"), list) else []


def _paths(doc: Any, prefix: tuple[Any, ...] = (), depth: int = 0) -> list[tuple[Any, ...]]:
    """Key paths into the recording (events and sharedState only, to keep the space useful)."""
    out: list[tuple[Any, ...]] = []
    if depth > 6:
        return out
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k in ("structure", "executionTree", "commitLog", "subflowResults", "recorders", "history"):
                continue
            out.append(prefix + (k,))
            out.extend(_paths(v, prefix + (k,), depth + 1))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:60]):
            out.append(prefix + (i,))
            out.extend(_paths(v, prefix + (i,), depth + 1))
    return out


PATHS = {name: _paths(doc) for name, doc in BASES.items()}


def _parent(doc: Any, path: tuple[Any, ...]) -> tuple[Any, Any]:
    node = doc
    for part in path[:-1]:
        node = node[part]
    return node, path[-1]


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    name = draw(st.sampled_from(sorted(BASES)))
    doc = json.loads(json.dumps(BASES[name]))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["drop", "retype", "dup", "shuffle", "huge", "deep"]))
        paths = PATHS[name]
        path = draw(st.sampled_from(paths))
        try:
            parent, key = _parent(doc, path)
            if op == "drop":
                del parent[key]
            elif op == "retype":
                parent[key] = draw(ODD_VALUES)
            elif op == "huge":
                parent[key] = "x" * draw(st.integers(100_000, 2_000_000))
            elif op == "deep":
                depth = draw(st.integers(50, 5000))
                parent[key] = json.loads("[" * depth + "]" * depth) if depth < 900 else "[" * depth
            elif op in ("dup", "shuffle"):
                events = _events(doc)
                if events:
                    if op == "dup":
                        i = draw(st.integers(0, len(events) - 1))
                        events.insert(draw(st.integers(0, len(events))), json.loads(json.dumps(events[i])))
                    else:
                        order = draw(st.permutations(range(len(events))))
                        events[:] = [events[i] for i in order]
        except (KeyError, IndexError, TypeError):
            continue
    data = json.dumps(doc).encode()
    if draw(st.booleans()) and draw(st.integers(0, 3)) == 0:
        data = data[: draw(st.integers(0, len(data)))]  # truncate at a random point
    return data


@pytest.fixture(scope="module")
def fuzz_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    folder = tmp_path_factory.mktemp("fuzz")
    db_path = folder / "fuzz.db"
    return open_database(db_path), folder


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(data=mutated())
def test_mutated_recordings_ingest_or_quarantine(fuzz_db: tuple[Any, Path], data: bytes) -> None:
    db, folder = fuzz_db
    path = folder / "case.json"
    path.write_bytes(data)
    report = ingest(db, [path], db_path=str(folder / "fuzz.db"), workers=1)
    assert report.stored + report.unchanged + len(report.quarantined) == 1
    for _, code, reason in report.quarantined:
        assert code and str(path) in reason
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    # every stored run is whole: its counts match its rows
    bad = db.execute(
        "SELECT count(*) FROM runs r WHERE r.tool_calls != (SELECT count(*) FROM tool_calls t WHERE t.run_key = r.key) "
        "OR r.findings != (SELECT count(*) FROM findings f WHERE f.run_key = r.key)"
    ).fetchone()[0]
    assert bad == 0
