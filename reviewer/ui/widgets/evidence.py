"""The evidence a judge needs beside one finding, as one inert `Text`: labels, the clause in its sentence,
the reads it rests on (checked / not checked / cannot cover), the evicted ground of a dangling reference,
what a withheld answer drafted and why it was withheld, and the label history.

Drawn from `ReviewService.finding_evidence` (a dict); every recorded string goes through `safe_text`/`inert`.
"""

from __future__ import annotations

import re
from typing import Any

from rich.text import Text

from reviewer.review.inert import inert
from reviewer.service.vocabulary import (
    CLEARED,
    VERDICT_NAMES,
    WITHHELD_ANSWER,
    current_labels,
    disagreement,
    verdicts_for,
)
from reviewer.ui.widgets.answer import CURRENT_SPAN, span_style
from reviewer.ui.widgets.safe import inert_mapped, pretty_json, safe_text


def label_keys(kind: str | None) -> tuple[tuple[str, str, str], ...]:
    """(key, verdict, label) for each verdict a target of `kind` accepts: keys 1, 2, 3 in vocabulary order."""
    return tuple((str(n), v, VERDICT_NAMES[v]) for n, v in enumerate(verdicts_for(kind), start=1))


BOUNDED_VS_ABSOLUTE = (
    "A bounded negative (“not found in these sources”) needs only these searches; an absolute one "
    "(“does not exist”, “there are no…”) also needs a reason to believe they cover everything."
)
#: wording that scopes a negative to the search that was made (a heuristic hint, never a verdict)
_BOUNDED_WORDING = re.compile(
    r"\b(found|find|finds|search(ed|es)?|returned|came up|come up|results?|according to|did not see|"
    r"didn't see|checked|looked|in (these|the) (sources?|store|index|logs?|records?|results?))\b",
    re.IGNORECASE,
)

CHANNELS = {
    "typed-negative": "typed negative refused (a cited negative was not established)",
    "evidence-gate": "evidence gate (values in the answer appear in no tool result)",
    "output-contract": "output contract unmet",
    "pause": "paused, awaiting a human",
}


def verdict_for(key: str, kind: str | None) -> str | None:
    """The verdict a label key means for a finding of `kind` ("1" on a withheld answer is "justified")."""
    for k, verdict, _label in label_keys(kind):
        if k == key:
            return verdict
    return None


def channel_text(channel: str | None) -> str:
    if not channel:
        return "unknown channel"
    if channel in CHANNELS:
        return CHANNELS[channel]
    if channel.startswith("middleware:"):
        return f"output middleware {channel.split(':', 1)[1]!r} denied it"
    if channel.startswith("stopped-early:"):
        return f"cut short ({channel.split(':', 1)[1]})"
    return channel


def negative_scope(clause: str | None) -> str | None:
    """'bounded' when the wording scopes the negative to a search, else 'absolute' (None: no clause)."""
    if not clause:
        return None
    return "bounded" if _BOUNDED_WORDING.search(clause) else "absolute"


# -- pieces -----------------------------------------------------------------------------------------------------


def _heading(title: str, style: str = "bold underline") -> Text:
    return Text.assemble("\n", (title, style), "\n")


def _line(*parts: Any) -> Text:
    return Text.assemble(*parts, "\n")


def _one(value: Any, limit: int = 300, style: str = "") -> Text:
    return safe_text(value, limit=limit, one_line=True, style=style)


def label_keys_text(kind: str | None) -> Text:
    keys = label_keys(kind)
    out = Text("keys: ", style="dim")
    for n, (key, _verdict, label) in enumerate(keys):
        if n:
            out.append(" · ", style="dim")
        out.append(key, style="bold cyan")
        out.append(f" {label}")
    out.append(" · ", style="dim")
    out.append("o", style="bold cyan")
    out.append(" note · ")
    out.append("u", style="bold cyan")
    out.append(" undo")
    return out


def labels_text(
    current: dict[str, dict[str, Any]],
    reviewer: str | None,
    kind: str | None,
    pending_note: str | None = None,
) -> Text:
    out = Text()
    out.append_text(_line(label_keys_text(kind)))
    if not current:
        out.append_text(_line(("unlabelled", "dim italic")))
    for name, row in sorted(current.items(), key=lambda item: (item[0] != reviewer, item[0])):
        who = Text.assemble(("you" if name == reviewer else "", "bold green"))
        if name != reviewer:
            who = _one(name, 60, style="bold")
        else:
            who.append_text(Text.assemble((" (", "dim"), _one(name, 60), (")", "dim")))
        parts: list[Any] = ["  ", who, ": ", (str(row.get("verdict")), "bold")]
        if row.get("note"):
            parts += ["  “", _one(row["note"], 300, style="italic"), "”"]
        out.append_text(_line(*parts))
    if disagreement(row.get("verdict") for row in current.values()):
        out.append_text(
            _line(
                ("  ≠ DISAGREEMENT", "bold white on red"),
                ("  the reviewers' current verdicts differ", "bold red"),
            )
        )
    if pending_note:
        out.append_text(
            _line(("  note waiting for your next label: ", "dim"), _one(pending_note, 300, "italic"))
        )
    return out


def sentence_text(ev: dict[str, Any]) -> Text | None:
    """The sentence of the answer around the flagged span, the span highlighted (indices mapped through inert)."""
    sentence = ev.get("sentence")
    finding = ev["finding"]
    if not sentence:
        if finding.get("span_text"):
            return Text.assemble(("“", "dim"), _one(finding["span_text"], 1_000, style="bold"), ("”", "dim"))
        return None
    raw = str(sentence.get("text") or "")
    safe, mapping = inert_mapped(raw)
    text = Text(safe.replace("\n", " "))
    start, end = int(sentence.get("span_start") or 0), int(sentence.get("span_end") or 0)
    if 0 <= start <= end <= len(raw):
        if mapping is not None:
            start, end = mapping[start], mapping[end]
        text.stylize(span_style(finding.get("kind")), start, end)
        text.stylize(CURRENT_SPAN, start, end)
    return text


def _coverage_line(label: str, item: dict[str, Any], style: str) -> Text:
    parts: list[Any] = ["     ", (f"{label:<13}", style), _one(item.get("what"), 300)]
    if item.get("why"):
        parts += [("  — ", "dim"), _one(item["why"], 300, style="dim")]
    return _line(*parts)


def read_text(read: dict[str, Any]) -> Text:
    out = Text()
    flags = []
    if read.get("absent"):
        flags.append("absent()")
    if read.get("error"):
        flags.append("failed")
    if read.get("status") and not (read.get("absent") and read["status"] == "absent"):
        flags.append(f"status {inert(str(read['status']), keep_newlines=False)[:60]}")
    out.append_text(
        _line(
            "  ",
            ("⚙ ", "bold"),
            _one(read.get("tool_name"), 80, style="bold"),
            "  ",
            _one(read.get("call_id"), 80, style="dim"),
            (f"  iteration {read['iteration']}" if read.get("iteration") is not None else "", "dim"),
            ("  " + ", ".join(flags) if flags else "", "bold red" if read.get("error") else "magenta"),
        )
    )
    looked = next(
        (
            c.get("looked_for")
            for lst in ("checked", "not_checked", "cannot_cover")
            for c in read.get(lst) or []
            if c.get("looked_for")
        ),
        None,
    )
    if looked:
        out.append_text(_line("     ", ("looked for   ", "dim"), _one(looked, 300)))
    if read.get("args") and not looked:
        out.append_text(
            _line("     ", ("args         ", "dim"), _one(_compact(read["args"]), 300, style="dim"))
        )
    for item in read.get("checked") or []:
        out.append_text(_coverage_line("checked", item, "green"))
    for item in read.get("not_checked") or []:
        out.append_text(_coverage_line("not checked", item, "yellow"))
    for item in read.get("cannot_cover") or []:
        out.append_text(_coverage_line("cannot cover", item, "red"))
    if not any(read.get(k) for k in ("checked", "not_checked", "cannot_cover")):
        out.append_text(
            _line("     ", ("declares no coverage (what it checked is not recorded)", "dim italic"))
        )
    return out


def _compact(value: Any) -> str:
    import orjson

    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return repr(value)


def _names_reads(finding: dict[str, Any]) -> bool:
    refs = finding.get("refs") or []
    return bool(finding.get("call_id")) or any(
        isinstance(r, dict) and (r.get("toolCallId") or r.get("toolName") or r.get("kind") == "tool")
        for r in refs
    )


def reads_text(ev: dict[str, Any], *, title: str = "READS IT RESTS ON", unnamed: str | None = None) -> Text:
    """The tool calls the finding names (or every call of the run, said so when it names none)."""
    finding = ev["finding"]
    reads = ev.get("reads") or []
    out = _heading(title)
    if not _names_reads(finding):
        out.append_text(
            _line(
                (
                    unnamed or "  the finding names no read (no tool refs): every call of the run is listed",
                    "yellow",
                )
            )
        )
    if not reads:
        out.append_text(_line(("  the run made no tool calls: nothing was searched", "bold yellow")))
    for read in reads[:40]:
        out.append_text(read_text(read))
    if len(reads) > 40:
        out.append_text(_line((f"  … {len(reads) - 40} more calls", "dim italic")))
    return out


def scope_text(ev: dict[str, Any]) -> Text:
    finding = ev["finding"]
    reads = ev.get("reads") or []
    gaps = sum(len(r.get("not_checked") or []) + len(r.get("cannot_cover") or []) for r in reads)
    clause = finding.get("span_text") or (ev.get("sentence") or {}).get("text")
    scope = negative_scope(clause)
    out = _line(("  ", ""), (BOUNDED_VS_ABSOLUTE, "italic"))
    if scope == "absolute":
        verdict = (
            f"the reads declare {gaps} gap(s) (not checked / cannot cover), so they do not cover everything"
            if gaps
            else "look for a stated reason the reads cover everything"
        )
        out.append_text(
            _line(
                "  wording reads as ",
                ("ABSOLUTE", "bold red"),
                (" (a wording heuristic)", "dim"),
                f": {verdict}.",
            )
        )
    elif scope == "bounded":
        out.append_text(
            _line(
                "  wording reads as ",
                ("BOUNDED", "bold green"),
                (" (a wording heuristic)", "dim"),
                ": the searches below are what licenses it.",
            )
        )
    return out


def eviction_text(ev: dict[str, Any]) -> Text:
    finding = ev["finding"]
    offered = ev.get("offered_tool") or finding.get("tool_name")
    out = _heading("EVICTED GROUND (it left the context window)")
    evictions = ev.get("evicted") or []
    if not evictions:
        out.append_text(_line(("  no eviction recorded for this run", "dim italic")))
    grounds = [r.get("id") for r in (finding.get("refs") or [])[1:] if isinstance(r, dict) and r.get("id")]
    for e in evictions[:20]:
        dropped = e.get("dropped_tools") or []
        names = ", ".join(str(d) for d in dropped) if isinstance(dropped, list) else str(dropped)
        out.append_text(
            _line(
                "  ",
                ("✂ ", "bold magenta"),
                _one(names or "context", 200, style="bold magenta"),
                " left the window at ",
                (f"iteration {e.get('iteration')}", "bold"),
                " by ",
                _one(e.get("strategy") or "?", 80, style="bold"),
                (f"  (stage {e.get('stage')}, {e.get('removed_messages') or 0} messages removed)", "dim"),
            )
        )
        for call in e.get("calls") or []:
            out.append_text(
                _line(
                    "     result of ",
                    _one(call.get("tool_name"), 80, style="bold"),
                    " ",
                    _one(call.get("call_id"), 80, style="dim"),
                    (
                        f" (iteration {call.get('iteration')})" if call.get("iteration") is not None else "",
                        "dim",
                    ),
                )
            )
    if offered:
        out.append_text(
            _line(
                "  offered tool ",
                _one(offered, 80, style="bold yellow"),
                " depends on it",
                (" (its arguments come from " if grounds else "", "dim"),
                _one(", ".join(map(str, grounds)), 200, style="dim") if grounds else "",
                (")" if grounds else "", "dim"),
            )
        )
    return out


def _claims_text(refs: list[Any]) -> Text:
    out = Text()
    for ref in refs[:30]:
        if not isinstance(ref, dict):
            out.append_text(_line("  - ", _one(ref, 300)))
            continue
        if "verdict" in ref or "restsOn" in ref:  # a typed negative claim
            out.append_text(
                _line(
                    "  - ",
                    _one(ref.get("kind") or "claim", 40, style="bold"),
                    " about ",
                    _one(ref.get("about") or "?", 200, style="bold"),
                    ": ",
                    _one(ref.get("verdict") or "?", 40, style="bold red"),
                    (" (" if ref.get("reason") else "", ""),
                    _one(ref.get("reason") or "", 80),
                    (")" if ref.get("reason") else "", ""),
                    ("  rests on ", "dim"),
                    _one(", ".join(map(str, ref.get("restsOn") or [])) or "nothing", 200),
                )
            )
            if ref.get("statement"):
                out.append_text(_line("     “", _one(ref["statement"], 400, style="italic"), "”"))
            for contrary in ref.get("contrary") or []:
                c = contrary if isinstance(contrary, dict) else {"handle": contrary}
                out.append_text(
                    _line(
                        "     ",
                        ("contrary read ", "bold red"),
                        _one(c.get("handle") or "?", 60),
                        ": rows ",
                        _one(", ".join(map(str, c.get("rows") or [])), 200, style="bold"),
                        (f" ({c['count']})" if c.get("count") is not None else "", "dim"),
                    )
                )
            for gap in ref.get("gaps") or []:
                out.append_text(
                    _coverage_line("gap", gap if isinstance(gap, dict) else {"what": gap}, "yellow")
                )
        elif "value" in ref:  # an unsupported value (evidence gate)
            out.append_text(
                _line(
                    "  - unsupported value ",
                    _one(ref.get("value"), 200, style="bold red"),
                    ("  (", "dim") if ref.get("shape") else "",
                    _one(ref.get("shape"), 60, style="dim") if ref.get("shape") else "",
                    (")", "dim") if ref.get("shape") else "",
                    ("  appears in no tool result", "dim"),
                )
            )
        elif "middleware" in ref:
            out.append_text(
                _line(
                    "  - middleware ",
                    _one(ref.get("middleware"), 80, style="bold"),
                    ": ",
                    _one(ref.get("why") or "no reason given", 400),
                )
            )
        elif "toolName" in ref or "toolCallId" in ref:
            out.append_text(
                _line(
                    "  - waiting on ",
                    _one(ref.get("toolName"), 80, style="bold"),
                    " ",
                    _one(ref.get("toolCallId") or "", 80, style="dim"),
                )
            )
        else:
            out.append_text(_line("  - ", _one(_compact(ref), 600)))
    return out


def withheld_text(ev: dict[str, Any]) -> Text:
    w = ev.get("withheld") or {}
    detail: dict[str, Any] = w["detail"] if isinstance(w.get("detail"), dict) else {}
    out = _heading("WITHHELD ANSWER — the caller never received it", "bold white on red")
    out.append_text(
        _line(
            "  outcome ",
            _one(w.get("outcome"), 40, style="bold red"),
            "  ·  withheld by ",
            _one(channel_text(w.get("channel")), 200, style="bold"),
        )
    )
    if detail.get("summary"):
        out.append_text(_line("  ", _one(detail["summary"], 600)))
    out.append_text(_heading("WHAT THE MODEL DRAFTED (not delivered)"))
    out.append_text(safe_text(w.get("draft") or "(nothing drafted)", limit=3_000, style="italic"))
    out.append("\n")
    refs = detail.get("refs") or ev["finding"].get("refs") or []
    if refs:
        out.append_text(_heading("FAILED CLAIMS, CONTRARY READS, REASONS"))
        out.append_text(_claims_text(refs))
    gaps = w.get("gaps") or []
    if gaps:
        out.append_text(_heading("GAPS THE RUN'S READS DECLARE"))
        for gap in gaps[:30]:
            out.append_text(
                _line(
                    "  ",
                    _one(gap.get("tool_name"), 80, style="bold"),
                    " ",
                    (str(gap.get("list") or "").replace("_", " "), "yellow"),
                    ": ",
                    _one(gap.get("what"), 300),
                    ("  — " if gap.get("why") else "", "dim"),
                    _one(gap.get("why") or "", 300, "dim"),
                )
            )
    return out


def values_in_answer(answer: str | None, refs: list[Any], *, limit: int = 3_000) -> Text | None:
    """The answer (inert, bounded) with each unsupported value of an evidence-gate finding marked."""
    if not answer:
        return None
    shown = answer[:limit]
    safe, mapping = inert_mapped(shown)
    text = Text(safe)
    for ref in refs:
        value = str(ref.get("value")) if isinstance(ref, dict) and ref.get("value") is not None else ""
        if not value:
            continue
        for match in re.finditer(re.escape(value), shown):
            start, end = match.start(), match.end()
            if mapping is not None:
                start, end = mapping[start], mapping[end]
            text.stylize("bold white on red", start, end)
    if len(answer) > limit:
        text.append(f" … {len(answer) - limit:,} more characters", style="dim italic")
    return text


def history_text(history: list[dict[str, Any]]) -> Text:
    out = _heading("LABEL HISTORY (append-only)")
    if not history:
        out.append_text(_line(("  no labels yet", "dim italic")))
    for row in history[-50:]:
        parts: list[Any] = [
            "  ",
            (str(row.get("created_at") or "")[:19].replace("T", " "), "dim"),
            "  ",
            _one(row.get("reviewer"), 60, style="bold"),
            "  ",
            (str(row.get("verdict")), "bold" if row.get("verdict") != CLEARED else "dim"),
        ]
        if row.get("undoes"):
            parts.append(("  (undo)", "magenta"))
        if row.get("note"):
            parts += ["  “", _one(row["note"], 300, style="italic"), "”"]
        out.append_text(_line(*parts))
    if len(history) > 50:
        out.append_text(_line((f"  ({len(history) - 50} older rows not shown)", "dim")))
    return out


def evidence_text(
    ev: dict[str, Any], *, reviewer: str | None = None, pending_note: str | None = None
) -> Text:
    """Everything about one finding a reviewer needs to label it, top to bottom."""
    finding = ev["finding"]
    run = ev.get("run") or {}
    kind = finding.get("kind")
    history = ev.get("history") or []
    current = current_labels(history)
    out = Text()
    out.append_text(
        _line(
            ("⚑ ", "bold yellow"),
            _one(kind or "?", 60, style="bold red" if kind == WITHHELD_ANSWER else "bold yellow"),
            ("  [" if finding.get("codes") else "", "yellow"),
            _one(", ".join(map(str, finding.get("codes") or [])), 200, style="yellow"),
            ("]" if finding.get("codes") else "", "yellow"),
        )
    )
    out.append_text(
        _line(
            ("run ", "dim"),
            _one(run.get("run_id") or finding.get("run_id"), 120, style="bold"),
            ("  agent ", "dim"),
            _one(run.get("agent_id") or "?", 80),
            ("  outcome ", "dim"),
            _one(run.get("outcome") or "?", 40),
            ("  pack ", "dim") if finding.get("pack_version") else "",
            _one(finding.get("pack_version") or "", 80),
            ("  iteration ", "dim") if finding.get("iteration") is not None else "",
            str(finding.get("iteration")) if finding.get("iteration") is not None else "",
        )
    )
    out.append_text(safe_text(finding.get("message") or "", limit=2_000))
    out.append("\n")
    out.append_text(_heading("LABELS"))
    out.append_text(labels_text(current, reviewer, kind, pending_note))

    if kind == WITHHELD_ANSWER:
        out.append_text(withheld_text(ev))
        out.append_text(reads_text(ev, title="READS OF THE RUN", unnamed="  every call of the run:"))
    elif kind == "dangling-reference":
        out.append_text(eviction_text(ev))
    else:
        sentence = sentence_text(ev)
        if sentence is not None or finding.get("span_text"):
            out.append_text(_heading("FLAGGED CLAUSE, IN ITS SENTENCE"))
            if sentence is not None:
                out.append_text(Text.assemble("  ", sentence, "\n"))
            if kind in ("negative-claim", "negative-claim-note"):
                out.append_text(scope_text(ev))
        elif finding.get("field") and finding.get("span_utf16"):
            out.append_text(_line(("  unplaceable: the span does not fit the answer", "dim italic")))
        if kind == "evidence-gate" and finding.get("refs"):
            out.append_text(_heading("VALUES THE GATE COULD NOT FIND IN ANY TOOL RESULT"))
            out.append_text(_claims_text(finding["refs"]))
            answer = values_in_answer(run.get("answer"), finding["refs"])
            if answer is not None:
                out.append_text(_heading("THE ANSWER, THOSE VALUES MARKED"))
                out.append_text(Text.assemble(answer, "\n"))
        elif kind not in ("negative-claim", "negative-claim-note", "coverage-gap") and finding.get("refs"):
            out.append_text(_heading("REFS"))
            out.append_text(pretty_json(finding["refs"], limit=2_000))
            out.append("\n")
        unnamed = (
            "  the gate looks through every tool result; every call of the run:"
            if kind == "evidence-gate"
            else None
        )
        out.append_text(reads_text(ev, unnamed=unnamed))
    out.append_text(history_text(history))
    out.append_text(_line(("id ", "dim"), _one(finding.get("id"), 80, style="dim")))
    return out
