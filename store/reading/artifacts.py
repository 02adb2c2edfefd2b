"""The framework's artifact stores (fileArtifacts directories, sqliteArtifacts databases).

The layout, as agentfootprint 9.62.0 writes it (`src/artifacts/fileArtifacts.ts`, `sqliteArtifacts.ts`,
`payload.ts`, `scopePath.ts`, `naming.ts`, `recordingArtifact.ts`):

- **fileArtifacts**: one compact JSON envelope per artifact at
  `<dir>/<tenant>/<principal>/<conversation>/<ref>.json`, holding
  `{"format": 1, "meta": {ref, kind, mediaType, bytes, createdAt, label?, digest?, expiresAt?, origin?,
  parentRefs?}, "payload": {"shape", "value"}}`. Scope segments are percent-encoded (dots too, an absent
  field is `_`); the ref is `art_` + 22 base62 characters. A streamed payload (`shape: "external"`) lives
  in the sibling `<ref>.bin`. A `format` above 1 is refused, never half-read.
- **sqliteArtifacts**: table `af_artifacts` (STRICT; primary key `(scope_ns, ref)`), whose columns
  repeat the meta and carry the payload as `payload_shape` + `payload` (TEXT); `af_artifacts_meta` holds
  `schema_version` (1). The file is in WAL mode.
- **payload**: `text` = the string itself, `binary` = base64, `json` = the JSON serialization,
  `external` = the name of the sibling file. `meta.digest`, when present, is `sha-256:<hex>` over those
  canonical bytes (UTF-8 for text/json).

A run recording is an artifact of kind `recording/run` whose payload is the JSON text of the bare
recording; every other kind is skipped. Nothing here writes: SQLite is opened read-only, one connection
per call, and everything handed out is plain picklable data.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from store.errors import RecordingError
from store.reading import items
from store.reading.files import inside, kind_of, read_head, read_regular
from store.reading.items import MAX_RECORDING_BYTES, SourceItem, SourceProblem

#: The artifact kind a run recording is stored under (`RECORDING_ARTIFACT_KIND`).
RECORDING_KIND = "recording/run"
#: The newest fileArtifacts envelope format / sqliteArtifacts schema version this reader knows.
FILE_FORMAT = 1
SQLITE_SCHEMA_VERSION = 1

#: A minted artifact ref (`naming.ts`): `art_` + 22 base62 characters.
ARTIFACT_REF = re.compile(r"art_[A-Za-z0-9]{22}")
#: One encoded scope segment (`encodeURIComponent` output with dots escaped; older stores kept capitals).
SCOPE_SEGMENT = re.compile(r"(?:[A-Za-z0-9\-_!~*'()]|%[0-9A-Fa-f]{2})+")
_REF = ARTIFACT_REF
_SEGMENT = SCOPE_SEGMENT
#: The start of an envelope as `JSON.stringify` writes it: format first, then meta (then payload).
_ENVELOPE_HEAD = re.compile(rb'\s*\{\s*"format"\s*:\s*(-?[0-9][0-9.eE+-]*)\s*,\s*"meta"\s*:\s*')
_SQLITE_MAGIC = b"SQLite format 3\x00"
_PAYLOAD_SHAPES = ("text", "binary", "json", "external")
_REQUIRED_COLUMNS = ("scope_ns", "ref", "kind", "bytes", "payload_shape", "payload")

#: Detection reads at most this many candidate envelopes and lists at most this many folders.
_DETECT_FILES = 3
_DETECT_FOLDERS = 64
_DETECT_HEAD_BYTES = 4096
#: Enumeration reads this much of an envelope to find its meta before parsing the whole file.
_META_PROBE_BYTES = 64 * 1024
#: Fallback full parse of an envelope whose keys are not in the framework's order.
_FULL_PARSE_LIMIT = 8 * 1024 * 1024


class _BadArtifact(Exception):
    """An artifact file or row that cannot be read; the message names what is wrong (not where)."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


# ─── fileArtifacts ────────────────────────────────────────────────────────────────────────────────


def is_file_artifact_store(root: Path) -> bool:
    """True when `root` is a fileArtifacts directory: an envelope-shaped `art_*.json` four levels down.

    Cheap: lists at most a few dozen folders (only ones named like encoded scope segments) and reads
    the first bytes of at most three candidate files.
    """
    folders_left = _DETECT_FOLDERS
    checked = 0
    stack: list[tuple[Path, int]] = [(Path(root), 0)]
    while stack and folders_left > 0:
        folder, depth = stack.pop()
        folders_left -= 1
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        if depth < 3:
            subdirs = [e for e in entries if _SEGMENT.fullmatch(e.name) and _is_real_dir(e)]
            stack.extend((Path(e.path), depth + 1) for e in reversed(subdirs))
            continue
        for entry in entries:
            if not (entry.name.endswith(".json") and _REF.fullmatch(entry.name[:-5])):
                continue
            if _is_regular(entry) and _looks_like_envelope(Path(entry.path)):
                return True
            checked += 1
            if checked >= _DETECT_FILES:
                return False
    return False


def _is_real_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _is_regular(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def _looks_like_envelope(path: Path) -> bool:
    if _ENVELOPE_HEAD.match(read_head(path, _DETECT_HEAD_BYTES)):
        return True
    try:
        top = json.loads(read_regular(path, str(path), _FULL_PARSE_LIMIT, follow=False))
    except (RecordingError, ValueError, RecursionError):
        return False
    return isinstance(top, dict) and {"format", "meta", "payload"} <= top.keys()


def iter_file_artifacts(root: Path) -> Iterator[SourceItem | SourceProblem]:
    """One SourceItem per `recording/run` envelope, in path order; a SourceProblem per unreadable file.

    Other kinds are skipped silently, as are hidden files, symlinks and `<ref>.bin` payload files.
    Anything else in the store (a file at the wrong depth, a broken envelope) is a SourceProblem.
    """
    root = Path(root)
    for path, depth, problem in _walk_store(root):
        if problem is not None:
            yield SourceProblem(str(path), _problem_code(problem), f"{path}: {problem}")
            continue
        yield from _artifact_file(path, depth)


def file_artifact_at(root: Path, path: Path) -> Iterator[SourceItem | SourceProblem]:
    """What the one file `path` inside the fileArtifacts store `root` holds, as `iter_file_artifacts`
    would find it (used by `reviewer watch` for a file that changed)."""
    try:
        depth = len(Path(path).relative_to(root).parts)
    except ValueError:
        return
    yield from _artifact_file(Path(path), depth)


def _artifact_file(path: Path, depth: int) -> Iterator[SourceItem | SourceProblem]:
    name = path.name
    stem, dot, suffix = name.rpartition(".")
    if depth != 4 or not dot or suffix not in ("json", "bin") or not _REF.fullmatch(stem):
        yield SourceProblem(
            str(path),
            "not-an-artifact",
            f"{path}: not an artifact file (a fileArtifacts store holds only "
            f"<tenant>/<principal>/<conversation>/art_<22 chars>.json envelopes)",
        )
        return
    if suffix == "bin":
        return  # a streamed payload (read through its envelope) or an orphan of an interrupted put
    try:
        fmt, meta, file_size = _envelope_meta(path)
        _check_format(fmt)
        kind = _meta_kind(meta)
    except OSError as exc:
        yield SourceProblem(str(path), "unreadable", f"{path}: cannot be read ({exc.strerror or exc})")
        return
    except _BadArtifact as exc:
        yield SourceProblem(str(path), exc.code, f"{path}: {exc.detail}")
        return
    if kind != RECORDING_KIND:
        return
    size = meta.get("bytes")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        size = file_size
    yield SourceItem(str(path), "file-artifacts", str(path), None, size)


def _problem_code(problem: str) -> str:
    """The quarantine code of a walk problem: links and special files are named as such."""
    if problem.startswith("is a symbolic link"):
        return "symlink-not-followed"
    if "not a regular file" in problem:
        return "not-a-regular-file"
    return "unreadable"


def _walk_store(root: Path) -> Iterator[tuple[Path, int, str | None]]:
    """Every non-hidden, non-symlink file (and unexpected folder) under `root`, sorted, with its depth."""
    try:
        with os.scandir(root) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        yield root, 0, f"cannot list folder ({exc.strerror or exc})"
        return
    stack = [(e, 1) for e in reversed(entries)]
    while stack:
        entry, level = stack.pop()
        if entry.name.startswith("."):
            continue
        path = Path(entry.path)
        try:
            if entry.is_symlink():
                yield path, level, "is a symbolic link; links inside an artifact store are not followed"
                continue
            if entry.is_dir(follow_symlinks=False):
                if level >= 4:
                    yield path, level, "a folder where only artifact files belong; not read"
                    continue
                with os.scandir(path) as it:
                    children = sorted(it, key=lambda e: e.name)
                stack.extend((c, level + 1) for c in reversed(children))
            elif entry.is_file(follow_symlinks=False):
                yield path, level, None
            else:
                mode = entry.stat(follow_symlinks=False).st_mode
                yield path, level, f"is {kind_of(mode)}, not a regular file; only regular files are read"
        except OSError as exc:
            yield path, level, f"cannot be read ({exc.strerror or exc})"


def _envelope_meta(path: Path) -> tuple[Any, dict[str, Any], int]:
    """(format, meta, file size) of an envelope, reading only its head when it is in the usual order."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise _BadArtifact("not-a-regular-file", f"is {kind_of(st.st_mode)}, not a regular file")
        size = st.st_size
        head = fh.read(_META_PROBE_BYTES)
        if not head.strip():
            raise _BadArtifact("bad-artifact", "the artifact file is empty")
        match = _ENVELOPE_HEAD.match(head)
        if match:
            # The matched prefix is ASCII, so its byte length is its character length.
            text = head.decode("utf-8", errors="replace")
            try:
                meta, _ = json.JSONDecoder().raw_decode(text, match.end())
                fmt = json.loads(match.group(1))
            except ValueError:
                pass  # the meta runs past the probe (or is broken): parse the whole file below
            else:
                if not isinstance(meta, dict):
                    raise _BadArtifact("bad-artifact", "not an artifact envelope (`meta` is not an object)")
                return fmt, meta, size
        if size > 2 * MAX_RECORDING_BYTES:
            raise _BadArtifact("too-large", f"artifact file of {size:,} bytes, over the size limit")
        fh.seek(0)
        data = fh.read(2 * MAX_RECORDING_BYTES + 1)
    envelope = _parse_envelope(data)
    return envelope["format"], envelope["meta"], size


def _parse_envelope(data: bytes) -> dict[str, Any]:
    try:
        top = json.loads(data)
    except RecursionError as exc:
        raise _BadArtifact("bad-artifact", "not an artifact envelope (JSON nested too deeply)") from exc
    except ValueError as exc:
        raise _BadArtifact("bad-artifact", f"not an artifact envelope: not valid JSON ({exc})") from exc
    if not isinstance(top, dict):
        raise _BadArtifact("bad-artifact", "not an artifact envelope (the JSON is not an object)")
    missing = [k for k in ("format", "meta", "payload") if k not in top]
    if missing:
        raise _BadArtifact("bad-artifact", f"not an artifact envelope (no {', '.join(missing)})")
    if not isinstance(top["meta"], dict):
        raise _BadArtifact("bad-artifact", "not an artifact envelope (`meta` is not an object)")
    return top


def _check_format(fmt: Any) -> None:
    if isinstance(fmt, bool) or not isinstance(fmt, int | float):
        raise _BadArtifact("bad-artifact", f"not an artifact envelope (format {fmt!r} is not a number)")
    if fmt > FILE_FORMAT:
        raise _BadArtifact(
            "bad-artifact",
            f"artifact envelope format {fmt} is newer than this reader knows ({FILE_FORMAT})",
        )


def _meta_kind(meta: dict[str, Any]) -> str:
    kind = meta.get("kind")
    if not isinstance(kind, str) or not kind:
        raise _BadArtifact("bad-artifact", "not an artifact envelope (meta has no `kind`)")
    return kind


def _read_file_artifact(item: SourceItem) -> bytes:
    path = Path(item.path)
    # Escaping (text) or base64 (binary) makes an envelope larger than its payload; allow for it.
    data = read_regular(path, item.origin, 2 * items.MAX_RECORDING_BYTES, follow=False)
    try:
        envelope = _parse_envelope(data)
        _check_format(envelope["format"])
        meta = envelope["meta"]
        if _meta_kind(meta) != RECORDING_KIND:
            raise _BadArtifact("bad-artifact", f"artifact kind is {meta['kind']!r}, not {RECORDING_KIND!r}")
        payload = envelope["payload"]
        if isinstance(payload, dict) and payload.get("shape") == "external":
            # putStream wrote the bytes to `<ref>.bin` beside the envelope (the adapter's path, not `value`).
            body = _read_streamed_payload(item, path.with_name(path.name[: -len(".json")] + ".bin"))
        else:
            body = _decode_payload(payload)
        _verify_digest(meta.get("digest"), body)
    except _BadArtifact as exc:
        raise RecordingError(exc.code, f"{item.origin}: {exc.detail}") from exc
    return body


def _read_streamed_payload(item: SourceItem, sibling: Path) -> bytes:
    """A `<ref>.bin` payload: a regular file inside the store (a link out of it is refused, never read)."""
    root = Path(item.path).parents[3]  # <root>/<tenant>/<principal>/<conversation>/<ref>.json
    where = f"{item.origin}: the streamed payload {sibling.name}"
    if os.path.islink(sibling) or not inside(sibling, root):
        raise RecordingError(
            "symlink-not-followed",
            f"{where} is a symbolic link; links inside an artifact store are not followed",
        )
    try:
        return read_regular(sibling, where, items.MAX_RECORDING_BYTES, follow=False)
    except RecordingError as exc:
        code = "bad-artifact" if exc.code == "unreadable" else exc.code
        raise RecordingError(code, exc.message) from exc


# ─── sqliteArtifacts ──────────────────────────────────────────────────────────────────────────────


def is_sqlite_artifact_store(path: Path) -> bool:
    """True for an SQLite file holding an `af_artifacts` table. Reads 16 bytes first; never writes."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size < 100:
            return False
        with open(path, "rb") as fh:
            if fh.read(16) != _SQLITE_MAGIC:
                return False
        conn = _connect_ro(Path(path))
    except StoreBusy:
        return True  # an SQLite file whose log cannot be read: reported as busy, never read partially
    except (OSError, sqlite3.Error):
        return False
    try:
        row = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'af_artifacts'"
        ).fetchone()
        return row is not None
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def _connect_ro(path: Path) -> sqlite3.Connection:
    """A read-only connection that leaves no trace beside the file.

    With a `-wal` (or `-journal`) beside it the file may be live or mid-write, so it is opened
    `mode=ro`, which reads the WAL. Without one the file is complete on its own and is opened
    `immutable=1`, so SQLite creates no `-wal`/`-shm` files (and works in a read-only folder).
    """
    target = quote(os.path.abspath(path))
    live = any(_non_empty(f"{path}{suffix}") for suffix in ("-wal", "-journal"))
    if live:
        try:
            return _open_with_log(target)
        except sqlite3.OperationalError as exc:
            # Reading the file without its log would silently miss committed recordings: refuse instead.
            raise StoreBusy(
                f"its write-ahead log cannot be read here ({exc}): the store is busy, or a read-only copy "
                "without its -shm file; nothing of it was read. Ingest it again when its writer is done, "
                "or copy the file with its -wal into a writable folder"
            ) from exc
    return sqlite3.connect(f"file:{target}?mode=ro&immutable=1", uri=True, timeout=5.0)


def _open_with_log(target: str) -> sqlite3.Connection:
    """Read-only, reading the WAL (which needs the -shm file, or a folder to create it in)."""
    conn = sqlite3.connect(f"file:{target}?mode=ro", uri=True, timeout=5.0)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error:
        conn.close()
        raise
    return conn


class StoreBusy(sqlite3.OperationalError):
    """An artifact database whose log cannot be read: reading it anyway would be reading it partially."""


def _non_empty(path: str) -> bool:
    try:
        return os.path.getsize(path) > 0
    except OSError:
        return False


def iter_sqlite_artifacts(path: Path) -> Iterator[SourceItem | SourceProblem]:
    """One SourceItem per `recording/run` row, ordered by (scope_ns, ref); other kinds are skipped."""
    path = Path(path)
    try:
        conn = _connect_ro(path)
    except StoreBusy as exc:
        yield SourceProblem(
            str(path), "store-busy", f"{path}: artifact database is busy or unreadable: {exc}"
        )
        return
    except sqlite3.Error as exc:
        yield SourceProblem(str(path), "unreadable", f"{path}: cannot open the artifact database ({exc})")
        return
    try:
        columns = {row[1] for row in conn.execute("PRAGMA table_info('af_artifacts')")}
        missing = [c for c in _REQUIRED_COLUMNS if c not in columns]
        if missing:
            yield SourceProblem(
                str(path),
                "bad-artifact-store",
                f"{path}: its af_artifacts table is not agentfootprint's (missing {', '.join(missing)})",
            )
            return
        version = _schema_version(conn)
        if version is not None and version > SQLITE_SCHEMA_VERSION:
            yield SourceProblem(
                str(path),
                "bad-artifact-store",
                f"{path}: artifact database schema version {version} is newer than this reader "
                f"knows ({SQLITE_SCHEMA_VERSION})",
            )
            return
        rows = conn.execute(
            "SELECT scope_ns, ref, bytes FROM af_artifacts WHERE kind = ? ORDER BY scope_ns, ref",
            (RECORDING_KIND,),
        ).fetchall()
    except sqlite3.Error as exc:
        yield SourceProblem(str(path), "unreadable", f"{path}: cannot read the artifact database ({exc})")
        return
    finally:
        conn.close()
    for scope_ns, ref, size in rows:
        member = json.dumps([scope_ns, ref])
        yield SourceItem(
            f"{path}#{ref}", "sqlite-artifacts", str(path), member, size if isinstance(size, int) else 0
        )


def _schema_version(conn: sqlite3.Connection) -> float | None:
    try:
        row = conn.execute("SELECT value FROM af_artifacts_meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.Error:
        return None  # no meta table: an older or hand-made file; the columns were checked already
    if row is None:
        return None
    try:
        return float(row[0])
    except (TypeError, ValueError):
        return float("inf")


def _read_sqlite_artifact(item: SourceItem) -> bytes:
    try:
        key = json.loads(item.member or "")
        scope_ns, ref = key
        if not isinstance(scope_ns, str) or not isinstance(ref, str):
            raise ValueError(key)
    except (ValueError, TypeError) as exc:
        raise RecordingError(
            "bad-artifact", f"{item.origin}: malformed artifact row key {item.member!r}"
        ) from exc
    try:
        conn = _connect_ro(Path(item.path))
    except StoreBusy as exc:
        raise RecordingError(
            "store-busy", f"{item.origin}: artifact database is busy or unreadable: {exc}"
        ) from exc
    except sqlite3.Error as exc:
        raise RecordingError(
            "unreadable", f"{item.origin}: cannot open the artifact database ({exc})"
        ) from exc
    try:
        head = conn.execute(
            "SELECT kind, bytes, payload_shape, digest, length(CAST(payload AS BLOB)) FROM af_artifacts "
            "WHERE scope_ns = ? AND ref = ?",
            (scope_ns, ref),
        ).fetchone()
        if head is None:
            raise RecordingError("unreadable", f"{item.origin}: the artifact is no longer in the database")
        kind, _, shape, digest, stored = head
        if kind != RECORDING_KIND:
            raise RecordingError(
                "bad-artifact", f"{item.origin}: artifact kind is {kind!r}, not {RECORDING_KIND!r}"
            )
        if isinstance(stored, int) and stored > 2 * MAX_RECORDING_BYTES:
            raise RecordingError(
                "too-large", f"{item.origin}: payload of {stored:,} bytes, over the size limit"
            )
        (value,) = conn.execute(
            "SELECT payload FROM af_artifacts WHERE scope_ns = ? AND ref = ?", (scope_ns, ref)
        ).fetchone()
    except sqlite3.Error as exc:
        raise RecordingError(
            "unreadable", f"{item.origin}: cannot read the artifact database ({exc})"
        ) from exc
    finally:
        conn.close()
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RecordingError("bad-artifact", f"{item.origin}: payload column is not UTF-8 text") from exc
    try:
        if shape == "external":
            raise _BadArtifact("bad-artifact", "payload shape 'external' cannot live in a database row")
        body = _decode_payload({"shape": shape, "value": value})
        _verify_digest(digest, body)
    except _BadArtifact as exc:
        raise RecordingError(exc.code, f"{item.origin}: {exc.detail}") from exc
    return body


# ─── payloads ─────────────────────────────────────────────────────────────────────────────────────


def _decode_payload(payload: Any) -> bytes:
    """The canonical bytes of an encoded payload (`text`/`json`: UTF-8 of the value; `binary`: base64)."""
    if not isinstance(payload, dict):
        raise _BadArtifact("bad-artifact", "not an artifact envelope (`payload` is not an object)")
    shape, value = payload.get("shape"), payload.get("value")
    if shape not in _PAYLOAD_SHAPES:
        raise _BadArtifact("bad-artifact", f"unknown payload shape {shape!r}")
    if not isinstance(value, str):
        raise _BadArtifact("bad-artifact", f"payload value is {type(value).__name__}, not a string")
    if shape == "binary":
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise _BadArtifact("bad-artifact", f"binary payload is not valid base64 ({exc})") from exc
    if shape == "external":
        raise _BadArtifact("bad-artifact", "streamed payload has no sibling file to read")
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _BadArtifact(
            "bad-artifact", f"{shape} payload is not valid Unicode text ({exc.reason})"
        ) from exc


def _verify_digest(digest: Any, body: bytes) -> None:
    if digest is None:
        return
    if not isinstance(digest, str) or not digest.startswith("sha-256:"):
        raise _BadArtifact("bad-artifact", f"unknown digest {digest!r}")
    actual = "sha-256:" + hashlib.sha256(body).hexdigest()
    if actual != digest:
        raise _BadArtifact(
            "bad-artifact", f"payload does not match its digest ({digest} recorded, {actual} read)"
        )


def check_digest(origin: str, digest: Any, body: bytes) -> None:
    """Refuse (RecordingError naming `origin`) a body that does not match the digest its ticket recorded."""
    try:
        _verify_digest(digest, body)
    except _BadArtifact as exc:
        raise RecordingError(exc.code, f"{origin}: {exc.detail}") from exc


def read_artifact(item: SourceItem) -> bytes:
    """The bytes of the bare recording an artifact item holds; RecordingError naming the origin if not."""
    if item.container == "file-artifacts":
        return _read_file_artifact(item)
    if item.container == "sqlite-artifacts":
        return _read_sqlite_artifact(item)
    raise RecordingError("unknown-container", f"{item.origin}: not an artifact item ({item.container!r})")
