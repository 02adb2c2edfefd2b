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
from store.reading import artifacts, buckets, items
from store.reading.files import not_regular, read_head, read_regular
from store.reading.items import MAX_BUNDLE_MEMBER_BYTES, SourceItem, SourceProblem

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
        elif not stat.S_ISREG(st.st_mode):  # a FIFO would block, /dev/zero never ends
            problem = not_regular(str(path), st.st_mode)
            yield SourceProblem(str(path), problem.code, problem.message)
        else:
            yield from _iter_file(path, st.st_size)


def sources_at(
    root: str | os.PathLike[str],
    paths: Iterable[str | os.PathLike[str]],
    *,
    review_db: str | os.PathLike[str] | None = None,
) -> Iterator[SourceItem | SourceProblem]:
    """The inputs that the changed files `paths` under the watched folder `root` hold, as a walk of `root`
    would find them: an envelope of a fileArtifacts store (here or in a subfolder) as its artifact, any
    other file as `iter_sources` reads it. Paths that are gone, hidden, links, not recordings by name, the
    review database itself, or a streamed `<ref>.bin` payload (read through its envelope) yield nothing."""
    base = Path(os.path.abspath(root))
    skip = _database_files(review_db)
    for raw in sorted({os.path.abspath(p) for p in paths}):
        path = Path(raw)
        try:
            parts = path.relative_to(base).parts
        except ValueError:
            continue
        if not parts or any(part.startswith(".") for part in parts):
            continue
        try:
            st = path.lstat()
        except OSError:
            continue  # gone again (a temporary file renamed into place)
        if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) in skip:
            continue
        # The store it lies in (its envelopes are 4 levels down), looked for from the top as the walk does.
        stores = (path.parents[k] for k in range(min(len(parts), 4) - 1, -1, -1))
        store = next((folder for folder in stores if artifacts.is_file_artifact_store(folder)), None)
        if store is not None:
            yield from artifacts.file_artifact_at(store, path)
        elif _looks_like_input(path.name) and not (
            _is_sqlite_name(path.name) and not artifacts.is_sqlite_artifact_store(path)
        ):
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
    """Every input under `root`, depth first in name order, without recursion (a folder may be 1,000 deep).

    Links are never followed and special files never opened; both are reported, so nothing is skipped
    without a trace (hidden names and files that are not recordings by name are left alone).
    """
    stack: list[Path] = [root]
    while stack:
        folder = stack.pop()
        if artifacts.is_file_artifact_store(folder):
            yield from artifacts.iter_file_artifacts(folder)
            continue
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            yield SourceProblem(
                str(folder), "unreadable", f"{folder}: cannot list folder ({exc.strerror or exc})"
            )
            continue
        subfolders: list[Path] = []
        for entry in entries:
            if entry.name.startswith("."):
                continue
            child = Path(entry.path)
            try:
                found = _entry_source(entry, child, skip)
            except OSError as exc:
                found = SourceProblem(
                    str(child), "unreadable", f"{child}: cannot be read ({exc.strerror or exc})"
                )
            if isinstance(found, str):
                subfolders.append(child)
            elif isinstance(found, SourceProblem):
                yield found
            elif found is not None:
                yield from found
        stack.extend(reversed(subfolders))


def _entry_source(
    entry: os.DirEntry[str], child: Path, skip: set[tuple[int, int]]
) -> str | SourceProblem | Iterator[SourceItem | SourceProblem] | None:
    """What one folder entry contributes: "folder" (to walk), a problem, the sources of a file, or nothing."""
    if entry.is_symlink():
        return SourceProblem(
            str(child),
            "symlink-not-followed",
            f"{child}: is a symbolic link; links inside a folder are not followed (name the target to ingest it)",
        )
    st = entry.stat(follow_symlinks=False)
    if (st.st_dev, st.st_ino) in skip:
        return None
    if stat.S_ISDIR(st.st_mode):
        return "folder"
    if not stat.S_ISREG(st.st_mode):
        problem = not_regular(str(child), st.st_mode)
        return SourceProblem(str(child), problem.code, problem.message)
    if not _looks_like_input(entry.name):
        return None
    if _is_sqlite_name(entry.name) and not artifacts.is_sqlite_artifact_store(child):
        return None  # e.g. the review database itself, sitting in the folder being ingested
    return _iter_file(child, st.st_size)


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
    return read_head(path, len(magic)) == magic


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
        return read_regular(item.path, item.origin, items.MAX_RECORDING_BYTES)
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
