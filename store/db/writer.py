"""Writing extracted recordings and quarantine entries: each alone in its own transaction, or (the `_in`
variants) inside the caller's, so ingest can commit a group of recordings at once."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlite_utils import Database

from store.db.connection import write_lock
from store.db.schema import COLUMNS, SEARCH_DOC_BITS
from store.reading.extract import Extracted
from store.reading.extract.walk import CONSUMER_SCOPE
from store.reading.identity import run_identities
from store.recordings import decompressed

#: Bump when extraction changes, so `reviewer reextract` knows which recordings to rebuild.
#: 2: delivery, read completeness, decisions; 3: a reused toolCallId keeps two calls, colliding finding ids both
#: kept; 4: each run's content identity (run_sources), so the same run read from another container is one run;
#: 5: timeline rows only for the events the timeline draws (an older recording's other rows are never read,
#: and `reextract` drops them)
EXTRACTOR_VERSION = 5


ROW_TABLES = ("runs", "tool_calls", "semantics", "coverage", "evictions", "findings", "events")


@dataclass
class Prepared:
    """What a worker hands the writer: the extracted rows (as insert-ready tuples) and the compressed original."""

    extracted: Extracted
    codec: str
    original: bytes
    tuples: dict[str, list[tuple[Any, ...]]] | None = None


def to_tuples(x: Extracted) -> dict[str, list[tuple[Any, ...]]]:
    """Rows in column order, built where the recording was extracted, before the write transaction opens."""
    return {t: [tuple(map(r.get, COLUMNS[t])) for r in getattr(x, t)] for t in ROW_TABLES}


#: SQLite INTEGER is a signed 64-bit number; a recorded JSON integer may be any size.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

#: The recorded field a numeric column is read from, for a quarantine reason a user can act on.
RECORDED_FIELD = {
    "wall_ms": "an event's meta.wallClockMs",
    "started_ms": "a run's first wallClockMs",
    "ended_ms": "a run's last wallClockMs",
    "duration_ms": "a durationMs",
    "iteration": "an iterIndex / iteration",
    "dropped_events": "the envelope's droppedEvents",
    "first_retained_index": "the envelope's firstRetainedIndex",
    "span_start_u16": "a finding's span start",
    "span_end_u16": "a finding's span end",
    "span_start": "a finding's span start",
    "span_end": "a finding's span end",
}


def out_of_range_cell(prepared: Prepared) -> tuple[str, str, str] | None:
    """The first (table, column, value text) holding an integer SQLite cannot store, if any.

    Only looked for after SQLite refused a write, so the common path pays nothing for it.
    """
    tables = prepared.tuples if prepared.tuples is not None else to_tuples(prepared.extracted)
    rec = prepared.extracted.recording
    cells = [("recordings", c, v) for c, v in rec.items()]
    cells += [(t, COLUMNS[t][i], v) for t in ROW_TABLES for row in tables[t] for i, v in enumerate(row)]
    for table, column, value in cells:
        if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
            text = str(value) if abs(value) < 10**60 else f"a {len(str(abs(value)))}-digit number"
            return table, column, text
    return None


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def recording_exists(db: Database, sha256: str) -> int | None:
    row = db.execute("SELECT id FROM recordings WHERE sha256 = ?", [sha256]).fetchone()
    return int(row[0]) if row else None


def note_source(db: Database, path: str, recording_id: int) -> None:
    """Remember that `path` held this content (a re-ingest of the same bytes changes nothing else)."""
    with write_lock(db):
        note_source_in(db, path, recording_id)


def note_source_in(db: Database, path: str, recording_id: int) -> None:
    """`note_source` inside the caller's transaction."""
    db.execute(
        "INSERT OR IGNORE INTO sources (path, recording_id, seen_at) VALUES (?, ?, ?)",
        [path, recording_id, now_iso()],
    )
    db.execute("DELETE FROM quarantine WHERE path = ?", [path])


def write_recording(db: Database, prepared: Prepared) -> tuple[int, bool]:
    """Insert everything for one recording atomically. Returns (recording id, newly stored?)."""
    with write_lock(db):
        return write_recording_in(db, prepared)


def write_recording_in(db: Database, prepared: Prepared) -> tuple[int, bool]:
    """`write_recording` inside the caller's transaction (a group of recordings commits together)."""
    x = prepared.extracted
    existing = recording_exists(db, x.recording["sha256"])
    if existing is not None:
        db.execute(
            "INSERT OR IGNORE INTO sources (path, recording_id, seen_at) VALUES (?, ?, ?)",
            [x.recording["source"], existing, now_iso()],
        )
        return existing, False
    rec = dict(x.recording, extractor_version=EXTRACTOR_VERSION, ingested_at=now_iso())
    cols = list(rec)
    cur = db.execute(
        f"INSERT INTO recordings ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
        [rec[c] for c in cols],
    )
    rec_id = int(cur.lastrowid or 0)
    db.execute(
        "INSERT INTO originals (recording_id, codec, data) VALUES (?, ?, ?)",
        [rec_id, prepared.codec, prepared.original],
    )
    insert_rows(db, rec_id, x, prepared.tuples)
    note_source_in(db, x.recording["source"], rec_id)
    return rec_id, True


def insert_rows(
    db: Database,
    rec_id: int,
    x: Extracted,
    tuples: dict[str, list[tuple[Any, ...]]] | None = None,
    *,
    own: frozenset[str] = frozenset(),
) -> int:
    """The extracted rows of one recording (inside the caller's transaction). A run already stored from
    another recording (the same content identity: a bare recording and its envelope) is not stored again:
    this recording becomes one more of its sources, and the facts only an envelope states fill the stored
    run. Runs in `own` (this recording's own before a re-extraction) are always its own. Returns how many
    runs were such already-stored ones."""
    conn = db.conn
    tables = tuples if tuples is not None else to_tuples(x)
    same = _stored_elsewhere(conn, x, own)
    if same:
        tables = {t: [r for r in rows if r[_KEY_AT[t]] not in same] for t, rows in tables.items()}
        if x.recording.get("form") == "envelope":
            _take_stated_facts(conn, x, same)
    at = COLUMNS["runs"].index("recording_id")
    tables = dict(tables, runs=[r[:at] + (rec_id,) + r[at + 1 :] for r in tables["runs"]])
    _insert_or_replace(conn, "runs", tables["runs"])  # now: the full-text rows below read the runs' rowids
    waiting = _WAITING.get()
    for table in ROW_TABLES[1:]:
        if waiting is not None:
            waiting.rows.setdefault(table, []).extend(tables[table])
        else:
            _insert_or_replace(conn, table, tables[table])
    conn.executemany(
        "INSERT INTO run_sources (run_key, recording_id, content_id) VALUES (?, ?, ?) "
        "ON CONFLICT (run_key, recording_id) DO UPDATE SET content_id = excluded.content_id",
        [(same.get(r["key"], r["key"]), rec_id, x.identities.get(r["key"])) for r in x.runs],
    )
    if x.search:  # only runs stored under this recording are indexed (`_search_rows`)
        docs, texts = _search_rows(conn, rec_id, x.search)
        conn.executemany("INSERT INTO search_docs (id, run_key, kind, ref) VALUES (?, ?, ?, ?)", docs)
        conn.executemany("INSERT INTO search_text (id, text) VALUES (?, ?)", texts)
        _index_documents(conn, texts)
    return len(same)


def _insert_or_replace(conn: Any, table: str, rows: list[tuple[Any, ...]]) -> None:
    """Write `rows` into the row table `table`, a row of the same key replacing the stored one."""
    if rows:
        cols = COLUMNS[table]
        conn.executemany(
            f"INSERT OR REPLACE INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
            rows,
        )


@dataclass
class _Waiting:
    """What a `group_written_last` block has put off: the rows of the tables after `runs` (ROW_TABLES), by
    table, and the full-text documents (id, text) to index."""

    rows: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)
    documents: list[tuple[Any, ...]] = field(default_factory=list)
    #: whether the store holds a run with no identity kept, once asked (`_some_run_unidentified`)
    unidentified: bool | None = None


_WAITING: ContextVar[_Waiting | None] = ContextVar("group_writes_waiting", default=None)


@contextmanager
def group_written_last(db: Database) -> Iterator[None]:
    """Inside the caller's transaction: write the tool calls, semantics, coverage, evictions, findings and
    events of every recording written in the block table by table after all of them, then index all their
    full-text documents at once, instead of each recording's after its own runs.

    Why the rows: on PostgreSQL each statement is a round trip the writer waits for, and fires the statement
    triggers that keep `run_kind`, the codes' index, the search facets and `run_kinds` (each call planned
    again, as it reads the statement's transition tables). A recording's findings, fewer than a COPY takes,
    were a statement each; a group's are one COPY. 2,000 event-heavy runs, one process: 4.32 -> 3.67 s
    (`python -m bench.postgres --no-labels`); SQLite is unchanged. Nothing the writer reads while the block is
    open is in these tables (the runs, their sources and documents are written as before, in order), and a
    later recording's row replaces an earlier one's as before.

    Why the documents: every insert into runs or findings fires the tally triggers, so SQLite opens a
    statement journal for it, and opening one makes FTS5 write out what it has buffered as a new segment.
    Indexed per recording, each recording's documents became a segment of their own (merged again later)
    instead of one segment per group at the commit: 12% of the group write's instructions (`python -m
    bench.write_parts`). The index holds the same documents.

    A block left by an exception writes nothing (its transaction is rolled back)."""
    waiting = _Waiting()
    token = _WAITING.set(waiting)
    try:
        yield
    finally:
        _WAITING.reset(token)
    for table in ROW_TABLES[1:]:
        _insert_or_replace(db.conn, table, waiting.rows.get(table, []))
    _index_documents(db.conn, waiting.documents)


def _index_documents(conn: Any, texts: list[tuple[Any, ...]]) -> None:
    """Add (document id, text) pairs to the full-text index, or to the open `group_written_last` block."""
    waiting = _WAITING.get()
    if waiting is not None:
        waiting.documents.extend(texts)
    elif texts:
        conn.executemany("INSERT INTO search (rowid, text) VALUES (?, ?)", texts)


#: Where each row table holds its run's key.
_KEY_AT = {t: COLUMNS[t].index("key" if t == "runs" else "run_key") for t in ROW_TABLES}

#: The run columns an envelope states (recording-format.md section 3) and a bare recording cannot know: the
#: same run read again from its envelope gives them to the stored run (what the envelope alone would show).
ENVELOPE_STATED = (
    "started_at",
    "tenant",
    "principal",
    "session_id",
    "complete",
    "dropped_events",
    "first_retained_index",
)


#: Content identities, or run ids, looked up in one query (well under either backend's limit on parameters).
_IDS_PER_QUERY = 500


@dataclass(frozen=True)
class _StoredRun:
    """A stored run whose sources keep no content identity (a store older than schema m032)."""

    key: str
    recording_id: int


def _stored_elsewhere(conn: Any, x: Extracted, own: frozenset[str]) -> dict[str, str]:
    """This recording's run key -> the key of the same run (same content identity, `store.reading.identity`)
    stored from another one. One query for a recording's runs, not one per run: on PostgreSQL each is a
    round trip the writer waits for (8% of its time for the event-heavy corpus's ten runs a file).

    A stored run whose sources keep no identity (schema m032 forgot those of the older form) is compared
    too, when it has one of this recording's run ids: its identity is taken from its recording's original
    and kept. Whether the store holds such a run is asked once per group of recordings written together."""
    wanted = {key: cid for key, cid in x.identities.items() if key not in own and cid is not None}
    same = _stored_under(conn, wanted)
    rest = {r["key"]: r["run_id"] for r in x.runs if r["key"] not in own and r["key"] not in same}
    rest = {key: run_id for key, run_id in rest.items() if run_id != CONSUMER_SCOPE}  # not one run's id
    if rest and _some_run_unidentified(conn):
        same.update(_same_unidentified(conn, x, rest))
    return same


def _some_run_unidentified(conn: Any) -> bool:
    """Whether any stored run keeps no identity: one probe of `run_sources_content`, asked once for a
    `group_written_last` block (a recording written in it whose identities could not be taken adds such
    runs, which nothing could compare anyway)."""
    waiting = _WAITING.get()
    if waiting is not None and waiting.unidentified is not None:
        return waiting.unidentified
    found = bool(conn.execute("SELECT 1 FROM run_sources WHERE content_id IS NULL LIMIT 1").fetchall())
    if waiting is not None:
        waiting.unidentified = found
    return found


def _stored_under(conn: Any, wanted: dict[str, str]) -> dict[str, str]:
    """Run key -> the first key (in order) of another stored run with the same identity."""
    ids = sorted(set(wanted.values()))
    stored_under: dict[str, list[str]] = {}
    for start in range(0, len(ids), _IDS_PER_QUERY):
        chunk = ids[start : start + _IDS_PER_QUERY]
        rows = conn.execute(
            "SELECT DISTINCT s.content_id, s.run_key FROM run_sources s JOIN runs r ON r.key = s.run_key "
            f"WHERE s.content_id IN ({', '.join('?' for _ in chunk)}) ORDER BY s.content_id, s.run_key",
            chunk,
        ).fetchall()
        for content_id, run_key in rows:
            stored_under.setdefault(str(content_id), []).append(str(run_key))
    same: dict[str, str] = {}
    for key, content_id in wanted.items():
        other = next((k for k in stored_under.get(content_id, ()) if k != key), None)
        if other is not None:
            same[key] = other
    return same


def _same_unidentified(conn: Any, x: Extracted, rest: dict[str, str]) -> dict[str, str]:
    """Run key -> the key of a stored run of its run id with no identity kept, that is the same run."""
    stored = _unidentified_runs_of(conn, sorted(set(rest.values())))
    read: dict[int, dict[str, str]] = {}  # recording id -> its identities, each original read once here
    same: dict[str, str] = {}
    for key, run_id in rest.items():
        others = [run for run in stored.get(run_id, ()) if run.key != key]
        if not others:
            continue
        ours = x.identities.get(key)
        for run in others:
            if ours is not None and ours == _identity_of_stored(conn, run, read):
                same[key] = run.key
                break
    return same


def _unidentified_runs_of(conn: Any, run_ids: list[str]) -> dict[str, list[_StoredRun]]:
    """Run id -> the stored runs of it whose sources keep no identity, in key order."""
    stored: dict[str, list[_StoredRun]] = {}
    for start in range(0, len(run_ids), _IDS_PER_QUERY):
        chunk = run_ids[start : start + _IDS_PER_QUERY]
        rows = conn.execute(
            "SELECT r.run_id, r.key, r.recording_id FROM runs r "
            f"WHERE r.run_id IN ({', '.join('?' for _ in chunk)}) AND NOT EXISTS "
            "(SELECT 1 FROM run_sources s WHERE s.run_key = r.key AND s.content_id IS NOT NULL) ORDER BY r.key",
            chunk,
        ).fetchall()
        for run_id, key, recording_id in rows:
            stored.setdefault(str(run_id), []).append(_StoredRun(str(key), int(recording_id)))
    return stored


def _identity_of_stored(conn: Any, run: _StoredRun, read: dict[int, dict[str, str]]) -> str | None:
    """A stored run's identity, taken from its recording's original (`read` keeps each original's identities
    for the call) and kept on the sources of every run of that recording that had none (None if the
    original cannot be read)."""
    if run.recording_id not in read:
        read[run.recording_id] = taken = _identities_from_original(conn, run.recording_id)
        conn.executemany(
            "UPDATE run_sources SET content_id = ? WHERE run_key = ? AND content_id IS NULL",
            [(content_id, key) for key, content_id in taken.items()],
        )
    return read[run.recording_id].get(run.key)


def _identities_from_original(conn: Any, rec_id: int) -> dict[str, str]:
    """Every run identity of the stored recording `rec_id`, read from its original (none if it cannot be)."""
    named = conn.execute("SELECT sha256, source FROM recordings WHERE id = ?", [rec_id]).fetchone()
    original = conn.execute("SELECT codec, data FROM originals WHERE recording_id = ?", [rec_id]).fetchone()
    if named is None or original is None:
        return {}
    try:
        return run_identities(decompressed(*original), str(named[1]), str(named[0]))
    except Exception:  # noqa: BLE001 - an identity not taken only keeps two runs apart: nothing is lost
        return {}


def _take_stated_facts(conn: Any, x: Extracted, same: dict[str, str]) -> None:
    sets = ", ".join(f"{c} = coalesce(?, {c})" for c in ENVELOPE_STATED)
    for run in x.runs:
        stored = same.get(run["key"])
        if stored is not None:
            conn.execute(
                f"UPDATE runs SET {sets} WHERE key = ?", [*(run.get(c) for c in ENVELOPE_STATED), stored]
            )


def _search_rows(
    conn: Any, rec_id: int, search: list[dict[str, Any]]
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """(search_docs rows, search_text rows): each document's id is its run's rowid << SEARCH_DOC_BITS plus
    its number in the run, so a full-text match names its run without a join. A run's documents past
    2**SEARCH_DOC_BITS, or of no stored run, are not indexed."""
    rowid_of = dict(conn.execute("SELECT key, rowid FROM runs WHERE recording_id = ?", [rec_id]).fetchall())
    counters: dict[str, int] = {}
    docs: list[tuple[Any, ...]] = []
    texts: list[tuple[Any, ...]] = []
    for d in search:
        key = d["run_key"]
        rowid = rowid_of.get(key)
        n = counters.get(key, 0)
        if rowid is None or n >= 1 << SEARCH_DOC_BITS:
            continue
        counters[key] = n + 1
        doc_id = (int(rowid) << SEARCH_DOC_BITS) + n
        docs.append((doc_id, key, d["kind"], d["ref"]))
        texts.append((doc_id, d["text"]))
    return docs, texts


def write_quarantine(db: Database, path: str, code: str, reason: str, sha256: str | None = None) -> None:
    """Record (or refresh) why `path` could not be ingested. Touches nothing else."""
    with write_lock(db):
        write_quarantine_in(db, path, code, reason, sha256)


def write_quarantine_in(db: Database, path: str, code: str, reason: str, sha256: str | None = None) -> None:
    """`write_quarantine` inside the caller's transaction."""
    stamp = now_iso()
    db.execute(
        """INSERT INTO quarantine (path, sha256, code, reason, first_seen, last_seen, times)
           VALUES (?, ?, ?, ?, ?, ?, 1)
           ON CONFLICT (path, code) DO UPDATE SET
             reason = excluded.reason, sha256 = excluded.sha256, last_seen = excluded.last_seen,
             times = quarantine.times + 1""",
        [path, sha256, code, reason, stamp, stamp],
    )


def delete_extracted(db: Database, recording_id: int) -> None:
    """Remove every extracted row of one recording (inside the caller's transaction); labels stay."""
    keys = [r[0] for r in db.execute("SELECT key FROM runs WHERE recording_id = ?", [recording_id])]
    for key in keys:
        db.execute(
            "INSERT INTO search (search, rowid, text) SELECT 'delete', t.id, t.text FROM search_text t "
            "JOIN search_docs d ON d.id = t.id WHERE d.run_key = ?",
            [key],
        )
        db.execute(
            "DELETE FROM search_text WHERE id IN (SELECT id FROM search_docs WHERE run_key = ?)", [key]
        )
        db.execute("DELETE FROM search_docs WHERE run_key = ?", [key])
        for table in ("tool_calls", "semantics", "coverage", "evictions", "findings", "events"):
            db.execute(f"DELETE FROM {table} WHERE run_key = ?", [key])
    db.execute("DELETE FROM runs WHERE recording_id = ?", [recording_id])


def runs_stored_elsewhere(db: Database, recording_id: int) -> int:
    """How many runs of this recording were already stored from another one (it is one more of their sources)."""
    row = db.execute(
        "SELECT count(*) FROM run_sources s JOIN runs r ON r.key = s.run_key "
        "WHERE s.recording_id = ? AND r.recording_id != ?",
        [recording_id, recording_id],
    ).fetchone()
    return int(row[0])


def own_runs(db: Database, recording_id: int) -> frozenset[str]:
    """The keys of the runs stored under this recording (not those it is only one more source of)."""
    return frozenset(r[0] for r in db.execute("SELECT key FROM runs WHERE recording_id = ?", [recording_id]))
