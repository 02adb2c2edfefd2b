"""`reviewer ingest s3://bucket/prefix` and `gs://bucket/prefix`: recordings read from real S3- and
GCS-compatible servers (moto, gcp-storage-emulator), written the way s3Artifacts / gcsArtifacts write them."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import zstandard
from click.testing import CliRunner
from sqlite_utils import Database

from reviewer.cli.main import cli
from store.db.ingest import ingest
from tests.artifact_fixtures import Scope, make_meta, recording_meta, recording_text
from tests.bucket_servers import (
    Bucket,
    gcs_bucket,
    object_key,
    s3_bucket,
    ticket,
)
from tests.conftest import FIXTURE_RECORDINGS

PLAIN = "plain-tool-run.json"
ENVELOPED = "envelope-conversation-turn1.json"
# Capitals are escaped in a key segment (`~acme-~corp`). No `%XX` escapes here: gcp-storage-emulator decodes
# an object name twice, so `%20` in a name would reach it as a space (real Cloud Storage and moto do not).
ACME = Scope(conversation_id="sess-2f9c", tenant="Acme-Corp", principal="user-4471")
ANON = Scope(conversation_id="run-1796001919298-1")
PREFIX = "team/artifacts"
_names = itertools.count(1)


@pytest.fixture(params=["s3", "gs"])
def bucket(request: pytest.FixtureRequest) -> Bucket:
    """A fresh, empty bucket on the S3 server or on the Cloud Storage emulator."""
    name = f"fleet-{next(_names)}"
    if request.param == "s3":
        return s3_bucket(request.getfixturevalue("s3_endpoint"), name)
    return gcs_bucket(request.getfixturevalue("gcs_endpoint"), name)


@dataclass
class Fleet:
    """What `fill` wrote: the two recordings' keys and bodies, and the keys that must be quarantined."""

    recordings: dict[str, bytes]
    corrupt: set[str]


def fill(bucket: Bucket) -> Fleet:
    """A bucket as a fleet leaves it: two recordings, a dataset, corrupt objects, foreign objects."""
    recordings: dict[str, bytes] = {}
    text = recording_text(PLAIN)  # a bare recording, digest on the ticket, empty scope (`_` segments)
    key = bucket.put_artifact(PREFIX, ANON, recording_meta(text, digest=True), text)
    recordings[key] = text.encode()
    # A recording envelope (agentfootprint.recording.v1) as the payload, under a capitalised tenant; the
    # label carries an em-dash, escaped in the ASCII ticket.
    text = recording_text(ENVELOPED)
    meta = recording_meta(text, run_id="run-1")
    meta["label"] = "turn 1 — of 3"
    key = bucket.put_artifact(PREFIX, ACME, meta, text)
    recordings[key] = text.encode()
    # Another kind in the same scope: skipped, never quarantined.
    rows = [{"a": 1}, {"a": 2}]
    bucket.put_artifact(PREFIX, ACME, make_meta("dataset/rows", rows), rows, shape="json")
    corrupt = set()
    # A recording whose body was cut short.
    text = recording_text(PLAIN)
    meta = recording_meta(text)
    key = object_key(PREFIX, Scope("cut"), meta["ref"])
    bucket.put(key, text.encode()[: len(text) // 2], {"af-artifact": ticket(meta)})
    corrupt.add(key)
    # A body that does not match the digest its ticket recorded.
    meta = recording_meta(text, digest=True)
    key = object_key(PREFIX, Scope("tampered"), meta["ref"])
    bucket.put(key, text.encode().replace(b"run", b"RUN", 1), {"af-artifact": ticket(meta)})
    corrupt.add(key)
    # An artifact-shaped key whose ticket is not JSON.
    key = f"{PREFIX}/_/_/broken/art_{'B' * 22}"
    bucket.put(key, text.encode(), {"af-artifact": "{not json"})
    corrupt.add(key)
    # A ticket from a newer framework: refused, never half-read.
    meta = recording_meta(text)
    key = object_key(PREFIX, Scope("future"), meta["ref"])
    bucket.put(key, text.encode(), {"af-artifact": ticket(meta).replace('{"v":1', '{"v":2', 1)})
    corrupt.add(key)
    # Foreign objects in a shared bucket, and a store outside the prefix: none of them read.
    bucket.put(f"{PREFIX}/README.txt", b"not ours", {})
    bucket.put_artifact(f"{PREFIX}2", ANON, recording_meta(text), text)
    return Fleet(recordings, corrupt)


def original(db: Database, source: str) -> bytes:
    (data,) = db.execute(
        "SELECT o.data FROM originals o JOIN sources s ON s.recording_id = o.recording_id WHERE s.path = ?",
        [source],
    ).fetchone()
    return zstandard.ZstdDecompressor().decompress(data)


def counts(db: Database) -> tuple[int, int, int]:
    return tuple(
        db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("recordings", "runs", "findings")
    )  # type: ignore[return-value]


def test_bucket_recordings_are_ingested_and_the_rest_skipped_or_quarantined_by_key(
    bucket: Bucket, db: Database, db_path: Path
) -> None:
    fleet = fill(bucket)
    report = ingest(db, [bucket.url(PREFIX)], db_path=str(db_path))

    assert report.stored == 2 and report.unchanged == 0
    assert {p for p, _, _ in report.quarantined} == {bucket.origin(k) for k in fleet.corrupt}
    codes = {p: c for p, c, _ in report.quarantined}
    assert codes[bucket.origin(f"{PREFIX}/_/_/broken/art_{'B' * 22}")] == "bad-artifact"
    # The object body is the recording: stored byte for byte, under the object's own key.
    for key, body in fleet.recordings.items():
        assert original(db, bucket.origin(key)) == body
    containers = {r[0] for r in db.execute("SELECT container FROM recordings")}
    assert containers == {"s3-artifacts" if bucket.scheme == "s3" else "gcs-artifacts"}
    quarantined = {r[0] for r in db.execute("SELECT path FROM quarantine")}
    assert quarantined == {bucket.origin(k) for k in fleet.corrupt}
    assert db.execute("SELECT count(*) FROM runs").fetchone()[0] >= 2


def test_re_ingesting_a_bucket_adds_no_rows(bucket: Bucket, db: Database, db_path: Path) -> None:
    fill(bucket)
    first = ingest(db, [bucket.url(PREFIX)], db_path=str(db_path))
    before = counts(db)
    again = ingest(db, [bucket.url(PREFIX)], db_path=str(db_path))

    assert first.stored == 2
    assert again.stored == 0 and again.unchanged == 2
    assert counts(db) == before
    assert db.execute("SELECT count(*) FROM sources").fetchone()[0] == 2
    assert db.execute("SELECT sum(times) FROM quarantine").fetchone()[0] == 2 * len(first.quarantined)


def test_a_prefix_reads_only_its_own_store(bucket: Bucket, db: Database, db_path: Path) -> None:
    fill(bucket)
    other = recording_text("evidence-gate-rails-refused.json")
    key = bucket.put_artifact("elsewhere", ANON, recording_meta(other), other)

    report = ingest(db, [bucket.url("elsewhere/")], db_path=str(db_path))

    assert (report.stored, report.quarantined) == (1, [])
    assert [r[0] for r in db.execute("SELECT path FROM sources")] == [bucket.origin(key)]


def test_a_missing_bucket_is_quarantined_under_its_url(bucket: Bucket, db: Database, db_path: Path) -> None:
    url = f"{bucket.scheme}://no-such-bucket-{next(_names)}/artifacts"
    report = ingest(db, [url], db_path=str(db_path))

    assert report.stored == 0
    ((path, code, reason),) = report.quarantined
    assert (path, code) == (url, "unreadable") and reason.startswith(url)


def test_worker_processes_read_bucket_objects(bucket: Bucket, db: Database, db_path: Path) -> None:
    fleet = fill(bucket)
    report = ingest(db, [bucket.url(PREFIX)], db_path=str(db_path), workers=2)

    assert report.stored == 2
    assert {p for p, _, _ in report.quarantined} == {bucket.origin(k) for k in fleet.corrupt}


def test_cli_ingests_a_bucket_through_the_endpoint_option(
    s3_endpoint: str, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_ENDPOINT_URL")  # only --endpoint-url says where the server is
    bucket = s3_bucket(s3_endpoint, f"fleet-{next(_names)}")
    fleet = fill(bucket)
    args = ["ingest", bucket.url(PREFIX), "--db", str(db_path), "--json", "--endpoint-url", s3_endpoint]

    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output  # something was quarantined
    report = json.loads(result.stdout)
    assert report["stored"] == 2
    assert {q["path"] for q in report["quarantined"]} == {bucket.origin(k) for k in fleet.corrupt}

    again = json.loads(CliRunner().invoke(cli, args).stdout)
    assert (again["stored"], again["unchanged"]) == (0, 2)


def test_a_cloud_storage_endpoint_option_needs_no_emulator_variable(
    gcs_endpoint: str, db: Database, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STORAGE_EMULATOR_HOST")  # only the endpoint option says where the server is
    bucket = gcs_bucket(gcs_endpoint, f"fleet-{next(_names)}")
    fleet = fill(bucket)

    report = ingest(db, [bucket.url(PREFIX)], db_path=str(db_path), endpoint_url=gcs_endpoint)

    assert report.stored == 2
    assert {p for p, _, _ in report.quarantined} == {bucket.origin(k) for k in fleet.corrupt}


def test_the_sqlite_default_imports_no_object_store_client(tmp_path: Path) -> None:
    """Ingesting local files never loads boto3 or google-cloud-storage (they are an optional extra)."""
    script = (
        "import sys\n"
        "from store.db.connection import open_database\n"
        "from store.db.ingest import ingest\n"
        f"db = open_database({str(tmp_path / 'r.db')!r})\n"
        f"assert ingest(db, [{str(FIXTURE_RECORDINGS / PLAIN)!r}]).stored == 1\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('boto3', 'botocore', 'google'))\n"
        "print(loaded)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
