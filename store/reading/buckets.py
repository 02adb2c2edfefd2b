"""Recordings in the framework's object stores: `s3Artifacts` and `gcsArtifacts` buckets.

The layout, as agentfootprint writes it (`src/artifacts/objectStore.ts`, `s3Artifacts.ts`, `gcsArtifacts.ts`,
`payload.ts`, `scopePath.ts`):

- one object per artifact at `[<prefix>/]<tenant>/<principal>/<conversation>/<ref>`, the scope segments
  encoded as for fileArtifacts, the ref `art_` + 22 base62 characters;
- the object body IS the payload's canonical bytes (UTF-8 of the text / JSON, or the raw binary), the
  bytes `meta.bytes` counts and `meta.digest` covers; never an envelope;
- the ticket rides as ONE object-metadata entry, `af-artifact` (looked up case-insensitively), holding
  ASCII JSON `{"v": 1, "shape": "text"|"binary"|"json", "meta": {...}}`; a newer `v` is refused.

Only artifacts of kind `recording/run` are read; other kinds are skipped, as are objects whose key is not
artifact-shaped (a foreign object in a shared bucket). An artifact-shaped object with a missing or broken
ticket, or a body that fails its digest, is a problem reported under its own key (`s3://bucket/key`).

The clients are the vendors' own (boto3, google-cloud-storage), imported only when a bucket is named, so
the SQLite default needs neither. Credentials come from each client's standard environment chain;
`endpoint_url` (or `AWS_ENDPOINT_URL` / `STORAGE_EMULATOR_HOST`, which the clients read themselves) points
them at another server. Nothing here writes to a bucket.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from store.errors import RecordingError
from store.reading.artifacts import ARTIFACT_REF, RECORDING_KIND, SCOPE_SEGMENT, check_digest
from store.reading.items import MAX_RECORDING_BYTES, SourceItem, SourceProblem

#: The URL schemes a bucket is named by, and the container each one's items carry.
CONTAINERS = {"s3": "s3-artifacts", "gs": "gcs-artifacts"}
#: The one object-metadata entry that carries the ticket (`ARTIFACT_META_KEY`).
ARTIFACT_META_KEY = "af-artifact"
#: The newest ticket envelope version this reader knows (`META_FORMAT`).
META_FORMAT = 1
_SHAPES = ("text", "binary", "json")
#: HeadObject calls in flight while listing an S3 bucket (a listing carries no metadata there).
_HEAD_THREADS = 8
#: The longest client error text kept in a problem's message.
_ERROR_CHARS = 300
_INSTALL = "pip install 'footprint-reviewer[buckets]'"


@dataclass(frozen=True)
class BucketUrl:
    """`s3://bucket/prefix` or `gs://bucket/prefix`, the prefix without leading or trailing slashes."""

    scheme: str
    bucket: str
    prefix: str

    @property
    def list_prefix(self) -> str:
        """The listing prefix: with a trailing slash, so `art` never lists `artifacts2/`."""
        return f"{self.prefix}/" if self.prefix else ""

    def origin(self, key: str) -> str:
        return f"{self.scheme}://{self.bucket}/{key}"

    def __str__(self) -> str:
        return f"{self.scheme}://{self.bucket}/{self.prefix}"


def is_bucket_url(raw: str) -> bool:
    """True when `raw` names a bucket (`s3://...`, `gs://...`) rather than a local path."""
    return raw.split("://", 1)[0].lower() in CONTAINERS and "://" in raw


def parse_bucket_url(raw: str) -> BucketUrl:
    """Split a bucket URL; ValueError when it names no bucket."""
    scheme, _, rest = raw.partition("://")
    bucket, _, prefix = rest.partition("/")
    if scheme.lower() not in CONTAINERS or not bucket:
        raise ValueError(f"{raw}: not a bucket URL (expected s3://bucket[/prefix] or gs://bucket[/prefix])")
    return BucketUrl(scheme.lower(), bucket, prefix.strip("/"))


def iter_bucket(raw: str, *, endpoint_url: str | None = None) -> Iterator[SourceItem | SourceProblem]:
    """One SourceItem per `recording/run` object under the URL, in key order; a SourceProblem per object
    (or listing) that cannot be read."""
    try:
        url = parse_bucket_url(raw)
    except ValueError as exc:
        yield SourceProblem(raw, "bad-bucket-url", str(exc))
        return
    try:
        if url.scheme == "s3":
            yield from _iter_s3(url, endpoint_url)
        else:
            yield from _iter_gcs(url, endpoint_url)
    except RecordingError as exc:  # no client library, no credentials, a listing refused
        yield SourceProblem(str(url), exc.code, _naming(str(url), exc.message))


def read_bucket_object(item: SourceItem) -> bytes:
    """The recording bytes of one bucket item (its body), checked against its ticket; RecordingError
    naming the object's key when it cannot be read."""
    url = parse_bucket_url(item.origin)
    key = item.member or ""
    try:
        if item.container == CONTAINERS["s3"]:
            return _read_s3(url, key, item)
        if item.container == CONTAINERS["gs"]:
            return _read_gcs(url, key, item)
    except RecordingError as exc:
        raise RecordingError(exc.code, _naming(item.origin, exc.message)) from exc
    raise RecordingError("unknown-container", f"{item.origin}: not a bucket item ({item.container!r})")


def _naming(origin: str, message: str) -> str:
    """`message`, led by the location it is about (a client-level refusal does not name one)."""
    return message if message.startswith(origin) else f"{origin}: {message}"


# ─── keys and tickets ─────────────────────────────────────────────────────────────────────────────


def _is_artifact_key(url: BucketUrl, key: str) -> bool:
    """`<tenant>/<principal>/<conversation>/<ref>` as the key's last four segments, under the prefix."""
    if not key.startswith(url.list_prefix):
        return False
    parts = key.split("/")
    if len(parts) < 4 or not ARTIFACT_REF.fullmatch(parts[-1]):
        return False
    return all(SCOPE_SEGMENT.fullmatch(segment) for segment in parts[-4:-1])


def _metadata_entry(bag: Any) -> Any:
    """`readMetadataEntry`: the ticket's entry, whatever case the service handed the key back in."""
    if not isinstance(bag, dict):
        return None
    if ARTIFACT_META_KEY in bag:
        return bag[ARTIFACT_META_KEY]
    for name, value in bag.items():
        if isinstance(name, str) and name.lower() == ARTIFACT_META_KEY:
            return value
    return None


def _ticket(origin: str, bag: Any) -> dict[str, Any]:
    """The ticket's meta (`decodeArtifactMetaValue`), or RecordingError saying why it cannot be read."""
    value = _metadata_entry(bag)
    if not isinstance(value, str) or not value:
        raise RecordingError("bad-artifact", f"{origin}: no {ARTIFACT_META_KEY!r} ticket in its metadata")
    try:
        envelope = json.loads(value)
    except (ValueError, RecursionError) as exc:
        raise RecordingError(
            "bad-artifact", f"{origin}: its {ARTIFACT_META_KEY!r} ticket is not JSON"
        ) from exc
    if not isinstance(envelope, dict):
        raise RecordingError("bad-artifact", f"{origin}: its ticket is not a JSON object")
    version = envelope.get("v")
    if isinstance(version, bool) or not isinstance(version, int | float):
        raise RecordingError("bad-artifact", f"{origin}: its ticket has no version number")
    if version > META_FORMAT:
        raise RecordingError(
            "bad-artifact",
            f"{origin}: ticket version {version} is newer than this reader knows ({META_FORMAT})",
        )
    meta = envelope.get("meta")
    if (
        not isinstance(meta, dict)
        or not isinstance(meta.get("ref"), str)
        or not ARTIFACT_REF.fullmatch(meta["ref"])
    ):
        raise RecordingError("bad-artifact", f"{origin}: its ticket's meta names no artifact ref")
    if envelope.get("shape") not in _SHAPES:
        raise RecordingError(
            "bad-artifact", f"{origin}: its ticket's payload shape is not text, binary or json"
        )
    if not isinstance(meta.get("kind"), str) or not meta["kind"]:
        raise RecordingError("bad-artifact", f"{origin}: its ticket's meta has no kind")
    return meta


def _check_size(origin: str, size: Any) -> None:
    if isinstance(size, int) and size > MAX_RECORDING_BYTES:
        raise RecordingError(
            "too-large", f"{origin}: {size:,} bytes, over the {MAX_RECORDING_BYTES:,}-byte limit"
        )


def _still_a_recording(origin: str, meta: dict[str, Any]) -> None:
    if meta["kind"] != RECORDING_KIND:
        raise RecordingError(
            "bad-artifact", f"{origin}: artifact kind is {meta['kind']!r}, not {RECORDING_KIND!r}"
        )


def _failure(origin: str, operation: str, exc: Exception) -> RecordingError:
    """A client failure as a problem under `origin`: the exception's name and (bounded) text."""
    text = " ".join(str(exc).split())[:_ERROR_CHARS]
    return RecordingError("unreadable", f"{origin}: {operation} failed ({type(exc).__name__}: {text})")


# ─── clients (one per process, built on first use) ────────────────────────────────────────────────

_clients: dict[tuple[Any, ...], Any] = {}
#: The environment the clients read an endpoint from themselves: a change means another client.
_ENDPOINT_ENV = ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "STORAGE_EMULATOR_HOST")


def _client(scheme: str, endpoint_url: str | None) -> Any:
    """The vendor client for `scheme`, cached per process (a client never crosses a fork)."""
    key = (os.getpid(), scheme, endpoint_url, *(os.environ.get(name) for name in _ENDPOINT_ENV))
    if key not in _clients:
        _clients[key] = _s3_client(endpoint_url) if scheme == "s3" else _gcs_client(endpoint_url)
    return _clients[key]


def _s3_client(endpoint_url: str | None) -> Any:
    try:
        import boto3
    except ImportError as exc:
        raise RecordingError("missing-client", f"reading s3:// buckets needs boto3: {_INSTALL}") from exc
    # endpoint_url=None leaves botocore its own chain: AWS_ENDPOINT_URL(_S3), then the AWS endpoint.
    return boto3.client("s3", endpoint_url=endpoint_url or None)


def _gcs_client(endpoint_url: str | None) -> Any:
    try:
        from google.auth.exceptions import DefaultCredentialsError
        from google.cloud import storage
    except ImportError as exc:
        raise RecordingError(
            "missing-client", f"reading gs:// buckets needs google-cloud-storage: {_INSTALL}"
        ) from exc
    options = {"api_endpoint": endpoint_url} if endpoint_url else None
    try:
        return storage.Client(client_options=options)
    except DefaultCredentialsError as exc:
        if not endpoint_url:
            raise RecordingError(
                "unreadable",
                f"no Google Cloud credentials found ({' '.join(str(exc).split())[:_ERROR_CHARS]})",
            ) from exc
        # A named endpoint without credentials is an emulator, as STORAGE_EMULATOR_HOST would be.
        from google.auth.credentials import AnonymousCredentials

        return storage.Client(project="_", credentials=AnonymousCredentials(), client_options=options)


# ─── S3 ───────────────────────────────────────────────────────────────────────────────────────────


def _iter_s3(url: BucketUrl, endpoint_url: str | None) -> Iterator[SourceItem | SourceProblem]:
    client = _client("s3", endpoint_url)
    listed: list[tuple[str, int]] = []
    try:
        for page in client.get_paginator("list_objects_v2").paginate(
            Bucket=url.bucket, Prefix=url.list_prefix
        ):
            for obj in page.get("Contents", []):
                key = obj.get("Key")
                if isinstance(key, str) and _is_artifact_key(url, key):
                    listed.append((key, int(obj.get("Size") or 0)))
    except Exception as exc:  # noqa: BLE001 - any client failure is this listing's problem
        raise _failure(str(url), "listing the bucket", exc) from exc
    listed.sort()

    def head(entry: tuple[str, int]) -> SourceItem | SourceProblem | None:
        return _s3_item(client, url, entry[0], entry[1], endpoint_url)

    with ThreadPoolExecutor(max_workers=_HEAD_THREADS) as pool:
        for found in pool.map(head, listed):
            if found is not None:
                yield found


def _s3_item(
    client: Any, url: BucketUrl, key: str, size: int, endpoint_url: str | None
) -> SourceItem | SourceProblem | None:
    """The item of one listed S3 object (its ticket read by HeadObject); None for another kind."""
    origin = url.origin(key)
    try:
        try:
            answer = client.head_object(Bucket=url.bucket, Key=key)
        except Exception as exc:  # noqa: BLE001
            raise _failure(origin, "reading the object's metadata", exc) from exc
        meta = _ticket(origin, answer.get("Metadata"))
    except RecordingError as exc:
        return SourceProblem(origin, exc.code, exc.message)
    if meta["kind"] != RECORDING_KIND:
        return None
    return SourceItem(origin, CONTAINERS["s3"], f"s3://{url.bucket}", key, size, endpoint_url)


def _read_s3(url: BucketUrl, key: str, item: SourceItem) -> bytes:
    origin = item.origin
    client = _client("s3", item.endpoint)
    try:
        answer = client.get_object(Bucket=url.bucket, Key=key)
    except Exception as exc:  # noqa: BLE001
        raise _failure(origin, "reading the object", exc) from exc
    body = answer["Body"]
    try:
        meta = _ticket(origin, answer.get("Metadata"))
        _still_a_recording(origin, meta)
        _check_size(origin, answer.get("ContentLength"))
        try:
            data: bytes = body.read(MAX_RECORDING_BYTES + 1)
        except Exception as exc:  # noqa: BLE001
            raise _failure(origin, "reading the object's body", exc) from exc
    finally:
        body.close()
    _check_size(origin, len(data))
    check_digest(origin, meta.get("digest"), data)
    return data


# ─── Cloud Storage ────────────────────────────────────────────────────────────────────────────────


def _iter_gcs(url: BucketUrl, endpoint_url: str | None) -> Iterator[SourceItem | SourceProblem]:
    client = _client("gs", endpoint_url)
    found: list[SourceItem | SourceProblem] = []
    try:
        # A Cloud Storage listing carries each object's custom metadata: no per-object read here.
        for blob in client.list_blobs(url.bucket, prefix=url.list_prefix):
            name = blob.name
            if not isinstance(name, str) or not _is_artifact_key(url, name):
                continue
            item = _gcs_item(url, name, int(blob.size or 0), blob.metadata, endpoint_url)
            if item is not None:
                found.append(item)
    except Exception as exc:  # noqa: BLE001 - any client failure is this listing's problem
        raise _failure(str(url), "listing the bucket", exc) from exc
    yield from sorted(found, key=lambda f: f.origin)


def _gcs_item(
    url: BucketUrl, name: str, size: int, metadata: Any, endpoint_url: str | None
) -> SourceItem | SourceProblem | None:
    """The item of one listed Cloud Storage object (the listing carries its ticket); None for another kind."""
    origin = url.origin(name)
    try:
        meta = _ticket(origin, metadata)
    except RecordingError as exc:
        return SourceProblem(origin, exc.code, exc.message)
    if meta["kind"] != RECORDING_KIND:
        return None
    return SourceItem(origin, CONTAINERS["gs"], f"gs://{url.bucket}", name, size, endpoint_url)


def _read_gcs(url: BucketUrl, key: str, item: SourceItem) -> bytes:
    origin = item.origin
    client = _client("gs", item.endpoint)
    try:
        blob = client.bucket(url.bucket).get_blob(key)
    except Exception as exc:  # noqa: BLE001
        raise _failure(origin, "reading the object's metadata", exc) from exc
    if blob is None:
        raise RecordingError("unreadable", f"{origin}: the object is no longer in the bucket")
    meta = _ticket(origin, blob.metadata)
    _still_a_recording(origin, meta)
    _check_size(origin, blob.size)
    try:
        # The generation read above: a body replaced since then is not read under the older ticket.
        data: bytes = blob.download_as_bytes(if_generation_match=blob.generation)
    except Exception as exc:  # noqa: BLE001
        raise _failure(origin, "reading the object", exc) from exc
    _check_size(origin, len(data))
    check_digest(origin, meta.get("digest"), data)
    return data


# ─── polling (`reviewer watch s3://...`) ──────────────────────────────────────────────────────────


@dataclass(frozen=True)
class Listed:
    """One artifact-shaped object as a listing shows it. `version` (the ETag on S3, the generation on Cloud
    Storage) changes whenever the object is written again; `modified` is its last-modified time (epoch s)."""

    key: str
    size: int
    version: str
    modified: float
    metadata: dict[str, Any] | None = None  # Cloud Storage listings carry the ticket; S3's do not


def list_objects(raw: str, *, endpoint_url: str | None = None) -> list[Listed]:
    """Every artifact-shaped object under the URL, newest first (then by key): one listing, no per-object
    read. RecordingError when the URL is malformed or the bucket cannot be listed."""
    try:
        url = parse_bucket_url(raw)
    except ValueError as exc:
        raise RecordingError("bad-bucket-url", str(exc)) from exc
    client = _client(url.scheme, endpoint_url)
    found: list[Listed] = []
    try:
        if url.scheme == "s3":
            for page in client.get_paginator("list_objects_v2").paginate(
                Bucket=url.bucket, Prefix=url.list_prefix
            ):
                for obj in page.get("Contents", []):
                    key = obj.get("Key")
                    if isinstance(key, str) and _is_artifact_key(url, key):
                        stamp = obj.get("LastModified")
                        found.append(
                            Listed(
                                key,
                                int(obj.get("Size") or 0),
                                str(obj.get("ETag") or ""),
                                stamp.timestamp() if stamp is not None else 0.0,
                            )
                        )
        else:
            for blob in client.list_blobs(url.bucket, prefix=url.list_prefix):
                name = blob.name
                if isinstance(name, str) and _is_artifact_key(url, name):
                    stamp = blob.updated
                    found.append(
                        Listed(
                            name,
                            int(blob.size or 0),
                            str(blob.generation or blob.etag or ""),
                            stamp.timestamp() if stamp is not None else 0.0,
                            dict(blob.metadata or {}),
                        )
                    )
    except Exception as exc:  # noqa: BLE001 - any client failure is this listing's problem
        raise _failure(str(url), "listing the bucket", exc) from exc
    found.sort(key=lambda o: (-o.modified, o.key))
    return found


def listed_sources(
    raw: str, listed: list[Listed], *, endpoint_url: str | None = None
) -> list[tuple[Listed, SourceItem | SourceProblem | None]]:
    """Each listed object with its source item (None: an artifact of another kind), in the order given."""
    url = parse_bucket_url(raw)
    if url.scheme == "gs":
        return [(o, _gcs_item(url, o.key, o.size, o.metadata, endpoint_url)) for o in listed]
    client = _client("s3", endpoint_url)
    with ThreadPoolExecutor(max_workers=_HEAD_THREADS) as pool:
        items = list(pool.map(lambda o: _s3_item(client, url, o.key, o.size, endpoint_url), listed))
    return list(zip(listed, items, strict=True))
