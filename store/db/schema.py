"""The database schema, as sqlite-utils Migrations. The only place DDL lives.

Bump nothing by hand: add a migration. `SCHEMA_VERSION` is the number of migrations this build knows;
a database that has applied more (written by a newer build) is refused, never touched.
"""

from __future__ import annotations

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

from store.vocab import CURRENT_LABELS_VIEW

migrations = Migrations("footprint-reviewer")

#: Columns of each extracted table, in insert order (the writer builds tuples from these).
COLUMNS: dict[str, tuple[str, ...]] = {
    "runs": (
        "key",
        "recording_id",
        "recording_sha",
        "run_id",
        "agent_id",
        "model",
        "provider",
        "tenant",
        "principal",
        "session_id",
        "conversation_id",
        "trace_id",
        "correlation_id",
        "started_at",
        "started_ms",
        "ended_ms",
        "complete",
        "dropped_events",
        "first_retained_index",
        "starts_mid_run",
        "events",
        "prompt",
        "answer",
        "outcome",
        "outcome_channel",
        "outcome_detail",
        "iterations",
        "tokens_in",
        "tokens_out",
        "duration_ms",
        "tool_calls",
        "failed_calls",
        "findings",
        "negative_claims",
        "coverage_gaps",
        "evictions",
        "pack_versions",
    ),
    "tool_calls": (
        "run_key",
        "call_id",
        "seq",
        "ordinal",
        "tool_name",
        "args",
        "result",
        "error",
        "status",
        "duration_ms",
        "iteration",
        "stage",
        "parallel_count",
        "completed",
        "refused",
        "args_invalid",
        "repeated",
        "has_semantics",
        "absent",
    ),
    "semantics": (
        "run_key",
        "call_id",
        "seq",
        "tool_name",
        "render_default",
        "render",
        "grain",
        "provenance",
        "clarify",
        "clarify_considered",
        "facts_count",
        "series_count",
        "edges_count",
        "envelope",
    ),
    "coverage": ("run_key", "call_id", "tool_name", "list", "what", "why", "origin", "looked_for"),
    "evictions": (
        "id",
        "run_key",
        "ordinal",
        "seq",
        "iteration",
        "strategy",
        "stage",
        "dropped_tools",
        "removed_stage_ids",
        "call_ids",
        "removed_messages",
        "origin",
        "record",
    ),
    "findings": (
        "id",
        "run_key",
        "run_id",
        "seq",
        "kind",
        "field",
        "codes",
        "message",
        "span_start_u16",
        "span_end_u16",
        "span_start",
        "span_end",
        "span_text",
        "placeable",
        "pack_version",
        "iteration",
        "refs",
        "advisory",
        "truncated",
        "tool_name",
        "call_id",
        "payload",
    ),
    "events": ("run_key", "seq", "type", "stage", "wall_ms", "iteration", "call_id", "summary"),
}


@migrations()
def m001_core(db: Database) -> None:
    """Recordings, quarantine, runs and everything extracted from them."""
    db.execute("""
        CREATE TABLE recordings (
            id INTEGER PRIMARY KEY,
            sha256 TEXT NOT NULL UNIQUE,
            source TEXT NOT NULL,
            container TEXT NOT NULL,
            form TEXT NOT NULL,
            bytes INTEGER NOT NULL,
            events INTEGER NOT NULL,
            skipped_events INTEGER NOT NULL DEFAULT 0,
            runs INTEGER NOT NULL,
            has_snapshot INTEGER NOT NULL,
            agentfootprint_version TEXT,
            footprintjs_version TEXT,
            envelope_run TEXT,
            extractor_version INTEGER NOT NULL,
            ingested_at TEXT NOT NULL
        )""")
    db.execute("""
        CREATE TABLE originals (
            recording_id INTEGER PRIMARY KEY REFERENCES recordings(id),
            codec TEXT NOT NULL,
            data BLOB NOT NULL
        )""")
    db.execute("""
        CREATE TABLE sources (
            path TEXT NOT NULL,
            recording_id INTEGER NOT NULL REFERENCES recordings(id),
            seen_at TEXT NOT NULL,
            PRIMARY KEY (path, recording_id)
        )""")
    db.execute("""
        CREATE TABLE quarantine (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL,
            sha256 TEXT,
            code TEXT NOT NULL,
            reason TEXT NOT NULL,
            first_seen TEXT NOT NULL,
            last_seen TEXT NOT NULL,
            times INTEGER NOT NULL DEFAULT 1,
            UNIQUE (path, code)
        )""")
    cols = COLUMNS["runs"]
    db.execute(f"""
        CREATE TABLE runs (
            key TEXT PRIMARY KEY, recording_id INTEGER NOT NULL REFERENCES recordings(id),
            {", ".join(c for c in cols if c not in ("key", "recording_id"))}
        )""")
    db.execute("CREATE INDEX runs_order ON runs(started_ms DESC, key DESC)")
    db.execute("CREATE INDEX runs_run_id ON runs(run_id)")
    db.execute("CREATE INDEX runs_recording ON runs(recording_id)")
    db.execute("CREATE INDEX runs_outcome ON runs(outcome, started_ms DESC, key DESC)")
    db.execute("CREATE INDEX runs_agent ON runs(agent_id, started_ms DESC, key DESC)")
    db.execute(
        f"CREATE TABLE tool_calls ({', '.join(COLUMNS['tool_calls'])}, PRIMARY KEY (run_key, call_id))"
    )
    db.execute(f"CREATE TABLE semantics ({', '.join(COLUMNS['semantics'])}, PRIMARY KEY (run_key, call_id))")
    db.execute(f"CREATE TABLE coverage ({', '.join(COLUMNS['coverage'])})")
    db.execute("CREATE INDEX coverage_run ON coverage(run_key, call_id)")
    db.execute(f"CREATE TABLE evictions ({', '.join(COLUMNS['evictions'])}, PRIMARY KEY (id))")
    db.execute("CREATE INDEX evictions_run ON evictions(run_key)")
    db.execute(f"CREATE TABLE findings ({', '.join(COLUMNS['findings'])}, PRIMARY KEY (id))")
    db.execute("CREATE INDEX findings_run ON findings(run_key, seq)")
    db.execute("CREATE INDEX findings_kind ON findings(kind, id)")
    db.execute(
        f"CREATE TABLE events ({', '.join(COLUMNS['events'])}, PRIMARY KEY (run_key, seq)) WITHOUT ROWID"
    )
    db.execute("""
        CREATE TABLE search_docs (
            id INTEGER PRIMARY KEY, run_key TEXT NOT NULL, kind TEXT NOT NULL, ref TEXT NOT NULL, text TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX search_docs_run ON search_docs(run_key)")
    db.execute(
        "CREATE VIRTUAL TABLE search USING fts5(text, content='search_docs', content_rowid='id', "
        "tokenize='unicode61 remove_diacritics 2')"
    )


@migrations()
def m002_labels(db: Database) -> None:
    """Append-only labels: one row per judgement; undo appends; the current label is the latest row."""
    db.execute("""
        CREATE TABLE labels (
            id INTEGER PRIMARY KEY,
            uid TEXT NOT NULL UNIQUE,
            target_id TEXT NOT NULL,
            target_kind TEXT NOT NULL,
            verdict TEXT NOT NULL,
            note TEXT,
            reviewer TEXT NOT NULL,
            created_at TEXT NOT NULL,
            undoes TEXT,
            run_key TEXT,
            run_id TEXT,
            field TEXT,
            span_start INTEGER,
            span_end INTEGER,
            span_text TEXT,
            list TEXT
        )""")
    db.execute("CREATE INDEX labels_target ON labels(target_id, reviewer, id)")
    db.execute("CREATE INDEX labels_reviewer ON labels(reviewer, id)")
    db.execute(CURRENT_LABELS_VIEW)


@migrations()
def m003_phrase_packs(db: Database) -> None:
    """Phrase packs as versioned data, the replays tried against the labels, and suggestion decisions."""
    db.execute("""
        CREATE TABLE phrase_packs (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            parent_hash TEXT,
            none_phrases TEXT NOT NULL,
            complete_phrases TEXT NOT NULL,
            created_at TEXT NOT NULL,
            created_by TEXT,
            note TEXT
        )""")
    db.execute("CREATE INDEX phrase_packs_name ON phrase_packs(name, id)")
    db.execute("CREATE INDEX phrase_packs_hash ON phrase_packs(content_hash)")
    db.execute("""
        CREATE TABLE pack_trials (
            id INTEGER PRIMARY KEY,
            candidate_hash TEXT NOT NULL,
            baseline_hash TEXT,
            labels_fingerprint TEXT NOT NULL,
            created_at TEXT NOT NULL,
            figures TEXT
        )""")
    db.execute("CREATE INDEX pack_trials_labels ON pack_trials(labels_fingerprint, candidate_hash)")
    db.execute("""
        CREATE TABLE pack_decisions (
            id INTEGER PRIMARY KEY,
            pack_name TEXT NOT NULL,
            phrase TEXT NOT NULL,
            list TEXT NOT NULL,
            decision TEXT NOT NULL,
            reviewer TEXT,
            created_at TEXT NOT NULL
        )""")


@migrations()
def m004_narrow_search_docs(db: Database) -> None:
    """Move the searched text out of search_docs, so joining full-text hits to their runs reads narrow rows."""
    db.execute("CREATE TABLE search_text (id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
    db.execute("INSERT INTO search_text (id, text) SELECT id, text FROM search_docs")
    db.execute("DROP TABLE search")
    db.execute(
        "CREATE TABLE search_docs_narrow (id INTEGER PRIMARY KEY, run_key TEXT NOT NULL, kind TEXT NOT NULL, "
        "ref TEXT NOT NULL)"
    )
    db.execute(
        "INSERT INTO search_docs_narrow (id, run_key, kind, ref) SELECT id, run_key, kind, ref FROM search_docs"
    )
    db.execute("DROP TABLE search_docs")
    db.execute("ALTER TABLE search_docs_narrow RENAME TO search_docs")
    db.execute("CREATE INDEX search_docs_run ON search_docs(run_key)")
    db.execute(
        "CREATE VIRTUAL TABLE search USING fts5(text, content='search_text', content_rowid='id', "
        "tokenize='unicode61 remove_diacritics 2')"
    )
    db.execute("INSERT INTO search (search) VALUES ('rebuild')")


@migrations()
def m005_pack_content_ids(db: Database) -> None:
    """Pack ids over the exact exported object (the older ones, over case-folded sorted phrases, let two
    different exports share an id); parents and trials follow. See `store.pack_identity`."""
    from store.pack_identity import remap_legacy_ids

    rows = db.execute(
        "SELECT id, name, content_hash, parent_hash, none_phrases, complete_phrases FROM phrase_packs ORDER BY id"
    ).fetchall()
    ids, old_to_new = remap_legacy_ids(rows)
    for pid, (content_id, parent) in ids.items():
        db.execute(
            "UPDATE phrase_packs SET content_hash = ?, parent_hash = ? WHERE id = ?",
            [content_id, parent, pid],
        )
    for column in ("candidate_hash", "baseline_hash"):
        for old, new in old_to_new.items():
            db.execute(f"UPDATE pack_trials SET {column} = ? WHERE {column} = ?", [new, old])


@migrations()
def m006_current_label_by_time(db: Database) -> None:
    """A current label is a reviewer's latest by `created_at` (was: by row id, so a merged older export won)."""
    db.execute("DROP VIEW IF EXISTS current_labels")
    db.execute(CURRENT_LABELS_VIEW)
    db.execute("CREATE INDEX IF NOT EXISTS labels_target_time ON labels(target_id, reviewer, created_at, id)")


SCHEMA_VERSION = len(migrations._migrations)
