"""Write artifact stores exactly as agentfootprint 9.62.0 does, for tests.

Mirrors (without sharing code with) `src/artifacts/fileArtifacts.ts`, `sqliteArtifacts.ts`,
`payload.ts`, `scopePath.ts`, `naming.ts` and `memory/identity` of footprintjs/agentfootprint:

- fileArtifacts: `<dir>/<seg(tenant)>/<seg(principal)>/<seg(conversation)>/<ref>.json`, a compact
  `JSON.stringify({format: 1, meta, payload: {shape, value}})`; streamed payloads in `<ref>.bin`.
- sqliteArtifacts: the STRICT `af_artifacts` / `af_artifacts_meta` tables, WAL mode, scope_ns from
  `identityNamespace`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tests.conftest import FIXTURE_RECORDINGS

RECORDINGS = FIXTURE_RECORDINGS
RECORDING_KIND = "recording/run"
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_rng = random.Random(20261130)


@dataclass(frozen=True)
class Scope:
    conversation_id: str
    tenant: str | None = None
    principal: str | None = None


def js_stringify(value: Any) -> str:
    """`JSON.stringify(value)`: compact, non-ASCII kept, the same string escapes."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def mint_ref() -> str:
    """`art_` + 22 base62 characters (`naming.ts`)."""
    return "art_" + "".join(_rng.choice(_ALPHABET) for _ in range(22))


def scope_segment(raw: str | None) -> str:
    """`scopeSegment`: `~` doubled, capitals as `~x`, encodeURIComponent, dots as %2E, `_` kept apart."""
    if not raw:
        return "_"
    escaped = re.sub(r"[A-Z]", lambda m: "~" + m.group(0).lower(), raw.replace("~", "~~"))
    encoded = quote(escaped, safe="-_.!~*'()").replace(".", "%2E")
    return "%5F" if encoded == "_" else encoded


def _identity_field(raw: str | None) -> str:
    if not raw:
        return "_"
    escaped = raw.replace("%", "%25").replace("/", "%2F")
    return "%5F" if escaped == "_" else escaped


def identity_namespace(scope: Scope) -> str:
    """`identityNamespace`: the sqliteArtifacts `scope_ns` column."""
    return "/".join(_identity_field(f) for f in (scope.tenant, scope.principal, scope.conversation_id))


def encode_payload(data: str | bytes | Any) -> dict[str, str]:
    """`encodeArtifactData`: text as is, binary as base64, anything else as its JSON text."""
    if isinstance(data, bytes):
        return {"shape": "binary", "value": base64.b64encode(data).decode("ascii")}
    if isinstance(data, str):
        return {"shape": "text", "value": data}
    return {"shape": "json", "value": js_stringify(data)}


def canonical_bytes(data: str | bytes | Any) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, str):
        return data.encode("utf-8")
    return js_stringify(data).encode("utf-8")


def make_meta(
    kind: str,
    data: Any,
    *,
    media_type: str = "application/json",
    label: str | None = None,
    digest: bool = False,
    origin: dict[str, str] | None = None,
    created_at: int = 1796001919418,
    ref: str | None = None,
) -> dict[str, Any]:
    """`prepareArtifact`'s meta, keys in its order."""
    body = canonical_bytes(data)
    meta: dict[str, Any] = {
        "ref": ref or mint_ref(),
        "kind": kind,
        "mediaType": media_type,
        "bytes": len(body),
        "createdAt": created_at,
    }
    if label is not None:
        meta["label"] = label
    if digest:
        meta["digest"] = "sha-256:" + hashlib.sha256(body).hexdigest()
    if origin is not None:
        meta["origin"] = origin
    return meta


def recording_text(name: str) -> str:
    """A real recording's JSON text, i.e. what `recordingPutInput` stores as `data`."""
    return (RECORDINGS / name).read_text(encoding="utf-8")


def recording_meta(text: str, run_id: str = "run-1796001919298-1", **kw: Any) -> dict[str, Any]:
    """`recordingPutInput`: kind recording/run, application/json, label `run <runId>`, origin {runId}."""
    return make_meta(RECORDING_KIND, text, label=f"run {run_id}", origin={"runId": run_id}, **kw)


# ─── fileArtifacts ────────────────────────────────────────────────────────────────────────────────


def scope_dir(root: Path, scope: Scope) -> Path:
    return (
        root
        / scope_segment(scope.tenant)
        / scope_segment(scope.principal)
        / scope_segment(scope.conversation_id)
    )


def put_file_artifact(root: Path, scope: Scope, meta: dict[str, Any], data: Any) -> Path:
    """`fileArtifacts.put`: one compact envelope at `<scope dir>/<ref>.json`."""
    folder = scope_dir(root, scope)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{meta['ref']}.json"
    envelope = {"format": 1, "meta": meta, "payload": encode_payload(data)}
    path.write_text(js_stringify(envelope), encoding="utf-8")
    return path


def put_file_artifact_streamed(root: Path, scope: Scope, meta: dict[str, Any], body: bytes) -> Path:
    """`fileArtifacts.putStream`: the bytes in `<ref>.bin`, then the envelope with shape `external`."""
    folder = scope_dir(root, scope)
    folder.mkdir(parents=True, exist_ok=True)
    ref = meta["ref"]
    (folder / f"{ref}.bin").write_bytes(body)
    stated = {k: v for k, v in meta.items() if k != "digest"}
    stated["bytes"] = len(body)
    path = folder / f"{ref}.json"
    envelope = {"format": 1, "meta": stated, "payload": {"shape": "external", "value": f"{ref}.bin"}}
    path.write_text(js_stringify(envelope), encoding="utf-8")
    return path


# ─── sqliteArtifacts ──────────────────────────────────────────────────────────────────────────────

_DDL = (
    "CREATE TABLE IF NOT EXISTS af_artifacts ("
    "scope_ns TEXT NOT NULL, ref TEXT NOT NULL, kind TEXT NOT NULL, "
    "media_type TEXT NOT NULL, bytes INTEGER NOT NULL, label TEXT, digest TEXT, "
    "expires_at INTEGER, origin TEXT, parent_refs TEXT, created_at INTEGER NOT NULL, "
    "last_accessed_at INTEGER NOT NULL, payload_shape TEXT NOT NULL, payload TEXT NOT NULL, "
    "PRIMARY KEY (scope_ns, ref)) STRICT",
    "CREATE TABLE IF NOT EXISTS af_artifacts_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT",
)


def open_sqlite_store(file: Path) -> sqlite3.Connection:
    """`sqliteArtifacts({file})`: WAL, the two STRICT tables, schema_version 1."""
    conn = sqlite3.connect(file)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    for ddl in _DDL:
        conn.execute(ddl)
    conn.execute("INSERT OR IGNORE INTO af_artifacts_meta (key, value) VALUES ('schema_version', '1')")
    conn.commit()
    return conn


def put_sqlite_artifact(conn: sqlite3.Connection, scope: Scope, meta: dict[str, Any], data: Any) -> None:
    """`sqliteArtifacts.put`: one row; payload as (payload_shape, payload)."""
    payload = encode_payload(data)
    conn.execute(
        "INSERT INTO af_artifacts (scope_ns, ref, kind, media_type, bytes, label, digest, expires_at, "
        "origin, parent_refs, created_at, last_accessed_at, payload_shape, payload) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            identity_namespace(scope),
            meta["ref"],
            meta["kind"],
            meta["mediaType"],
            meta["bytes"],
            meta.get("label"),
            meta.get("digest"),
            meta.get("expiresAt"),
            js_stringify(meta["origin"]) if "origin" in meta else None,
            js_stringify(meta["parentRefs"]) if "parentRefs" in meta else None,
            meta["createdAt"],
            meta["createdAt"],
            payload["shape"],
            payload["value"],
        ),
    )
    conn.commit()
