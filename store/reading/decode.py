"""Bytes -> a tolerant view of a recording, or a RecordingError that says exactly what is wrong.

msgspec decodes into Structs that declare only what review needs: unknown keys are skipped by the
parser without building objects (the snapshot is ~88% of a recording and mostly irrelevant here), and
the original bytes are kept elsewhere, so nothing is lost.

Events decode the same way: each event's `meta` into a Struct of the keys extraction reads, its payload
kept as raw JSON and decoded only if its type is one extraction reads (see UNREAD_PAYLOADS): on an
event-heavy corpus this halved the decode. A recording whose events do not fit that shape (an event or a
meta that is not an object, `events` not a list) is decoded again the tolerant way, event by event as
plain objects, and reads exactly as before.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import msgspec

from store.errors import RecordingError
from store.reading.text import canonical

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


class Event(msgspec.Struct, gc=False):
    type: Any = None
    meta: Meta | None = None
    payload: msgspec.Raw = msgspec.Raw(b"")


class Injected(msgspec.Struct, gc=False):
    """The keys of a `context.injected` payload extraction reads (the evictions' hash -> call map); the
    injected content itself, a quarter of an event-heavy recording, is skipped by the parser."""

    source: Any = msgspec.UNSET
    contentHash: Any = msgspec.UNSET
    sourceId: Any = msgspec.UNSET
    iteration: Any = msgspec.UNSET
    toolCallId: Any = msgspec.UNSET


_INJECTED_KEYS = Injected.__struct_fields__

#: Event types (short form) whose payload no part of extraction reads: the timeline leaves them out and no
#: table takes anything from them. Their payload is not decoded (tests/test_ingest_golden.py checks the
#: stored rows did not change). Adding a reader of one of these types means removing it from here.
UNREAD_PAYLOADS = frozenset(
    {"stream.token", "stream.thinking_delta", "context.slot_composed", "context.evaluated"}
)
PREFIX = "agentfootprint."


def short_type(event_type: str) -> str:
    """An event type without the `agentfootprint.` prefix."""
    return event_type[len(PREFIX) :] if event_type.startswith(PREFIX) else event_type


MetaView: TypeAlias = Meta


def _as_meta(value: Any) -> Meta:
    """A plain `meta` object as the Struct the typed decode makes (its other keys dropped; not an object:
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


class FastRecording(msgspec.Struct, gc=False):
    snapshot: Snapshot | None = None
    events: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


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


class FastTopLevel(msgspec.Struct, gc=False):
    """TopLevel with typed events: tried first; anything it cannot take is read by TopLevel instead."""

    format: Any = None
    producer: Any = None
    run: Any = None
    configuration: Any = None
    privacy: Any = None
    recording: FastRecording | None = None
    snapshot: Snapshot | None = None
    #: kept as its bytes: typed into `Event`s below, and read whole only for a run's content identity
    events: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


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


_FAST_DECODER = msgspec.json.Decoder(FastTopLevel)
_EVENTS_DECODER = msgspec.json.Decoder(list[Event])
_RAW_LIST_DECODER = msgspec.json.Decoder(list[msgspec.Raw])


def event_digest(event: Any) -> bytes:
    """What one recorded event is, whatever its serialisation: its canonical JSON's digest."""
    return hashlib.blake2b(canonical(event), digest_size=16).digest()


_ANY_DECODER = msgspec.json.Decoder()
_INJECTED_DECODER = msgspec.json.Decoder(Injected)
_INJECTED_LIST_DECODER = msgspec.json.Decoder(list[Injected])
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
    #: per kept event, a digest of the whole event as recorded (`event_digest`): a run's content identity
    #: is made of its events' digests (the typed decode skips what extraction does not read)
    event_digests: list[bytes] = field(default_factory=list)


def decode_recording(data: bytes, origin: str, *, typed: bool = True) -> Recording:
    """Decode `data` (read from `origin`) or raise RecordingError naming the origin and the problem.

    `typed=False` skips the typed decode and reads every event as a plain object (what the typed decode
    falls back to; tests compare the two)."""
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
    try:
        recording = _fast_recording(_FAST_DECODER.decode(data)) if typed else None
    except (msgspec.DecodeError, RecursionError):  # not of the usual shape, or broken: read as before
        recording = None
    if recording is not None:
        return recording
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
    return _to_recording(top, origin)


def _fast_recording(top: FastTopLevel) -> Recording | None:
    """The Recording of a typed decode, or None when the tolerant reading must decide (an envelope error)."""
    if top.format is not None or top.recording is not None:
        if top.format != ENVELOPE_FORMAT or top.recording is None:
            return None
        form, snapshot, events_raw = "envelope", top.recording.snapshot, top.recording.events
    else:
        form, snapshot, events_raw = "bare", top.snapshot, top.events
    if isinstance(events_raw, msgspec.UnsetType):
        return None
    try:
        events = _EVENTS_DECODER.decode(events_raw)
    except (msgspec.DecodeError, RecursionError):  # not a list of event objects: the tolerant reading decides
        return None
    types: list[str] = []
    shorts: list[str] = []
    metas: list[MetaView] = []
    payloads: list[dict[str, Any]] = []
    short_of: dict[str, str] = {}
    # the payloads to decode, by position: all of them in one JSON array (one call, not one per event)
    wanted: list[int] = []
    raws: list[msgspec.Raw] = []
    injected: list[int] = []
    injected_raws: list[msgspec.Raw] = []
    # each kept event's digest, from its whole JSON read one event at a time (only one event's objects are
    # alive at once: a recording that is one huge string is not held twice)
    digests = [
        event_digest(_ANY_DECODER.decode(raw))
        for e, raw in zip(events, _RAW_LIST_DECODER.decode(events_raw), strict=True)
        if isinstance(e.type, str)
    ]
    for e in events:
        t = e.type
        if not isinstance(t, str):
            continue
        short = short_of.get(t)
        if short is None:
            short = short_of[t] = short_type(t)
        raw = e.payload
        if raw and short not in UNREAD_PAYLOADS:
            if short == "context.injected":
                injected.append(len(types))
                injected_raws.append(raw)
            else:
                wanted.append(len(types))
                raws.append(raw)
        types.append(t)
        shorts.append(short)
        metas.append(e.meta or NO_META)
        payloads.append({})
    if raws:
        for at, p in zip(wanted, _ANY_DECODER.decode(b"[" + b",".join(raws) + b"]"), strict=True):
            if isinstance(p, dict):
                payloads[at] = p
    if injected_raws:
        for at, inj in zip(injected, _injected(injected_raws), strict=True):
            if inj is not None:
                payloads[at] = {k: v for k in _INJECTED_KEYS if (v := getattr(inj, k)) is not msgspec.UNSET}
    return Recording(
        form=form,
        types=types,
        shorts=shorts,
        metas=metas,
        payloads=payloads,
        shared_state=snapshot.sharedState if snapshot is not None else None,
        has_snapshot=snapshot is not None,
        envelope_run=top.run if isinstance(top.run, dict) else None,
        configuration=top.configuration if isinstance(top.configuration, dict) else None,
        producer=top.producer if isinstance(top.producer, dict) else None,
        skipped_events=len(events) - len(types),
        event_digests=digests,
    )


def _injected(raws: list[msgspec.Raw]) -> list[Injected | None]:
    """The `context.injected` payloads' keys extraction reads; None for a payload that is not an object."""
    try:
        return list(_INJECTED_LIST_DECODER.decode(b"[" + b",".join(raws) + b"]"))
    except msgspec.ValidationError:  # one is not an object (or its JSON is refused: then this raises too)
        out: list[Injected | None] = []
        for raw in raws:
            try:
                out.append(_INJECTED_DECODER.decode(raw))
            except msgspec.ValidationError:
                _ANY_DECODER.decode(raw)
                out.append(None)
        return out


def _shape_error(data: bytes, origin: str, exc: msgspec.ValidationError) -> RecordingError:
    text = str(exc)
    if text.startswith("Expected `object`"):
        kind = "an array" if data.lstrip()[:1] == b"[" else "not an object"
        return RecordingError("not-a-recording", f"{origin}: not a recording (the top-level JSON is {kind})")
    return RecordingError("bad-shape", f"{origin}: not a recording of a known shape ({text})")


def _to_recording(top: TopLevel | LooseTopLevel, origin: str) -> Recording:
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
    return Recording(
        form=form,
        types=types,
        shorts=[short_type(t) for t in types],
        metas=[_as_meta(e.get("meta")) for e in kept],
        payloads=[p if isinstance(p := e.get("payload"), dict) else {} for e in kept],
        shared_state=snapshot.sharedState if snapshot is not None else None,
        has_snapshot=snapshot is not None,
        envelope_run=top.run if isinstance(top.run, dict) else None,
        configuration=top.configuration if isinstance(top.configuration, dict) else None,
        producer=top.producer if isinstance(top.producer, dict) else None,
        skipped_events=len(events) - len(kept),
        event_digests=[event_digest(e) for e in kept],
    )
