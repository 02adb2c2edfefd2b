"""On PostgreSQL a large batch of the writer's rows is written with COPY and stores exactly what psycopg's
executemany stored: the same rows (awkward text included), the same identities in the same order, the
same tallies, the last row of a repeated key; PostgreSQL's refusals (a NUL, a number past 64 bits) are
refused as before; a value COPY would read differently (a float) keeps executemany."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from store.db import postgres
from store.db.connection import open_database
from store.db.ingest import ingest
from store.db.postgres import COPY_MIN_ROWS, PgDatabase, PostgresError, bulk_insert, translate
from store.db.schema import COLUMNS
from tests.conftest import FIXTURE_RECORDINGS, fresh_postgres_database

FINDINGS_SQL = (
    f"INSERT OR REPLACE INTO findings ({', '.join(COLUMNS['findings'])}) "
    f"VALUES ({', '.join('?' for _ in COLUMNS['findings'])})"
)
#: Text COPY's own format gives meaning to (tab, newline, backslash, `\N`, `\.`), and more.
AWKWARD = [
    "tab\there",
    "line\nbreak\r\nand a return\r",
    "back\\slash \\N \\. \\t \\\\",
    "\\N",
    "'single' \"double\" `back`",
    "unicode: é ß 東京 😀 \u200f rtl \u2028 sep \U0010ffff",
    "",
    "\x01\x1b[31m control \x7f",
]
BATCH = 24  # >= COPY_MIN_ROWS: COPY unless forced off


def test_which_statements_copy_and_how() -> None:
    """(no server) A VALUES list of placeholders alone is copied, its conflict clause kept as written; the
    clause is sent without parameters, so a literal `%` is no longer doubled there."""

    def bulk(sql: str) -> postgres.BulkInsert | None:
        return bulk_insert(re.sub(r"\s+RETURNING id$", "", translate(sql)[0] or ""))

    replace = bulk(FINDINGS_SQL)
    assert replace is not None and replace.keys == ("id",) and replace.columns == COLUMNS["findings"]
    assert "ON CONFLICT (id) DO UPDATE SET run_key = EXCLUDED.run_key" in replace.from_stage()
    ignore = bulk("INSERT OR IGNORE INTO sources (path, recording_id, seen_at) VALUES (?, ?, ?)")
    assert ignore is not None and (ignore.conflict, ignore.keys) == ("ON CONFLICT DO NOTHING", ())
    plain = bulk("INSERT INTO labels (uid, verdict) VALUES (?, ?)")  # its RETURNING id is not read here
    assert plain is not None and (plain.table, plain.conflict) == ("labels", "")
    percent = bulk(
        "INSERT INTO quarantine (path, code, reason) VALUES (?, ?, ?) "
        "ON CONFLICT (path, code) DO UPDATE SET reason = excluded.reason || ' (100% sure)'"
    )
    assert percent is not None and percent.from_stage().endswith("|| ' (100% sure)'")
    assert bulk("INSERT INTO findings (id, seq) VALUES (?, 1)") is None, "a literal in VALUES"
    assert bulk("INSERT INTO findings (id) SELECT id FROM runs WHERE key = ?") is None
    assert bulk("UPDATE findings SET seq = ? WHERE id = ?") is None


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with fresh_postgres_database() as made:
        open_database(made).close()  # migrated once for the module
        yield made


@pytest.fixture
def pg(url: str) -> Iterator[PgDatabase]:
    db = open_database(url)
    assert isinstance(db, PgDatabase)
    yield db
    db.close()


@pytest.fixture
def copies(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The COPY statements run (the COPY path taken)."""
    seen: list[str] = []
    real = PgDatabase._copy

    def spy(self: PgDatabase, statement: str, rows: Any) -> None:
        seen.append(statement)
        real(self, statement, rows)

    monkeypatch.setattr(PgDatabase, "_copy", spy)
    return seen


def _findings(tag: str, *, repeat: bool = True) -> list[tuple[Any, ...]]:
    """A batch for `tag`'s two runs: awkward text in every text column, the int64 bounds, a bool, a NULL,
    and (`repeat`) the id of row 3 again at row 17 with another kind and message."""
    rows = []
    for n in range(BATCH):
        text = AWKWARD[n % len(AWKWARD)]
        row = dict.fromkeys(COLUMNS["findings"])
        row.update(
            id=f"f-{tag}-{3 if n == 17 and repeat else n}",
            run_key=f"run-{tag}-{n % 2}",
            run_id=text,
            seq=n,
            kind=("negative-claim", "coverage-gap", "withheld-answer")[n % 3] if n != 17 else "dangling",
            codes=json.dumps([text, "code-1"]),
            message=f"{text} #{n}",
            span_start=2**63 - 1,
            span_end=-(2**63),
            advisory=n % 2 == 0,  # a bool: stored as its integer, as SQLite does
            tool_name=text or None,
            payload=json.dumps({"text": text}, ensure_ascii=False),
        )
        rows.append(tuple(row.values()))
    return rows


def _stored(db: PgDatabase, tag: str, identity: str = "rowid - min(rowid) OVER ()") -> list[tuple[Any, ...]]:
    """`tag`'s findings, its tag taken out, each with its identity counted from the batch's first."""
    cols = ", ".join(COLUMNS["findings"])
    rows = db.execute(
        f"SELECT {identity}, {cols} FROM findings WHERE id LIKE ? ORDER BY rowid", [f"f-{tag}-%"]
    ).fetchall()
    return [tuple(str(v).replace(f"-{tag}-", "-") if isinstance(v, str) else v for v in r) for r in rows]


def _tallies(db: PgDatabase) -> dict[tuple[str, str], int]:
    return {(f, v): n for f, v, n in db.execute("SELECT facet, value, n FROM tallies").fetchall()}


def _write(db: PgDatabase, sql: str, rows: list[tuple[Any, ...]]) -> dict[tuple[str, str], int]:
    """Write `rows` in one transaction; the tallies it changed."""
    before = _tallies(db)
    with db.transaction():
        db.conn.executemany(sql, rows)
    after = _tallies(db)
    return {
        k: after.get(k, 0) - before.get(k, 0)
        for k in before.keys() | after.keys()
        if after.get(k) != before.get(k)
    }


def test_a_large_batch_is_copied_and_stores_what_executemany_stores(
    pg: PgDatabase, copies: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert BATCH >= COPY_MIN_ROWS
    copied = _write(pg, FINDINGS_SQL, _findings("copy"))
    once = _write(pg, FINDINGS_SQL, _findings("copyonce", repeat=False))
    assert len(copies) == 2 and copies[0].startswith("COPY _bulk_findings_"), "both batches went through COPY"
    monkeypatch.setattr(postgres, "COPY_MIN_ROWS", 10**9)
    copies.clear()
    row_by_row = _write(pg, FINDINGS_SQL, _findings("rows"))
    once_row_by_row = _write(pg, FINDINGS_SQL, _findings("rowsonce", repeat=False))
    assert copies == [], "forced back to executemany"

    assert _stored(pg, "copyonce") == _stored(pg, "rowsonce"), "the same rows and identities"
    in_order = "row_number() OVER (ORDER BY rowid)"
    stored = _stored(pg, "copy", in_order)
    assert stored == _stored(pg, "rows", in_order), (
        "the same rows, the repeated key's where executemany left it"
    )
    assert copied == row_by_row and once == once_row_by_row, "the same tallies"
    assert copied[("findings", "")] == BATCH - 1 and once[("findings", "")] == BATCH
    assert len(stored) == BATCH - 1
    assert (stored[3][1], stored[3][5]) == ("f-3", "dangling"), (
        "the later row's values, in the first one's place"
    )
    messages = [r[8] for r in stored]
    assert messages == [
        f"{AWKWARD[n % len(AWKWARD)]} #{n}" for n in (*range(3), 17, *range(4, 17), *range(18, BATCH))
    ]
    advisory_at = 1 + COLUMNS["findings"].index("advisory")
    assert {r[advisory_at] for r in stored} == {0, 1} and {(r[11], r[12]) for r in stored} == {
        (2**63 - 1, -(2**63))
    }


def test_each_conflict_rule_holds_through_copy(pg: PgDatabase, copies: list[str]) -> None:
    """A plain INSERT is copied straight in; OR IGNORE keeps the first of a repeated key, an explicit
    ON CONFLICT DO UPDATE the last, as row-by-row statements did."""
    rec = pg.execute(
        "INSERT INTO recordings (sha256, source, container, form, bytes, events, runs, has_snapshot, "
        "extractor_version, ingested_at) VALUES ('conflict-rules', 's', 'file', 'bare', 0, 0, 0, 0, 0, '')"
    ).lastrowid
    paths = [(f"p{n % 10}", rec, f"seen {n}") for n in range(BATCH)]
    sources = [(f"run-{n % 10}", rec, f"content {n}") for n in range(BATCH)]
    texts = [(10**12 + n, f"{AWKWARD[n % len(AWKWARD)]} word{n}") for n in range(BATCH)]
    with pg.transaction():
        pg.conn.executemany(
            "INSERT OR IGNORE INTO sources (path, recording_id, seen_at) VALUES (?, ?, ?)", paths
        )
        pg.conn.executemany(
            "INSERT INTO run_sources (run_key, recording_id, content_id) VALUES (?, ?, ?) "
            "ON CONFLICT (run_key, recording_id) DO UPDATE SET content_id = excluded.content_id",
            sources,
        )
        pg.conn.executemany("INSERT INTO search_text (id, text) VALUES (?, ?)", texts)
    assert len(copies) == 3 and copies[2] == "COPY search_text (id, text) FROM STDIN"
    seen = pg.execute(
        "SELECT path, seen_at FROM sources WHERE recording_id = ? ORDER BY path", [rec]
    ).fetchall()
    assert seen == [(f"p{n}", f"seen {n}") for n in range(10)], "INSERT OR IGNORE: the first row stays"
    content = pg.execute(
        "SELECT run_key, content_id FROM run_sources WHERE recording_id = ? ORDER BY run_key", [rec]
    ).fetchall()
    assert content == [
        (f"run-{n}", f"content {max(m for m in range(BATCH) if m % 10 == n)}") for n in range(10)
    ]
    assert (
        pg.execute("SELECT id, text FROM search_text WHERE id >= ? ORDER BY id", [10**12]).fetchall() == texts
    )
    found = pg.execute("SELECT rowid FROM search WHERE search MATCH 'word7'").fetchall()
    assert found == [(10**12 + 7,)], "the generated tsvector is made as for an INSERT"


@pytest.mark.parametrize("copy", [True, False], ids=["copy", "executemany"])
def test_what_postgresql_refuses_is_refused_whole_either_way(
    pg: PgDatabase, copy: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A NUL (PostgreSQL text cannot hold one) and an integer past 64 bits raise PostgresError, the same NUL
    message both ways, and leave nothing of the batch."""
    if not copy:
        monkeypatch.setattr(postgres, "COPY_MIN_ROWS", 10**9)
    rows = _findings(f"refused-{copy}")
    with_nul = [*rows[:5], rows[5][:7] + ("a NUL \x00 here",) + rows[5][8:], *rows[6:]]
    with pytest.raises(PostgresError, match=r"^PostgreSQL text fields cannot contain NUL \(0x00\) bytes$"):
        _write(pg, FINDINGS_SQL, with_nul)
    past_64_bits = [*rows[:5], rows[5][:10] + (2**64,) + rows[5][11:], *rows[6:]]
    with pytest.raises(PostgresError, match="out of range"):
        _write(pg, FINDINGS_SQL, past_64_bits)
    assert pg.execute(
        "SELECT count(*) FROM findings WHERE id LIKE ?", [f"f-refused-{copy}-%"]
    ).fetchone() == (0,)
    _write(pg, FINDINGS_SQL, rows)  # the connection is fine after
    assert pg.execute(
        "SELECT count(*) FROM findings WHERE id LIKE ?", [f"f-refused-{copy}-%"]
    ).fetchone() == (BATCH - 1,)


def test_a_float_keeps_executemany_and_is_stored_as_before(pg: PgDatabase, copies: list[str]) -> None:
    """PostgreSQL rounds a float parameter into BIGINT where COPY would refuse its text: such a batch is
    not copied."""
    rows = [r[:3] + (n + 0.5,) + r[4:] for n, r in enumerate(_findings("float"))]
    _write(pg, FINDINGS_SQL, rows)
    assert copies == []
    seqs = [r[0] for r in pg.execute("SELECT seq FROM findings WHERE id LIKE 'f-float-%' ORDER BY rowid")]
    assert seqs == [round((17 if n == 3 else n) + 0.5) for n in range(BATCH) if n != 17]  # half to even


def test_a_rolled_back_transaction_takes_its_staging_table_and_the_next_one_copies_again(url: str) -> None:
    db = open_database(url, migrate=False)  # a new session: no staging table yet
    assert isinstance(db, PgDatabase)
    with pytest.raises(RuntimeError), db.transaction():
        db.conn.executemany(FINDINGS_SQL, _findings("undone"))
        raise RuntimeError("the group fails after its first batch")
    _write(db, FINDINGS_SQL, _findings("redone"))
    assert db.execute("SELECT count(*) FROM findings WHERE id LIKE 'f-undone-%'").fetchone() == (0,)
    assert db.execute("SELECT count(*) FROM findings WHERE id LIKE 'f-redone-%'").fetchone() == (BATCH - 1,)
    db.close()


def test_a_recording_with_a_nul_is_quarantined_with_the_same_reason(url: str, tmp_path: Path) -> None:
    """Ingest end to end: the recording's events go through COPY, the NUL in one is refused as before
    (executemany raised the same message), and the next file is stored."""
    doc = json.loads((FIXTURE_RECORDINGS / "plain-tool-run.json").read_text())
    assert len(doc["events"]) >= COPY_MIN_ROWS
    tool_end = next(e for e in doc["events"] if e["type"].endswith("tool_end"))
    tool_end["payload"]["result"] = "before\x00after"
    bad = tmp_path / "nul.json"
    bad.write_text(json.dumps(doc))
    db = open_database(url)
    report = ingest(db, [bad, FIXTURE_RECORDINGS / "unsupported-claim-findings.json"], db_path=url, workers=1)
    [(path, code, reason)] = report.quarantined
    assert (path, code, report.stored) == (str(bad), "unwritable-recording", 1)
    assert reason.endswith("(PostgresError: PostgreSQL text fields cannot contain NUL (0x00) bytes)")
    db.close()
