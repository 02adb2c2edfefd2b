"""Every label read and write. Labels: append-only judgements by named reviewers, with undo by appending and a full history.

A label targets a finding id (stable across re-ingest and re-extraction) or a missed negative: words of an
answer the detector did not flag, keyed by a stable id of (run, span, list). Labels never reference rows
by rowid, so they survive everything but an explicit delete, which nothing here offers.
"""

from __future__ import annotations

import hashlib
import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from store.db.connection import write_lock
from store.db.writer import now_iso
from store.errors import NotFound, StoreError
from store.label_rows import validated
from store.rows import fetch_rows, loads_json
from store.vocab import (
    CLEARED,
    DISAGREEMENT,
    FINDING_VERDICTS,
    MISSED,
    MISSED_LISTS,
    MISSED_NEGATIVE,
    NEGATIVE_CLAIM,
    disagreement_sql,
    verdicts_for,
)

LABEL_FIELDS = (
    "uid",
    "target_id",
    "target_kind",
    "verdict",
    "note",
    "reviewer",
    "created_at",
    "undoes",
    "run_key",
    "run_id",
    "field",
    "span_start",
    "span_end",
    "span_text",
    "list",
)

#: Label rows read per page by the replay streams.
LABEL_PAGE = 1_000
#: (finding id, run key, span start, span end, reviewer, verdict): one reviewer's current tp/fp/unsure label.
FindingLabelRow = tuple[str, str, int, int, str, str]
#: (missed id, run key, span start, span end, list, span text, reviewer): one current missed-negative label.
MissedLabelRow = tuple[str, str, int, int, str, str, str]


class LabelError(StoreError):
    """A label that cannot be written as asked (unknown verdict, wrong kind of target...)."""


@dataclass(frozen=True)
class Missed:
    """Words of an answer that a reviewer says carry a negative the detector missed."""

    run_key: str
    start: int
    end: int
    list_name: str


def missed_id(run_key: str, start: int, end: int, list_name: str) -> str:
    digest = hashlib.sha256(f"{run_key}\x1f{start}\x1f{end}\x1f{list_name}".encode()).hexdigest()
    return f"m-{digest[:20]}"


def _insert(db: Database, row: dict[str, Any]) -> dict[str, Any]:
    row = {k: row.get(k) for k in LABEL_FIELDS}
    cols = ", ".join(LABEL_FIELDS)
    db.execute(
        f"INSERT INTO labels ({cols}) VALUES ({', '.join('?' for _ in LABEL_FIELDS)})",
        [row[k] for k in LABEL_FIELDS],
    )
    return row


def label_finding(
    db: Database, finding_id: str, verdict: str, reviewer: str, note: str | None = None
) -> dict[str, Any]:
    """Append a verdict on a finding. Withheld answers take justified/wrong; other findings tp/fp/unsure."""
    row = db.execute("SELECT kind, run_key, run_id FROM findings WHERE id = ?", [finding_id]).fetchone()
    if row is None:
        raise NotFound(f"no finding {finding_id!r} in this database")
    kind, run_key, run_id = row
    allowed = verdicts_for(kind)
    if verdict not in allowed:
        raise LabelError(
            f"verdict {verdict!r} does not apply to a {kind} finding (use one of {', '.join(allowed)})"
        )
    with write_lock(db, scope=f"labels:{reviewer}"):
        return _insert(
            db,
            {
                "uid": uuid.uuid4().hex,
                "target_id": finding_id,
                "target_kind": kind,
                "verdict": verdict,
                "note": note,
                "reviewer": reviewer,
                "created_at": now_iso(),
                "run_key": run_key,
                "run_id": run_id,
            },
        )


def label_missed(
    db: Database, run_key: str, start: int, end: int, list_name: str, reviewer: str, note: str | None = None
) -> dict[str, Any]:
    """Append a missed-negative label on answer[start:end] (Python indices) of a run."""
    if list_name not in MISSED_LISTS:
        raise LabelError(f"list must be one of {', '.join(MISSED_LISTS)}, not {list_name!r}")
    row = db.execute("SELECT run_id, answer FROM runs WHERE key = ?", [run_key]).fetchone()
    if row is None:
        raise NotFound(f"no run {run_key!r} in this database")
    run_id, answer = row
    if answer is None or not (0 <= start < end <= len(answer)):
        raise LabelError(f"span {start}..{end} does not fit the answer of {run_id}")
    with write_lock(db, scope=f"labels:{reviewer}"):
        return _insert(
            db,
            {
                "uid": uuid.uuid4().hex,
                "target_id": missed_id(run_key, start, end, list_name),
                "target_kind": MISSED_NEGATIVE,
                "verdict": MISSED,
                "note": note,
                "reviewer": reviewer,
                "created_at": now_iso(),
                "run_key": run_key,
                "run_id": run_id,
                "field": "answer",
                "span_start": start,
                "span_end": end,
                "span_text": answer[start:end],
                "list": list_name,
            },
        )


def find_text(db: Database, run_key: str, text: str) -> tuple[int, int]:
    """The first place `text` occurs in a run's answer (for `reviewer label --missed --text`)."""
    row = db.execute("SELECT answer FROM runs WHERE key = ?", [run_key]).fetchone()
    if row is None:
        raise NotFound(f"no run {run_key!r} in this database")
    answer = row[0] or ""
    at = answer.find(text)
    if at < 0:
        at = answer.casefold().find(text.casefold())
    if at < 0 or not text:
        raise LabelError(f"the answer of {run_key} does not contain {text!r}")
    return at, at + len(text)


def undo_last(db: Database, reviewer: str, target_id: str | None = None) -> dict[str, Any] | None:
    """Undo the reviewer's latest effective label (on `target_id`, or anywhere) by appending a row.

    The appended row restores what the reviewer had before (or CLEARED, which removes their label). Returns it, or None.
    """
    with write_lock(db, scope=f"labels:{reviewer}"):
        where, params = "reviewer = ? AND verdict != ? AND undoes IS NULL", [reviewer, CLEARED]
        if target_id:
            where += " AND target_id = ?"
            params.append(target_id)
        undone_uids = {
            r[0]
            for r in db.execute(
                "SELECT undoes FROM labels WHERE reviewer = ? AND undoes IS NOT NULL", [reviewer]
            )
        }
        candidates = db.execute(f"SELECT * FROM labels WHERE {where} ORDER BY id DESC", params)
        names = [d[0] for d in candidates.description]
        last = None
        for values in candidates:
            row = dict(zip(names, values, strict=True))
            if row["uid"] not in undone_uids:
                last = row
                break
        if last is None:
            return None
        previous = db.execute(
            "SELECT verdict, note FROM labels WHERE target_id = ? AND reviewer = ? AND id < ? ORDER BY id DESC LIMIT 1",
            [last["target_id"], reviewer, last["id"]],
        ).fetchone()
        restored = dict(last)
        restored.update(
            uid=uuid.uuid4().hex,
            verdict=previous[0] if previous else CLEARED,
            note=previous[1] if previous else None,
            created_at=now_iso(),
            undoes=last["uid"],
        )
        return _insert(db, restored)


def history(db: Database, target_id: str) -> list[dict[str, Any]]:
    cur = db.execute("SELECT * FROM labels WHERE target_id = ? ORDER BY id", [target_id])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur]


def current(db: Database, target_id: str) -> dict[str, str]:
    """reviewer -> current verdict on a target."""
    return dict(
        db.execute("SELECT reviewer, verdict FROM current_labels WHERE target_id = ?", [target_id]).fetchall()
    )


def export_labels(db: Database) -> list[dict[str, Any]]:
    """Every label row with its finding and run, oldest first (the history, not only current labels)."""
    cur = db.execute(
        """SELECT l.*, f.kind AS finding_kind, f.message AS finding_message, f.span_text AS finding_span_text,
                  f.codes AS finding_codes, f.pack_version AS finding_pack_version,
                  r.delivered AS delivered, r.delivered_as AS delivered_as
           FROM labels l LEFT JOIN findings f ON f.id = l.target_id LEFT JOIN runs r ON r.key = l.run_key
           ORDER BY l.id"""
    )
    names = [d[0] for d in cur.description]
    out = []
    for values in cur:
        row = dict(zip(names, values, strict=True))
        row.pop("id")
        row["delivered"] = None if row["delivered"] is None else bool(row["delivered"])
        codes = loads_json(row["finding_codes"])  # a JSON array, as the finding's own `codes` is
        row["finding_codes"] = codes if isinstance(codes, list) or codes is None else [str(codes)]
        out.append(row)
    return out


def import_labels(db: Database, rows: list[Any]) -> tuple[int, int]:
    """Load exported labels; rows already present (same uid) are skipped. Returns (added, skipped)."""
    report = import_label_rows(db, rows)
    return report.added, report.skipped


@dataclass(frozen=True)
class LabelImport:
    """What an import did. `unmatched`: rows kept but set apart, their finding (or the words a missed
    negative names) not in this database: they count nowhere until that recording is ingested."""

    added: int
    skipped: int
    unmatched: int


def import_label_rows(db: Database, rows: list[Any]) -> LabelImport:
    """Validate every row (LabelImportError names the row and the field; nothing is written then), then
    append the new ones in one transaction."""
    checked = validated(rows)
    added = skipped = 0
    with write_lock(db):
        for row in checked:
            if db.execute("SELECT 1 FROM labels WHERE uid = ?", [row.uid]).fetchone():
                skipped += 1
                continue
            _insert(db, {k: getattr(row, k) for k in LABEL_FIELDS})
            added += 1
    uids = [r.uid for r in checked]
    unmatched = sum(unmatched_count(db, uids[i : i + 500]) for i in range(0, len(uids), 500))
    return LabelImport(added, skipped, unmatched)


#: A label row (alias `{a}`) whose target is in this database: a finding that exists, or a missed negative
#: whose run exists and whose words are still those of its answer. Rows failing it count nowhere.
MATCHED_LABEL = (
    "(({a}.target_kind != '"
    + MISSED_NEGATIVE
    + "' AND EXISTS (SELECT 1 FROM findings fm WHERE fm.id = {a}.target_id))"
    " OR ({a}.target_kind = '"
    + MISSED_NEGATIVE
    + "' AND EXISTS (SELECT 1 FROM runs rm WHERE rm.key = {a}.run_key"
    " AND substr(rm.answer, {a}.span_start + 1, {a}.span_end - {a}.span_start) = {a}.span_text)))"
)


def unmatched_count(db: Database, uids: list[str]) -> int:
    """How many of these label rows have no target in this database."""
    if not uids:
        return 0
    marks = ", ".join("?" for _ in uids)
    row = db.execute(
        f"SELECT count(*) FROM labels l WHERE l.uid IN ({marks}) AND NOT {MATCHED_LABEL.format(a='l')}", uids
    ).fetchone()
    return int(row[0])


def label_states(db: Database) -> list[tuple[str, str, dict[str, str]]]:
    """(finding id, kind, {reviewer: current verdict}) for every finding and every missed-negative target,
    by kind then id: `reviewer stats --json` lists disagreements in this order, and without a stated one
    PostgreSQL returned its heap order where SQLite happened to walk the `findings_kind` index (the same
    covering index gives this order with no sort)."""
    current_by_target: dict[str, dict[str, str]] = {}
    kinds: dict[str, str] = {}
    for target, kind, reviewer, verdict in db.execute(
        "SELECT target_id, target_kind, reviewer, verdict FROM current_labels"
    ):
        current_by_target.setdefault(target, {})[reviewer] = verdict
        kinds[target] = kind
    out = [
        (fid, kind, current_by_target.pop(fid, {}))
        for fid, kind in db.execute("SELECT id, kind FROM findings ORDER BY kind, id")
    ]
    matched_missed = {
        r[0]
        for r in db.execute(
            f"SELECT DISTINCT c.target_id FROM current_labels c WHERE c.target_kind = ? AND {MATCHED_LABEL.format(a='c')}",
            [MISSED_NEGATIVE],
        )
    }
    # labels left over name no finding here: only missed negatives on words still in their run count
    out.extend((t, kinds[t], by) for t, by in sorted(current_by_target.items()) if t in matched_missed)
    return out


def current_by_target(db: Database, ids: list[str]) -> dict[str, dict[str, str]]:
    """target id -> {reviewer: current verdict}, for the given targets (one query)."""
    current: dict[str, dict[str, str]] = {}
    if ids:
        marks = ",".join("?" for _ in ids)
        for target, reviewer, verdict in db.execute(
            f"SELECT target_id, reviewer, verdict FROM current_labels WHERE target_id IN ({marks})", ids
        ):
            current.setdefault(target, {})[reviewer] = verdict
    return current


def state_condition(state: str, reviewer: str | None) -> tuple[str, list[Any]] | None:
    """An SQL condition on a finding (alias `f`) for a queue label state, with its parameters (None: any)."""
    if state == "unlabelled":
        return "NOT EXISTS (SELECT 1 FROM current_labels l WHERE l.target_id = f.id)", []
    if state == "labelled":
        return "EXISTS (SELECT 1 FROM current_labels l WHERE l.target_id = f.id)", []
    if state == "mine":
        return "EXISTS (SELECT 1 FROM current_labels l WHERE l.target_id = f.id AND l.reviewer = ?)", [
            reviewer or ""
        ]
    if state == "not-mine":
        return (
            "NOT EXISTS (SELECT 1 FROM current_labels l WHERE l.target_id = f.id AND l.reviewer = ?)",
            [reviewer or ""],
        )
    if state == DISAGREEMENT:
        return f"(SELECT {disagreement_sql('l.verdict')} FROM current_labels l WHERE l.target_id = f.id)", []
    return None


# -- reads of current labels for the app and the queue -------------------------------------------------------


def current_verdicts(db: Database, target_id: str) -> dict[str, dict[str, Any]]:
    """reviewer -> their current label row (verdict, note, created_at) on a target."""
    cur = db.execute(
        "SELECT reviewer, verdict, note, created_at FROM current_labels WHERE target_id = ? ORDER BY reviewer",
        [target_id],
    )
    return {r[0]: {"verdict": r[1], "note": r[2], "created_at": r[3]} for r in cur}


def run_verdicts(db: Database, run_key: str) -> dict[str, dict[str, str]]:
    """finding id -> {reviewer: current verdict} for the findings of one run (for marks on its timeline)."""
    out: dict[str, dict[str, str]] = {}
    for target, reviewer, verdict in db.execute(
        "SELECT l.target_id, l.reviewer, l.verdict FROM current_labels l WHERE l.run_key = ? "
        "AND l.target_kind != ? ORDER BY l.reviewer",
        [run_key, MISSED_NEGATIVE],
    ):
        out.setdefault(target, {})[reviewer] = verdict
    return out


def missed_for_run(db: Database, run_key: str) -> list[dict[str, Any]]:
    """Current missed-negative labels on a run's answer (any reviewer), in answer order."""
    return fetch_rows(
        db,
        "SELECT target_id, reviewer, span_start, span_end, span_text, list, note, created_at FROM current_labels"
        " WHERE run_key = ? AND target_kind = ? ORDER BY span_start, reviewer",
        [run_key, MISSED_NEGATIVE],
    )


def unlabelled_counts(db: Database, keys: list[str]) -> dict[str, int | None]:
    """Findings per run with no current label (same rule as the queue's "unlabelled" state).

    Before the labels migration exists every finding is unlabelled (the run's `findings` count);
    `None` means "cannot tell" (a labels schema this build does not understand).
    """
    if not keys:
        return {}
    keys = [str(k) for k in keys]
    marks = ", ".join("?" for _ in keys)
    has_view = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'view' AND name = 'current_labels'"
    ).fetchone()
    if not has_view:
        counts = dict(db.execute(f"SELECT key, findings FROM runs WHERE key IN ({marks})", keys).fetchall())
        return {k: (None if counts.get(k) is None else int(counts[k])) for k in keys}
    try:
        counts = dict(
            db.execute(
                # a page's few findings each look up their own labels (a count, not NOT EXISTS): PostgreSQL,
                # estimating the current labels at a handful, turned NOT EXISTS into a join testing every
                # finding against all of them (40-100 ms for the most-findings page's 700 findings at 2,200
                # labels, growing with the labels; 2 ms so). The queue keeps NOT EXISTS: over many findings
                # its hashed anti-join is the cheaper read (the unlabelled queue by kind 23 ms, 153 ms counted)
                f"SELECT f.run_key, count(*) FROM findings f WHERE f.run_key IN ({marks}) "
                "AND (SELECT count(*) FROM current_labels l WHERE l.target_id = f.id) = 0 GROUP BY f.run_key",
                keys,
            ).fetchall()
        )
    except sqlite3.Error:
        return {k: None for k in keys}
    return {k: int(counts.get(k, 0)) for k in keys}


# -- streams for replay and suggestions ---------------------------------------------------------------------


def iter_finding_labels(
    db: Database, *, reviewer: str | None = None, page: int = LABEL_PAGE
) -> Iterator[FindingLabelRow]:
    """Current tp/fp/unsure labels on placed negative-claim findings of answers, one row per reviewer."""
    who = " AND c.reviewer = ?" if reviewer else ""
    after: tuple[str, str] = ("", "")
    while True:
        rows = db.execute(
            "SELECT c.target_id, f.run_key, f.span_start, f.span_end, c.reviewer, c.verdict "
            "FROM current_labels c JOIN findings f ON f.id = c.target_id "
            f"WHERE (c.target_id, c.reviewer) > (?, ?) AND c.verdict IN ({', '.join('?' for _ in FINDING_VERDICTS)}) "
            "AND f.kind = ? AND f.span_start IS NOT NULL AND f.span_end IS NOT NULL "
            f"AND coalesce(f.field, 'answer') = 'answer'{who} ORDER BY c.target_id, c.reviewer LIMIT ?",
            [*after, *FINDING_VERDICTS, NEGATIVE_CLAIM, *([reviewer] if reviewer else []), page],
        ).fetchall()
        for target, run_key, start, end, who_, verdict in rows:
            yield target, run_key, int(start), int(end), who_, verdict
        if len(rows) < page:
            return
        after = (rows[-1][0], rows[-1][4])


def iter_missed_labels(
    db: Database, *, reviewer: str | None = None, page: int = LABEL_PAGE
) -> Iterator[MissedLabelRow]:
    """Current missed-negative labels, one row per reviewer (the same words share one missed id)."""
    who = " AND reviewer = ?" if reviewer else ""
    after: tuple[str, str] = ("", "")
    while True:
        rows = db.execute(
            "SELECT target_id, run_key, span_start, span_end, list, span_text, reviewer FROM current_labels c "
            "WHERE (target_id, reviewer) > (?, ?) AND verdict = ? AND span_start IS NOT NULL "
            f"AND span_end IS NOT NULL AND {MATCHED_LABEL.format(a='c')}{who} ORDER BY target_id, reviewer LIMIT ?",
            [*after, MISSED, *([reviewer] if reviewer else []), page],
        ).fetchall()
        for target, run_key, start, end, list_name, text, who_ in rows:
            yield target, run_key, int(start), int(end), list_name or "none", text or "", who_
        if len(rows) < page:
            return
        after = (rows[-1][0], rows[-1][6])
