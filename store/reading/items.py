"""What enumeration hands to reading: a recording to read, or a location that could not be listed, and the
size limits both sides enforce. Plain picklable data, so an item can cross to a worker process; its own
module so `sources` and `artifacts` both import it without importing each other."""

from __future__ import annotations

from dataclasses import dataclass

#: A recording larger than this is refused before it is read (the largest real one is 7.6 MB).
MAX_RECORDING_BYTES = 512 * 1024 * 1024
#: Bundle members whose uncompressed size exceeds this are refused without being extracted.
MAX_BUNDLE_MEMBER_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class SourceItem:
    """One recording to read. `container` says how: file | bundle | file-artifacts | sqlite-artifacts |
    s3-artifacts | gcs-artifacts (`endpoint`: the object store's endpoint override, if one was given)."""

    origin: str
    container: str
    path: str
    member: str | None = None
    size: int = 0
    endpoint: str | None = None


@dataclass(frozen=True)
class SourceProblem:
    """A location that could not even be enumerated; it is quarantined with `code` and `message`."""

    origin: str
    code: str
    message: str


def as_stored_text(text: str) -> str:
    """A path or message as text SQLite and a terminal can take: a file name that is not UTF-8 (Python holds
    its bytes as lone surrogates) is written with `\\xNN` escapes instead of stopping the batch."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
