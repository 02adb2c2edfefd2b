"""A phrase pack's content id: sha256 over the exact object it exports, so two packs that export
different JSON never share an id (and the same export always has the same one). It identifies a pack
stored here; it is NOT the framework's version hash (the `phrasePackVersion` findings carry, which the
framework computes over its own frozen effective pack).

Pure (json and hashlib only): the domain builds its export from `exported_object`, and the schema
migration that replaced the older ids (over case-folded, sorted phrases) uses `remap_legacy_ids`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence


def exported_object(none: Iterable[str], complete: Iterable[str]) -> dict[str, object]:
    """The object `.negativeClaims(...)` accepts: `{prose: true, phrases: {none, complete}}`."""
    return {"prose": True, "phrases": {"none": list(none), "complete": list(complete)}}


def pack_content_id(none: Iterable[str], complete: Iterable[str]) -> str:
    """sha256 hex of the exported object as compact JSON (key order as exported, phrases as spelled)."""
    text = json.dumps(exported_object(none, complete), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def legacy_pack_hash(none: Iterable[str], complete: Iterable[str]) -> str:
    """The id packs had before: over case-folded, whitespace-collapsed, sorted phrases (migration only)."""

    def norm(ps: Iterable[str]) -> list[str]:
        return sorted(" ".join(p.casefold().split()) for p in ps)

    canon = {"complete": norm(complete), "none": norm(none)}
    text = json.dumps(canon, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


#: (id, name, content_hash, parent_hash, none_phrases JSON, complete_phrases JSON), oldest first.
PackRow = tuple[int, str, str, str | None, str, str]


def remap_legacy_ids(rows: Sequence[PackRow]) -> tuple[dict[int, tuple[str, str | None]], dict[str, str]]:
    """New (content id, parent id) per row, and old -> new for ids that map to exactly one new id.

    A parent named by an old id becomes the new id of the newest earlier row that had that old id
    (same name first); a parent that matches no row is kept as it was."""
    new_id = {pid: pack_content_id(json.loads(n), json.loads(c)) for pid, _, _, _, n, c in rows}
    out: dict[int, tuple[str, str | None]] = {}
    for pid, name, _, parent, _, _ in rows:
        earlier = [r for r in rows if r[0] < pid and r[2] == parent]
        earlier.sort(key=lambda r: (r[1] == name, r[0]))
        out[pid] = (new_id[pid], new_id[earlier[-1][0]] if earlier else parent)
    candidates: dict[str, set[str]] = {legacy_pack_hash([], []): {pack_content_id([], [])}}
    for pid, _, old, _, _, _ in rows:
        candidates.setdefault(old, set()).add(new_id[pid])
    unambiguous = {old: next(iter(news)) for old, news in candidates.items() if len(news) == 1}
    return out, unambiguous
