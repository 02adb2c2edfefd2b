"""A full, order-independent dump of what ingest stored, for comparing two ingests of the same inputs.

Ingest-time stamps are left out; row ids that depend on the order recordings were written in (recording
ids, run rowids inside full-text document ids) are replaced by what they stand for (the recording's hash,
the run key and the document's number in its run), so an ingest in worker processes and one in a single
process dump alike. The full-text index itself is dumped as its vocabulary (term, documents, hits).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import orjson
from sqlite_utils import Database

from store.db.schema import COLUMNS, FINDINGS_ADDED, SEARCH_DOC_BITS

#: The inputs the golden dump is made from: the real recordings, the committed samples (with their broken
#: files and a zip), one recording from each test helper, and a few bench corpus files of both shapes.
GOLDEN = Path(__file__).resolve().parent / "fixtures" / "ingest_golden.json"

ROW_TABLES = ("runs", "tool_calls", "semantics", "coverage", "evictions", "findings", "events")
VOLATILE = {"ingested_at", "seen_at", "first_seen", "last_seen"}


def _digest(value: Any) -> str:
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()[:24]


def dump(db: Database, roots: dict[str, str]) -> dict[str, Any]:
    """Every stored row, keyed by table, rows sorted; long tables as one digest per row (small to commit).
    Each text starting with a folder of `roots` names it by its label instead (paths differ per checkout)."""

    def _cell(value: Any) -> Any:
        if isinstance(value, bytes):
            return "bytes:" + hashlib.sha256(value).hexdigest()
        if isinstance(value, str):
            for root, label in roots.items():
                value = value.replace(root, label)
        return value

    out: dict[str, Any] = {}
    sha_of = dict(db.execute("SELECT id, sha256 FROM recordings").fetchall())
    rec_cols = [c[1] for c in db.execute("PRAGMA table_info(recordings)") if c[1] not in VOLATILE | {"id"}]
    out["recordings"] = sorted(
        [[_cell(v) for v in r] for r in db.execute(f"SELECT {', '.join(rec_cols)} FROM recordings")]
    )
    out["sources"] = sorted(
        [_cell(p), sha_of[rid]] for p, rid in db.execute("SELECT path, recording_id FROM sources").fetchall()
    )
    out["run_sources"] = sorted(  # which recordings each run was read from, and its content identity
        [run_key, sha_of[rid], content_id]
        for run_key, rid, content_id in db.execute(
            "SELECT run_key, recording_id, content_id FROM run_sources"
        ).fetchall()
    )
    out["originals"] = sorted(
        [sha_of[rid], codec, hashlib.sha256(data).hexdigest()]
        for rid, codec, data in db.execute("SELECT recording_id, codec, data FROM originals").fetchall()
    )
    out["quarantine"] = sorted(
        [
            [_cell(v) for v in r]
            for r in db.execute("SELECT path, sha256, code, reason, times FROM quarantine")
        ]
    )
    for table in ROW_TABLES:
        # a finding's copy of its run's start (schema m030) came after the golden: held equal to it below
        cols = [c for c in COLUMNS[table] if not (table == "findings" and c in FINDINGS_ADDED)]
        rows = []
        for r in db.execute(f"SELECT {', '.join(cols)} FROM {table}").fetchall():
            row = dict(zip(cols, (_cell(v) for v in r), strict=True))
            if table == "runs":
                row["recording_id"] = sha_of.get(row["recording_id"])
            rows.append(row)
        out[table] = sorted(_digest(r) for r in rows)
        out[f"{table}.count"] = len(rows)
    out["findings.run_started_ms_is_the_runs"] = not db.execute(
        "SELECT count(*) FROM findings f JOIN runs r ON r.key = f.run_key WHERE f.run_started_ms IS NOT r.started_ms"
    ).fetchone()[0]
    mask = (1 << SEARCH_DOC_BITS) - 1
    docs = []
    for doc_id, run_key, kind, ref, text in db.execute(
        "SELECT d.id, d.run_key, d.kind, d.ref, t.text FROM search_docs d LEFT JOIN search_text t ON t.id = d.id"
    ).fetchall():
        rowid = db.execute("SELECT rowid FROM runs WHERE key = ?", [run_key]).fetchone()
        docs.append(
            [
                run_key,
                doc_id & mask,
                kind,
                _cell(ref),
                _digest(_cell(text)),
                rowid is not None and doc_id >> SEARCH_DOC_BITS == rowid[0],
            ]
        )
    out["search_docs"] = sorted(_digest(d) for d in docs)
    out["search_docs.count"] = len(docs)
    out["search_docs.ids_name_their_run"] = all(d[-1] for d in docs)
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.dump_vocab USING fts5vocab(main, search, 'row')")
    vocab = db.execute("SELECT term, doc, cnt FROM temp.dump_vocab ORDER BY term").fetchall()
    out["search_vocab"] = _digest([list(v) for v in vocab])
    out["search_vocab.terms"] = len(vocab)
    # the tallies the golden's code kept: `tool_named` and `kind_tool` (schema m023) came after it, and
    # tests/test_tallies.py holds them equal to a scan of what the queue's tool filter matches; `kind_code`
    # (m027) too, held equal to a scan by tests/test_queue.py
    out["tallies"] = sorted(
        [
            list(r)
            for r in db.execute(
                "SELECT facet, value, n FROM tallies WHERE facet NOT IN ('tool_named', 'kind_tool', 'kind_code')"
            ).fetchall()
        ]
    )
    return out


def write_inputs(folder: Path) -> list[Path]:
    """The golden inputs, copied or generated under `folder` (the same bytes every time)."""
    from bench.corpus import generate_corpus
    from tests.conftest import FIXTURE_RECORDINGS, SAMPLES
    from tests.decision_recordings import decisions_recording
    from tests.licensing_recordings import vault_recording
    from tests.wide_recordings import wide_recording

    helpers = folder / "helpers"
    helpers.mkdir(parents=True)
    for name, rec in (
        ("decisions", decisions_recording()),
        ("vault", vault_recording()),
        ("vault-complete", vault_recording(complete="complete")),
        ("wide", wide_recording()),
    ):
        (helpers / f"{name}.json").write_bytes(orjson.dumps(rec))
    generate_corpus(folder / "event-heavy", runs=40, seed=11, runs_per_file=10)
    generate_corpus(folder / "snapshot-heavy", target_bytes=600_000, seed=12)
    return [FIXTURE_RECORDINGS, SAMPLES, helpers, folder / "event-heavy", folder / "snapshot-heavy"]


def load_golden() -> dict[str, Any]:
    return dict(json.loads(GOLDEN.read_text()))


def save_golden(data: dict[str, Any]) -> None:
    GOLDEN.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n")


def ingest_and_dump(folder: Path, *, workers: int) -> dict[str, Any]:
    """Ingest the golden inputs (written under `folder`) into a fresh database there, and dump it."""
    from store.db.connection import open_database
    from store.db.ingest import ingest
    from tests.conftest import FIXTURE_RECORDINGS, SAMPLES

    inputs = write_inputs(folder / "inputs")
    db_path = folder / "golden.db"
    db = open_database(db_path)
    try:
        ingest(db, inputs, db_path=str(db_path), workers=workers)
        roots = {str(FIXTURE_RECORDINGS): "<fixtures>", str(SAMPLES): "<samples>", str(folder): "<generated>"}
        return dump(db, roots)
    finally:
        db.close()


if __name__ == "__main__":  # python -m tests.ingest_dump: write the golden from the code as it is now
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        save_golden(ingest_and_dump(Path(tmp), workers=1))
    print(GOLDEN)
