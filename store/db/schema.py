"""The database schema, as sqlite-utils Migrations. The only place DDL lives.

Bump nothing by hand: add a migration. `SCHEMA_VERSION` is the number of migrations this build knows;
a database that has applied more (written by a newer build) is refused, never touched.
"""

from __future__ import annotations

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

from store.db.derived import FINDING_CODES_REFILL, KIND_TOOL_SEP, finding_codes, named_in_refs
from store.vocab import (
    CURRENT_LABELS_BY_SUBQUERY,
    CURRENT_LABELS_VIEW,
    LABEL_LATEST_FILL,
    LABEL_LATEST_KEPT,
    LABEL_LATEST_TABLE,
    received_nothing_sql,
)

migrations = Migrations("footprint-reviewer")

#: A full-text document's id is its run's rowid shifted left by this many bits, plus its number in the run
#: (schema m011), so the runs a query matches are read from the index alone (`rowid >> SEARCH_DOC_BITS`).
SEARCH_DOC_BITS = 24

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
        "answer_negatives",
        "delivered",
        "delivered_as",
        "delivery_headline",
        "delivered_text",
        "disposition",
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
        "complete",
        "decisions",
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
        "run_started_ms",
    ),
    "events": ("run_key", "seq", "type", "stage", "wall_ms", "iteration", "call_id", "summary"),
}


#: findings columns m030 adds (m001 creates the rest), with their types
FINDINGS_ADDED = {"run_started_ms": "INTEGER"}

#: runs columns m007_delivery adds (m001 creates the rest), with their types
DELIVERY_COLUMNS = {
    "delivered": "INTEGER",
    "delivered_as": "TEXT",
    "delivery_headline": "TEXT",
    "delivered_text": "TEXT",
    "disposition": "TEXT",
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
    cols = [c for c in COLUMNS["runs"] if c not in DELIVERY_COLUMNS]  # added by m007_delivery
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
    findings_cols = [c for c in COLUMNS["findings"] if c not in FINDINGS_ADDED]  # the rest by m030
    db.execute(f"CREATE TABLE findings ({', '.join(findings_cols)}, PRIMARY KEY (id))")
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
    db.execute(CURRENT_LABELS_BY_SUBQUERY)


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
def m006_read_completeness_and_decisions(db: Database) -> None:
    """A read's declared `complete` basis and the decisions around a call (tool_calls.complete, .decisions),
    and a typed answer's negative account (runs.answer_negatives). Filled by `reviewer reextract`.

    A database created by this build already has them (m001 creates the tables from `COLUMNS`)."""
    for table, column in (
        ("tool_calls", "complete"),
        ("tool_calls", "decisions"),
        ("runs", "answer_negatives"),
    ):
        present = {row[1] for row in db.execute(f"PRAGMA table_info({table})").fetchall()}
        if column not in present:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} TEXT")


@migrations()
def m007_delivery(db: Database) -> None:
    """What the person received (`delivered`, `delivered_as`, the headline saying so, the delivered text when
    it is not the draft and the recording holds it) and the run's integrity disposition (which checks ran).
    Old rows keep NULL until `reviewer reextract` (the extractor version is bumped) fills them."""
    for column, kind in DELIVERY_COLUMNS.items():
        db.execute(f"ALTER TABLE runs ADD COLUMN {column} {kind}")


@migrations()
def m008_pack_deployments(db: Database) -> None:
    """Which stored pack a `phrasePackVersion` string (carried by findings) was deployed from, and the
    version string it replaced. Append-only: the latest row for a version string is the link."""
    db.execute("""
        CREATE TABLE pack_deployments (
            id INTEGER PRIMARY KEY,
            pack_version TEXT NOT NULL,
            pack_id INTEGER NOT NULL REFERENCES phrase_packs(id),
            replaces TEXT,
            created_at TEXT NOT NULL,
            created_by TEXT,
            note TEXT
        )""")
    db.execute("CREATE INDEX pack_deployments_version ON pack_deployments(pack_version, id)")
    db.execute("CREATE INDEX findings_pack_version ON findings(pack_version)")


@migrations()
def m009_findings_by_kind_and_run(db: Database) -> None:
    """Findings of one kind in one run (or a range of runs) read from one index: the runs screen's kind filter
    and the replay's page of spans probe it per run, so a plan is right even before any ANALYZE."""
    db.execute("CREATE INDEX findings_kind_run ON findings(kind, run_key, seq)")


def _tally_rows(row: str, table: str) -> str:
    """The (facet, value) pairs one `runs` or `findings` row adds to the tallies (`row` is NEW or OLD)."""
    if table == "runs":
        packs = f"CASE WHEN json_valid({row}.pack_versions) THEN {row}.pack_versions ELSE '[]' END"
        return (
            "SELECT 'runs' AS facet, '' AS value"
            f" UNION ALL SELECT 'outcome', {row}.outcome UNION ALL SELECT 'agent', {row}.agent_id"
            f" UNION ALL SELECT 'tenant', {row}.tenant"
            f" UNION ALL SELECT 'has_findings', '' WHERE {row}.findings > 0"
            f" UNION ALL SELECT DISTINCT 'run_pack', j.value FROM json_each({packs}) j WHERE j.type = 'text'"
        )
    codes = f"CASE WHEN json_valid({row}.codes) THEN {row}.codes ELSE '[]' END"
    return (
        "SELECT 'findings' AS facet, '' AS value"
        f" UNION ALL SELECT 'kind', {row}.kind UNION ALL SELECT 'tool', {row}.tool_name"
        f" UNION ALL SELECT 'pack_version', {row}.pack_version"
        f"{code_rows(row, codes)}{tool_named_rows(row)}"
    )


def code_rows(row: str, codes: str) -> str:
    """The `code` and `kind_code` pairs of the findings row `row` (a UNION ALL arm of `_tally_rows`; schema
    m027): every distinct code it files, and its kind with each (no kind: none)."""
    return (
        " UNION ALL SELECT DISTINCT CASE p.i WHEN 0 THEN 'code' ELSE 'kind_code' END,"
        f" CASE p.i WHEN 0 THEN j.value ELSE {row}.kind || '{KIND_TOOL_SEP}' || j.value END"
        f" FROM json_each({codes}) j CROSS JOIN (SELECT 0 AS i UNION ALL SELECT 1) p WHERE j.type = 'text'"
    )


def tool_named_rows(row: str) -> str:
    """The `tool_named` and `kind_tool` pairs of the findings row `row` (a UNION ALL arm of `_tally_rows`;
    schema m023): every distinct tool it names, and its kind with each (no kind: none)."""
    return (
        " UNION ALL SELECT DISTINCT CASE p.i WHEN 0 THEN 'tool_named' ELSE 'kind_tool' END,"
        f" CASE p.i WHEN 0 THEN tools.v ELSE {row}.kind || '{KIND_TOOL_SEP}' || tools.v END"
        f" FROM (SELECT {row}.tool_name AS v UNION ALL {named_in_refs(f'{row}.refs')}) tools"
        " CROSS JOIN (SELECT 0 AS i UNION ALL SELECT 1) p"  # the refs read once, not once per facet
    )


def _first_of_kind(row: str, *, other_than_itself: bool) -> str:
    """True when no other finding of the run has this finding's kind (the run enters or leaves 'run_kind')."""
    itself = f" AND o.rowid != {row}.rowid" if other_than_itself else ""
    return (
        f"{row}.kind IS NOT NULL AND NOT EXISTS (SELECT 1 FROM findings o "
        f"WHERE o.kind = {row}.kind AND o.run_key = {row}.run_key{itself})"
    )


def _tally_add(select: str) -> str:
    return (
        f"INSERT INTO tallies (facet, value, n) SELECT facet, value, 1 FROM ({select}) WHERE value IS NOT NULL "
        "ON CONFLICT (facet, value) DO UPDATE SET n = n + 1;"
    )


def _tally_remove(select: str) -> str:
    return (
        f"UPDATE tallies SET n = n - 1 WHERE (facet, value) IN ({select});"
        f" DELETE FROM tallies WHERE n <= 0 AND (facet, value) IN ({select});"
    )


@migrations()
def m010_tallies(db: Database) -> None:
    """How many runs and findings each filter value has, kept by triggers in the writing transaction, so the
    screens' facets and counts cost the same at a million runs as at ten. `store.tallies` reads and rebuilds."""
    db.execute(
        "CREATE TABLE tallies (facet TEXT NOT NULL, value TEXT NOT NULL, n INTEGER NOT NULL, "
        "PRIMARY KEY (facet, value)) WITHOUT ROWID"
    )
    watched = "outcome, agent_id, tenant, findings, pack_versions"
    db.execute(
        f"CREATE TRIGGER tally_runs_insert AFTER INSERT ON runs BEGIN {_tally_add(_tally_rows('NEW', 'runs'))} END"
    )
    db.execute(
        f"CREATE TRIGGER tally_runs_delete AFTER DELETE ON runs BEGIN {_tally_remove(_tally_rows('OLD', 'runs'))} END"
    )
    db.execute(
        f"CREATE TRIGGER tally_runs_update AFTER UPDATE OF {watched} ON runs BEGIN "
        f"{_tally_remove(_tally_rows('OLD', 'runs'))} {_tally_add(_tally_rows('NEW', 'runs'))} END"
    )
    _findings_tally_triggers(db, "kind, run_key, tool_name, pack_version, codes")
    from store.tallies import rebuild_tallies

    rebuild_tallies(db, codes=False)  # m021 makes finding_codes


def _findings_tally_triggers(db: Database, watched: str) -> None:
    """The findings' tally triggers (an UPDATE of the columns `watched` moves a finding's tallies)."""
    new_kind = (
        f"SELECT 'run_kind' AS facet, NEW.kind AS value WHERE {_first_of_kind('NEW', other_than_itself=True)}"
    )
    old_kind = f"SELECT 'run_kind' AS facet, OLD.kind AS value WHERE {_first_of_kind('OLD', other_than_itself=False)}"
    moved = "(OLD.kind IS NOT NEW.kind OR OLD.run_key IS NOT NEW.run_key)"
    db.execute(
        "CREATE TRIGGER tally_findings_insert AFTER INSERT ON findings BEGIN "
        f"{_tally_add(_tally_rows('NEW', 'findings'))} {_tally_add(new_kind)} END"
    )
    db.execute(
        "CREATE TRIGGER tally_findings_delete AFTER DELETE ON findings BEGIN "
        f"{_tally_remove(_tally_rows('OLD', 'findings'))} {_tally_remove(old_kind)} END"
    )
    db.execute(
        f"CREATE TRIGGER tally_findings_update AFTER UPDATE OF {watched} "
        "ON findings BEGIN "
        f"{_tally_remove(_tally_rows('OLD', 'findings'))} {_tally_add(_tally_rows('NEW', 'findings'))} "
        f"{_tally_remove(old_kind + f' AND {moved}')} {_tally_add(new_kind + f' AND {moved}')} END"
    )


@migrations()
def m011_search_ids_by_run(db: Database) -> None:
    """Renumber the full-text documents so each id carries its run (`SEARCH_DOC_BITS`): joining 20,000
    matches to search_docs for their runs cost 55 ms at a million runs, reading them from the ids 1 ms.
    Documents of no stored run (none are written) are dropped."""
    bits = SEARCH_DOC_BITS
    db.execute(
        "CREATE TEMP TABLE search_renumber AS SELECT d.id AS old, (r.rowid << ?) + "
        "row_number() OVER (PARTITION BY d.run_key ORDER BY d.id) - 1 AS new "
        "FROM search_docs d JOIN runs r ON r.key = d.run_key",
        [bits],
    )
    db.execute("DROP TABLE search")
    db.execute(
        "CREATE TABLE search_docs_new (id INTEGER PRIMARY KEY, run_key TEXT NOT NULL, kind TEXT NOT NULL, "
        "ref TEXT NOT NULL)"
    )
    db.execute(
        "INSERT INTO search_docs_new (id, run_key, kind, ref) SELECT m.new, d.run_key, d.kind, d.ref "
        "FROM search_renumber m JOIN search_docs d ON d.id = m.old ORDER BY m.new"
    )
    db.execute("CREATE TABLE search_text_new (id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
    db.execute(
        "INSERT INTO search_text_new (id, text) SELECT m.new, t.text FROM search_renumber m "
        "JOIN search_text t ON t.id = m.old ORDER BY m.new"
    )
    db.execute("DROP TABLE search_docs")
    db.execute("DROP TABLE search_text")
    db.execute("DROP TABLE search_renumber")
    db.execute("ALTER TABLE search_docs_new RENAME TO search_docs")
    db.execute("ALTER TABLE search_text_new RENAME TO search_text")
    db.execute("CREATE INDEX search_docs_run ON search_docs(run_key)")
    db.execute(
        "CREATE VIRTUAL TABLE search USING fts5(text, content='search_text', content_rowid='id', "
        "tokenize='unicode61 remove_diacritics 2')"
    )
    db.execute("INSERT INTO search (search) VALUES ('rebuild')")


@migrations()
def m012_current_label_by_time(db: Database) -> None:
    """A current label is a reviewer's latest by `created_at` (was: by row id, so a merged older export won)."""
    db.execute("DROP VIEW IF EXISTS current_labels")
    db.execute(CURRENT_LABELS_BY_SUBQUERY)
    db.execute("CREATE INDEX IF NOT EXISTS labels_target_time ON labels(target_id, reviewer, created_at, id)")


@migrations()
def m013_queue_order(db: Database) -> None:
    """The findings queue reads each of its sorts as one keyset range of an index (`store.findings`
    QUEUE_SORTS spells the same expressions): by run and position in the run, by kind, by tool, and the runs
    newest first, so the queue's first page is a bounded read at any store size, never a sort of every finding."""
    position = "coalesce(seq, -1)"
    db.execute(f"CREATE INDEX findings_queue_order ON findings(run_key, {position}, id)")
    db.execute(f"CREATE INDEX findings_kind_order ON findings(kind, run_key, {position}, id)")
    db.execute(
        f"CREATE INDEX findings_tool_order ON findings(ifnull(tool_name, ''), run_key, {position}, id)"
    )
    db.execute("CREATE INDEX runs_newest_first ON runs(-coalesce(started_ms, -1), key)")


@migrations()
def m014_run_sources(db: Database) -> None:
    """Every recording a run was read from, with the run's content identity (`run_content_id`): the same
    run read from a bare recording and from its envelope (or a bundle, an artifact) is stored once, and its
    sources are all the paths of all those recordings. Runs stored before keep their own recording, with
    no identity (NULL) until `reviewer reextract` computes it."""
    db.execute("""
        CREATE TABLE run_sources (
            run_key TEXT NOT NULL,
            recording_id INTEGER NOT NULL REFERENCES recordings(id),
            content_id TEXT,
            PRIMARY KEY (run_key, recording_id)
        ) WITHOUT ROWID""")
    db.execute("CREATE INDEX run_sources_content ON run_sources(content_id)")
    db.execute("CREATE INDEX run_sources_recording ON run_sources(recording_id)")
    db.execute("INSERT INTO run_sources (run_key, recording_id) SELECT key, recording_id FROM runs")


@migrations()
def m015_search_tokens_as_fts5(db: Database) -> None:
    """PostgreSQL's full-text index now splits and folds words as this FTS5 index does (`schema_pg`'s form:
    the same word finds the same runs on both). FTS5 is the reference, so nothing changes here."""


@migrations()
def m016_runs_by_most_findings(db: Database) -> None:
    """The runs screen's "most findings" sort (`store.runs.SORTS`) read as one index range, read backwards:
    without it every page sorted every run (1.8 s a page at a million runs)."""
    db.execute("CREATE INDEX runs_most_findings ON runs(findings, coalesce(started_ms, -1), key)")


#: The runs that delivered nothing, the runs screen's `w` (a few percent of the runs), read from partial
#: indexes of their own: the filter's own condition on the bare columns, so SQLite matches the two.
NO_ANSWER = received_nothing_sql("delivered", "outcome")


@migrations()
def m017_runs_by_filter_and_sort(db: Database) -> None:
    """A page of runs under a filter in any sort walks one index in that order (`store.runs.runs_page`):
    "most findings" within an outcome or an agent, and the runs that delivered nothing (`w`) in either order.
    Without them such a page sorted every matching run (1.8 s for "delivered" by most findings at a million
    runs) and the `w` count read runs until 10,000 such were found (127 ms)."""
    db.execute(
        "CREATE INDEX runs_outcome_most_findings ON runs(outcome, findings, coalesce(started_ms, -1), key)"
    )
    db.execute(
        "CREATE INDEX runs_agent_most_findings ON runs(agent_id, findings, coalesce(started_ms, -1), key)"
    )
    db.execute(f"CREATE INDEX runs_no_answer ON runs(started_ms DESC, key DESC) WHERE {NO_ANSWER}")
    db.execute(
        f"CREATE INDEX runs_no_answer_most_findings ON runs(findings, coalesce(started_ms, -1), key) WHERE {NO_ANSWER}"
    )


@migrations()
def m018_search_runs(db: Database) -> None:
    """PostgreSQL keeps every run's search tokens in one row (`schema_pg`'s form: the capped count of a
    word's runs reads those rows, not every matching document). FTS5 answers from its own index, so nothing
    changes here."""


@migrations()
def m019_run_kinds(db: Database) -> None:
    """PostgreSQL keeps every (finding kind, run) pair beside the run's start time (`schema_pg`'s form: the
    runs screen's page filtered by a kind reads one index range of it). Nothing changes here."""


@migrations()
def m020_findings_by_pack_and_kind(db: Database) -> None:
    """The queue reads a pack version's findings, or those of a pack version and a kind, by one index range
    (`store.findings._driver`): a kind and a pack version none of its findings has walked every finding of the
    kind to find none (447 ms at a million runs). It replaces the index of the pack version alone. And a kind's
    findings in the tool sort's order (`store.findings._KIND_BY_TOOL`)."""
    db.execute("CREATE INDEX findings_pack_kind ON findings(pack_version, kind)")
    db.execute("DROP INDEX findings_pack_version")
    position = "coalesce(seq, -1)"
    db.execute(
        f"CREATE INDEX findings_kind_tool_order ON findings(kind, ifnull(tool_name, ''), run_key, {position}, id)"
    )


@migrations()
def m021_findings_by_code(db: Database) -> None:
    """The queue's code filter read by index: each (code, finding) pair of the findings' JSON `codes` in a table
    kept by triggers. Testing every finding's codes as JSON, a rare code's queue took 16 s by kind at a
    million runs; now a page probes the pair (or reads the code's findings whole, when few)."""
    db.execute(
        "CREATE TABLE finding_codes (code TEXT NOT NULL, finding TEXT NOT NULL, PRIMARY KEY (code, finding)) "
        "WITHOUT ROWID"
    )
    add = f"INSERT OR IGNORE INTO finding_codes (code, finding) SELECT j.value, NEW.id FROM {finding_codes('NEW')};"
    remove = f"DELETE FROM finding_codes WHERE (code, finding) IN (SELECT j.value, OLD.id FROM {finding_codes('OLD')});"
    db.execute(f"CREATE TRIGGER finding_codes_insert AFTER INSERT ON findings BEGIN {add} END")
    db.execute(f"CREATE TRIGGER finding_codes_delete AFTER DELETE ON findings BEGIN {remove} END")
    db.execute(
        f"CREATE TRIGGER finding_codes_update AFTER UPDATE OF id, codes ON findings BEGIN {remove} {add} END"
    )
    db.execute(FINDING_CODES_REFILL)


@migrations()
def m022_search_run_facets(db: Database) -> None:
    """PostgreSQL keeps each run's equality filters (finding kinds, agent, outcome, tenant, pack versions)
    beside its search tokens (`schema_pg`'s form: a word and those filters are one match of one row a run).
    SQLite counts such a search window by window (`store.windows`); nothing changes here."""


#: The columns of a finding its tallies are read from: an UPDATE of any of them moves its tallies.
FINDING_TALLY_COLUMNS = "kind, run_key, tool_name, pack_version, codes, refs"


def _remake_findings_tally_triggers(db: Database) -> None:
    """The findings' tally triggers made again from `_tally_rows` as it is now (a migration adding a facet)."""
    for event in ("insert", "delete", "update"):
        db.execute(f"DROP TRIGGER IF EXISTS tally_findings_{event}")
    _findings_tally_triggers(db, FINDING_TALLY_COLUMNS)


@migrations()
def m023_tool_named_tally(db: Database) -> None:
    """The `tool_named` tally: findings by every tool they name, their own or one their refs name (each
    finding once per distinct name), the set the queue's tool filter matches, so its count and progress line
    are exact and read one row (they counted windows of findings for 15 ms and showed a lower bound); and
    `kind_tool`, the same per kind and tool (`KIND_TOOL_SEP` between), for the queue by a kind and a tool.
    The findings' tally triggers are made again (m010's, with the facets, and an UPDATE of `refs` watched)."""
    _remake_findings_tally_triggers(db)
    from store.tallies import rebuild_tallies

    rebuild_tallies(db, codes=False)  # finding_codes (m021) is kept already


@migrations()
def m024_finding_and_run_keys(db: Database) -> None:
    """The queue's sort keys of a finding by its id, and a run's start by its key, each in one index: a set of
    findings read whole (a code's, a reviewer's labels: `store.findings._driver`) is then read and sorted
    from these two indexes alone, where each finding's and its run's table rows cost about 8 us at a million
    runs (a rare code's 13,790 findings newest first: 113 ms, 16 ms from these)."""
    db.execute("CREATE INDEX findings_keys ON findings(id, run_key, seq, kind, tool_name)")
    db.execute("CREATE INDEX runs_key_started ON runs(key, started_ms)")


@migrations()
def m025_search_doc_runs(db: Database) -> None:
    """PostgreSQL reads the runs of a query's matching documents, up to a bound, from the documents' GIN
    index alone (`schema_pg`'s form: a function whose plan may take no other read). Nothing changes on
    SQLite, whose FTS5 index is read so already."""


@migrations()
def m026_search_run_flags(db: Database) -> None:
    """PostgreSQL keeps whether the person received nothing (`w`) beside each run's search tokens, as the
    equality filters (m022; `schema_pg`'s form). Nothing changes on SQLite."""


@migrations()
def m027_kind_code_tally(db: Database) -> None:
    """The `kind_code` tally: findings by kind and code (`KIND_TOOL_SEP` between), so the queue knows which
    kinds a code is filed under. Two filters whose kinds never meet (a coverage gap's code and a pack version,
    which only negative claims carry) are then empty at once, where the walk read every finding of the
    store to learn it (0.3-1.3 s at a million runs), and a kind and a code are counted from one row. The
    findings' tally triggers are made again (m023's, with the facet); only the new facet is counted."""
    _remake_findings_tally_triggers(db)
    from store.tallies import recount_kind_code

    recount_kind_code(db)


@migrations()
def m028_pack_version_in_the_queue_indexes(db: Database) -> None:
    """The pack version in the indexes the queue reads findings by: m024's keys by id, and the run and tool
    orders (m013; the run order with the tool too). A queue under a pack version and another filter tests the
    pack version from the index it reads, where each finding's row was read for it (about 130 us a row at
    a million runs): a code of 13,790 findings with a pack version 47 -> 12 ms, a common tool with one by
    tool 57 -> 11 ms."""
    position = "coalesce(seq, -1)"
    for name, columns in (
        ("findings_keys", "id, run_key, seq, kind, tool_name, pack_version"),
        ("findings_queue_order", f"run_key, {position}, id, pack_version, ifnull(tool_name, '')"),
        ("findings_tool_order", f"ifnull(tool_name, ''), run_key, {position}, id, pack_version"),
    ):
        db.execute(f"DROP INDEX IF EXISTS {name}")
        db.execute(f"CREATE INDEX {name} ON findings({columns})")


@migrations()
def m029_current_labels_kept(db: Database) -> None:
    """Each reviewer's latest label on each target kept in `label_latest` as labels are written (a trigger),
    and `current_labels` read from it: the view chose it with a subquery for every label row at every read,
    and PostgreSQL, which could not estimate that, tested each finding of a queue page against every current
    label (an anti-join over all of them: 22-33 ms a page at 2,200 labels on the million-run store, and
    more with every label)."""
    label_latest_filled(db)
    db.execute(f"CREATE TRIGGER label_latest_kept AFTER INSERT ON labels BEGIN {LABEL_LATEST_KEPT}; END")
    current_labels_from_latest(db)
    # its statistics now (a store's labels came after its last ANALYZE; none at all read as a million rows,
    # and where there are none, as for an empty table, opening the store plants some:
    # `store.db.statistics.planted_where_none`)
    db.execute("ANALYZE label_latest")


def label_latest_filled(db: Database) -> None:
    """m029's table of current labels, with its reviewer index, filled from the labels already written."""
    db.execute(LABEL_LATEST_TABLE)
    db.execute("CREATE INDEX label_latest_reviewer ON label_latest(reviewer, target_id)")
    db.execute(LABEL_LATEST_FILL)


def current_labels_from_latest(db: Database) -> None:
    """m029's `current_labels`, read from `label_latest` (once its trigger keeps it)."""
    db.execute("DROP VIEW current_labels")
    db.execute(CURRENT_LABELS_VIEW)


@migrations()
def m030_findings_know_their_runs_start(db: Database) -> None:
    """Each finding carries its run's start (`run_started_ms`, written with the run's rows and never changed
    apart from them), so that PostgreSQL reads the queue newest first from one index of findings, where it
    walked the runs a chunk at a time (schema_pg's form makes the indexes). SQLite keeps its walk, which
    costs it less, and so no index here: a column filled from the runs."""
    for column, kind in FINDINGS_ADDED.items():
        db.execute(f"ALTER TABLE findings ADD COLUMN {column} {kind}")
    db.execute(FINDINGS_RUN_STARTED_FILL)


#: m030's fill of the findings' run starts from their runs (both backends)
FINDINGS_RUN_STARTED_FILL = (
    "UPDATE findings SET run_started_ms = (SELECT r.started_ms FROM runs r WHERE r.key = findings.run_key)"
)


@migrations()
def m031_code_keys(db: Database) -> None:
    """On PostgreSQL, `finding_codes` carries each finding's queue keys and a code's findings are read with
    them from one index (schema_pg's form): read by their ids from the findings' keys index, a code of 14,600
    findings cost 46-80 ms a page at a million runs. SQLite reads its keys index cheaper (its rows are the
    index's own), and keeps `finding_codes` as it is: nothing to do here."""


@migrations()
def m032_run_identities_of_one_digest(db: Database) -> None:
    """A run's content identity is now one SHA-256 over its events' canonical JSON (`rc2-`), where it was a
    blake2b over a digest of each event (`rc-`): the two forms never compare equal, so the old ones are
    forgotten. The writer takes a stored run's identity again from its original when a run of its run id
    is read, and keeps it (`store.db.writer`); until then no screen needs it."""
    db.execute("UPDATE run_sources SET content_id = NULL WHERE content_id IS NOT NULL")


SCHEMA_VERSION = len(migrations._migrations)
