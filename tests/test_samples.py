"""The bundled sample recordings ingest as their README says, and every broken one is quarantined."""

from __future__ import annotations

from pathlib import Path

from sqlite_utils import Database

from store.db.ingest import ingest
from tests.conftest import SAMPLES

# From sample_recordings/README.md: file -> (runs, tool calls, negative-claim-style findings, outcomes)
EXPECTED = {
    "negative-claims-prose.json": (1, 1, 4, ["delivered"]),
    "envelope-negative-claim-no-read.json": (1, 0, 1, ["delivered"]),
    "negative-claims-alt-spellings.json": (1, 1, 2, ["delivered"]),
    "typed-negatives-withheld.json": (1, 2, 1, ["withheld"]),
    "envelope-typed-negatives-as-checked.json": (1, 1, 0, ["delivered"]),
    "semantics-render-defaults.json": (1, 5, 0, ["delivered"]),
    "multi-run-session.json": (2, 2, 1, ["delivered", "delivered"]),
    "bugreport-negative-claim.zip!envelope.json": (1, 1, 1, ["delivered"]),
    "wrapped-up-max-iterations.json": (1, 2, 0, ["cut_short"]),
    "cut-short-max-iterations.json": (1, 1, 0, ["cut_short"]),
    "schema-failed-delivered-raw.json": (1, 1, 0, ["contract_unmet"]),
    "output-fallback-delivered.json": (1, 1, 0, ["contract_unmet"]),
    "halted-by-permission-policy.json": (1, 2, 0, ["halted"]),
    "typed-answer-span-delivered.json": (1, 1, 1, ["delivered"]),
    "typed-negatives-state-searched.json": (1, 1, 0, ["delivered"]),
}

# From the README's outcome column: file -> what the person received, (delivered, delivered_as), per run
RECEIVED = {
    "typed-negatives-withheld.json": [(False, None)],
    "wrapped-up-max-iterations.json": [(True, "wrap-up")],
    "cut-short-max-iterations.json": [(True, "fragment")],
    "schema-failed-delivered-raw.json": [(True, "raw")],
    "output-fallback-delivered.json": [(True, "fallback")],
    "halted-by-permission-policy.json": [(False, None)],
    "typed-negatives-state-searched.json": [(True, "fallback")],
}


def test_samples_ingest_as_documented(db: Database, db_path: Path) -> None:
    report = ingest(db, [SAMPLES], db_path=str(db_path))
    broken = sorted(p.name for p in (SAMPLES / "broken").iterdir())
    assert sorted(Path(p).name for p, _, _ in report.quarantined) == broken
    assert report.stored == len(EXPECTED)
    for name, (runs, calls, claims, outcomes) in EXPECTED.items():
        rows = db.execute(
            "SELECT r.tool_calls, r.outcome, (SELECT count(*) FROM findings f WHERE f.run_key = r.key AND "
            "f.kind IN ('negative-claim', 'negative-claim-note', 'unread-unit')), r.delivered, r.delivered_as "
            "FROM runs r "
            "JOIN recordings c ON c.id = r.recording_id WHERE c.source = ? ORDER BY r.started_ms",
            [str(SAMPLES / name)],
        ).fetchall()
        assert len(rows) == runs, name
        assert sum(r[0] for r in rows) == calls, name
        assert sum(r[2] for r in rows) == claims, name
        assert [r[1] for r in rows] == outcomes, name
        received = [(bool(r[3]), r[4]) for r in rows]
        assert received == RECEIVED.get(name, [(True, "drafted")] * runs), name
    # no sample's delivered answer is filed as a withheld answer
    assert (
        db.execute(
            "SELECT count(*) FROM findings f JOIN runs r ON r.key = f.run_key "
            "WHERE f.kind = 'withheld-answer' AND r.delivered = 1"
        ).fetchone()[0]
        == 0
    )


def test_astral_characters_before_a_span(db: Database, db_path: Path) -> None:
    ingest(db, [SAMPLES / "negative-claims-prose.json"], db_path=str(db_path))
    rows = db.execute(
        "SELECT f.span_start_u16, f.span_start, f.span_text, r.answer FROM findings f JOIN runs r ON r.key = f.run_key "
        "WHERE f.kind = 'negative-claim' AND f.placeable = 1 ORDER BY f.span_start"
    ).fetchall()
    assert rows
    for u16, start, text, answer in rows:
        astral_before = sum(1 for ch in answer[:start] if ord(ch) > 0xFFFF)
        assert u16 - start == astral_before and astral_before > 0
        assert answer[start : start + len(text)] == text
    assert rows[0][2] == "there are no open incidents for payments"
    unplaceable = db.execute(
        "SELECT placeable, span_text, span_end_u16 FROM findings WHERE placeable = 0"
    ).fetchall()
    assert unplaceable == [(0, None, 292)]
