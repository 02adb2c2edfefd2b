"""What a run IS, whatever container it was read from: its content identity, so the same run read from a
bare recording and its envelope, a bundle or an artifact is stored once. Pure: no SQL, no I/O.

The identity hashes every event's canonical JSON, about a quarter of preparing a recording. A run's identity
only matters when another run of the same run id is stored, so it is taken then, never for a run seen once:
by the worker when its look-up finds the run id stored, else by the writer from the stored originals
(`store.db.writer`)."""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

from store.reading.decode import Recording, SharedState, events_for_identity
from store.reading.extract.walk import group_run_ids, last_real_run, run_key_for
from store.reading.text import canonical


def event_digest(event: Any) -> bytes:
    """What one recorded event is, whatever its serialisation: its canonical JSON's digest."""
    return hashlib.blake2b(canonical(event), digest_size=16).digest()


def run_content_id(run_id: str, event_digests: list[bytes], shared: SharedState | None) -> str:
    """A run's identity: its run id, its events (each by the digest of its canonical JSON,
    `event_digest`: keys sorted, so a re-serialised copy is the same run) and the snapshot state read
    for it. Two recordings of one run id whose events differ (a changed recording) have different
    identities."""
    digest = hashlib.blake2b(run_id.encode("utf-8", "surrogatepass") + b"\x1f", digest_size=16)
    digest.update(b"".join(event_digests) + b"\x1f")
    digest.update(canonical(msgspec.to_builtins(shared) if shared is not None else None))
    return "rc-" + digest.hexdigest()


def run_identities(data: bytes, origin: str, sha256: str) -> dict[str, str]:
    """Run key -> content identity, for every run of the recording `data` (whose hash is `sha256`). Raises
    RecordingError as `decode_recording` does."""
    read = events_for_identity(data, origin)
    return _identities(read.events, read.run_ids, read.shared_state, sha256)


def recording_identities(rec: Recording, sha256: str) -> dict[str, str]:
    """`run_identities` of a recording decoded with `keep_events`, while it still holds them."""
    if rec.events is None:
        raise ValueError("the recording was decoded without its events, or they were dropped")
    return _identities(rec.events, [meta.runId for meta in rec.metas], rec.shared_state, sha256)


def _identities(
    events: list[dict[str, Any]], run_ids: list[Any], shared: SharedState | None, sha256: str
) -> dict[str, str]:
    """Each run's identity, its runs grouped as extraction groups them."""
    digests = [event_digest(e) for e in events]
    groups = group_run_ids(run_ids)
    snapshot_run = last_real_run(groups)
    return {
        run_key_for(run_id, sha256): run_content_id(
            run_id, [digests[i] for i in indexes], shared if run_id == snapshot_run else None
        )
        for run_id, indexes in groups.items()
    }
