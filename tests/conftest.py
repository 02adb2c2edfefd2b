"""Shared fixtures: the real recordings kept in the repo (tests/fixtures/recordings), throwaway databases
on either backend (`store_backend`: SQLite, or a fresh database on a real PostgreSQL server)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlite_utils import Database

from store.db.connection import open_database

REPO = Path(__file__).resolve().parents[1]
#: real recordings produced by agentfootprint, kept in the repository (with their INDEX.md) so a clone alone
#: passes the suite; `python3 tools/refresh_fixtures.py SOURCE` copies a newer corpus in
FIXTURE_RECORDINGS = REPO / "tests" / "fixtures" / "recordings"
SAMPLES = REPO / "sample_recordings"


#: The PostgreSQL server the PostgreSQL tests use: $REVIEWER_TEST_POSTGRES (a postgresql:// URL), else the
#: project machine's local server. Each test gets its own database on it, dropped afterwards.
DEFAULT_TEST_POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"
BACKENDS = ("sqlite", "postgresql")
#: Run a test once per backend: `@both_backends` on a test that uses `db_path` / `db` (or `store_backend`).
both_backends = pytest.mark.parametrize("store_backend", BACKENDS, indirect=True)

_server_checked: dict[str, str | None] = {}


@pytest.fixture(autouse=True)
def counts_have_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stores' counts stop at a wall-clock budget (tens of milliseconds) and say "n+"; on a loaded CI
    runner that made exact counts flaky (a PostgreSQL search count read nothing in its 35 ms once). Every
    test gets time enough; a test of what a budget does sets its own."""
    import store.findings
    import store.runs

    monkeypatch.setattr(store.runs, "COUNT_BUDGET_S", 60.0)
    monkeypatch.setattr(store.runs, "STATEMENT_COUNT_BUDGET_S", 60.0)
    monkeypatch.setattr(store.findings, "QUEUE_COUNT_BUDGET_S", 60.0)


def postgres_server() -> str:
    """The test server's URL; the test is reported as not run (skip, with the reason) when no server is
    reachable, except under CI=true, where a missing server fails the test."""
    url = os.environ.get("REVIEWER_TEST_POSTGRES") or DEFAULT_TEST_POSTGRES
    if url not in _server_checked:
        try:
            import psycopg

            with psycopg.connect(url, connect_timeout=3) as conn:
                conn.execute("SELECT 1")
            _server_checked[url] = None
        except Exception as exc:  # noqa: BLE001 - any reason means "no server"; it is reported below
            _server_checked[url] = " ".join(str(exc).split()) or type(exc).__name__
    problem = _server_checked[url]
    if problem is not None:
        reason = f"PostgreSQL tests NOT RUN: no server at {url} ({problem}); set REVIEWER_TEST_POSTGRES"
        if os.environ.get("CI") == "true":
            pytest.fail(reason.replace("NOT RUN", "FAILED (CI=true needs the server)"), pytrace=False)
        pytest.skip(reason)
    return url


@contextmanager
def fresh_postgres_database() -> Iterator[str]:
    """A new, empty database on the test server (its URL), dropped when the block ends."""
    from bench.postgres import fresh_database

    with fresh_database(postgres_server(), prefix="reviewer_test") as url:
        yield url


@pytest.fixture(scope="session")
def migrated_postgres_template() -> Iterator[str]:
    """The name of a database migrated to the current schema once per test process, which `db_path` copies
    for each PostgreSQL test (CREATE DATABASE ... TEMPLATE) instead of migrating an empty one each time
    (about a second a test). Tests of migrations themselves use `fresh_postgres_database`."""
    from bench.postgres import database_url, drop_database

    server = postgres_server()
    import psycopg

    name = f"reviewer_template_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        open_database(database_url(server, name)).close()
        yield name
    finally:
        drop_database(server, name)


@pytest.fixture
def store_backend(request: pytest.FixtureRequest) -> str:
    """ "sqlite" unless a test is parametrised over BACKENDS (`@both_backends`)."""
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture
def db_path(tmp_path: Path, store_backend: str, request: pytest.FixtureRequest) -> Iterator[Path]:
    """Where the test's database lives: a file, or (PostgreSQL) the URL of a fresh database. The URL is
    handed over as a Path-like string: every caller passes `str(db_path)` or the value itself."""
    if store_backend == "sqlite":
        yield tmp_path / "review.db"
        return
    from bench.postgres import fresh_database

    template = request.getfixturevalue("migrated_postgres_template")
    with fresh_database(postgres_server(), prefix="reviewer_test", template=template) as url:
        yield url  # type: ignore[misc]


@pytest.fixture
def db(db_path: Path) -> Iterator[Database]:
    database = open_database(db_path)
    yield database
    database.close()


@pytest.fixture
def loaded(db: Database, db_path: Path) -> Database:
    """`db` with the fixture recordings ingested."""
    from store.db.ingest import ingest

    ingest(db, [FIXTURE_RECORDINGS], db_path=str(db_path))
    return db


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    """An S3 server (moto) for the module, with the standard AWS environment pointing at it."""
    from tests.bucket_servers import s3_environment

    with s3_environment() as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def gcs_endpoint() -> Iterator[str]:
    """A Cloud Storage emulator for the module, with the environment the clients read pointing at it."""
    from tests.bucket_servers import gcs_environment

    with gcs_environment() as endpoint:
        yield endpoint


#: The generated store of `synthetic_sqlite_store` / `synthetic_postgresql_store`: this many runs of
#: `bench.synthetic` (every prompt and answer says "synthetic", every prompt "failing", run i's "i").
SYNTHETIC_RUNS = 1_000


def _synthetic(db: Database) -> Database:
    from bench.synthetic import insert_synthetic_findings, insert_synthetic_runs
    from store.db.postgres import is_postgres

    insert_synthetic_runs(db, SYNTHETIC_RUNS)
    insert_synthetic_findings(db)
    if is_postgres(db):
        db.execute("ANALYZE search_text")  # what autovacuum does after a load this size
        db.execute("ANALYZE search_runs")
    return db


@pytest.fixture(scope="module")
def synthetic_sqlite_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Database]:
    db = _synthetic(open_database(tmp_path_factory.mktemp("synthetic") / "review.db"))
    yield db
    db.close()


@pytest.fixture(scope="module")
def synthetic_postgresql_store() -> Iterator[Database]:
    with fresh_postgres_database() as url:
        db = _synthetic(open_database(url))
        yield db
        db.close()


def keyset_run_keys(db: Database, *, sort: str, limit: int, pages: int, **filters: Any) -> list[str]:
    """The run keys of the first `pages` pages of the runs screen under `filters`, each read after the
    previous page's last cursor (what the screen does as the reviewer scrolls)."""
    from store import runs

    keys: list[str] = []
    after = None
    for _ in range(pages):
        page = runs.runs_page(db, sort=sort, limit=limit, after=after, **filters)
        keys += [r["run_key"] for r in page]
        if not page:
            break
        after = page[-1]["cursor"]
    return keys


def postgresql_plan_nodes(db: Any, statements: list[tuple[str, list[Any]]]) -> Iterator[dict[str, Any]]:
    """Every node of the plans PostgreSQL ran `statements` by (EXPLAIN ANALYZE, each statement as the store
    translates it), for tests of what a read touches."""
    from store.db.postgres import translate

    for sql, params in statements:
        text, _ = translate(sql)
        assert text is not None
        stack = [db._conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + text, params).fetchone()[0][0]["Plan"]]
        while stack:
            node = stack.pop()
            stack.extend(node.get("Plans", []))
            yield node


def runs_rows_read(db: Any, statements: list[tuple[str, list[Any]]]) -> int:
    """The rows of `runs` the statements' plans read on PostgreSQL (every node's rows times its loops)."""
    return sum(
        int(n["Actual Rows"]) * int(n.get("Actual Loops", 1))
        for n in postgresql_plan_nodes(db, statements)
        if n.get("Relation Name") == "runs"
    )


def record_statements(db: Any, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[object]]]:
    """Every statement (and its parameters) a store of `db`'s kind executes from now on, until the test's
    `monkeypatch` is undone."""
    statements: list[tuple[str, list[object]]] = []
    execute = type(db).execute

    def recorded(self: Any, sql: str, params: Any = None) -> Any:
        statements.append((sql, list(params or [])))
        return execute(self, sql, params)

    monkeypatch.setattr(type(db), "execute", recorded)
    rows_within = getattr(type(db), "rows_within", None)
    if rows_within is not None:  # PostgreSQL: a statement read through a cursor (a budgeted count)

        def recorded_rows(self: Any, sql: str, params: Any, budget_s: float) -> Any:
            statements.append((sql, list(params or [])))
            return rows_within(self, sql, params, budget_s)

        monkeypatch.setattr(type(db), "rows_within", recorded_rows)
    return statements


def sqlite_selects(db: Database, call: Callable[[], Any]) -> list[str]:
    """The SELECT statements (parameters bound) SQLite runs for `call` (a generator's first item read)."""
    seen: list[str] = []
    db.conn.set_trace_callback(seen.append)
    try:
        result = call()
        if hasattr(result, "__next__"):
            next(result, None)
    finally:
        db.conn.set_trace_callback(None)
    return [s for s in seen if s.lstrip().upper().startswith("SELECT")]


@pytest.fixture
def postgresql_statements(
    synthetic_postgresql_store: Any, monkeypatch: pytest.MonkeyPatch
) -> list[tuple[str, list[object]]]:
    """Every statement (and its parameters) the generated PostgreSQL store executes during the test."""
    return record_statements(synthetic_postgresql_store, monkeypatch)


@pytest.fixture
def runs_statements(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[object]]]:
    """Every statement (and its parameters) `store.runs` reads rows with during the test, in order."""
    from store import runs

    statements: list[tuple[str, list[object]]] = []
    fetch = runs.fetch_rows

    def recorded(db: Database, sql: str, params: object = None) -> object:
        statements.append((sql, list(params or [])))  # type: ignore[call-overload]
        return fetch(db, sql, params)  # type: ignore[arg-type]

    monkeypatch.setattr(runs, "fetch_rows", recorded)
    return statements
