"""Where the ingest's one writer spends its time: table by table, index by index, trigger and full-text index.

    python -m bench.write_parts [--runs 2000 | --mb 50] [--repeats 3] [--only TEXT ...] [--instructions]
        [--statements]

The event-heavy corpus (`corpus_by_runs`; with `--mb` the snapshot-heavy one) is prepared once in this process
exactly as ingest's workers prepare it (`prepare`, then `slim`: insert-ready row tuples and the zstd original)
and grouped as ingest groups it; only the write is measured. Each variant writes all of it into a fresh
database, one transaction per group:

- "as ingest writes": `apply_group`, the writer ingest runs;
- "without X": the same writer on a schema with X (a secondary index, the tally triggers, the full-text
  index) removed before the write, so the difference to the first line is what X costs the write;
- "X alone": only table X's rows of every recording, in the same group transactions, on the full schema
  (its indexes and triggers included); the lines add up to the write less its per-recording bookkeeping;
- "before: ...": the writer without one of the changes measured here, to show what each one gained;
- "prototype: ...": a cheaper way to keep the tallies, measured and not taken (the same tallies result).

Two measures. By default the CPU seconds of this process (the write is single-threaded, and CPU time moves
less than wall time on a shared machine), the variants alternating within each repetition, median (min,
max) of the repetitions. With `--instructions`, each variant runs once in a child process under valgrind
(cachegrind, no cache simulation) and the line is the instructions it executed less those of a child that
only opens the database: the same count on every run (within 0.2%) whatever else the machine is doing, so
differences of a few percent are real; it does not see waiting on the disk or the cache (a variant that
saves instructions but touches more pages can still be slower). `--statements` splits the full write's
CPU time by statement kind.
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlite_utils import Database

#: A group: the prepared recordings ingest writes in one transaction.
Groups = list[list[Any]]
Writer = Callable[[Database, Groups], None]


def nothing(db: Database) -> None:
    """No change."""


@dataclass
class Variant:
    name: str
    setup: Callable[[Database], None]
    write: Writer
    #: undoes what `setup` changed outside the database (the process's sqlite3 module)
    teardown: Callable[[], None] = field(default=lambda: None)


def prepared_groups(paths: list[Path]) -> Groups:
    """The corpus as the writer receives it: prepared in this process, slimmed, in ingest's groups."""
    from store.db.ingest import group_items, prepare, slim
    from store.reading.sources import SourceItem, iter_sources

    items = [i for i in iter_sources(paths) if isinstance(i, SourceItem)]
    return [[slim(prepare(item)) for item in group] for group in group_items(items)]


def write_as_ingest(db: Database, groups: Groups) -> None:
    from store.db.ingest import apply_group

    for group in groups:
        apply_group(db, group)


def write_indexing_each_recording(db: Database, groups: Groups) -> None:
    """The group write before `group_written_last`: each recording's rows and documents after its runs."""
    from store.db.connection import write_lock
    from store.db.ingest import apply_in

    for group in groups:
        with write_lock(db):
            for prepared in group:
                apply_in(db, prepared)


def write_with_journal_on_disk(db: Database, groups: Groups) -> None:
    """The write with SQLite's default place for the statement journal (a temporary file past 64 KiB), as
    ingest wrote before `bulk_write_pragmas` kept it in memory."""
    db.execute("PRAGMA temp_store = DEFAULT")
    write_as_ingest(db, groups)


def adapter_protocol_for_none(db: Database) -> None:
    """None bound as before `store.db.connection` registered an adapter for it (through the protocol)."""
    import sqlite3

    sqlite3.adapters.pop((type(None), sqlite3.PrepareProtocol), None)


def restore_none_adapter() -> None:
    import sqlite3

    from store.db.connection import NULL_ADAPTER

    sqlite3.register_adapter(type(None), NULL_ADAPTER)


def drop(*names: str, kind: str = "INDEX") -> Callable[[Database], None]:
    def setup(db: Database) -> None:
        for name in names:
            db.execute(f"DROP {kind} {name}")

    return setup


def plain_search_table(db: Database) -> None:
    """The full-text table replaced by a plain one: the same inserts, no full-text indexing."""
    db.execute("DROP TABLE search")
    db.execute("CREATE TABLE search (text)")


def alone(table: str) -> Writer:
    """A writer of one table's rows of every recording, group by group (the full schema is in place)."""
    from store.db.connection import write_lock

    def write(db: Database, groups: Groups) -> None:
        number = 0
        for group in groups:
            with write_lock(db):
                for prepared in group:
                    number += 1
                    _insert_alone(db.conn, table, number, prepared)

    return write


def _insert_alone(conn: Any, table: str, number: int, prepared: Any) -> None:
    from store.db.schema import COLUMNS, SEARCH_DOC_BITS

    if table == "originals":
        conn.execute(
            "INSERT INTO originals (recording_id, codec, data) VALUES (?, ?, ?)",
            [number, prepared.codec, prepared.original],
        )
        return
    if table == "search":  # document ids as the writer makes them, from a run number of our own
        found = prepared.extracted.search
        texts = [((number << SEARCH_DOC_BITS) + i, d["text"]) for i, d in enumerate(found)]
        docs = [(i, d["run_key"], d["kind"], d["ref"]) for (i, _), d in zip(texts, found, strict=True)]
        conn.executemany("INSERT INTO search_docs (id, run_key, kind, ref) VALUES (?, ?, ?, ?)", docs)
        conn.executemany("INSERT INTO search_text (id, text) VALUES (?, ?)", texts)
        conn.executemany("INSERT INTO search (rowid, text) VALUES (?, ?)", texts)
        return
    cols = COLUMNS[table]
    rows = prepared.tuples[table]
    if table == "runs":  # the recording id the writer fills in
        at = cols.index("recording_id")
        rows = [r[:at] + (number,) + r[at + 1 :] for r in rows]
    if rows:
        marks = ", ".join("?" for _ in cols)
        conn.executemany(f"INSERT OR REPLACE INTO {table} ({', '.join(cols)}) VALUES ({marks})", rows)


TALLY_TRIGGERS = (
    "tally_runs_insert",
    "tally_runs_delete",
    "tally_runs_update",
    "tally_findings_insert",
    "tally_findings_delete",
    "tally_findings_update",
)
#: The triggers that keep `finding_codes` (schema m021), one row per (code, finding), for the queue's code filter.
FINDING_CODES_TRIGGERS = ("finding_codes_insert", "finding_codes_delete", "finding_codes_update")


# -- cheaper tallies: prototypes measured, not taken (bench/RESULTS.md says why) ---------------------------

#: A run key whose rows the group writes: its tally triggers do nothing, the group adds its tallies at the end.
PENDING = "(SELECT run_key FROM tally_pending)"

#: What the rows of the pending run keys add to the tallies, per (facet, value): the triggers' facets in set
#: form (as `store.tallies` recounts them, with a run's pack versions and a finding's codes distinct).
PENDING_TALLIES = f"""
WITH r AS MATERIALIZED (SELECT rowid AS id, outcome, agent_id, tenant, findings, pack_versions FROM runs
                        WHERE key IN {PENDING}),
     f AS MATERIALIZED (SELECT rowid AS id, run_key, kind, tool_name, pack_version, codes FROM findings
                        WHERE run_key IN {PENDING})
SELECT facet, value, count(*) AS n FROM (
  SELECT 'runs' AS facet, '' AS value FROM r
  UNION ALL SELECT 'outcome', outcome FROM r UNION ALL SELECT 'agent', agent_id FROM r
  UNION ALL SELECT 'tenant', tenant FROM r UNION ALL SELECT 'has_findings', '' FROM r WHERE findings > 0
  UNION ALL SELECT 'run_pack', value FROM (SELECT DISTINCT r.id, j.value FROM r, json_each(CASE WHEN
            json_valid(r.pack_versions) THEN r.pack_versions ELSE '[]' END) j WHERE j.type = 'text')
  UNION ALL SELECT 'findings', '' FROM f UNION ALL SELECT 'kind', kind FROM f
  UNION ALL SELECT 'tool', tool_name FROM f UNION ALL SELECT 'pack_version', pack_version FROM f
  UNION ALL SELECT 'code', value FROM (SELECT DISTINCT f.id, j.value FROM f, json_each(CASE WHEN
            json_valid(f.codes) THEN f.codes ELSE '[]' END) j WHERE j.type = 'text')
  UNION ALL SELECT 'run_kind', kind FROM (SELECT DISTINCT kind, run_key FROM f WHERE kind IS NOT NULL)
) WHERE value IS NOT NULL GROUP BY facet, value"""


def _recreate_trigger(db: Database, name: str, *, when: str = "", body: str | None = None) -> None:
    """Trigger `name` again, with a WHEN clause and/or another body."""
    sql = db.execute("SELECT sql FROM sqlite_master WHERE name = ?", [name]).fetchone()[0]
    head, old_body = sql[: sql.index(" BEGIN ")], sql[sql.index(" BEGIN ") + 7 : sql.rindex(" END")]
    db.execute(f"DROP TRIGGER {name}")
    db.execute(f"{head} {when} BEGIN {body if body is not None else old_body} END")


def tallies_by_group_schema(db: Database) -> None:
    """The insert and delete triggers skip the run keys in `tally_pending` (a prototype: the update
    triggers, which an ingest of new runs never fires, are left as they are)."""
    db.execute("CREATE TABLE tally_pending (run_key TEXT PRIMARY KEY) WITHOUT ROWID")
    for name, row in (
        ("tally_runs_insert", "NEW.key"),
        ("tally_runs_delete", "OLD.key"),
        ("tally_findings_insert", "NEW.run_key"),
        ("tally_findings_delete", "OLD.run_key"),
    ):
        _recreate_trigger(db, name, when=f"WHEN NOT EXISTS (SELECT 1 FROM tally_pending WHERE run_key = {row})")  # fmt: skip


def write_tallies_by_group(db: Database, groups: Groups) -> None:
    """Each group: its run keys marked pending, what rows they already had taken out of the tallies, the
    rows written (the triggers skipping them), then what they hold added in one aggregate upsert."""
    from store.db.connection import write_lock
    from store.db.ingest import apply_in
    from store.db.schema import COLUMNS
    from store.db.writer import ROW_TABLES, group_written_last

    key_at = {t: COLUMNS[t].index("key" if t == "runs" else "run_key") for t in ROW_TABLES}
    conn = db.conn
    for group in groups:
        keys = {r[key_at[t]] for p in group for t in ROW_TABLES for r in p.tuples[t]}
        with write_lock(db), group_written_last(db):
            conn.executemany("INSERT INTO tally_pending (run_key) VALUES (?)", [(k,) for k in sorted(keys)])
            stored = f"SELECT EXISTS (SELECT 1 FROM runs WHERE key IN {PENDING}) OR EXISTS (SELECT 1 FROM findings WHERE run_key IN {PENDING})"
            if conn.execute(stored).fetchone()[0]:
                held = conn.execute(PENDING_TALLIES).fetchall()
                conn.executemany(
                    "UPDATE tallies SET n = n - ? WHERE facet = ? AND value = ?",
                    [(n, f, v) for f, v, n in held],
                )
            for prepared in group:
                apply_in(db, prepared)
            conn.execute(f"INSERT INTO tallies (facet, value, n) SELECT * FROM ({PENDING_TALLIES}) WHERE true "
                         "ON CONFLICT (facet, value) DO UPDATE SET n = n + excluded.n")  # fmt: skip
            conn.execute("DELETE FROM tallies WHERE n <= 0")
            conn.execute("DELETE FROM tally_pending")


#: How each tally trigger statement of m010 begins and ends (`schema._tally_add`): an upsert of one row's
#: (facet, value) pairs, read from a subquery.
_UPSERT_HEAD = "INSERT INTO tallies (facet, value, n) SELECT facet, value, 1 FROM ("
_UPSERT_TAIL = ") WHERE value IS NOT NULL ON CONFLICT (facet, value) DO UPDATE SET n = n + 1;"


def _trigger_body(db: Database, name: str) -> str:
    sql = db.execute("SELECT sql FROM sqlite_master WHERE name = ?", [name]).fetchone()[0]
    return str(sql[sql.index(" BEGIN ") + 7 : sql.rindex(" END")])


def _distinct_without_temp_table(body: str, column: str) -> str:
    """A trigger body's `SELECT DISTINCT ... json_each(...)` (a temporary b-tree per row) as a NOT EXISTS."""
    items = f"json_each(CASE WHEN json_valid(NEW.{column}) THEN NEW.{column} ELSE '[]' END)"
    start = body.index("SELECT DISTINCT")
    end = body.index("WHERE j.type = 'text'", start) + len("WHERE j.type = 'text'")
    kept = body[start:end].replace("SELECT DISTINCT", "SELECT")
    first = f" AND NOT EXISTS (SELECT 1 FROM {items} k WHERE k.type = 'text' AND k.value = j.value AND k.id < j.id)"
    return body[:start] + kept + first + body[end:]


def _one_upsert(body: str) -> str:
    """A trigger body of several tally upserts as one upsert of all their subqueries (UNION ALL)."""
    statements = [f"{part}{_UPSERT_TAIL}".strip() for part in body.split(_UPSERT_TAIL) if part.strip()]
    selects = [st[len(_UPSERT_HEAD) : -len(_UPSERT_TAIL)] for st in statements]
    return _UPSERT_HEAD + " UNION ALL ".join(selects) + _UPSERT_TAIL


def cheaper_trigger_bodies(db: Database) -> None:
    """The two insert triggers' bodies, same tallies: no temporary b-tree for DISTINCT, a finding's run_kind
    in the same upsert as its other facets (rewritten from the triggers' own SQL)."""
    runs = _distinct_without_temp_table(_trigger_body(db, "tally_runs_insert"), "pack_versions")
    found = _distinct_without_temp_table(_trigger_body(db, "tally_findings_insert"), "codes")
    _recreate_trigger(db, "tally_runs_insert", body=runs)
    _recreate_trigger(db, "tally_findings_insert", body=_one_upsert(found))


def without_tool_named(db: Database) -> None:
    """The findings' tally triggers as m010 made them, without m023's `tool_named` pairs."""
    from store.db.schema import tool_named_rows

    for name in ("tally_findings_insert", "tally_findings_delete", "tally_findings_update"):
        body = _trigger_body(db, name)
        for row in ("NEW", "OLD"):
            body = body.replace(tool_named_rows(row), "")
        _recreate_trigger(db, name, body=body)


def variants(db: Database) -> list[Variant]:
    """Every variant, the indexes read from a freshly migrated schema (`db`)."""
    from store.db.writer import ROW_TABLES

    written = (*ROW_TABLES, "recordings", "sources", "run_sources", "search_docs", "search_text", "originals")
    indexes = [
        (tbl, name)
        for name, tbl in db.execute(
            "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
            "ORDER BY tbl_name, name"
        ).fetchall()
        if tbl in written
    ]
    out = [
        Variant("as ingest writes", nothing, write_as_ingest),
        Variant("before: documents indexed after each recording", nothing, write_indexing_each_recording),
        Variant("before: the statement journal spilled to a file", nothing, write_with_journal_on_disk),
        Variant(
            "before: None bound through the adapter protocol",
            adapter_protocol_for_none,
            write_as_ingest,
            restore_none_adapter,
        ),
        Variant("before: no tool_named tally (schema m023)", without_tool_named, write_as_ingest),
        Variant(
            "before: no finding_codes (schema m021)",
            drop(*FINDING_CODES_TRIGGERS, kind="TRIGGER"),
            write_as_ingest,
        ),
    ]
    out += [Variant(f"without index {tbl}.{name}", drop(name), write_as_ingest) for tbl, name in indexes]
    for tbl in sorted({t for t, _ in indexes}):
        names = [n for t, n in indexes if t == tbl]
        if len(names) > 1:
            out.append(Variant(f"without every secondary index of {tbl}", drop(*names), write_as_ingest))
    out.append(Variant("without the tally triggers", drop(*TALLY_TRIGGERS, kind="TRIGGER"), write_as_ingest))
    out.append(Variant("without full-text indexing (a plain table)", plain_search_table, write_as_ingest))
    out.append(
        Variant("prototype: tallies added once per group", tallies_by_group_schema, write_tallies_by_group)
    )
    out.append(Variant("prototype: cheaper tally trigger bodies", cheaper_trigger_bodies, write_as_ingest))
    out += [Variant(f"{t} alone", nothing, alone(t)) for t in (*ROW_TABLES, "search", "originals")]
    return out


def all_variants() -> list[Variant]:
    from store.db.connection import open_database

    with tempfile.TemporaryDirectory() as tmp:
        probe = open_database(Path(tmp) / "schema.db")
        found = variants(probe)
        probe.close()
    return found


def fresh_database(folder: str, variant: Variant) -> Database:
    """A migrated database with the variant's schema and ingest's bulk-write settings."""
    from store.db.connection import open_database
    from store.db.ingest import bulk_write_pragmas

    db = open_database(Path(folder) / "write.db")
    variant.setup(db)
    bulk_write_pragmas(db)
    return db


def time_variant(variant: Variant, groups: Groups) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of the variant's write into a fresh database."""
    with tempfile.TemporaryDirectory() as tmp:
        db = fresh_database(tmp, variant)
        try:
            started, cpu = time.perf_counter(), time.process_time()
            variant.write(db, groups)
            seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        finally:
            variant.teardown()
            db.close()
    return seconds, cpu


# -- instruction counts ------------------------------------------------------------------------------------


def child(name: str, groups_file: Path) -> None:
    """In a child under valgrind: the variant's write (or, for "", only opening the database)."""
    groups = pickle.loads(groups_file.read_bytes())
    variant = next((v for v in all_variants() if v.name == name), Variant("", nothing, lambda db, g: None))
    with tempfile.TemporaryDirectory() as tmp:
        db = fresh_database(tmp, variant)
        variant.write(db, groups)
        db.close()


def instructions(name: str, groups_file: Path) -> int:
    """Instructions a child executes (valgrind cachegrind without cache simulation)."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    command = [
        "valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
        sys.executable, "-m", "bench.write_parts", "--child", name, "--groups-file", str(groups_file),
    ]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count from valgrind: {done.stderr[-500:]}")
    return int(found.group(1).replace(",", ""))


def count_instructions(chosen: list[Variant], groups: Groups) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        groups_file = Path(tmp) / "groups.pickle"
        groups_file.write_bytes(pickle.dumps(groups))
        base = instructions("", groups_file)
        counts = {}
        for v in chosen:
            counts[v.name] = instructions(v.name, groups_file) - base
            print(f"  {v.name:58} {counts[v.name] / 1e6:8,.0f} M", flush=True)
    full = counts.get("as ingest writes")
    if full:
        print(f"\n  against the write as ingest writes it ({full / 1e6:,.0f} M instructions):")
        for name, n in counts.items():
            if name.startswith(("without", "before", "prototype")):
                print(f"  {name:58} {(n - full) / 1e6:+8,.0f} M ({(n - full) / full:+.1%})")
            elif name.endswith("alone"):
                print(f"  {name:58} {n / full:8.0%} of it")


# -- CPU time --------------------------------------------------------------------------------------------


class _TimedConnection:
    """A connection that adds each statement's time to its kind ("INSERT INTO runs", "COMMIT", ...)."""

    def __init__(self, conn: Any, seconds: dict[str, float]) -> None:
        self._conn = conn
        self._seconds = seconds

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def _timed(self, call: Callable[..., Any], sql: str, *args: Any) -> Any:
        match = re.match(r"\s*((?:INSERT(?: OR \w+)? INTO|DELETE FROM|SELECT|UPDATE)\s+\w+|\w+)", sql)
        started = time.process_time()
        try:
            return call(sql, *args)
        finally:
            self._seconds[match.group(1) if match else sql[:30]] += time.process_time() - started

    def execute(self, sql: str, *args: Any) -> Any:
        return self._timed(self._conn.execute, sql, *args)

    def executemany(self, sql: str, *args: Any) -> Any:
        return self._timed(self._conn.executemany, sql, *args)


def statement_seconds(groups: Groups, repeats: int) -> dict[str, list[float]]:
    """Each statement kind's CPU time in the full write, per repetition."""
    per_rep: list[dict[str, float]] = []
    for _ in range(repeats):
        seconds: dict[str, float] = defaultdict(float)

        def timed(db: Database, seconds: dict[str, float] = seconds) -> None:
            db.conn = _TimedConnection(db.conn, seconds)  # type: ignore[assignment]

        time_variant(Variant("statements", timed, write_as_ingest), groups)
        per_rep.append(seconds)
    kinds = sorted(
        {k for c in per_rep for k in c}, key=lambda k: -statistics.median(c.get(k, 0.0) for c in per_rep)
    )
    return {k: [c.get(k, 0.0) for c in per_rep] for k in kinds}


def spread(samples: Sequence[float]) -> str:
    return f"{statistics.median(samples):6.3f} s (min {min(samples):.3f}, max {max(samples):.3f})"


def time_variants(chosen: list[Variant], groups: Groups, repeats: int) -> None:
    wall: dict[str, list[float]] = {v.name: [] for v in chosen}
    cpu: dict[str, list[float]] = {v.name: [] for v in chosen}
    for _ in range(repeats):
        for v in chosen:
            seconds, used = time_variant(v, groups)
            wall[v.name].append(seconds)
            cpu[v.name].append(used)
    print(f"  {'variant':58} {'CPU seconds (the measure)':31} {'wall seconds':31}")
    full = cpu.get("as ingest writes")
    for name, s in cpu.items():
        print(f"  {name:58} {spread(s)}  {spread(wall[name])}{_against(name, s, full)}")


def _against(name: str, cpu: list[float], full: list[float] | None) -> str:
    """What a variant saves against the full write, per repetition (they alternate), or its share of it."""
    if full is None:
        return ""
    whole = statistics.median(full)
    if name.startswith(("without", "before", "prototype")):
        saved = statistics.median([f - x for f, x in zip(full, cpu, strict=True)])
        return f"  saves {saved:+.3f} s ({saved / whole:+.0%})"
    if name.endswith("alone"):
        return f"  {statistics.median(cpu) / whole:.0%} of the write"
    return ""


def main(argv: list[str] | None = None) -> int:
    from bench.__main__ import chosen_corpus, corpus_parser

    parser = corpus_parser(__doc__)
    parser.add_argument("--only", action="append", default=[], help="variants whose name contains this")
    parser.add_argument("--instructions", action="store_true", help="count instructions under valgrind")
    parser.add_argument("--statements", action="store_true", help="CPU time of each statement kind")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--groups-file", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        child(args.child, args.groups_file)
        return 0
    groups = prepared_groups(chosen_corpus(args)[0])
    recordings = sum(len(g) for g in groups)
    chosen = [v for v in all_variants() if not args.only or any(o in v.name for o in args.only)]
    print(
        f"{recordings:,} recordings ({args.runs:,} runs) in {len(groups)} groups; load average {os.getloadavg()[0]:.1f}"
    )
    if args.statements:
        for kind, samples in statement_seconds(groups, args.repeats).items():
            print(f"  {kind:42} {spread(samples)}")
    elif args.instructions:
        count_instructions(chosen, groups)
    else:
        print(f"CPU time, medians of {args.repeats}")
        time_variants(chosen, groups, args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
