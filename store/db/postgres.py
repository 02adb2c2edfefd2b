"""The PostgreSQL side of the store's one dialect seam (`store.db.connection.open_database` picks it for a
`postgresql://` --db; a path still means SQLite through sqlite-utils).

`PgDatabase` answers the few calls the query modules make of a sqlite-utils `Database` (`execute` with `?`
placeholders, returning a cursor with `fetchone`/`fetchall`/iteration/`description`/`lastrowid`; `.conn`
with `executemany`; `close`), translating on the way the SQLite-only constructs the store's SQL uses:

* `?` -> `%s` (a literal `%` doubled);
* `INSERT OR IGNORE` -> `ON CONFLICT DO NOTHING`; `INSERT OR REPLACE` -> `ON CONFLICT (primary key) DO
  UPDATE` (the keys are in `schema_pg.PRIMARY_KEYS`);
* `INSERT` into a table with an identity `id` gets `RETURNING id`, read back as `lastrowid`;
* FTS5: `search MATCH ?` -> the `tsv` column of `search_text` (a generated tsvector with a GIN index)
  `@@ fts5_query(?)`, both tokenized as FTS5 tokenizes (schema m015: the same word finds the same runs);
  writes to the FTS5 index itself (`INSERT INTO search ...`) are not needed (the tsvector is generated)
  and are skipped;
* `rowid`: the tables the store reads `rowid` of (runs, findings, coverage) carry a real identity column of
  that name on PostgreSQL; `SELECT *` does not return it (as SQLite does not);
* the PRAGMAs ingest tunes SQLite with are no-ops here (`NOOP_PRAGMAS`); any other PRAGMA is an error;
* bulk rows: an `executemany` of COPY_MIN_ROWS or more rows of an `INSERT ... VALUES (?, ...)` (each row
  table ingest writes) goes through COPY instead of one statement a row. A plain INSERT is copied straight
  into its table; one with an ON CONFLICT clause (what INSERT OR REPLACE / OR IGNORE become) is copied
  into a temporary staging table of the session (one per table and column list, emptied at commit) and
  moved by one `INSERT ... SELECT ... ORDER BY` its ordinal carrying the same clause, so identities
  (`rowid`) are given in the same order and the tallies' triggers fire on the real table as before. A key
  repeated within a batch is folded first (the last row's values in the first row's place, what the row
  by row statements left: one statement may not update a row twice). A batch holding a value COPY's text
  would store differently (a float, bytes) stays on executemany; a NUL, or an integer past 64 bits, is
  refused either way. Measured (`python -m bench.postgres`, `python -m bench.postgres_copy --ingest`,
  bench/RESULTS.md): an ingest takes 7-15% less CPU; the wall-clock gain is smaller and noisier (a
  staged batch is three round trips where a pipelined executemany is one);
* SQLite functions the SQL uses (`json_each`, `json_extract`, `json_valid`) and `sqlite_master` exist as
  small SQL shims created by the first PostgreSQL migration (`schema_pg`).

Database errors are raised as `PostgresError`, a `sqlite3.DatabaseError`, so the store's existing handling
(quarantine a recording the database refused, roll the group back) applies unchanged.

psycopg is imported only here, and only when a PostgreSQL database is opened: the SQLite default needs no
driver (`pip install footprint-reviewer[postgres]` adds it).
"""

from __future__ import annotations

import functools
import hashlib
import re
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store.errors import PostgresUnavailable, UnsupportedByBackend

SCHEMES = ("postgresql://", "postgres://")

#: PRAGMAs the store sends SQLite to tune a bulk ingest; PostgreSQL has no such knobs (its own are server
#: settings), so they do nothing here. Any other PRAGMA reaching PostgreSQL is a bug and raises.
NOOP_PRAGMAS = (
    "cache_size",
    "wal_autocheckpoint",
    "journal_size_limit",
    "wal_checkpoint",
    "analysis_limit",
    "temp_store",
)

#: `PgDatabase.rows_within` reads this many rows first, to learn the pace.
ROWS_WITHIN_FIRST_BATCH = 64

#: One advisory lock key for the store's writers (see `PgDatabase.transaction`): "fprv" in ASCII.
WRITE_LOCK_KEY = 0x66707276


class PostgresError(sqlite3.DatabaseError):
    """A PostgreSQL error, raised as an sqlite3.DatabaseError so the store's handling applies to both."""


def postgres_url(target: str | Path | None) -> str | None:
    """The PostgreSQL URL `target` names, or None for a file path.

    A `pathlib.Path` collapses `postgresql://host` to `postgresql:/host`; that form is read back too, so a
    URL that went through a Path option still selects PostgreSQL."""
    if target is None:
        return None
    text = str(target)
    for scheme in SCHEMES:
        if text.startswith(scheme):
            return text
        collapsed = scheme[:-1]  # "postgresql:/"
        if text.startswith(collapsed) and not text.startswith(scheme):
            return scheme + text[len(collapsed) :]
    return None


#: The `reviewer` commands that run on a PostgreSQL database (each checked against SQLite by the tests);
#: any other says so in one line and exits 2 (`check_supported`).
SUPPORTED_COMMANDS = (
    "ingest",
    "runs",
    "show",
    "findings",
    "label",
    "labels",
    "stats",
    "quarantine",
    "reextract",
    "pack",
    "watch",
    "open",
    "serve",
    "schema",  # opens no database
)


def check_supported(target: str | Path | None, command: str) -> None:
    """Raise UnsupportedByBackend when `target` is a PostgreSQL database and `command` (its top-level name,
    e.g. "open") does not run there yet."""
    url = postgres_url(target)
    if url is None or command in SUPPORTED_COMMANDS:
        return
    raise UnsupportedByBackend(
        f"`reviewer {command}` is not yet supported on a PostgreSQL database ({redacted(url)}); "
        f"there it supports: {', '.join(SUPPORTED_COMMANDS)}"
    )


def is_postgres(db: Any) -> bool:
    """Whether `db` (an open database) is a PostgreSQL one."""
    return isinstance(db, PgDatabase)


# -- translation ------------------------------------------------------------------------------------------

_INSERT_TABLE = re.compile(r"^\s*INSERT\s+(?:OR\s+(IGNORE|REPLACE)\s+)?INTO\s+(\w+)", re.IGNORECASE)
_MATCH = re.compile(
    r"FROM\s+search(?:\s+(?!WHERE\b)(\w+))?\s+WHERE\s+search\s+MATCH\s+(\?|'[^']*')", re.IGNORECASE
)
_PLUS_ROWID = re.compile(r"\+(\w+\.rowid)\b")
#: SQLite's `INDEXED BY name` (an index the plan must use) is SQLite's alone: PostgreSQL's planner picks.
_INDEXED_BY = re.compile(r"\s+INDEXED\s+BY\s+\w+", re.IGNORECASE)
#: SQLite's `CROSS JOIN t ON ...` (a join order the planner keeps) is an inner join to PostgreSQL.
_CROSS_JOIN_ON = re.compile(r"\bCROSS\s+JOIN\s+(\w+(?:\s+(?!ON\b)\w+)?)\s+ON\b", re.IGNORECASE)
_PRAGMA = re.compile(r"^\s*PRAGMA\s+(\w+)", re.IGNORECASE)
_SELECT_LIST = re.compile(r"^\s*SELECT\s+(.*?)\bFROM\b", re.IGNORECASE | re.DOTALL)


def _placeholders(sql: str) -> str:
    """`?` -> `%s` outside string literals; a literal `%` doubled (psycopg's placeholder syntax)."""
    out: list[str] = []
    quote: str | None = None
    for ch in sql:
        if quote:
            out.append("%%" if ch == "%" else ch)
            if ch == quote:
                quote = None
        elif ch in ("'", '"'):
            quote = ch
            out.append(ch)
        elif ch == "?":
            out.append("%s")
        elif ch == "%":
            out.append("%%")
        else:
            out.append(ch)
    return "".join(out)


@functools.lru_cache(maxsize=1024)
def translate(sql: str) -> tuple[str | None, bool]:
    """(PostgreSQL text of `sql` with `%s` placeholders or None when it is to be skipped, returns an id?).

    A pure function of the SQL text, kept per text: the store sends the same few statements per recording,
    and the character-by-character placeholder pass is not worth redoing for each.
    """
    from store.db.schema_pg import IDENTITY_TABLES, PRIMARY_KEYS

    pragma = _PRAGMA.match(sql)
    if pragma:
        if pragma.group(1).lower() in NOOP_PRAGMAS:
            return None, False
        raise PostgresError(f"PRAGMA {pragma.group(1)} has no PostgreSQL form")
    returning = False
    insert = _INSERT_TABLE.match(sql)
    if insert:
        how, table = (insert.group(1) or "").upper(), insert.group(2)
        if table == "search":  # FTS5 index upkeep: the tsvector column is generated on PostgreSQL
            return None, False
        body = sql[insert.end() :]
        sql = f"INSERT INTO {table}{body}"
        if how == "IGNORE":
            sql = f"{sql.rstrip().rstrip(';')} ON CONFLICT DO NOTHING"
        elif how == "REPLACE" and table in PRIMARY_KEYS:
            cols = re.match(r"\s*\(([^)]*)\)", body)
            if cols is None:
                raise PostgresError(f"INSERT OR REPLACE INTO {table} without a column list")
            keys = PRIMARY_KEYS[table]
            names = [c.strip() for c in cols.group(1).split(",")]
            sets = ", ".join(f"{c} = EXCLUDED.{c}" for c in names if c not in keys)
            sql = f"{sql.rstrip().rstrip(';')} ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {sets}"
        if table in IDENTITY_TABLES and "RETURNING" not in sql.upper():
            sql = f"{sql.rstrip().rstrip(';')} RETURNING id"
            returning = True
    sql = _MATCH.sub(
        lambda m: (
            f"FROM search {m.group(1) or ''} WHERE {m.group(1) or 'search'}.tsv @@ fts5_query({m.group(2)})"
        ),
        sql,
    )
    sql = _PLUS_ROWID.sub(r"\1", sql)
    sql = _INDEXED_BY.sub(
        "", sql
    )  # first: `CROSS JOIN t a INDEXED BY i ON` is then a plain CROSS JOIN ... ON
    sql = _CROSS_JOIN_ON.sub(r"JOIN \1 ON", sql)
    return _placeholders(_alias_derived(sql)), returning


_DERIVED_START = re.compile(r"\b(?:FROM|JOIN)\s*\(", re.IGNORECASE)
_AFTER_DERIVED = re.compile(r"\s*(\w+)", re.IGNORECASE)
_NOT_ALIASES = frozenset(
    [
        "where",
        "group",
        "order",
        "limit",
        "union",
        "join",
        "on",
        "left",
        "inner",
        "cross",
        "having",
        "window",
        "except",
        "intersect",
        "offset",
        "natural",
        "full",
        "right",
    ]
)


def _closing(sql: str, start: int) -> int:
    """The index of the parenthesis closing the one at `start` (quotes respected), or -1."""
    depth, quote = 0, None
    for i in range(start, len(sql)):
        ch = sql[i]
        if quote:
            if ch == quote:
                quote = None
        elif ch in ("'", '"'):
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _alias_derived(sql: str) -> str:
    """Name every unnamed subquery in FROM/JOIN (SQLite allows them unnamed; PostgreSQL 15 does not)."""
    inserts: list[int] = []
    for m in _DERIVED_START.finditer(sql):
        end = _closing(sql, m.end() - 1)
        if end < 0:
            continue
        after = _AFTER_DERIVED.match(sql, end + 1)
        if after is None or after.group(1).lower() in _NOT_ALIASES:
            inserts.append(end + 1)
    for n, at in enumerate(sorted(inserts, reverse=True)):
        sql = f"{sql[:at]} AS _d{n}{sql[at:]}"
    return sql


def _prepare(text: str) -> bool | None:
    """Never a prepared statement for a full-text match (else psycopg's default after five runs): its plan
    must see the query's tsquery, which a generic plan does not: it guesses the match's size (so it cannot
    choose to walk the primary key for a common word) and rechecks rows with `fts5_query($1)`, called again
    for each (a count of "pause" at a million runs: 127 ms generic, 48 ms planned for its tsquery)."""
    return False if "fts5_query(" in text else None


def _param(value: Any) -> Any:
    """SQLite stores a bool as an integer; PostgreSQL's integer columns refuse a boolean."""
    return int(value) if isinstance(value, bool) else value


#: An `executemany` of at least this many rows is written with COPY (`PgDatabase.executemany`); fewer stay
#: on psycopg's pipelined executemany: one round trip, where a staged COPY takes three. Measured (`python -m
#: bench.postgres_copy`, bench/RESULTS.md): 8 and 16 could not be told apart in a whole ingest, batches of
#: about ten (a recording's run sources, its tool calls) took longer copied, and over a network each round
#: trip costs more.
COPY_MIN_ROWS = 16

#: The Python types COPY's text form stores exactly as executemany's parameters are stored (a bool written
#: as its integer, as `_param` does). A batch holding anything else keeps executemany: PostgreSQL casts a
#: typed parameter where COPY parses text (a float into BIGINT is rounded there and refused here; a float
#: into TEXT is spelled by the server there and by Python here).
_COPYABLE = frozenset({str, int, bool, type(None)})

_VALUES_INSERT = re.compile(
    r"^INSERT INTO (\w+) \(([^)]*)\)\s*VALUES\s*\(\s*%s(?:\s*,\s*%s)*\s*\)\s*(.*?)\s*$", re.DOTALL
)
_CONFLICT_UPDATE = re.compile(r"^ON CONFLICT\s*\(([^)]*)\)\s*DO UPDATE\b", re.IGNORECASE)


@dataclass(frozen=True)
class BulkInsert:
    """A translated `INSERT INTO t (columns) VALUES (%s, ...) [ON CONFLICT ...]`, as COPY writes it."""

    table: str
    columns: tuple[str, ...]
    #: The statement's ON CONFLICT clause ("" for none): kept word for word on the INSERT ... SELECT.
    conflict: str
    #: The DO UPDATE target. One statement may not update a row twice ("ON CONFLICT DO UPDATE command
    #: cannot affect row a second time"), so a batch repeating a key is folded first (`from_stage`).
    keys: tuple[str, ...]

    @property
    def stage(self) -> str:
        """The session's staging table for these columns (a temporary table, one per table and column list)."""
        digest = hashlib.blake2s(",".join(self.columns).encode(), digest_size=4).hexdigest()
        return f"_bulk_{self.table}_{digest}"

    def create_stage(self) -> str:
        """The staging table: the target's column types, an ordinal, emptied by every commit."""
        return (
            f"CREATE TEMP TABLE IF NOT EXISTS {self.stage} ON COMMIT DELETE ROWS AS "
            f"SELECT 0::bigint AS _ord, {', '.join(self.columns)} FROM {self.table} WITH NO DATA"
        )

    def from_stage(self) -> str:
        """One INSERT ... SELECT of the staged batch in its order (identities and row triggers follow it),
        emptying the staging table for the next batch of this transaction.

        A repeated key leaves one row: the last one's values in the first one's place, as row-by-row
        statements left it (the first inserted, each later one updating it; SQLite's INSERT OR REPLACE
        keeps the last values too). Keys are compared by PostgreSQL, as the conflict is."""
        cols = ", ".join(self.columns)
        source, order = "batch", "_ord"
        if self.keys:
            keys = ", ".join(self.keys)
            source = (
                f"(SELECT DISTINCT ON ({keys}) *, min(_ord) OVER (PARTITION BY {keys}) AS _first "
                f"FROM batch ORDER BY {keys}, _ord DESC) AS last"
            )
            order = "_first"
        return (
            f"WITH batch AS (DELETE FROM {self.stage} RETURNING *) "
            f"INSERT INTO {self.table} ({cols}) SELECT {cols} FROM {source} ORDER BY {order} {self.conflict}"
        ).rstrip()


@functools.lru_cache(maxsize=256)
def bulk_insert(text: str) -> BulkInsert | None:
    """The COPY form of a translated INSERT, or None for any other statement (it keeps executemany)."""
    m = _VALUES_INSERT.match(text)
    if m is None:
        return None
    columns = tuple(c.strip() for c in m.group(2).split(","))
    conflict = m.group(3)
    if len(columns) != text.count("%s") or (conflict and not conflict.upper().startswith("ON CONFLICT")):
        return None
    conflict = conflict.replace("%%", "%")  # the INSERT ... SELECT is sent without parameters
    update = _CONFLICT_UPDATE.match(conflict)
    keys = tuple(k.strip() for k in update.group(1).split(",")) if update else ()
    return BulkInsert(m.group(1), columns, conflict, keys)


def copyable(rows: Sequence[Sequence[Any]]) -> Sequence[Sequence[Any]] | None:
    """`rows` as COPY writes them (bools as integers), or None when a value's type is not `_COPYABLE`."""
    kinds = {type(v) for r in rows for v in r}
    if not kinds <= _COPYABLE:
        return None
    if bool in kinds:
        return [[_param(v) for v in r] for r in rows]
    return rows


def _params(params: Sequence[Any] | dict[str, Any] | None) -> list[Any]:
    if params is None:
        return []
    if isinstance(params, dict):
        raise PostgresError("named parameters are not translated for PostgreSQL; pass a list")
    return [_param(p) for p in params]


class PgCursor:
    """The part of an sqlite3 cursor the store reads: rows, `description`, `lastrowid`."""

    def __init__(
        self, rows: list[tuple[Any, ...]], description: list[tuple[Any, ...]] | None, lastrowid: int | None
    ) -> None:
        self._rows = rows
        self.description = description
        self.lastrowid = lastrowid
        self._at = 0

    @classmethod
    def empty(cls) -> PgCursor:
        return cls([], None, None)

    def fetchone(self) -> tuple[Any, ...] | None:
        if self._at >= len(self._rows):
            return None
        row = self._rows[self._at]
        self._at += 1
        return row

    def fetchall(self) -> list[tuple[Any, ...]]:
        rows = self._rows[self._at :]
        self._at = len(self._rows)
        return rows

    def fetchmany(self, size: int = 1) -> list[tuple[Any, ...]]:
        rows = self._rows[self._at : self._at + size]
        self._at += len(rows)
        return rows

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        while (row := self.fetchone()) is not None:
            yield row


def _without_hidden_rowid(
    sql: str, description: Sequence[Any], rows: list[tuple[Any, ...]]
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Drop the `rowid` column a `SELECT *` returns on PostgreSQL (SQLite's rowid is never in `*`)."""
    names = [d.name for d in description]
    desc = [(d.name, None, None, None, None, None, None) for d in description]
    if "rowid" not in names:
        return desc, rows
    head = _SELECT_LIST.match(sql)
    if head is not None and re.search(r"\browid\b", head.group(1)):
        return desc, rows
    keep = [i for i, n in enumerate(names) if n != "rowid"]
    return [desc[i] for i in keep], [tuple(r[i] for i in keep) for r in rows]


class PgConn:
    """`db.conn` for the code that reaches for the raw connection (`executemany`, `execute`)."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> PgCursor:
        return self._db.execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self._db.executemany(sql, rows)

    @property
    def in_transaction(self) -> bool:
        return self._db.in_transaction

    def close(self) -> None:
        self._db.close()


class PgDatabase:
    """A PostgreSQL connection speaking the store's SQLite SQL (see the module docstring)."""

    dialect = "postgresql"

    def __init__(self, url: str) -> None:
        try:
            import psycopg
        except ImportError as exc:  # pragma: no cover - the [postgres] extra is not installed
            raise PostgresUnavailable(
                "a postgresql:// database needs psycopg: pip install 'footprint-reviewer[postgres]'"
            ) from exc
        self.url = url
        self._psycopg = psycopg
        try:
            self._conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            reason = " ".join(str(exc).split())
            raise PostgresUnavailable(f"{redacted(url)}: cannot connect to PostgreSQL ({reason})") from exc
        self._depth = 0
        #: Staging tables known to exist in this transaction (see `_staged`).
        self._stages: set[str] = set()
        self.conn = PgConn(self)

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> PgCursor:
        text, returning = translate(sql)
        if text is None:
            if _PRAGMA.match(sql):  # a tuning PRAGMA read (`PRAGMA cache_size`) reads 0: nothing to restore
                return PgCursor([(0,)], [("pragma", None, None, None, None, None, None)], None)
            return PgCursor.empty()
        try:
            cur = self._conn.execute(text, _params(params), prepare=_prepare(text))
            if cur.description is None:
                return PgCursor.empty()
            rows = [tuple(r) for r in cur.fetchall()]
        except self._psycopg.Error as exc:
            raise PostgresError(str(exc).strip()) from exc
        if returning:
            return PgCursor([], None, int(rows[0][0]) if rows else None)
        desc, rows = _without_hidden_rowid(text, cur.description, rows)
        return PgCursor(rows, desc, None)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Each row of `rows` through `sql`: a batch of COPY_MIN_ROWS or more of a plain INSERT is written
        with COPY (the same rows, triggers and identities; see `_copy_insert`), anything else row by row."""
        text, _ = translate(sql)
        if text is None:
            return
        rows = rows if isinstance(rows, Sequence) else list(rows)  # sqlite3 takes any iterable too
        if not rows:
            return
        text = re.sub(r"\s+RETURNING id$", "", text)
        bulk = bulk_insert(text) if len(rows) >= COPY_MIN_ROWS else None
        cells = copyable(rows) if bulk is not None else None
        try:
            if bulk is not None and cells is not None:
                self._copy_insert(bulk, cells)
                return
            with self._conn.cursor() as cur:
                cur.executemany(text, [[_param(v) for v in r] for r in rows])
        except self._psycopg.Error as exc:
            raise PostgresError(str(exc).strip()) from exc

    def _copy_insert(self, bulk: BulkInsert, rows: Sequence[Sequence[Any]]) -> None:
        """A plain INSERT's rows are copied into the table itself; with an ON CONFLICT clause they are
        copied into a staging table and moved by one INSERT ... SELECT carrying that clause."""
        if not bulk.conflict:
            self._copy(f"COPY {bulk.table} ({', '.join(bulk.columns)}) FROM STDIN", rows)
            return
        with self._staged(bulk):
            self._copy(f"COPY {bulk.stage} FROM STDIN", ((n, *r) for n, r in enumerate(rows)))
            self._conn.execute(bulk.from_stage())

    def _copy(self, statement: str, rows: Iterable[Sequence[Any]]) -> None:
        with self._conn.cursor() as cur, cur.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)

    @contextmanager
    def _staged(self, bulk: BulkInsert) -> Iterator[None]:
        """Inside a transaction (the staged rows live until its commit), with `bulk`'s staging table made.

        Which staging tables exist is only trusted within one transaction: a rolled-back one takes the
        tables it made with it, so each transaction asks again (`CREATE ... IF NOT EXISTS`, once a table)."""
        if self._depth:
            self._make_stage(bulk)
            yield
            return
        with self._conn.transaction():
            self._stages.clear()
            try:
                self._make_stage(bulk)
                yield
            finally:
                self._stages.clear()

    def _make_stage(self, bulk: BulkInsert) -> None:
        if bulk.stage not in self._stages:
            self._conn.execute(bulk.create_stage())
            self._stages.add(bulk.stage)

    def query(self, sql: str, params: Sequence[Any] | None = None) -> Iterator[dict[str, Any]]:
        cur = self.execute(sql, params)
        names = [d[0] for d in cur.description or []]
        for row in cur:
            yield dict(zip(names, row, strict=True))

    @contextmanager
    def transaction(self, *, exclusive: bool = True, scope: str | None = None) -> Iterator[PgDatabase]:
        """One transaction; `exclusive` also takes the store's write lock (a transaction-scoped advisory
        lock), so writers queue as they do on SQLite's single writer and the tallies the triggers keep are
        never updated in two orders at once (which would deadlock). With `scope` the lock is that scope's
        alone (one reviewer's labels: reviewers append side by side, one reviewer's undo still sees their
        latest label)."""
        if self._depth:
            self._depth += 1
            try:
                yield self
            finally:
                self._depth -= 1
            return
        try:
            with self._conn.transaction():
                self._depth = 1
                self._stages.clear()  # none is known to this transaction yet (see `_staged`)
                try:
                    if (
                        exclusive and scope is not None
                    ):  # two int4 keys: a key space apart from the global one
                        self._conn.execute(
                            "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", [WRITE_LOCK_KEY, scope]
                        )
                    elif exclusive:
                        self._conn.execute("SELECT pg_advisory_xact_lock(%s)", [WRITE_LOCK_KEY])
                    yield self
                finally:
                    self._depth = 0
        except self._psycopg.Error as exc:
            raise PostgresError(str(exc).strip()) from exc

    def rows_within(
        self, sql: str, params: Sequence[Any], budget_s: float, *, planned_whole: bool = True
    ) -> tuple[int, bool]:
        """How many rows `sql` returns, and whether all were counted: read through a server-side cursor a
        batch at a time, stopping when the time `budget_s` is spent (each batch sized by the pace so far for
        half the time left, and under a statement timeout of the rest, so one batch of pages read from
        outside the server's buffers cannot overrun it). Counting a middling word's runs with findings
        read 150,000 rows of `search_runs` to find 10,001 (46 ms warm, 200 ms cold, at a million runs); a
        count cut short is a lower bound, as SQLite's windowed counts are. `planned_whole` plans it to be
        read whole (a search: a cursor's default, planning for its first tenth, chose a seq scan over a rare
        word's GIN match, 40 ms instead of 12 at a million runs); otherwise for its first rows (filters: a
        tenant and a kind planned whole built a hash of the kind's 286,000 findings first and counted
        nothing in 35 ms; planned for its first rows, about 1,000 runs)."""
        text, _ = translate(sql)
        if text is None:
            raise ValueError(f"not a query: {sql}")
        psycopg = self._psycopg
        started = time.perf_counter()
        counted, batch = 0, ROWS_WITHIN_FIRST_BATCH
        try:
            with self._conn.transaction(), self._conn.cursor(name="rows_within") as cur:
                # LOCAL: within the caller's transaction too, one read's plan never leaks into the next's
                self._conn.execute(
                    f"SET LOCAL cursor_tuple_fraction TO {'1.0' if planned_whole else 'DEFAULT'}"
                )
                cur.execute(text, _params(params))
                while True:
                    left = budget_s - (time.perf_counter() - started)
                    if left <= 0:
                        return counted, False
                    if not self._depth:  # a timeout set inside the caller's transaction would outlive us
                        self._conn.execute(f"SET LOCAL statement_timeout = {max(1, int(left * 1000))}")
                    fetched_at = time.perf_counter()
                    got = len(cur.fetchmany(batch))
                    counted += got
                    if got < batch:
                        return counted, True
                    pace = (time.perf_counter() - fetched_at) / got
                    left = budget_s - (time.perf_counter() - started)
                    batch = max(1, min(8 * batch, int(left / 2 / max(pace, 1e-9))))
        except psycopg.errors.QueryCanceled:
            return counted, False
        except psycopg.Error as exc:
            raise PostgresError(str(exc).strip()) from exc

    def table_exists(self, name: str) -> bool:
        row = self._conn.execute("SELECT to_regclass(%s) IS NOT NULL", [name]).fetchone()
        return bool(row and row[0])

    def close(self) -> None:
        self._conn.close()


def redacted(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


def open_postgres(url: str, *, migrate: bool = True) -> PgDatabase:
    """Connect to the PostgreSQL database at `url` and apply the pending migrations' PostgreSQL forms."""
    from store.db.schema_pg import apply_pending, check_version

    db = PgDatabase(url)
    try:
        check_version(db, redacted(url))
        if migrate:
            apply_pending(db)
    except BaseException:
        db.close()
        raise
    return db
