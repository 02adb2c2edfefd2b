"""The findings queue: every finding across runs, filtered by kind, code, tool, pack version and label
state, paged by keyset; plus the evidence a judge needs beside one finding."""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from store.queries import _finding_out, _rows
from store.vocab import WITHHELD_ANSWER, disagreement_sql


def _filters(
    *,
    kind: str | None = None,
    code: str | None = None,
    tool: str | None = None,
    pack_version: str | None = None,
    state: str = "any",
    reviewer: str | None = None,
    run_key: str | None = None,
) -> tuple[list[str], list[Any]]:
    where: list[str] = []
    params: list[Any] = []
    if kind:
        where.append("f.kind = ?")
        params.append(kind)
    if code:
        where.append("EXISTS (SELECT 1 FROM json_each(f.codes) WHERE json_each.value = ?)")
        params.append(code)
    if tool:
        where.append(
            "(f.tool_name = ? OR EXISTS (SELECT 1 FROM json_each(f.refs) WHERE "
            "json_extract(json_each.value, '$.toolName') = ? OR json_extract(json_each.value, '$.id') = ?))"
        )
        params.extend([tool, tool, tool])
    if pack_version:
        where.append("f.pack_version = ?")
        params.append(pack_version)
    if run_key:
        where.append("f.run_key = ?")
        params.append(run_key)
    if state == "unlabelled":
        where.append("NOT EXISTS (SELECT 1 FROM current_labels l WHERE l.target_id = f.id)")
    elif state == "labelled":
        where.append("EXISTS (SELECT 1 FROM current_labels l WHERE l.target_id = f.id)")
    elif state == "mine":
        where.append("EXISTS (SELECT 1 FROM current_labels l WHERE l.target_id = f.id AND l.reviewer = ?)")
        params.append(reviewer or "")
    elif state == "not-mine":
        where.append(
            "NOT EXISTS (SELECT 1 FROM current_labels l WHERE l.target_id = f.id AND l.reviewer = ?)"
        )
        params.append(reviewer or "")
    elif state == "disagreement":
        where.append(
            f"(SELECT {disagreement_sql('l.verdict')} FROM current_labels l WHERE l.target_id = f.id)"
        )
    return where, params


def queue_page(
    db: Database, *, after: str | None = None, limit: int = 200, **filters: Any
) -> list[dict[str, Any]]:
    """A page of the queue in finding-id order (stable, keyset on id), with each finding's current labels."""
    where, params = _filters(**filters)
    if after:
        where.append("f.id > ?")
        params.append(after)
    sql = (
        "SELECT f.*, r.run_id AS run_id_, r.agent_id, r.outcome FROM findings f JOIN runs r ON r.key = f.run_key"
        + (" WHERE " + " AND ".join(where) if where else "")
        + f" ORDER BY f.id LIMIT {int(limit)}"
    )
    rows = [_finding_out(f) for f in _rows(db, sql, params)]
    ids = [r["id"] for r in rows]
    current: dict[str, dict[str, str]] = {}
    if ids:
        marks = ",".join("?" for _ in ids)
        for target, reviewer, verdict in db.execute(
            f"SELECT target_id, reviewer, verdict FROM current_labels WHERE target_id IN ({marks})", ids
        ):
            current.setdefault(target, {})[reviewer] = verdict
    for r in rows:
        r.pop("run_id_", None)
        r["labels"] = current.get(r["id"], {})
    return rows


def queue_count(db: Database, **filters: Any) -> int:
    where, params = _filters(**filters)
    sql = "SELECT count(*) FROM findings f" + (" WHERE " + " AND ".join(where) if where else "")
    return int(db.execute(sql, params).fetchone()[0])


def next_unlabelled(
    db: Database, *, after: str | None = None, reviewer: str | None = None, **filters: Any
) -> str | None:
    """The next finding (after `after`, wrapping to the start) with no label (by anyone, or by `reviewer`)."""
    state = "not-mine" if reviewer else "unlabelled"
    for start in (after, None) if after else (None,):
        where, params = _filters(state=state, reviewer=reviewer, **filters)
        if start:
            where.append("f.id > ?")
            params.append(start)
        row = db.execute(
            "SELECT f.id FROM findings f WHERE " + " AND ".join(where) + " ORDER BY f.id LIMIT 1", params
        ).fetchone()
        if row:
            return str(row[0])
    return None


def finding_evidence(db: Database, finding_id: str) -> dict[str, Any]:
    """One finding with what a judge needs beside it.

    - `sentence`: the clause-bearing sentence of the answer around the span (start, end, text), if placeable;
    - `reads`: the tool calls the finding's refs name (or, for a run-level finding, every call of the run),
      each with what it checked, did not check and cannot cover;
    - `evicted`: for a dangling reference, the evictions that dropped the grounds it names;
    - `withheld`: for a withheld answer, the outcome, the drafted answer and the run's gaps;
    - `history`: every label row on it.
    """
    rows = _rows(db, "SELECT * FROM findings WHERE id = ?", [finding_id])
    if not rows:
        from store.errors import NotFound

        raise NotFound(f"no finding {finding_id!r} in this database")
    finding = _finding_out(rows[0])
    run = _evidence_run(db, finding["run_key"])
    calls = {c["call_id"]: c for c in run["tool_calls"]}
    coverage_by_call: dict[str | None, list[dict[str, Any]]] = {}
    for c in run["coverage"]:
        coverage_by_call.setdefault(c["call_id"], []).append(c)
    ref_calls = []
    for ref in finding["refs"] or []:
        if isinstance(ref, dict):
            cid = ref.get("toolCallId")
            if cid in calls and cid not in ref_calls:
                ref_calls.append(cid)
            name = ref.get("toolName") or ref.get("id")
            for c in run["tool_calls"]:
                if name and c["tool_name"] == name and c["call_id"] not in ref_calls and not cid:
                    ref_calls.append(c["call_id"])
    if finding["call_id"] and finding["call_id"] not in ref_calls:
        ref_calls.append(finding["call_id"])
    if not ref_calls:
        ref_calls = list(calls)
    reads = []
    for cid in ref_calls:
        c = calls[cid]
        cov = coverage_by_call.get(cid, [])
        reads.append(
            {
                "call_id": cid,
                "tool_name": c["tool_name"],
                "iteration": c["iteration"],
                "status": c["status"],
                "error": c["error"],
                "absent": c["absent"],
                "args": c["args"],
                "checked": [x for x in cov if x["list"] == "checked"],
                "not_checked": [x for x in cov if x["list"] == "not_checked"],
                "cannot_cover": [x for x in cov if x["list"] == "cannot_cover"],
            }
        )
    out: dict[str, Any] = {"finding": finding, "run": _run_summary(run), "reads": reads}
    answer = run.get("answer")
    if finding["span"] and isinstance(answer, str):
        out["sentence"] = _sentence(answer, finding["span"]["start"], finding["span"]["end"])
    if finding["kind"] == "dangling-reference":
        grounds = {r.get("id") for r in (finding["refs"] or [])[1:] if isinstance(r, dict)}
        out["evicted"] = [
            dict(e, calls=[calls[c] for c in e["call_ids"] if c in calls])
            for e in run["evictions"]
            if grounds & set(e["dropped_tools"] or [])
        ] or run["evictions"]
        out["offered_tool"] = finding["tool_name"]
    if finding["kind"] == WITHHELD_ANSWER:
        out["withheld"] = {
            "outcome": run["outcome"],
            "channel": run["outcome_channel"],
            "detail": run["outcome_detail"],
            "draft": answer,
            "gaps": [c for c in run["coverage"] if c["list"] != "checked"],
        }
    out["history"] = _rows(db, "SELECT * FROM labels WHERE target_id = ? ORDER BY id", [finding_id])
    return out


#: Arguments shown beside a read are cut to this many characters (a read's result is not needed here).
ARGS_PREVIEW = 2_000


def _evidence_run(db: Database, run_key: str) -> dict[str, Any]:
    """What the evidence beside a finding needs of its run, light: no tool results, envelopes or payloads,
    so a run with thousands of findings or megabyte results costs what a small one does."""
    [run] = _rows(
        db,
        "SELECT key AS run_key, run_id, agent_id, outcome, outcome_channel, outcome_detail, prompt, answer, "
        "started_at FROM runs WHERE key = ?",
        [run_key],
    )
    calls = _rows(
        db,
        "SELECT call_id, tool_name, iteration, status, error, absent, substr(args, 1, ?) AS args "
        "FROM tool_calls WHERE run_key = ? ORDER BY seq",
        [ARGS_PREVIEW, run_key],
    )
    for c in calls:
        c["error"], c["absent"] = bool(c["error"]), bool(c["absent"])
    run["tool_calls"] = calls
    run["coverage"] = _rows(
        db,
        "SELECT call_id, tool_name, list, what, why, origin, looked_for FROM coverage WHERE run_key = ? "
        "ORDER BY rowid",
        [run_key],
    )
    run["evictions"] = [
        {k: v for k, v in e.items() if k not in ("run_key", "record")}
        for e in _rows(db, "SELECT * FROM evictions WHERE run_key = ? ORDER BY ordinal", [run_key])
    ]
    return run


def _run_summary(run: dict[str, Any]) -> dict[str, Any]:
    keys = ("run_key", "run_id", "agent_id", "outcome", "outcome_channel", "prompt", "answer", "started_at")
    return {k: run.get(k) for k in keys}


def _sentence(text: str, start: int, end: int) -> dict[str, Any]:
    """The sentence around [start, end): from the previous sentence end to the next one, bounded."""
    left = max(text.rfind(p, 0, start) for p in (". ", "! ", "? ", "\n"))
    s = 0 if left < 0 else left + 2 if text[left] != "\n" else left + 1
    rights = [i for i in (text.find(p, end) for p in (". ", "! ", "? ", "\n")) if i >= 0]
    e = min(rights) + 1 if rights else len(text)
    s = max(s, start - 400)
    e = min(e, end + 400)
    return {"start": s, "end": e, "text": text[s:e], "span_start": start - s, "span_end": end - s}


def queue_page_at(db: Database, *, offset: int, limit: int = 200, **filters: Any) -> list[dict[str, Any]]:
    """A page of the queue starting at row `offset` (for jumps; sequential paging uses `queue_page(after=)`)."""
    if offset <= 0:
        return queue_page(db, limit=limit, **filters)
    where, params = _filters(**filters)
    row = db.execute(
        "SELECT f.id FROM findings f"
        + (" WHERE " + " AND ".join(where) if where else "")
        + " ORDER BY f.id LIMIT 1 OFFSET ?",
        [*params, int(offset) - 1],
    ).fetchone()
    if row is None:
        return []
    return queue_page(db, after=str(row[0]), limit=limit, **filters)


def queue_position(db: Database, finding_id: str, **filters: Any) -> int | None:
    """The 0-based row of `finding_id` in the filtered queue, or None when the filters leave it out."""
    where, params = _filters(**filters)
    present = db.execute(
        "SELECT 1 FROM findings f WHERE " + " AND ".join([*where, "f.id = ?"]), [*params, finding_id]
    ).fetchone()
    if present is None:
        return None
    return int(
        db.execute(
            "SELECT count(*) FROM findings f WHERE " + " AND ".join([*where, "f.id < ?"]),
            [*params, finding_id],
        ).fetchone()[0]
    )


def queue_progress(db: Database, *, reviewer: str | None = None, **filters: Any) -> dict[str, int]:
    """How far labelling has come over the findings matching `filters` (the label-state filter is ignored):
    `total`, `labelled` (by anyone), `mine` (by `reviewer`) and `disagreements` (reviewers' current verdicts
    differ). Driven from the labels, so it stays cheap when few of many findings are labelled."""
    filters = {k: v for k, v in filters.items() if k not in ("state",)}
    total = queue_count(db, **filters)
    where, params = _filters(**filters)
    row = db.execute(
        "SELECT count(*), coalesce(sum(mine), 0), coalesce(sum(disagree), 0) FROM ("
        f" SELECT l.target_id, max(l.reviewer = ?) AS mine, {disagreement_sql('l.verdict')} AS disagree"
        " FROM current_labels l JOIN findings f ON f.id = l.target_id"
        + (" WHERE " + " AND ".join(where) if where else "")
        + " GROUP BY l.target_id)",
        [reviewer or "", *params],
    ).fetchone()
    return {"total": total, "labelled": int(row[0]), "mine": int(row[1]), "disagreements": int(row[2])}


def queue_facets(db: Database, *, cap: int = 500) -> dict[str, list[str]]:
    """Values the queue filters offer: finding kinds, codes, tools and phrase-pack versions (each capped)."""

    def distinct(sql: str) -> list[str]:
        return [
            str(r[0]) for r in db.execute(sql + f" LIMIT {int(cap)}").fetchall() if r[0] not in (None, "")
        ]

    return {
        "kinds": distinct("SELECT DISTINCT kind FROM findings ORDER BY kind"),
        "codes": distinct(
            "SELECT DISTINCT j.value FROM findings f,"
            " json_each(CASE WHEN json_valid(f.codes) THEN f.codes ELSE '[]' END) j"
            " WHERE j.type = 'text' ORDER BY j.value"
        ),
        "tools": distinct(
            "SELECT DISTINCT tool_name FROM findings WHERE tool_name IS NOT NULL ORDER BY tool_name"
        ),
        "pack_versions": distinct(
            "SELECT DISTINCT pack_version FROM findings WHERE pack_version IS NOT NULL ORDER BY pack_version"
        ),
    }


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
        "AND l.target_kind != 'missed-negative' ORDER BY l.reviewer",
        [run_key],
    ):
        out.setdefault(target, {})[reviewer] = verdict
    return out


def missed_for_run(db: Database, run_key: str) -> list[dict[str, Any]]:
    """Current missed-negative labels on a run's answer (any reviewer), in answer order."""
    return _rows(
        db,
        "SELECT target_id, reviewer, span_start, span_end, span_text, list, note, created_at FROM current_labels"
        " WHERE run_key = ? AND target_kind = 'missed-negative' ORDER BY span_start, reviewer",
        [run_key],
    )
