"""The screen queries the benchmarks time (`bench.scale.screen_cases`, used at a million runs on SQLite and
on PostgreSQL) run on both backends and answer what the screens would show, so a benchmark never times a
query that fails or reads nothing."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from sqlite_utils import Database

from bench.filter_matrix import filters_of
from bench.scale import label_share, screen_cases
from store import runs
from store.db.connection import open_database
from store.db.ingest import ingest
from tests.conftest import FIXTURE_RECORDINGS, both_backends, postgres_server


@both_backends
def test_every_screen_case_of_the_benchmark_runs_on_both_backends(db: Database, db_path: Path) -> None:
    ingest(db, [FIXTURE_RECORDINGS], db_path=str(db_path))
    label_share(db, 5)
    cases = screen_cases(db, {"common": "the", "rare": "nosuchwordanywhere"})
    names = [name for name, _ in cases]
    assert len(names) == len(set(names)) and any("sorted newest" in n for n in names)
    answers = {name: fn() for name, fn in cases}
    assert answers["runs screen first page, no filter"], "the first page holds runs"
    assert runs.count_runs(db) > 0
    assert not answers["full-text search page (rare word: nosuchwordanywhere)"]

    grid = filters_of(db)  # the filter grid of `bench.filter_matrix`: each filter leaves what a scan does
    assert "no answer (w)" in grid and any("+ search" in name for name in grid)
    for filters in grid.values():
        for sort in runs.SORTS:
            assert len(runs.runs_page(db, sort=sort, limit=None, **filters)) >= runs.count_runs_at_most(
                db, **filters
            )


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_bench_of_an_ingest_into_a_grown_store_works_on_copies_and_checks_what_it_stored(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    """`bench.ingest_into_million` times ingests into a copy of a store (a file, or a PostgreSQL database as a
    template) and into an empty one, leaves the store as it was, and refuses a run that stored too little."""
    from bench.corpus import generate_corpus
    from bench.ingest_into_million import ingest_into
    from bench.postgres import fresh_database

    generate_corpus(tmp_path / "new", runs=30, seed=6, runs_per_file=10)
    paths = sorted((tmp_path / "new").rglob("*.json"))
    with contextlib.ExitStack() as stack:
        if backend == "sqlite":
            store: Path | str = tmp_path / "store.db"
            empty_on = ""
        else:
            server = postgres_server()
            template = request.getfixturevalue("migrated_postgres_template")
            store = stack.enter_context(fresh_database(server, template=template))
            empty_on = server
        db = open_database(store)
        ingest(db, [FIXTURE_RECORDINGS], db_path=str(store))
        held = runs.count_runs(db)
        db.close()
        assert held > 0
        assert ingest_into(store, paths, 30) > 0
        assert ingest_into(None, paths, 30, empty_on=empty_on) > 0
        with pytest.raises(RuntimeError, match="stored 30 runs of 31"):
            ingest_into(store, paths, 31)
        db = open_database(store)
        assert runs.count_runs(db) == held  # each ingest went into a copy
        db.close()


def test_a_bench_names_the_code_it_measured(tmp_path: Path) -> None:
    """Each ingest bench prints which `store` it imported and at which commit (`measured_code`): a copy of
    older code is named as itself, with `+changes` once its store differs from its commit."""
    import shutil
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[1]
    copy = tmp_path / "older"
    for package in ("store", "bench"):
        shutil.copytree(
            repo / package, copy / package, ignore=shutil.ignore_patterns("corpus", "__pycache__")
        )
    git = ["git", "-C", str(copy), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "older"], check=True)
    commit = subprocess.run(
        [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()

    def named() -> str:
        code = "from bench.__main__ import measured_code; print(measured_code())"
        return subprocess.run(
            [sys.executable, "-c", code], cwd=copy, capture_output=True, text=True, check=True
        ).stdout.strip()

    assert named() == f"code: store from {copy.resolve()} at {commit}"
    with (copy / "store" / "__init__.py").open("a") as module:
        module.write("# changed\n")
    assert named() == f"code: store from {copy.resolve()} at {commit}+changes"


def test_the_shard_prototype_checks_what_it_stored_even_on_a_corpus_ingest_reads_in_one_process(
    tmp_path: Path,
) -> None:
    """`bench.ingest_prototypes`' shard lines drive the worker pool whatever the corpus's size: a corpus small
    enough that ingest prepares it in its own process never reached the shard step, so the line stored the
    events it was to leave out and refused itself."""
    from bench.corpus import generate_corpus
    from bench.ingest_prototypes import shard_pipeline

    generate_corpus(tmp_path / "small", runs=30, seed=6, runs_per_file=10)
    paths = sorted((tmp_path / "small").rglob("*.json"))
    assert shard_pipeline(paths) > 0
    assert shard_pipeline(paths, unwritten=("events",)) > 0


@pytest.mark.parametrize(
    ("decode", "identity", "shards"),
    [
        ("orjson", "today", True),
        ("orjson", "one hash pass", True),
        ("ours", "today", False),
        ("ours", "one hash pass", False),
        ("native floor", None, False),
        ("native floor", None, True),
    ],
)
def test_every_extraction_stand_in_stores_what_the_ingest_stores(
    tmp_path: Path, decode: str, identity: str | None, shards: bool
) -> None:
    """Each stand-in line of `bench.ingest_prototypes` (a decode and an identity charged in place of the
    extraction) stores the runs, findings, events and documents the real ingest stores, and refuses itself
    if it does not: the figures it prints are of the same work, only cheaper."""
    from bench.corpus import generate_corpus
    from bench.ingest_prototypes import at_parse_speed, extract_beforehand, forget_beforehand

    generate_corpus(tmp_path / "small", runs=30, seed=7, runs_per_file=10)
    paths = sorted((tmp_path / "small").rglob("*.json"))
    extract_beforehand(paths)
    try:
        assert at_parse_speed(paths, shards=shards, decode=decode, identity=identity) > 0
    finally:
        forget_beforehand()


def test_the_native_floor_builds_the_rows_the_writer_takes_and_hashes_the_events_of_either_form(
    tmp_path: Path,
) -> None:
    """`bench.native_floor` charges a native decoder-extractor for building the very rows today's workers hand
    the writer (not fewer, which would flatter it), and for hashing the events' bytes of a bare recording and
    of an envelope alike (not an empty array, which would charge nothing)."""
    import msgspec
    import orjson

    from bench.corpus import generate_corpus
    from bench.native_floor import build_rows, corpus_rows, events_bytes, one_pass
    from store.db.ingest import prepare, slim
    from store.reading.sources import iter_sources

    generate_corpus(tmp_path / "small", runs=30, seed=7, runs_per_file=10)
    paths = sorted((tmp_path / "small").rglob("*.json"))
    envelope = tmp_path / "small" / "envelope.json"  # indented, as a person might save one
    inner = orjson.loads(paths[0].read_bytes())
    inner["events"] = inner["events"][:-1]  # another recording's content, not the same one twice
    envelope.write_bytes(
        orjson.dumps(
            {"format": "agentfootprint.recording.v1", "recording": inner}, option=orjson.OPT_INDENT_2
        )
    )
    paths.append(envelope)
    rows = corpus_rows(paths)
    forms = set()
    for item in iter_sources(paths):
        data = Path(item.origin).read_bytes()
        doc = orjson.loads(data)
        forms.add("recording" in doc)
        events = (doc.get("recording") or doc)["events"]
        assert events and orjson.loads(events_bytes(data)) == events
        prepared = slim(prepare(item))  # type: ignore[arg-type]
        tuples = prepared.tuples  # type: ignore[union-attr]
        built = build_rows(rows[item.origin])
        assert built[4] == msgspec.json.decode(msgspec.json.encode(tuples))
        assert sum(map(len, built[4].values())) == sum(map(len, tuples.values())) > 0
    assert forms == {True, False}, "the corpus holds bare recordings and envelopes"
    times = one_pass([Path(o).read_bytes() for o in rows], list(rows.values()), [b"[]"] * len(rows))
    assert times["the floor (scan + rows + hash)"] > 0
