"""Phrase packs as versioned data, the replays tried against the labels, suggestion decisions, and the
answers a replay reads with their flagged spans (the label streams it reads are in `store.labels`).

Persistence only: validation, hashing and matching belong to `reviewer.review` (this package never imports
it), so callers hand in a pack that already passed the framework's limits and its content hash.

Every stream pages by key (`WHERE key > ? ORDER BY key LIMIT n`), never OFFSET, and never holds a cursor
open across a `yield`: a consumer may take its time, or run other queries on the same connection.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from store.db.connection import write_lock
from store.db.writer import now_iso
from store.errors import NotFound, StoreError
from store.vocab import FINDING_VERDICTS, NEGATIVE_CLAIM, is_withheld

#: Answers read per page by `iter_answers` (about 2 MB of text at typical answer sizes).
ANSWER_PAGE = 2_000
DECISIONS = ("accepted", "rejected")
PACK_LISTS = ("none", "complete")
NAME_MAX = 64

#: (run key, answer text, flagged spans (start, end, pack version)) with Python str indices into the answer.
AnswerRow = tuple[str, str, list[tuple[int, int, str | None]]]
#: (run key, run id, answer text, outcome, delivered, dispatched calls recorded in the run, flagged spans)
ReplayAnswerRow = tuple[str, str | None, str, str | None, bool, int, list[tuple[int, int, str | None]]]


class PackNameError(StoreError):
    """A pack name that cannot be stored (empty, too long, contains '@' or control characters)."""


@dataclass(frozen=True, slots=True)
class StoredPack:
    """One saved version of a named pack. `version` counts from 1 within its name."""

    id: int
    name: str
    version: int
    content_hash: str
    parent_hash: str | None
    none: tuple[str, ...]
    complete: tuple[str, ...]
    created_at: str
    created_by: str | None
    note: str | None

    @property
    def ref(self) -> str:
        """`name@version`, a reference `find_pack` resolves back to this row."""
        return f"{self.name}@{self.version}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "version": self.version,
            "ref": self.ref,
            "content_hash": self.content_hash,
            "parent_hash": self.parent_hash,
            "none": list(self.none),
            "complete": list(self.complete),
            "created_at": self.created_at,
            "created_by": self.created_by,
            "note": self.note,
        }


_PACK_COLS = (
    "id, name, content_hash, parent_hash, none_phrases, complete_phrases, created_at, created_by, note"
)


def check_name(name: str) -> str:
    """The name as stored, or PackNameError naming the rule it breaks."""
    clean = name.strip()
    if not clean:
        raise PackNameError("a pack name may not be empty")
    if len(clean) > NAME_MAX:
        raise PackNameError(f"a pack name is at most {NAME_MAX} characters ({len(clean)} given)")
    if "@" in clean:
        raise PackNameError("a pack name may not contain '@' (it separates a name from a version)")
    if any(not ch.isprintable() for ch in clean):
        raise PackNameError("a pack name may not contain control or invisible characters")
    return clean


def _version(db: Database, name: str, pack_id: int) -> int:
    row = db.execute(
        "SELECT count(*) FROM phrase_packs WHERE name = ? AND id <= ?", [name, pack_id]
    ).fetchone()
    return int(row[0])


def _pack(db: Database, row: Sequence[Any] | None, version: int | None = None) -> StoredPack | None:
    if row is None:
        return None
    pid, name, chash, parent, none, complete, created_at, created_by, note = row
    return StoredPack(
        id=int(pid),
        name=name,
        version=version if version is not None else _version(db, name, int(pid)),
        content_hash=chash,
        parent_hash=parent,
        none=tuple(json.loads(none)),
        complete=tuple(json.loads(complete)),
        created_at=created_at,
        created_by=created_by,
        note=note,
    )


def save_pack(
    db: Database,
    name: str,
    *,
    content_hash: str,
    none: Iterable[str],
    complete: Iterable[str],
    parent_hash: str | None = None,
    created_by: str | None = None,
    note: str | None = None,
) -> StoredPack:
    """Append a new version of `name` (the caller validated the phrases and computed the hash)."""
    clean = check_name(name)
    with write_lock(db):
        cur = db.execute(
            "INSERT INTO phrase_packs (name, content_hash, parent_hash, none_phrases, complete_phrases, "
            "created_at, created_by, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                clean,
                content_hash,
                parent_hash,
                json.dumps(list(none), ensure_ascii=False),
                json.dumps(list(complete), ensure_ascii=False),
                now_iso(),
                created_by,
                note,
            ],
        )
        pack_id = int(cur.lastrowid or 0)
    found = pack_by_id(db, pack_id)
    assert found is not None
    return found


def pack_by_id(db: Database, pack_id: int) -> StoredPack | None:
    return _pack(db, db.execute(f"SELECT {_PACK_COLS} FROM phrase_packs WHERE id = ?", [pack_id]).fetchone())


def latest_pack(db: Database, name: str) -> StoredPack | None:
    """The newest version of `name` (None when no such pack)."""
    row = db.execute(
        f"SELECT {_PACK_COLS} FROM phrase_packs WHERE name = ? ORDER BY id DESC LIMIT 1", [name]
    ).fetchone()
    return _pack(db, row)


def pack_versions(db: Database, name: str) -> list[StoredPack]:
    """Every version of `name`, oldest first."""
    rows = db.execute(f"SELECT {_PACK_COLS} FROM phrase_packs WHERE name = ? ORDER BY id", [name]).fetchall()
    return [p for n, row in enumerate(rows, start=1) if (p := _pack(db, row, n)) is not None]


def pack_by_hash(db: Database, content_hash: str) -> StoredPack | None:
    """The newest saved version whose content hash is `content_hash` (or starts with it)."""
    row = db.execute(
        f"SELECT {_PACK_COLS} FROM phrase_packs WHERE content_hash >= ? AND content_hash < ? "
        "ORDER BY content_hash = ? DESC, id DESC LIMIT 1",
        [content_hash, content_hash + "g", content_hash],
    ).fetchone()
    return _pack(db, row)


def previous_version(db: Database, pack: StoredPack) -> StoredPack | None:
    """The version saved under the same name just before `pack`."""
    row = db.execute(
        f"SELECT {_PACK_COLS} FROM phrase_packs WHERE name = ? AND id < ? ORDER BY id DESC LIMIT 1",
        [pack.name, pack.id],
    ).fetchone()
    return _pack(db, row)


#: A content-id prefix shorter than this names no pack (too many would share it as packs accumulate).
MIN_PREFIX = 6


def find_pack(db: Database, ref: str) -> StoredPack:
    """Resolve `NAME` (latest), `NAME@N` (Nth version), `NAME@HASH-PREFIX`, or a bare hash prefix.

    A prefix that is too short or that several different packs share is refused with the reason and the
    candidates, never taken for "no such pack" nor resolved to one of them."""
    ref = ref.strip()
    name, _, at = ref.partition("@")
    if at:
        if at.isdigit():
            versions = pack_versions(db, name)
            n = int(at)
            if 1 <= n <= len(versions):
                return versions[n - 1]
            raise NotFound(f"pack {name!r} has {len(versions)} version(s); there is no version {n}")
        matching = [p for p in pack_versions(db, name) if p.content_hash.startswith(at.lower())]
        if not matching:
            raise NotFound(f"no version of pack {name!r} has a hash starting {at!r}")
        _refuse_unclear(at, matching, f"versions of pack {name!r}", min_len=1)
        return matching[-1]
    found = latest_pack(db, name)
    if found is not None:
        return found
    if re.fullmatch(r"[0-9a-f]{1,64}", ref.lower()):
        matching = _packs_by_prefix(db, ref.lower())
        if not matching:
            short = (
                f" (and {ref!r} is too short for one: give at least {MIN_PREFIX})"
                if len(ref) < MIN_PREFIX
                else ""
            )
            raise NotFound(
                f"no phrase pack is named {ref!r} and no content id starts with it{short}; see `reviewer pack list`"
            )
        _refuse_unclear(ref, matching, "packs")
        return matching[0]
    raise NotFound(f"no phrase pack {ref!r} (see `reviewer pack list`)")


def _packs_by_prefix(db: Database, prefix: str, cap: int = 10) -> list[StoredPack]:
    """The newest version of each different content id starting with `prefix` (at most `cap`)."""
    rows = db.execute(
        f"SELECT {_PACK_COLS} FROM phrase_packs WHERE id IN (SELECT max(id) FROM phrase_packs "
        "WHERE content_hash >= ? AND content_hash < ? GROUP BY content_hash) ORDER BY id DESC LIMIT ?",
        [prefix, prefix + "g", cap],
    ).fetchall()
    return [p for row in rows if (p := _pack(db, row)) is not None]


def _refuse_unclear(prefix: str, matching: list[StoredPack], what: str, *, min_len: int = MIN_PREFIX) -> None:
    """NotFound saying why `prefix` names no one pack: too short, or shared by several (listed)."""
    different = {p.content_hash for p in matching}
    listed = ", ".join(f"{p.ref} ({p.content_hash[:12]})" for p in matching[:5])
    more = f" and {len(matching) - 5} more" if len(matching) > 5 else ""
    if len(prefix) < min_len:
        raise NotFound(
            f"{prefix!r} is too short for a content id: give at least {MIN_PREFIX} characters "
            f"({len(matching)} of the {what} start with it: {listed}{more})"
        )
    if len(different) > 1:
        raise NotFound(
            f"{prefix!r} is ambiguous: {len(different)} {what} have content ids starting with it: "
            f"{listed}{more}; give more characters"
        )


def list_packs(db: Database) -> list[dict[str, Any]]:
    """One row per pack name: its latest version, how many versions, and when it last changed."""
    rows = db.execute(
        f"SELECT {_PACK_COLS}, (SELECT count(*) FROM phrase_packs v WHERE v.name = p.name) "
        "FROM phrase_packs p WHERE id = (SELECT max(id) FROM phrase_packs m WHERE m.name = p.name) "
        "ORDER BY name"
    ).fetchall()
    out = []
    for row in rows:
        pack = _pack(db, row[:-1], int(row[-1]))
        assert pack is not None
        out.append(
            {
                "name": pack.name,
                "versions": pack.version,
                "ref": pack.ref,
                "content_hash": pack.content_hash,
                "phrases": len(pack.none) + len(pack.complete),
                "updated_at": pack.created_at,
                "updated_by": pack.created_by,
            }
        )
    return out


# -- trials: every replay, against the labels it was measured on ------------------------------------------------


def record_trial(
    db: Database,
    candidate_hash: str,
    baseline_hash: str | None,
    labels_fingerprint: str,
    figures: dict[str, Any],
) -> dict[str, int]:
    """Remember one replay. Returns the trial id and the counts `trial_counts` gives afterwards."""
    with write_lock(db):
        cur = db.execute(
            "INSERT INTO pack_trials (candidate_hash, baseline_hash, labels_fingerprint, created_at, figures) "
            "VALUES (?, ?, ?, ?, ?)",
            [
                candidate_hash,
                baseline_hash,
                labels_fingerprint,
                now_iso(),
                json.dumps(figures, ensure_ascii=False),
            ],
        )
        trial_id = int(cur.lastrowid or 0)
    return {"id": trial_id, **trial_counts(db, labels_fingerprint, candidate_hash)}


def trial_counts(db: Database, labels_fingerprint: str, candidate_hash: str | None = None) -> dict[str, int]:
    """`trials` (replays), `variants` (distinct candidates) against these labels, and `variant`: the
    1-based order in which `candidate_hash` was first tried (0 when never)."""
    rows = db.execute(
        "SELECT candidate_hash, count(*) FROM pack_trials WHERE labels_fingerprint = ? "
        "GROUP BY candidate_hash ORDER BY min(id)",
        [labels_fingerprint],
    ).fetchall()
    variant = next((n for n, (h, _) in enumerate(rows, start=1) if h == candidate_hash), 0)
    return {"trials": sum(int(c) for _, c in rows), "variants": len(rows), "variant": variant}


# -- phrasePackVersion strings: what findings carry, and which stored pack each was deployed from ----------------


def version_strings(db: Database) -> list[dict[str, Any]]:
    """Every `phrasePackVersion` string stored findings carry: how many findings (and negative-claim
    findings), how many of them are labelled, how many current labels they have, and the stored pack
    it was deployed from (None when nobody recorded it), in version order."""
    rows = db.execute(
        "SELECT f.pack_version, count(*), sum(f.kind = ?), "
        "sum(EXISTS (SELECT 1 FROM current_labels c WHERE c.target_id = f.id)), "
        "(SELECT count(*) FROM current_labels c JOIN findings g ON g.id = c.target_id "
        " WHERE g.pack_version = f.pack_version) "
        "FROM findings f WHERE f.pack_version IS NOT NULL GROUP BY f.pack_version ORDER BY f.pack_version",
        [NEGATIVE_CLAIM],
    ).fetchall()
    links = {d["pack_version"]: d for d in deployments(db)}
    out = []
    for version, findings, claims, labelled, labels in rows:
        link = links.pop(version, None)
        out.append(_version_row(version, findings, claims, labelled, labels, link))
    out += [_version_row(v, 0, 0, 0, 0, link) for v, link in sorted(links.items())]
    return out


def _version_row(
    version: str, findings: Any, claims: Any, labelled: Any, labels: Any, link: dict[str, Any] | None
) -> dict[str, Any]:
    return {
        "version": version,
        "findings": int(findings or 0),
        "negative_claims": int(claims or 0),
        "labelled_findings": int(labelled or 0),
        "labels": int(labels or 0),
        "deployed_from": link,
    }


def record_deployment(
    db: Database,
    pack_version: str,
    pack: StoredPack,
    *,
    replaces: str | None = None,
    created_by: str | None = None,
    note: str | None = None,
) -> dict[str, Any]:
    """Record that `pack_version` was deployed from `pack` (a newer record for the same string wins)."""
    version = pack_version.strip()
    if not version or any(not ch.isprintable() for ch in version):
        raise StoreError("a phrasePackVersion string may not be empty or hold control characters")
    with write_lock(db):
        cur = db.execute(
            "INSERT INTO pack_deployments (pack_version, pack_id, replaces, created_at, created_by, note) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [version, pack.id, replaces, now_iso(), created_by, note],
        )
        row_id = int(cur.lastrowid or 0)
    return next(d for d in deployments(db) if d["id"] == row_id)


def deployments(db: Database) -> list[dict[str, Any]]:
    """The current link of every version string (its latest record), oldest record first."""
    rows = db.execute(
        "SELECT d.id, d.pack_version, d.pack_id, d.replaces, d.created_at, d.created_by, d.note "
        "FROM pack_deployments d WHERE d.id = (SELECT max(id) FROM pack_deployments m "
        "WHERE m.pack_version = d.pack_version) ORDER BY d.id"
    ).fetchall()
    out = []
    for rid, version, pack_id, replaces, created_at, created_by, note in rows:
        pack = pack_by_id(db, int(pack_id))
        out.append(
            {
                "id": int(rid),
                "pack_version": version,
                "pack": pack.ref if pack else None,
                "content_hash": pack.content_hash if pack else None,
                "replaces": replaces,
                "created_at": created_at,
                "created_by": created_by,
                "note": note,
            }
        )
    return out


def version_verdicts(db: Database, pack_version: str) -> list[tuple[str, str]]:
    """(finding id, verdict) of every current tp/fp/unsure label, one per reviewer, on the
    negative-claim findings carrying `pack_version`."""
    return [
        (str(t), str(v))
        for t, v in db.execute(
            "SELECT c.target_id, c.verdict FROM current_labels c JOIN findings f ON f.id = c.target_id "
            f"WHERE f.pack_version = ? AND f.kind = ? AND c.verdict IN ({', '.join('?' for _ in FINDING_VERDICTS)}) "
            "ORDER BY c.target_id, c.reviewer",
            [pack_version, NEGATIVE_CLAIM, *FINDING_VERDICTS],
        )
    ]


def latest_trial(db: Database, candidate_hash: str) -> dict[str, Any] | None:
    """The newest replay recorded with `candidate_hash` as its candidate (None when never replayed)."""
    row = db.execute(
        "SELECT id, baseline_hash, labels_fingerprint, created_at, figures FROM pack_trials "
        "WHERE candidate_hash = ? ORDER BY id DESC LIMIT 1",
        [candidate_hash],
    ).fetchone()
    if row is None:
        return None
    tid, base, fingerprint, created_at, figures = row
    return {
        "id": int(tid),
        "baseline_hash": base,
        "labels_fingerprint": fingerprint,
        "created_at": created_at,
        "figures": json.loads(figures) if figures else {},
    }


# -- decisions on suggested phrases ------------------------------------------------------------------------------


def record_decision(
    db: Database, pack_name: str, phrase: str, list_name: str, decision: str, reviewer: str | None
) -> dict[str, Any]:
    """Append an accept/reject decision on a suggested phrase for a pack."""
    if decision not in DECISIONS:
        raise StoreError(f"decision must be one of {', '.join(DECISIONS)}, not {decision!r}")
    if list_name not in PACK_LISTS:
        raise StoreError(f"list must be one of {', '.join(PACK_LISTS)}, not {list_name!r}")
    row = {
        "pack_name": pack_name,
        "phrase": phrase,
        "list": list_name,
        "decision": decision,
        "reviewer": reviewer,
        "created_at": now_iso(),
    }
    with write_lock(db):
        cur = db.execute(
            "INSERT INTO pack_decisions (pack_name, phrase, list, decision, reviewer, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            list(row.values()),
        )
    return {"id": int(cur.lastrowid or 0), **row}


def list_decisions(db: Database, pack_name: str) -> list[dict[str, Any]]:
    """Every decision recorded for `pack_name`, oldest first."""
    cur = db.execute(
        "SELECT id, pack_name, phrase, list, decision, reviewer, created_at FROM pack_decisions "
        "WHERE pack_name = ? ORDER BY id",
        [pack_name],
    )
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur]


# -- streams for replay and suggestions ---------------------------------------------------------------------------


def count_answers(db: Database, *, only_flagged: bool = False) -> int:
    """How many runs `iter_answers` would visit (a bound for progress; flagged runs may yield fewer)."""
    extra = " AND negative_claims > 0" if only_flagged else ""
    return int(db.execute(f"SELECT count(*) FROM runs WHERE answer IS NOT NULL{extra}").fetchone()[0])


def iter_answers(db: Database, *, page: int = ANSWER_PAGE, only_flagged: bool = False) -> Iterator[AnswerRow]:
    """Every stored answer in key order, with the spans of its placed `negative-claim` findings on the
    answer itself. `only_flagged` keeps only answers with at least one such span."""
    extra = " AND negative_claims > 0" if only_flagged else ""
    after = ""
    while True:
        rows = db.execute(
            f"SELECT key, answer FROM runs WHERE key > ? AND answer IS NOT NULL{extra} ORDER BY key LIMIT ?",
            [after, page],
        ).fetchall()
        if not rows:
            return
        spans: dict[str, list[tuple[int, int, str | None]]] = {}
        for run_key, start, end, version in db.execute(
            "SELECT run_key, span_start, span_end, pack_version FROM findings "
            "WHERE run_key >= ? AND run_key <= ? AND kind = ? AND span_start IS NOT NULL "
            "AND span_end IS NOT NULL AND coalesce(field, 'answer') = 'answer' ORDER BY run_key, seq",
            [rows[0][0], rows[-1][0], NEGATIVE_CLAIM],
        ):
            spans.setdefault(run_key, []).append((int(start), int(end), version))
        for key, answer in rows:
            flagged = spans.get(key, [])
            if flagged or not only_flagged:
                yield key, answer, flagged
        if len(rows) < page:
            return
        after = rows[-1][0]


def answer_delivered(outcome: str | None, delivered: int | None = None) -> bool:
    """Whether the person received this run's answer: THE rule the replay's answer source applies. It is the
    run's stored `delivered` (decided at extraction by `store.reading.delivery`); a row extracted before that
    column existed (NULL until `reviewer reextract`) falls back to `store.vocab`'s withheld rule."""
    if delivered is not None:
        return bool(delivered)
    return not is_withheld(outcome)


def iter_replay_answers(db: Database, *, page: int = ANSWER_PAGE) -> Iterator[ReplayAnswerRow]:
    """The replay's answer source: every stored answer in key order with its run id, outcome, whether it
    was delivered (`answer_delivered`), how many tool calls the run recorded as dispatched (a run is one
    turn), and its flagged spans as in `iter_answers`. Undelivered answers are yielded too, marked, so
    the replay can count them apart."""
    after = ""
    while True:
        rows = db.execute(
            "SELECT key, run_id, answer, outcome, delivered FROM runs WHERE key > ? AND answer IS NOT NULL "
            "ORDER BY key LIMIT ?",
            [after, page],
        ).fetchall()
        if not rows:
            return
        lo, hi = rows[0][0], rows[-1][0]
        spans: dict[str, list[tuple[int, int, str | None]]] = {}
        for run_key, start, end, version in db.execute(
            "SELECT run_key, span_start, span_end, pack_version FROM findings "
            "WHERE run_key >= ? AND run_key <= ? AND kind = ? AND span_start IS NOT NULL "
            "AND span_end IS NOT NULL AND coalesce(field, 'answer') = 'answer' ORDER BY run_key, seq",
            [lo, hi, NEGATIVE_CLAIM],
        ):
            spans.setdefault(run_key, []).append((int(start), int(end), version))
        calls = dict(
            db.execute(
                "SELECT run_key, count(*) FROM tool_calls WHERE run_key >= ? AND run_key <= ? GROUP BY run_key",
                [lo, hi],
            ).fetchall()
        )
        for key, run_id, answer, outcome, delivered in rows:
            yield (
                key,
                run_id,
                answer,
                outcome,
                answer_delivered(outcome, delivered),
                int(calls.get(key, 0)),
                spans.get(key, []),
            )
        if len(rows) < page:
            return
        after = hi
