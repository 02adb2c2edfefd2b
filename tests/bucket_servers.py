"""Real S3- and GCS-compatible servers for tests, and objects written as agentfootprint writes them.

moto in server mode speaks S3 over HTTP; gcp-storage-emulator speaks the Cloud Storage JSON API. Each starts
in this process on a free port, and is ready when a real client call succeeds (polled, 60 s deadline).
Writing mirrors `s3Artifacts.put` / `gcsArtifacts.put` (`src/artifacts/objectStore.ts`): the body is the
canonical payload bytes, the ticket is ONE `af-artifact` metadata entry holding ASCII JSON
`{"v": 1, "shape", "meta"}`, the key `[<prefix>/]<tenant>/<principal>/<conversation>/<ref>`.

Without the client libraries or servers these tests are skipped with the reason on a workstation, and FAIL
under `CI=true` (the test extras install them: `pip install -e '.[test]'`).
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from tests.artifact_fixtures import Scope, canonical_bytes, scope_segment

READY_DEADLINE_S = 60.0
#: What the tests' own S3 client signs with (moto accepts any credentials).
S3_TEST_CLIENT = {
    "region_name": "us-east-1",
    "aws_access_key_id": "testing",
    "aws_secret_access_key": "testing",
}


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require(module: str, why: str) -> Any:
    """Import `module`, or skip with the reason (fail under CI=true): a missing server never passes."""
    try:
        return __import__(module, fromlist=["_"])
    except ImportError as exc:
        message = f"{why} needs {module} (pip install -e '.[test]'): {exc}"
        if in_ci():
            pytest.fail(f"CI=true but {message}", pytrace=False)
        pytest.skip(message)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until_ready(probe: Callable[[], object], what: str) -> None:
    """Poll `probe` until it returns without raising, for up to READY_DEADLINE_S."""
    deadline = time.monotonic() + READY_DEADLINE_S
    while True:
        try:
            probe()
            return
        except Exception as exc:  # noqa: BLE001 - not up yet
            if time.monotonic() > deadline:
                pytest.fail(f"{what} did not become ready within {READY_DEADLINE_S:.0f} s ({exc})")
            time.sleep(0.05)


def ascii_json(value: Any) -> str:
    """`asciiJson`: JSON.stringify with every character from U+007F up as a lowercase `\\uXXXX` escape."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).replace("\x7f", "\\u007f")


def ticket(meta: dict[str, Any], shape: str = "text") -> str:
    """`encodeArtifactMetaValue`: the one metadata value."""
    return ascii_json({"v": 1, "shape": shape, "meta": meta})


def object_key(prefix: str, scope: Scope, ref: str) -> str:
    """`scopeKeyPrefix(scope, root) + ref`."""
    head = f"{prefix}/" if prefix else ""
    segments = (
        scope_segment(scope.tenant),
        scope_segment(scope.principal),
        scope_segment(scope.conversation_id),
    )
    return head + "/".join(segments) + "/" + ref


@dataclass
class Bucket:
    """One bucket on a test server: `put` writes an object (body + metadata), `url` names a prefix."""

    scheme: str
    name: str
    endpoint: str
    put_object: Callable[[str, bytes, dict[str, str], str], None]

    def url(self, prefix: str = "") -> str:
        return f"{self.scheme}://{self.name}/{prefix}"

    def origin(self, key: str) -> str:
        return f"{self.scheme}://{self.name}/{key}"

    def put_artifact(
        self, prefix: str, scope: Scope, meta: dict[str, Any], data: Any, shape: str = "text"
    ) -> str:
        """`put`: body = canonical bytes, ContentType = mediaType, the ticket as `af-artifact`. The key."""
        key = object_key(prefix, scope, meta["ref"])
        self.put(key, canonical_bytes(data), {"af-artifact": ticket(meta, shape)}, meta["mediaType"])
        return key

    def put(
        self, key: str, body: bytes, metadata: dict[str, str], content_type: str = "application/json"
    ) -> None:
        self.put_object(key, body, metadata, content_type)


@contextmanager
def moto_server() -> Iterator[str]:
    """A moto S3 server on a free port; yields its endpoint URL."""
    server_mod = require("moto.server", "the S3 bucket tests")
    boto3 = require("boto3", "the S3 bucket tests")
    endpoint = f"http://127.0.0.1:{free_port()}"
    port = int(endpoint.rsplit(":", 1)[1])
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        client = boto3.client("s3", endpoint_url=endpoint, **S3_TEST_CLIENT)
        wait_until_ready(client.list_buckets, f"moto S3 server at {endpoint}")
        yield endpoint
    finally:
        server.stop()


@contextmanager
def s3_environment() -> Iterator[str]:
    """A moto S3 server with the standard AWS environment pointed at it (credentials, region and the
    endpoint override botocore reads itself, as `reviewer` and its subprocesses do); yields its endpoint."""
    with pytest.MonkeyPatch.context() as mp, moto_server() as endpoint:
        mp.setenv("AWS_ACCESS_KEY_ID", "testing")
        mp.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        mp.setenv("AWS_DEFAULT_REGION", "us-east-1")
        mp.setenv("AWS_ENDPOINT_URL", endpoint)
        yield endpoint


@contextmanager
def gcs_emulator() -> Iterator[str]:
    """A gcp-storage-emulator server (in memory) on a free port; yields its endpoint URL."""
    emulator = require("gcp_storage_emulator.server", "the Cloud Storage bucket tests")
    require("google.cloud.storage", "the Cloud Storage bucket tests")
    import requests

    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    server = emulator.create_server("127.0.0.1", port, in_memory=True)
    server.start()
    try:
        wait_until_ready(
            lambda: requests.get(f"{endpoint}/storage/v1/b", timeout=5).raise_for_status(),
            f"Cloud Storage emulator at {endpoint}",
        )
        yield endpoint
    finally:
        server.stop()


@contextmanager
def gcs_environment() -> Iterator[str]:
    """A Cloud Storage emulator with STORAGE_EMULATOR_HOST pointed at it (which the google client reads
    itself, as `reviewer` and its subprocesses do); yields its endpoint."""
    with pytest.MonkeyPatch.context() as mp, gcs_emulator() as endpoint:
        mp.setenv("STORAGE_EMULATOR_HOST", endpoint)
        yield endpoint


def s3_bucket(endpoint: str, name: str) -> Bucket:
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint, **S3_TEST_CLIENT)
    client.create_bucket(Bucket=name)

    def put(key: str, body: bytes, metadata: dict[str, str], content_type: str) -> None:
        client.put_object(Bucket=name, Key=key, Body=body, ContentType=content_type, Metadata=metadata)

    return Bucket("s3", name, endpoint, put)


def gcs_bucket(endpoint: str, name: str) -> Bucket:
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    client = storage.Client(
        project="test", credentials=AnonymousCredentials(), client_options={"api_endpoint": endpoint}
    )
    bucket = client.create_bucket(name)

    def put(key: str, body: bytes, metadata: dict[str, str], content_type: str) -> None:
        # `bucket.file(name).save(bytes, {contentType, resumable: false, metadata: {metadata: {...}}})`
        blob = bucket.blob(key)
        blob.metadata = metadata
        blob.upload_from_string(body, content_type=content_type)

    return Bucket("gs", name, endpoint, put)
