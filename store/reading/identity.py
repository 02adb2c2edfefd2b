"""What a run IS, whatever container it was read from: its content identity, so the same run read from a
bare recording and its envelope, a bundle or an artifact is stored once. Pure: no SQL, no I/O.

The identity hashes every event's canonical JSON, about a quarter of preparing a recording. A run's identity
only matters when another run of the same run id is stored, so it is taken then, never for a run seen once:
by the worker when its look-up finds the run id stored, else by the writer from the stored originals
(`store.db.writer`)."""

from __future__ import annotations

import hashlib

import msgspec

from store.reading.decode import SharedState, decode_recording
from store.reading.extract.walk import group_runs, last_real_run, run_key_for
from store.reading.text import canonical


def run_content_id(run_id: str, event_digests: list[bytes], shared: SharedState | None) -> str:
    """A run's identity: its run id, its events (each by the digest of its canonical JSON,
    `decode.event_digest`: keys sorted, so a re-serialised copy is the same run) and the snapshot state read
    for it. Two recordings of one run id whose events differ (a changed recording) have different
    identities."""
    digest = hashlib.blake2b(run_id.encode("utf-8", "surrogatepass") + b"\x1f", digest_size=16)
    digest.update(b"".join(event_digests) + b"\x1f")
    digest.update(canonical(msgspec.to_builtins(shared) if shared is not None else None))
    return "rc-" + digest.hexdigest()


def run_identities(data: bytes, origin: str, sha256: str) -> dict[str, str]:
    """Run key -> content identity, for every run of the recording `data` (whose hash is `sha256`). Raises
    RecordingError as `decode_recording` does."""
    rec = decode_recording(data, origin, digests=True)
    groups = group_runs(rec.metas)
    snapshot_run = last_real_run(groups)
    return {
        run_key_for(run_id, sha256): run_content_id(
            run_id,
            [rec.event_digests[i] for i in indexes],
            rec.shared_state if run_id == snapshot_run else None,
        )
        for run_id, indexes in groups.items()
    }
