"""Turn the paths a user names into source items: files, folders, bug-report zips, artifact stores, buckets.

Enumeration is cheap and happens in the parent process; `read_source` does the I/O and may run in a
worker process, so a `SourceItem` is plain picklable data.
"""

from __future__ import annotations

import os
import stat
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath

from store.errors import RecordingError
from store.reading import artifacts, buckets
from store.reading.items import MAX_BUNDLE_MEMBER_BYTES, MAX_RECORDING_BYTES, SourceItem, SourceProblem

#: Names a bug-report bundle may hold its recording under, in order of preference.
BUNDLE_MEMBERS = ("envelope.json", "recording.json")


def iter_sources(
    paths: Iterable[str | os.PathLike[str]],
    *,
    review_db: str | os.PathLike[str] | None = None,
    endpoint_url: str | None = None,
) -> Iterator[SourceItem | SourceProblem]:
    """Yield every recording under `paths`, in a stable (sorted) order.

    A path may be a bucket URL (`s3://bucket/prefix`, `gs://bucket/prefix`); `endpoint_url` then points
    the object-store client at another server. The review database itself (and its -wal/-shm files) is
    never opened as an input: reading it from Python would drop this process's SQLite locks on it.
    """
    skip = _database_files(review_db)
    for raw in paths:
        if isinstance(raw, str) and buckets.is_bucket_url(raw):
            yield from buckets.iter_bucket(raw, endpoint_url=endpoint_url)
            continue
        path = Path(raw)
        try:
            st = path.stat()
        except OSError as exc:
            yield SourceProblem(str(path), "unreadable", f"{path}: cannot be read ({exc.strerror or exc})")
            continue
        if (st.st_dev, st.st_ino) in skip:
            yield SourceProblem(
                str(path), "review-database", f"{path}: is the review database itself, not an input"
            )
        elif stat.S_ISDIR(st.st_mode):
            yield from _iter_directory(path, skip)
        else:
            yield from _iter_file(path, st.st_size)


def _database_files(review_db: str | os.PathLike[str] | None) -> set[tuple[int, int]]:
    if review_db is None:
        return set()
    found = set()
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            st = os.stat(f"{review_db}{suffix}")
        except OSError:
            continue
        found.add((st.st_dev, st.st_ino))
    return found


def _iter_directory(root: Path, skip: set[tuple[int, int]]) -> Iterator[SourceItem | SourceProblem]:
    if artifacts.is_file_artifact_store(root):
        yield from artifacts.iter_file_artifacts(root)
        return
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError as exc:
        yield SourceProblem(str(root), "unreadable", f"{root}: cannot list folder ({exc.strerror or exc})")
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        child = Path(entry.path)
        try:
            if entry.is_symlink():
                continue
            st = entry.stat()
            if (st.st_dev, st.st_ino) in skip:
                continue
            if entry.is_dir():
                yield from _iter_directory(child, skip)
            elif entry.is_file() and _looks_like_input(entry.name):
                if _is_sqlite_name(entry.name) and not artifacts.is_sqlite_artifact_store(child):
                    continue  # e.g. the review database itself, sitting in the folder being ingested
                yield from _iter_file(child, entry.stat().st_size)
        except OSError as exc:
            yield SourceProblem(str(child), "unreadable", f"{child}: cannot be read ({exc.strerror or exc})")


def _looks_like_input(name: str) -> bool:
    lower = name.lower()
    return lower.endswith((".json", ".zip", ".db", ".sqlite", ".sqlite3"))


def _is_sqlite_name(name: str) -> bool:
    return name.lower().endswith((".db", ".sqlite", ".sqlite3"))


def _iter_file(path: Path, size: int) -> Iterator[SourceItem | SourceProblem]:
    lower = path.name.lower()
    if lower.endswith(".zip") or (size >= 4 and _starts_with(path, b"PK\x03\x04")):
        yield from _iter_bundle(path)
    elif artifacts.is_sqlite_artifact_store(path):
        yield from artifacts.iter_sqlite_artifacts(path)
    elif _starts_with(path, b"SQLite format 3\x00"):
        yield SourceProblem(
            str(path),
            "not-an-artifact-store",
            f"{path}: an SQLite database without the framework's af_artifacts table (not a recording store)",
        )
    else:
        yield SourceItem(str(path), "file", str(path), None, size)


def _starts_with(path: Path, magic: bytes) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(len(magic)) == magic
    except OSError:
        return False


def _iter_bundle(path: Path) -> Iterator[SourceItem | SourceProblem]:
    """A bug-report bundle: take envelope.json (or recording.json) without extracting anything to disk."""
    try:
        with zipfile.ZipFile(path) as zf:
            infos = {info.filename: info for info in zf.infolist()}
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        yield SourceProblem(str(path), "bad-bundle", f"{path}: not a readable zip bundle ({exc})")
        return
    for name in BUNDLE_MEMBERS:
        info = _find_member(infos, name)
        if info is None:
            continue
        if info.file_size > MAX_BUNDLE_MEMBER_BYTES:
            yield SourceProblem(
                f"{path}!{info.filename}",
                "bundle-too-large",
                f"{path}: member {info.filename!r} would unpack to {info.file_size:,} bytes, over the "
                f"{MAX_BUNDLE_MEMBER_BYTES:,}-byte limit; nothing was extracted",
            )
            return
        yield SourceItem(f"{path}!{info.filename}", "bundle", str(path), info.filename, info.file_size)
        return
    yield SourceProblem(
        str(path),
        "bundle-without-recording",
        f"{path}: zip bundle holds neither envelope.json nor recording.json",
    )


def _find_member(infos: dict[str, zipfile.ZipInfo], wanted: str) -> zipfile.ZipInfo | None:
    """Find `wanted` at the bundle root (or one folder down); never trust absolute or `..` names."""
    best: zipfile.ZipInfo | None = None
    for name, info in infos.items():
        pure = PurePosixPath(name.replace("\\", "/"))
        if pure.is_absolute() or ".." in pure.parts or info.is_dir():
            continue
        if pure.name == wanted and len(pure.parts) <= 2 and (best is None or len(pure.parts) == 1):
            best = info
    return best


def read_source(item: SourceItem) -> bytes:
    """Read the bytes of one source item; raise RecordingError with a specific reason on failure."""
    if item.container == "file":
        try:
            size = os.path.getsize(item.path)
            if size > MAX_RECORDING_BYTES:
                raise RecordingError(
                    "too-large", f"{item.origin}: {size:,} bytes, over the {MAX_RECORDING_BYTES:,}-byte limit"
                )
            with open(item.path, "rb") as fh:
                return fh.read()
        except OSError as exc:
            raise RecordingError(
                "unreadable", f"{item.origin}: cannot be read ({exc.strerror or exc})"
            ) from exc
    if item.container == "bundle":
        assert item.member is not None
        try:
            with zipfile.ZipFile(item.path) as zf:
                info = zf.getinfo(item.member)
                if info.file_size > MAX_BUNDLE_MEMBER_BYTES:
                    raise RecordingError("bundle-too-large", f"{item.origin}: member too large to unpack")
                with zf.open(info) as fh:
                    data = fh.read(MAX_BUNDLE_MEMBER_BYTES + 1)
        except (zipfile.BadZipFile, OSError, KeyError, RuntimeError, ValueError) as exc:
            raise RecordingError("bad-bundle", f"{item.origin}: cannot read bundle member ({exc})") from exc
        if len(data) > MAX_BUNDLE_MEMBER_BYTES:
            raise RecordingError("bundle-too-large", f"{item.origin}: member unpacks past its declared size")
        return data
    if item.container in ("file-artifacts", "sqlite-artifacts"):
        return artifacts.read_artifact(item)
    if item.container in buckets.CONTAINERS.values():
        return buckets.read_bucket_object(item)
    raise RecordingError("unknown-container", f"{item.origin}: unknown source container {item.container!r}")
