"""Findings: integrity context errors, negative claims, the evidence gate, coverage gaps and a withheld
answer, each with a stable id and its span placed in the text it indexes."""

from __future__ import annotations

from typing import Any

from store.reading.extract.walk import (
    GAP_LISTS,
    RunWalk,
    as_dict,
    as_int,
    as_list,
    as_str,
    stable_id,
)
from store.reading.text import as_text, dumps
from store.spans import span_from_utf16
from store.vocab import (
    COVERAGE_GAP,
    DANGLING_REFERENCE,
    EVIDENCE_GATE,
    NEGATIVE_CLAIM,
    WITHHELD_ANSWER,
    is_withheld,
)


def findings(
    walk: RunWalk, calls: dict[str, dict[str, Any]], coverage: list[dict[str, Any]], outcome: dict[str, Any]
) -> list[dict[str, Any]]:
    """Every finding of the run: context errors and negative claims in event order, then the evidence gate,
    coverage gaps and, last, a withheld answer."""
    rows: list[dict[str, Any]] = []
    for i in walk.of_types("integrity.context_error", "findings."):
        t = walk.shorts[i]
        if t == "integrity.context_error":
            rows.append(context_error(walk, i))
        elif t.startswith("findings."):
            rows.append(negative_claim(walk, i, t))
    gate = walk.by_type.get("agent.evidence_checked")
    if gate:
        p = walk.payload(gate[-1])
        unsupported = [as_dict(u) for u in as_list(p.get("unsupported"))]
        if unsupported:
            values = ", ".join(f"{as_text(u.get('value'))} ({u.get('shape')})" for u in unsupported)
            action = as_str(p.get("action")) or "?"
            rows.append(
                finding(
                    walk,
                    gate[-1],
                    kind=EVIDENCE_GATE,
                    codes=[action]
                    + ([f"posture:{p['posture']}"] if isinstance(p.get("posture"), str) else []),
                    message=f"Evidence gate {action}: {len(unsupported)} value(s) appear in no tool result: "
                    f"{values}",
                    refs=unsupported,
                    truncated=p.get("evidenceTruncated") is True,
                )
            )
    for cov in coverage:
        if cov["list"] in GAP_LISTS:
            tool = cov["tool_name"] or "?"
            label = "not checked" if cov["list"] == "not_checked" else "cannot cover"
            rows.append(
                finding(
                    walk,
                    None,
                    kind=COVERAGE_GAP,
                    anchor=(cov["call_id"], cov["list"], cov["what"]),
                    codes=[cov["list"]],
                    message=f"{tool} {label}: {cov['what']}" + (f" — {cov['why']}" if cov["why"] else ""),
                    refs=[{"toolName": cov["tool_name"], "toolCallId": cov["call_id"]}],
                    tool_name=cov["tool_name"],
                    call_id=cov["call_id"],
                )
            )
    if is_withheld(outcome["outcome"]):
        rows.append(
            finding(
                walk,
                outcome.get("seq"),
                kind=WITHHELD_ANSWER,
                anchor=("outcome",),
                codes=[outcome["outcome"]] + ([outcome["channel"]] if outcome.get("channel") else []),
                message=outcome["summary"],
                refs=outcome.get("refs") or [],
                field="answer",
            )
        )
    _unique_ids(rows)
    walk.out.findings.extend(rows)
    for r in rows:
        if r["message"]:
            walk.search("finding", r["id"], r["message"])
    return rows


def _unique_ids(rows: list[dict[str, Any]]) -> None:
    """Two findings that hash alike (the same coverage gap listed twice, say) both keep a row: the later
    ones get an id over their occurrence number too. Ids that did not collide are unchanged."""
    seen: dict[str, int] = {}
    for row in rows:
        first = row["id"]
        n = seen.get(first, 0)
        seen[first] = n + 1
        if n:
            row["id"] = stable_id("f", first, "occurrence", n + 1)


def finding(
    walk: RunWalk, seq: int | None, *, kind: str, anchor: tuple[Any, ...] = (), **kw: Any
) -> dict[str, Any]:
    """A `findings` row whose id depends only on the recording's content and the finding's place in it."""
    row = {
        "id": stable_id("f", walk.sha, walk.run_id, kind, seq if seq is not None else "", *anchor),
        "run_key": walk.key,
        "run_id": walk.run_id,
        "seq": seq,
        "kind": kind,
        "field": kw.get("field"),
        "codes": dumps(kw.get("codes") or []),
        "message": kw.get("message"),
        "span_start_u16": None,
        "span_end_u16": None,
        "span_start": None,
        "span_end": None,
        "span_text": None,
        "placeable": None,
        "pack_version": kw.get("pack_version"),
        "iteration": walk.iteration_at.get(seq) if seq is not None else None,
        "refs": dumps(kw.get("refs") or []),
        "advisory": int(bool(kw.get("advisory"))),
        "truncated": int(bool(kw.get("truncated"))),
        "tool_name": kw.get("tool_name"),
        "call_id": kw.get("call_id"),
        "payload": dumps(walk.payload(seq)) if seq is not None else None,
    }
    return row


def context_error(walk: RunWalk, i: int) -> dict[str, Any]:
    """An `integrity.context_error` event (section 9.1) as a finding."""
    p = walk.payload(i)
    kind = as_str(p.get("kind")) or "context-error"
    codes = [c for c in (as_str(p.get("seam")), "advisory" if p.get("advisory") is True else None) if c]
    if p.get("synthetic") is True:
        codes.append("synthetic")
    subjects = [as_dict(s) for s in as_list(p.get("subjects"))]
    field_name = as_str(p.get("predicate"))
    for w in as_list(p.get("witnesses")):
        prov = as_str(as_dict(w).get("provenance")) or ""
        if prov.startswith("answer field '") and prov.endswith("'"):
            field_name = prov[len("answer field '") : -1]
    offered = as_str(subjects[0].get("id")) if subjects else None
    return finding(
        walk,
        i,
        kind=kind,
        codes=codes,
        message=as_text(p.get("message")),
        refs=subjects,
        advisory=p.get("advisory") is True,
        field=field_name,
        tool_name=offered if kind == DANGLING_REFERENCE else None,
    )


def negative_claim(walk: RunWalk, i: int, t: str) -> dict[str, Any]:
    """A `findings.*` event (negative-claims.md) as a finding, its UTF-16 span placed in the text it indexes."""
    p = walk.payload(i)
    kind = as_str(p.get("kind")) or t.split(".", 1)[1].replace("_", "-")
    if kind == NEGATIVE_CLAIM:
        codes = [c for c in as_list(p.get("notes")) if isinstance(c, str)]
    else:
        codes = [c for c in (as_str(p.get("code")),) if c] + [
            c for c in as_list(p.get("notes")) if isinstance(c, str)
        ]
    refs = p.get("refs") if "refs" in p else p.get("references")
    version = p.get("phrasePackVersion", p.get("version", p.get("phraseVersion")))
    field_name = as_str(p.get("field")) or "answer"
    row = finding(
        walk,
        i,
        kind=kind,
        codes=codes,
        message=None,
        refs=as_list(refs),
        pack_version=as_text(version),
        truncated=p.get("truncated") is True,
        field=field_name,
    )
    it = as_int(p.get("iteration"))
    if it is not None:
        row["iteration"] = it
    start, end = _span_bounds(p.get("span"))
    row["span_start_u16"], row["span_end_u16"] = start, end
    if start is not None or end is not None or "span" in p:
        text = walk.field_text(field_name)
        placed = span_from_utf16(text, start, end)
        row["placeable"] = int(placed is not None)
        if placed is not None and text is not None:
            row["span_start"], row["span_end"] = placed
            row["span_text"] = text[placed[0] : placed[1]]
    tool_names = sorted({as_str(as_dict(r).get("toolName")) or "" for r in as_list(refs)} - {""})
    row["tool_name"] = tool_names[0] if len(tool_names) == 1 else (",".join(tool_names) or None)
    codes_text = ", ".join(codes) if codes else "no codes"
    where = (
        f"“{row['span_text']}”"
        if row["span_text"]
        else ("whole answer" if "span" not in p else "unplaceable span")
    )
    row["message"] = f"{kind} ({codes_text}) in {field_name}: {where}"
    return row


def _span_bounds(span: Any) -> tuple[int | None, int | None]:
    if isinstance(span, dict):
        return as_int(span.get("start")), as_int(span.get("end"))
    if isinstance(span, list) and len(span) == 2:
        return as_int(span[0]), as_int(span[1])
    return None, None
