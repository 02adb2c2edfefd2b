"""What a run IS, whatever container it was read from: its content identity, so the same run read from a
bare recording and its envelope, a bundle or an artifact is stored once. Pure: no SQL, no I/O.

A run's identity hashes its run id, the canonical JSON of its events (keys sorted: a re-serialised copy is
the same run) and the snapshot state read for it, in one canonical text and one SHA-256 a run: half what a
digest per event cost (bench/RESULTS.md, 2026-12-05). It is taken for every run while the recording's
events are still decoded; a stored run with none (a store older than schema m032) has its identity taken
from its original when a run of its run id is read again (`store.db.writer`)."""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

from store.reading.decode import Recording, SharedState, decode_recording
from store.reading.extract.walk import group_run_ids, last_real_run, run_groups, run_key_for
from store.reading.text import canonical

#: what the identities of this form start with (schema m032 forgot those of the form before, `rc-`)
PREFIX = "rc2-"


def run_content_id(run_id: str, events: list[Any], shared: SharedState | None) -> str:
    """A run's identity: its run id, its events and the snapshot state read for it. Two recordings of one run
    id whose events differ (a changed recording) have different identities."""
    digest = hashlib.sha256(run_id.encode("utf-8", "surrogatepass") + b"\x1f")
    digest.update(canonical(events))
    digest.update(b"\x1f")
    digest.update(canonical(msgspec.to_builtins(shared) if shared is not None else None))
    return PREFIX + digest.hexdigest()[:32]


def decoded_with_identities(data: bytes, origin: str, sha256: str) -> tuple[Recording, dict[str, str]]:
    """`decode_recording` of `data`, and its runs' identities, taken from the events while they are decoded
    (`taken_identities`); the recording returned no longer holds them (extraction reads its per-event
    views). Raises RecordingError as `decode_recording` does."""
    rec = decode_recording(data, origin, keep_events=True)
    identities = taken_identities(rec, sha256)
    rec.events = None
    return rec, identities


def taken_identities(rec: Recording, sha256: str) -> dict[str, str]:
    """`recording_identities`, or none if they cannot be taken: the writer then keeps the recording's runs
    apart from any stored run, so a failure stores a run twice and never loses or refuses one."""
    try:
        return recording_identities(rec, sha256)
    except Exception:  # noqa: BLE001 - see above
        return {}


def recording_identities(rec: Recording, sha256: str) -> dict[str, str]:
    """Run key -> content identity, for every run of a recording decoded with `keep_events` (whose hash is
    `sha256`), its runs grouped as extraction groups them."""
    if rec.events is None:
        raise ValueError("the recording was decoded without its events, or they were dropped")
    return _identities(rec.events, run_groups(rec), rec.shared_state, sha256)


def run_identities(data: bytes, origin: str, sha256: str) -> dict[str, str]:
    """`recording_identities` of the recording `data`. Raises RecordingError as `decode_recording` does."""
    return recording_identities(decode_recording(data, origin, keep_events=True), sha256)


def identities_of_events(
    events: list[dict[str, Any]], run_ids: list[Any], shared: SharedState | None, sha256: str
) -> dict[str, str]:
    """Each run's identity, from a recording's events and each one's recorded `meta.runId` (for a reader
    that decodes the events itself: `bench.ingest_prototypes`)."""
    return _identities(events, group_run_ids(run_ids), shared, sha256)


def _identities(
    events: list[dict[str, Any]], groups: dict[str, list[int]], shared: SharedState | None, sha256: str
) -> dict[str, str]:
    """Each run's identity, its events grouped into runs."""
    snapshot_run = last_real_run(groups)
    return {
        run_key_for(run_id, sha256): run_content_id(
            run_id, [events[i] for i in indexes], shared if run_id == snapshot_run else None
        )
        for run_id, indexes in groups.items()
    }
