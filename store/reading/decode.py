"""Bytes -> a tolerant view of a recording, or a RecordingError that says exactly what is wrong.

msgspec decodes the top level into Structs that declare only what review needs: unknown keys are skipped
by the parser without building objects (the snapshot is ~88% of a recording and mostly irrelevant here),
and the original bytes are kept elsewhere, so nothing is lost.

The events are read whole, once, as plain objects in the same pass: a run's content identity hashes its
events' canonical JSON (`store.reading.identity`), so every event has to be read whole anyway, and the
payloads extraction reads come from the same objects. (Reading the events typed first, skipping the
payloads no table takes, and whole again for the identity cost a quarter more instructions, when the
identity was a digest of each event.) A snapshot of an unexpected shape is ignored: the recording is read
again without it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

import msgspec

from store.errors import RecordingError

ENVELOPE_FORMAT = "agentfootprint.recording.v1"


class SharedState(msgspec.Struct, gc=False):
    """The few `snapshot.sharedState` keys review reads (last run of the recording only)."""

    runIdentity: Any = None
    compactions: Any = None
    coverageDeclared: Any = None
    unsupportedValues: Any = None
    messageDeniedReason: Any = None
    messageDeniedPhase: Any = None
    messageDeniedBy: Any = None
    stoppedEarly: Any = None
    outputContractUnmet: Any = None
    outputAttempts: Any = None
    pausedToolName: Any = None
    pausedToolCallId: Any = None
    integrityFindingIds: Any = None
    turnNumber: Any = None


class Meta(msgspec.Struct, gc=False):
    """The `meta` keys extraction reads (format doc section 4); the others are skipped by the parser."""

    runId: Any = None
    wallClockMs: Any = None
    runtimeStageId: Any = None
    compositionPath: Any = None
    tenant: Any = None
    principal: Any = None
    sessionId: Any = None
    traceId: Any = None
    correlationId: Any = None

    def get(self, key: str, default: Any = None) -> Any:
        """`dict.get`, so extraction reads a decoded meta and a plain one alike (undeclared keys: None)."""
        return getattr(self, key, default)


NO_META = Meta()


PREFIX = "agentfootprint."


def short_type(event_type: str) -> str:
    """An event type without the `agentfootprint.` prefix."""
    return event_type[len(PREFIX) :] if event_type.startswith(PREFIX) else event_type


MetaView: TypeAlias = Meta


def _as_meta(value: Any) -> Meta:
    """A plain `meta` object as a Meta Struct (its other keys dropped; not an object:
    an empty one)."""
    if not isinstance(value, dict):
        return NO_META
    return Meta(**{k: value[k] for k in Meta.__struct_fields__ if k in value})


class Snapshot(msgspec.Struct, gc=False):
    sharedState: SharedState | None = None
    runId: Any = None


class BareRecording(msgspec.Struct, gc=False):
    snapshot: Snapshot | None = None
    events: Any = msgspec.UNSET


class LooseRecording(msgspec.Struct, gc=False):
    events: Any = msgspec.UNSET


class TopLevel(msgspec.Struct, gc=False):
    """Either a bare recording or an envelope; both decode in one pass."""

    format: Any = None
    producer: Any = None
    run: Any = None
    configuration: Any = None
    privacy: Any = None
    recording: BareRecording | None = None
    snapshot: Snapshot | None = None
    events: Any = msgspec.UNSET


class LooseTopLevel(msgspec.Struct, gc=False):
    """Fallback when the snapshot has an unexpected shape: read everything else, ignore the snapshot."""

    format: Any = None
    producer: Any = None
    run: Any = None
    configuration: Any = None
    privacy: Any = None
    recording: LooseRecording | None = None
    events: Any = msgspec.UNSET

    snapshot = None


_DECODER = msgspec.json.Decoder(TopLevel)
_LOOSE_DECODER = msgspec.json.Decoder(LooseTopLevel)


@dataclass
class Recording:
    """A decoded recording: per event its type, short type, meta and payload (an object, else empty), the
    snapshot's sharedState, envelope metadata."""

    form: str  # 'bare' | 'envelope'
    types: list[str]
    shorts: list[str]
    metas: list[MetaView]
    payloads: list[dict[str, Any]]
    shared_state: SharedState | None
    has_snapshot: bool
    envelope_run: dict[str, Any] | None
    configuration: dict[str, Any] | None
    producer: dict[str, Any] | None
    skipped_events: int
    #: the decoded events themselves, which a run's identity hashes (`store.reading.identity`), when asked
    #: for (`keep_events`): the ingest drops them once it has taken the identities, before the extraction,
    #: which reads the views above
    events: list[dict[str, Any]] | None = None
    #: event indexes per run, worked out once for extraction and identity (`walk.run_groups`)
    groups: dict[str, list[int]] | None = None


def decode_recording(data: bytes, origin: str, *, keep_events: bool = False) -> Recording:
    """Decode `data` (read from `origin`) or raise RecordingError naming the origin and the problem."""
    if not data:
        raise RecordingError("empty", f"{origin}: the file is empty")
    head = data[:8192]
    if b"\x00" in head:
        raise RecordingError("binary", f"{origin}: binary data (NUL bytes), not JSON text")
    stripped = head.lstrip()
    if stripped[:1] not in (b"{", b"[") and not stripped.startswith(b"\xef\xbb\xbf"):
        raise RecordingError("not-json", f"{origin}: not JSON (starts with {bytes(stripped[:16])!r})")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    top: TopLevel | LooseTopLevel
    try:
        top = _DECODER.decode(data)
    except RecursionError as exc:
        raise RecordingError("too-deep", f"{origin}: JSON nested too deeply to read safely") from exc
    except msgspec.ValidationError as exc:
        if "snapshot" not in str(exc):
            raise _shape_error(data, origin, exc) from exc
        try:
            top = _LOOSE_DECODER.decode(data)
        except msgspec.ValidationError as exc2:
            raise _shape_error(data, origin, exc2) from exc2
    except msgspec.DecodeError as exc:
        text = str(exc)
        if "truncated" in text:
            raise RecordingError("truncated", f"{origin}: JSON ends early (truncated file?)") from exc
        if "invalid utf-8" in text.lower() or "utf-8" in text.lower():
            raise RecordingError("binary", f"{origin}: not valid UTF-8 text ({text})") from exc
        raise RecordingError("not-json", f"{origin}: not valid JSON ({text})") from exc
    return _to_recording(top, origin, keep_events)


_META_LIST = list[Meta | None]


def _metas(values: list[Any]) -> list[Meta]:
    """Each event's `meta` as a Meta (its other keys dropped; missing or not an object: an empty one),
    converted in one call where every meta is an object or absent."""
    try:
        converted = msgspec.convert(values, _META_LIST)
    except msgspec.ValidationError:
        return [_as_meta(v) for v in values]
    return [m if m is not None else NO_META for m in converted]


def _shape_error(data: bytes, origin: str, exc: msgspec.ValidationError) -> RecordingError:
    text = str(exc)
    if text.startswith("Expected `object`"):
        kind = "an array" if data.lstrip()[:1] == b"[" else "not an object"
        return RecordingError("not-a-recording", f"{origin}: not a recording (the top-level JSON is {kind})")
    return RecordingError("bad-shape", f"{origin}: not a recording of a known shape ({text})")


def _to_recording(top: TopLevel | LooseTopLevel, origin: str, keep_events: bool) -> Recording:
    if top.format is not None or top.recording is not None:
        if top.format == 1 and top.recording is None:
            raise RecordingError(
                "artifact-file",
                f"{origin}: an artifact-store file, not a recording; ingest the store's root folder instead",
            )
        if top.format != ENVELOPE_FORMAT:
            raise RecordingError(
                "unknown-format",
                f"{origin}: unsupported envelope format {top.format!r} (this reader knows {ENVELOPE_FORMAT!r})",
            )
        if top.recording is None:
            raise RecordingError("bad-envelope", f"{origin}: envelope has no `recording` object")
        form = "envelope"
        snapshot, events = getattr(top.recording, "snapshot", None), top.recording.events
    else:
        form = "bare"
        snapshot, events = top.snapshot, top.events
    if events is msgspec.UNSET:
        where = "envelope's recording" if form == "envelope" else "top-level object"
        raise RecordingError(
            "not-a-recording", f"{origin}: not a recording (the {where} has no `events` list)"
        )
    if not isinstance(events, list):
        raise RecordingError("bad-shape", f"{origin}: `events` is {type(events).__name__}, not a list")
    kept = [e for e in events if isinstance(e, dict) and isinstance(e.get("type"), str)]
    types = [e["type"] for e in kept]
    short_of: dict[str, str] = {}
    shorts = []
    for t in types:
        short = short_of.get(t)
        if short is None:
            short = short_of[t] = short_type(t)
        shorts.append(short)
    return Recording(
        form=form,
        types=types,
        shorts=shorts,
        metas=_metas([e.get("meta") for e in kept]),
        payloads=[p if isinstance(p := e.get("payload"), dict) else {} for e in kept],
        shared_state=snapshot.sharedState if snapshot is not None else None,
        has_snapshot=snapshot is not None,
        envelope_run=top.run if isinstance(top.run, dict) else None,
        configuration=top.configuration if isinstance(top.configuration, dict) else None,
        producer=top.producer if isinstance(top.producer, dict) else None,
        skipped_events=len(events) - len(kept),
        events=kept if keep_events else None,
    )
