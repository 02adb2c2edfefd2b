"""PostgreSQL as the second store backend: every migration has a PostgreSQL form; the same corpus ingested
into SQLite and into PostgreSQL reads back identically (finding ids, rows, tallies, pages, the queue,
search); several ingesters and reviewers on one PostgreSQL database lose and duplicate nothing; a killed
ingest leaves nothing partial; a command the backend does not run yet says so in one line (exit 2)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlite_utils import Database

from reviewer.cli.main import cli
from store import labels
from store.db import schema, schema_pg
from store.db.connection import open_database
from store.db.ingest import ingest
from store.db.postgres import SUPPORTED_COMMANDS, PostgresError, postgres_url, translate
from store.db.schema import COLUMNS
from store.findings import list_findings, queue_count, queue_facets, queue_page, queue_progress
from store.runs import count_runs, run_facets, runs_page
from tests.conftest import FIXTURE_RECORDINGS, REPO, SAMPLES, fresh_postgres_database

PG_URL = "postgresql://postgres@127.0.0.1:5432/nothing"
CLI = "from reviewer.cli.main import cli; cli()"

# -- no server needed ---------------------------------------------------------------------------------------


def test_every_migration_has_a_postgresql_form() -> None:
    assert schema_pg.missing_forms() == []
    assert list(schema_pg.PG_FORMS) == schema_pg.migration_names(), "one form per migration, in order"


def test_a_migration_without_a_postgresql_form_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A migration added for SQLite alone fails this test (and opening a PostgreSQL database)."""

    @schema.migrations()
    def m999_only_on_sqlite(db: Database) -> None:
        db.execute("CREATE TABLE nothing (x)")

    try:
        assert schema_pg.missing_forms() == ["m999_only_on_sqlite"]
        with pytest.raises(schema_pg.StoreError, match="no PostgreSQL form for the schema steps m999"):
            schema_pg.apply_pending(object())  # type: ignore[arg-type]  # refused before any SQL
    finally:
        schema.migrations._migrations.pop()
    assert schema_pg.missing_forms() == []


def test_a_url_selects_postgresql_and_a_path_sqlite() -> None:
    assert postgres_url("postgresql://u@h:5432/db") == "postgresql://u@h:5432/db"
    assert postgres_url(Path("postgresql://u@h:5432/db")) == "postgresql://u@h:5432/db", "a Path collapses //"
    assert postgres_url("review.db") is None
    assert postgres_url(Path("/tmp/postgresql/review.db")) is None


def test_the_sqlite_only_constructs_are_translated() -> None:
    assert translate("INSERT OR IGNORE INTO sources (path) VALUES (?)") == (
        "INSERT INTO sources (path) VALUES (%s) ON CONFLICT DO NOTHING",
        False,
    )
    replaced, _ = translate("INSERT OR REPLACE INTO findings (id, kind) VALUES (?, ?)")
    assert replaced.endswith("ON CONFLICT (id) DO UPDATE SET kind = EXCLUDED.kind")
    assert translate("INSERT INTO labels (uid) VALUES (?)") == (
        "INSERT INTO labels (uid) VALUES (%s) RETURNING id",
        True,
    )
    assert translate("INSERT INTO search (rowid, text) VALUES (?, ?)") == (None, False)
    assert translate("PRAGMA cache_size = -1000") == (None, False)
    matched, _ = translate("SELECT s.rowid FROM search s WHERE search MATCH ? AND x LIKE '50%'")
    assert matched == "SELECT s.rowid FROM search s WHERE s.tsv @@ fts5_query(%s) AND x LIKE '50%%'"
    derived, _ = translate("SELECT count(*) FROM (SELECT 1 FROM runs LIMIT ?)")
    assert derived == "SELECT count(*) FROM (SELECT 1 FROM runs LIMIT %s) AS _d0"
    with pytest.raises(PostgresError, match="PRAGMA table_info has no PostgreSQL form"):
        translate("PRAGMA table_info(runs)")  # any PRAGMA but the tuning ones is a bug, said so


def test_every_command_runs_on_postgresql() -> None:
    names = set(cli.commands)  # type: ignore[attr-defined]
    assert names and names <= set(SUPPORTED_COMMANDS), names - set(SUPPORTED_COMMANDS)


def test_a_command_postgresql_does_not_run_yet_says_so_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The gate a command not (yet) ported stops at: one line, exit 2, before anything is opened."""
    from store.db import postgres

    monkeypatch.setattr(postgres, "SUPPORTED_COMMANDS", tuple(c for c in SUPPORTED_COMMANDS if c != "serve"))
    monkeypatch.setenv("REVIEWER_DB", PG_URL)
    result = CliRunner().invoke(cli, ["serve"])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "`reviewer serve` is not yet supported on a PostgreSQL database" in lines[0]
    assert "Traceback" not in result.output


def test_an_unreachable_server_is_one_line_not_a_traceback() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CLI, "runs", "--db", "postgresql://postgres@127.0.0.1:1/none"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0 and "cannot connect to PostgreSQL" in done.stderr


# -- against a real server ----------------------------------------------------------------------------------


@pytest.fixture
def pg_url() -> Iterator[str]:
    with fresh_postgres_database() as url:
        yield url


def _corpus() -> list[Path]:
    return [FIXTURE_RECORDINGS, SAMPLES]


def _rows(db: Any, table: str, columns: tuple[str, ...], order: str) -> list[tuple[Any, ...]]:
    return [
        tuple(r) for r in db.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order}").fetchall()
    ]


def _walk_runs(db: Any, sort: str, **filters: Any) -> list[str]:
    """Every run key, read page by page (3 a page) through the keyset pager."""
    keys: list[str] = []
    after = None
    while True:
        page = runs_page(db, sort=sort, after=after, limit=3, **filters)
        if not page:
            return keys
        keys += [r["run_key"] for r in page]
        after = page[-1]["cursor"]


def test_the_same_corpus_reads_back_identically_from_both_backends(tmp_path: Path, pg_url: str) -> None:
    lite_path = tmp_path / "review.db"
    lite, pg = open_database(lite_path), open_database(pg_url)
    a = ingest(lite, _corpus(), db_path=str(lite_path))
    b = ingest(pg, _corpus(), db_path=pg_url)
    assert (a.stored, a.runs, a.events, sorted(a.quarantined)) == (
        b.stored,
        b.runs,
        b.events,
        sorted(b.quarantined),
    )
    fids = [r[0] for r in lite.execute("SELECT id FROM findings ORDER BY id")]
    assert len(fids) > 10 and fids == [r[0] for r in pg.execute("SELECT id FROM findings ORDER BY id")]
    for table, order in (
        ("runs", "key"),
        ("findings", "id"),
        ("tool_calls", "run_key, call_id"),
        ("semantics", "run_key, call_id"),
        ("coverage", "run_key, call_id, what"),
        ("evictions", "id"),
        ("events", "run_key, seq"),
    ):
        assert _rows(lite, table, COLUMNS[table], order) == _rows(pg, table, COLUMNS[table], order), table
    assert _rows(lite, "tallies", ("facet", "value", "n"), "facet, value") == _rows(
        pg, "tallies", ("facet", "value", "n"), "facet, value"
    )
    assert _rows(lite, "search_docs", ("id", "run_key", "kind", "ref"), "id") == _rows(
        pg, "search_docs", ("id", "run_key", "kind", "ref"), "id"
    )
    for sort in ("newest", "oldest", "most-findings"):
        assert _walk_runs(lite, sort) == _walk_runs(pg, sort), sort
    assert _walk_runs(lite, "newest", has_findings=True) == _walk_runs(pg, "newest", has_findings=True)
    assert run_facets(lite) == run_facets(pg) and queue_facets(lite) == queue_facets(pg)
    for word in ("weather", "incident", "sunny"):
        assert count_runs(lite, search=word) == count_runs(pg, search=word)
        assert _walk_runs(lite, "newest", search=word) == _walk_runs(pg, "newest", search=word)
    assert count_runs(lite, search="weather") > 0
    assert list_findings(lite) == list_findings(pg)
    assert queue_page(lite, limit=500) == queue_page(pg, limit=500)
    for kind in run_facets(lite)["kinds"]:
        assert count_runs(lite, kind=kind) == count_runs(pg, kind=kind)
        assert queue_count(lite, kind=kind, state="unlabelled") == queue_count(
            pg, kind=kind, state="unlabelled"
        )
    fids_to_label = [f for f in fids if f.startswith("f-")][:6]
    for db in (lite, pg):
        for n, fid in enumerate(fids_to_label):
            try:
                labels.label_finding(db, fid, ("tp", "fp", "unsure")[n % 3], "ann")
                labels.label_finding(db, fid, "unsure" if n % 2 else "tp", "bob")
            except labels.LabelError:  # a withheld answer takes its own verdicts
                continue
    for who in ("ann", "bob", "carol"):
        assert queue_progress(lite, reviewer=who) == queue_progress(pg, reviewer=who)
        for state in ("unlabelled", "mine", "not-mine", "disagreement", "labelled"):
            assert queue_count(lite, state=state, reviewer=who) == queue_count(pg, state=state, reviewer=who)
            assert queue_page(lite, state=state, reviewer=who) == queue_page(pg, state=state, reviewer=who)
    assert labels.label_states(lite) == labels.label_states(pg)
    lite.close()
    pg.close()


LABELLER = """
import sys
from store import labels
from store.db.connection import open_database
url, reviewer, ids = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
db = open_database(url, migrate=False)
for n, fid in enumerate(ids):
    labels.label_finding(db, fid, "tp" if n % 2 else "fp", reviewer, note=f"{reviewer} #{n}")
print("done", flush=True)
"""


def _run(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def _reviewer(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CLI, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def _nothing_partial(db: Any) -> None:
    """Every stored recording is whole: its original, its runs, each run's findings."""
    assert (
        db.execute(
            "SELECT count(*) FROM recordings r WHERE NOT EXISTS (SELECT 1 FROM originals o WHERE o.recording_id = r.id)"
        ).fetchone()[0]
        == 0
    )
    short = db.execute(
        "SELECT count(*) FROM recordings r "
        "WHERE r.runs != (SELECT count(*) FROM run_sources x WHERE x.recording_id = r.id)"
    ).fetchone()[0]
    assert short == 0, "a recording with runs missing"
    partial = db.execute(
        "SELECT count(*) FROM runs r WHERE r.findings != (SELECT count(*) FROM findings f WHERE f.run_key = r.key)"
    ).fetchone()[0]
    assert partial == 0, "a run with findings missing"


@pytest.mark.slow
def test_four_ingesters_and_eight_reviewers_on_one_database(tmp_path: Path, pg_url: str) -> None:
    lite_path = tmp_path / "review.db"
    lite = open_database(lite_path)
    ingest(lite, [FIXTURE_RECORDINGS], db_path=str(lite_path))
    expected = [r[0] for r in lite.execute("SELECT id FROM findings ORDER BY id")]
    pg = open_database(pg_url)
    first = sorted(FIXTURE_RECORDINGS.glob("*.json"))[:6]  # the reviewers' findings are there first
    ingest(pg, first, db_path=pg_url)
    targets = [
        r[0] for r in pg.execute("SELECT id FROM findings WHERE kind != 'withheld-answer' ORDER BY id")
    ]
    assert len(targets) >= 4
    procs = [_reviewer("ingest", str(FIXTURE_RECORDINGS), "--db", pg_url, "--json") for _ in range(4)]
    procs += [_run(LABELLER, pg_url, f"reviewer-{n}", ",".join(targets * 3)) for n in range(8)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode in (0, 1), err  # 1: an ingest that quarantined something (none expected)
        assert "Traceback" not in err, err
    assert [r[0] for r in pg.execute("SELECT id FROM findings ORDER BY id")] == expected
    n_files = len(list(FIXTURE_RECORDINGS.glob("*.json")))
    assert pg.execute("SELECT count(*), count(DISTINCT sha256) FROM recordings").fetchone() == (
        n_files,
        n_files,
    )
    _nothing_partial(pg)
    rows = pg.execute("SELECT reviewer, note, uid FROM labels").fetchall()
    assert len(rows) == 8 * 3 * len(targets), "no label lost"
    assert len({r[2] for r in rows}) == len(rows), "no label duplicated"
    for n in range(8):
        notes = sorted(r[1] for r in rows if r[0] == f"reviewer-{n}")
        assert notes == sorted(f"reviewer-{n} #{i}" for i in range(3 * len(targets)))
    # each reviewer's last word on targets[0] was label number 2 * len(targets), an even one: "fp"
    assert labels.current(pg, targets[0]) == {f"reviewer-{n}": "fp" for n in range(8)}
    tallies = pg.execute("SELECT facet, value, n FROM tallies ORDER BY facet, value").fetchall()
    assert tallies == lite.execute("SELECT facet, value, n FROM tallies ORDER BY facet, value").fetchall()
    lite.close()
    pg.close()


@pytest.mark.slow
def test_a_killed_ingest_leaves_nothing_partial(tmp_path: Path, pg_url: str) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    sources = sorted(FIXTURE_RECORDINGS.glob("*.json"))
    for copy in range(12):  # distinct bytes (trailing spaces), so each file is a recording of its own
        for src in sources:
            (corpus / f"{copy:02d}-{src.name}").write_bytes(src.read_bytes() + b" " * (copy + 1))
    total = len(list(corpus.iterdir()))
    pg = open_database(pg_url)
    proc = _reviewer("ingest", str(corpus), "--db", pg_url, "--workers", "1", "--json")
    deadline = time.monotonic() + 120
    while pg.execute("SELECT count(*) FROM recordings").fetchone()[0] == 0:
        assert time.monotonic() < deadline and proc.poll() is None, "the ingest ended before it was killed"
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    stored = pg.execute("SELECT count(*) FROM recordings").fetchone()[0]
    assert 0 < stored < total, "killed mid-batch"
    _nothing_partial(pg)
    again = subprocess.run(
        [sys.executable, "-c", CLI, "ingest", str(corpus), "--db", pg_url, "--json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=300,
    )
    report = json.loads(again.stdout)
    assert report["stored"] == total - stored and report["quarantined"] == []
    _nothing_partial(pg)
    assert pg.execute("SELECT count(*) FROM recordings").fetchone()[0] == total
    pg.close()


def test_the_cli_reads_a_postgresql_database_as_it_reads_sqlite(tmp_path: Path, pg_url: str) -> None:
    lite = str(tmp_path / "review.db")
    runner = CliRunner()
    outputs: dict[str, list[str]] = {}
    for db in (lite, pg_url):
        assert runner.invoke(cli, ["ingest", str(FIXTURE_RECORDINGS), "--db", db, "--json"]).exit_code == 0
        found = json.loads(runner.invoke(cli, ["findings", "--json", "--db", db]).stdout)
        fids = [f["id"] for f in found if f["kind"] != "withheld-answer"]
        # ann and bob disagree on four findings: `stats --json` lists each, in the same order on both
        for fid, (ann, bob) in zip(
            fids[::2], (("fp", "tp"), ("tp", "fp"), ("fp", "tp"), ("tp", "fp")), strict=False
        ):
            for who, verdict in (("ann", ann), ("bob", bob)):
                labelled = runner.invoke(
                    cli, ["label", fid, "--verdict", verdict, "--reviewer", who, "--db", db]
                )
                assert labelled.exit_code == 0, labelled.output
        outputs[db] = [
            runner.invoke(cli, [*args, "--db", db]).stdout
            for args in (
                ["runs", "--json"],
                ["runs", "--json", "--search", "weather"],
                ["findings", "--json"],
                ["stats", "--json"],
                ["pack", "versions", "--json"],
            )
        ]
        assert runner.invoke(cli, ["reextract", "--all", "--db", db]).exit_code == 0
        outputs[db].append(runner.invoke(cli, ["findings", "--json", "--db", db]).stdout)
    assert outputs[lite] == outputs[pg_url]
    assert json.loads(outputs[pg_url][1]), "the search found runs"


def test_a_folder_is_watched_into_a_postgresql_database(tmp_path: Path, pg_url: str) -> None:
    from tests.test_watch import FIRST, SECOND, Watcher, wait_for

    folder = tmp_path / "recordings"
    folder.mkdir()
    (folder / FIRST).write_bytes((FIXTURE_RECORDINGS / FIRST).read_bytes())
    db = open_database(pg_url)  # the schema first, so the counts below can read it at once
    w = Watcher(str(folder), "--db", pg_url, "--settle", "0.2")
    try:
        sweep = w.line("the first batch", lambda x: x.get("batch") == 1)
        assert sweep["stored"] == 1 and sweep["quarantined"] == []
        (folder / SECOND).write_bytes((FIXTURE_RECORDINGS / SECOND).read_bytes())
        wait_for(
            "the dropped recording", lambda: db.execute("SELECT count(*) FROM recordings").fetchone()[0] == 2
        )
        code, err = w.stop()
        assert code == 0 and "Traceback" not in err, err
    finally:
        w.kill()
        db.close()
    assert w.line("the summary", lambda x: "stopped" in x)["stored"] == 2


@pytest.mark.slow
async def test_served_tabs_open_the_app_on_a_postgresql_database(pg_url: str) -> None:
    """`reviewer serve --db postgresql://...`: a tab's app process opens the PostgreSQL database and draws
    its runs (the agent id of a stored run reaches the browser's socket)."""
    import asyncio
    import re
    import threading

    import aiohttp

    from tests.serve_util import free_port, listening

    db = open_database(pg_url)
    ingest(db, [FIXTURE_RECORDINGS / "evidence-gate-rails-refused.json"], db_path=pg_url)
    agent = db.execute("SELECT agent_id FROM runs").fetchone()[0]
    db.close()
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI, "serve", "--db", pg_url, "--port", str(port), "--reviewer", "raw"],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    printed: list[str] = []
    threading.Thread(target=lambda: printed.extend(iter(proc.stdout.readline, "")), daemon=True).start()  # type: ignore[union-attr]
    try:
        deadline = time.monotonic() + 60
        while not any("token=" in line for line in printed):
            assert proc.poll() is None and time.monotonic() < deadline, "".join(printed)
            await asyncio.sleep(0.1)
        assert any("Serving postgresql://" in line for line in printed), "".join(printed)
        token = re.search(r"token=([^&\s]+)", "".join(printed)).group(1)  # type: ignore[union-attr]
        assert listening(port), "the address was printed before the port listened"
        seen = ""
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(
                f"ws://127.0.0.1:{port}/ws?token={token}", headers={"Origin": f"http://127.0.0.1:{port}"}
            ) as ws,
        ):
            await ws.send_str(json.dumps(["resize", {"width": 160, "height": 40}]))
            loop = asyncio.get_running_loop()
            until = loop.time() + 90
            while agent not in seen:
                assert loop.time() < until, f"the app never drew the run: {seen[-2000:]!r}"
                msg = await asyncio.wait_for(ws.receive(), timeout=90)
                seen += (
                    msg.data if isinstance(msg.data, str) else (msg.data or b"").decode("utf-8", "replace")
                )
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_first_ingest_analyses_the_tables_it_grows_as_it_goes(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Into a new database, the ingest's own statements (each group's writes, the workers' lookups) were
    planned on the statistics of empty tables until it ended: 10,000 runs took 38.9 s, against 17.5 s when
    analysed after the first 100 files. Between groups, the tables grown past their statistics are analysed,
    so a table has statistics before the ingest ends, and they follow its growth."""
    import store.db.ingest as ingest_module
    from bench.corpus import generate_corpus

    monkeypatch.setattr(ingest_module, "GROUP_FILES", 2)
    generate_corpus(tmp_path / "corpus", runs=400, seed=4, runs_per_file=10)
    db = open_database(pg_url)
    seen: list[tuple[int, float]] = []

    def progress(done: int, total: int, _bytes: int, _total_bytes: int) -> None:
        if done < total:
            rows = db.execute("SELECT reltuples FROM pg_class WHERE oid = 'runs'::regclass").fetchone()[0]
            seen.append((done, float(rows)))

    try:
        report = ingest(db, [tmp_path / "corpus"], db_path=pg_url, workers=1, progress=progress)
        assert report.stored == 40
        analysed = [(done, rows) for done, rows in seen if rows > 0]  # reltuples is -1 until analysed
        assert analysed, f"no statistics before the ingest ended: {seen}"
        assert max(rows for _, rows in analysed) >= 2 * min(rows for _, rows in analysed), analysed
    finally:
        db.close()


def test_an_ingest_leaves_statistics_of_what_it_wrote(tmp_path: Path, pg_url: str) -> None:
    """A server that runs no autovacuum (this project's does not) kept no statistics of an ingested store,
    so PostgreSQL planned every screen's query on guesses and the search pages could not judge a word's
    share. An ingest analyses the tables it grew past their statistics, and only those."""
    from bench.corpus import generate_corpus
    from store.db.statistics import analyze_grown_tables
    from store.search import fts_query, postgres_runs_estimate

    generate_corpus(tmp_path / "corpus", runs=300, seed=3, runs_per_file=10)
    db = open_database(pg_url)
    try:

        def analysed(table: str) -> bool:  # reltuples is -1 until a table is first analysed
            return bool(
                db.execute("SELECT reltuples >= 0 FROM pg_class WHERE oid = ?::regclass", [table]).fetchone()[
                    0
                ]
            )

        assert not analysed("runs")
        report = ingest(db, [tmp_path / "corpus"], db_path=pg_url)
        assert report.stored > 0
        for table in ("runs", "findings", "events", "search_text", "search_runs"):
            assert analysed(table), table
        assert postgres_runs_estimate(db, fts_query("incident")) is not None
        assert not analyze_grown_tables(db)  # nothing grew since
    finally:
        db.close()
