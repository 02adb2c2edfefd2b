"""The evidence a judge needs beside one finding, as one inert `Text`: labels, the clause in its sentence,
the reads it rests on (checked / not checked / cannot cover), the evicted ground of a dangling reference,
what a withheld answer drafted and why it was withheld, and the label history.

Drawn from `ReviewService.finding_evidence` (a dict); every recorded string goes through `safe_text`/`inert`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
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


# -- pieces -----------------------------------------------------------------------------------------------------


def _heading(title: str, style: str = "bold underline") -> Text:
    return Text.assemble("\n", (title, style), "\n")


def _line(*parts: Any) -> Text:
    return Text.assemble(*parts, "\n")


def _one(value: Any, limit: int = 300, style: str = "") -> Text:
    return safe_text(value, limit=limit, one_line=True, style=style)


#: the label binding ids (see `LABEL_BINDINGS`) and the key each has unless the keymap says otherwise
LABEL_BINDING_KEYS: dict[str, str] = {
    "label.tp": "1",
    "label.fp": "2",
    "label.unsure": "3",
    "label.note": "o",
    "label.undo": "u",
}
_VERDICT_BINDING = {"1": "label.tp", "2": "label.fp", "3": "label.unsure"}


#: what a true and a false positive mean, per kind of finding (one line, shown beside the label keys)
MEANINGS: dict[str, str] = {
    "negative-claim": "TP: the answer asserts an absence its reads do not establish · FP: the reads establish "
    "it, or the clause is not a negative",
    "negative-claim-note": "TP: the answer asserts an absence its reads do not establish · FP: the reads "
    "establish it, or the clause is not a negative",
    "coverage-gap": "TP: the answer relies on what this tool did not check or cannot cover, without saying so "
    "· FP: the answer does not depend on it, or states the gap",
    "evidence-gate": "TP: these values appear in no tool result (the model made them up) · FP: a tool result "
    "does support them, or they need no support",
    "dangling-reference": "TP: the answer cites something evicted from the context · FP: what it cites was "
    "still there",
    WITHHELD_ANSWER: "justified: the caller was right not to receive this answer · wrong: it should have been "
    "delivered",
}
DEFAULT_MEANING = "TP: the detector is right about this run · FP: it flagged something that is fine"


def meaning_text(kind: str | None) -> Text:
    """One line: what a true / false positive means for this kind of finding."""
    return Text(MEANINGS.get(kind or "", DEFAULT_MEANING), style="italic dim")


def label_keys_text(kind: str | None, keys: Mapping[str, str] | None = None) -> Text:
    """The label keys as the reviewer presses them: `keys` maps a binding id to its (remapped) key."""
    shown = {**LABEL_BINDING_KEYS, **(keys or {})}
    rows = label_keys(kind)
    out = Text("keys: ", style="dim")
    for n, (key, _verdict, label) in enumerate(rows):
        if n:
            out.append(" · ", style="dim")
        out.append(shown[_VERDICT_BINDING[key]], style="bold cyan")
        out.append(f" {label}")
    out.append(" · ", style="dim")
    out.append(shown["label.note"], style="bold cyan")
    out.append(" note · ")
    out.append(shown["label.undo"], style="bold cyan")
    out.append(" undo")
    return out


def labels_text(
    current: dict[str, dict[str, Any]],
    reviewer: str | None,
    kind: str | None,
    pending_note: str | None = None,
    keys: Mapping[str, str] | None = None,
) -> Text:
    out = Text()
    out.append_text(_line(label_keys_text(kind, keys)))
    out.append_text(_line("  ", meaning_text(kind)))
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
    if "complete" in read:
        if read.get("complete"):
            out.append_text(
                _line("     ", (f"{'complete':<13}", "bold green"), _one(read["complete"], 200, "bold"))
            )
        else:
            out.append_text(
                _line("     ", ("declares no completeness (a checked list is not one)", "dim italic"))
            )
    return out


def _compact(value: Any) -> str:
    import orjson

    try:
        return orjson.dumps(value).decode()
    except TypeError:  # an integer past 64 bits: still its JSON, never a Python repr
        return json.dumps(value, ensure_ascii=False, default=str)


def _names_reads(finding: dict[str, Any]) -> bool:
    refs = finding.get("refs") or []
    return bool(finding.get("call_id")) or any(
        isinstance(r, dict) and (r.get("toolCallId") or r.get("toolName") or r.get("kind") == "tool")
        for r in refs
    )


def reads_text(
    ev: dict[str, Any],
    *,
    title: str = "READS IT RESTS ON",
    unnamed: str | None = None,
    none: str = "  the run made no tool calls: no read was recorded",
) -> Text:
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
        out.append_text(_line((none, "bold yellow")))
        if (ev.get("run") or {}).get("ledger_incomplete"):
            out.append_text(_line((f"  {INCOMPLETE_LEDGER}", "yellow")))
    for read in reads[:40]:
        out.append_text(read_text(read))
    if len(reads) > 40:
        out.append_text(_line((f"  … {len(reads) - 40} more calls", "dim italic")))
    return out


LICENSING_STYLES = {"outruns": "bold white on red", "licensed": "bold black on green"}


def licensing_text(ev: dict[str, Any]) -> Text:
    """Does the evidence license the wording: the class (a heuristic), the verdict, the named reads' gaps."""
    lic = ev.get("licensing") or {}
    out = _line(("  ", ""), (BOUNDED_VS_ABSOLUTE, "italic"))
    assertion = lic.get("assertion")
    out.append_text(
        _line(
            "  wording asserts ",
            (
                str(assertion).upper() if assertion else "NEITHER",
                "bold red" if assertion == "absolute" else "bold",
            ),
            ("  (" + str(lic.get("note") or "heuristic") + ")", "dim"),
        )
    )
    gaps = lic.get("gaps") or []
    if gaps:
        out.append_text(
            _line("  gaps the named reads declare: ", _one("; ".join(map(str, gaps)), 600, "yellow"))
        )
    verdict = lic.get("licensing")
    out.append_text(
        _line(
            "  verdict: ",
            (f" {lic.get('verdict') or 'not judged'} ", LICENSING_STYLES.get(str(verdict), "bold")),
        )
    )
    return out


def context_reads_text(ev: dict[str, Any]) -> Text:
    """The turn's reads the finding does not name: shown apart, never counted as its evidence."""
    reads = ev.get("context_reads") or []
    out = _heading("CONTEXT: OTHER READS OF THE TURN (not evidence for this clause)")
    if not reads:
        out.append_text(_line(("  none", "dim italic")))
    for read in reads[:40]:
        out.append_text(read_text(read))
    if len(reads) > 40:
        out.append_text(_line((f"  … {len(reads) - 40} more calls", "dim italic")))
    return out


def no_read_text(ev: dict[str, Any]) -> Text:
    note = ev.get("no_read") or {}
    out = _heading("NO READ")
    out.append_text(_line("  ", _one(note.get("text"), 200, "bold yellow")))
    if note.get("ledger_incomplete"):
        out.append_text(_line("  ", _one(note.get("caveat"), 300, "bold red")))
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
    if ev.get("dangling"):
        out.append_text(dangling_text(ev["dangling"]))
    return out


INCOMPLETE_LEDGER = (
    "this recording is capped or starts mid-run, so its ledger is incomplete: "
    "no read recorded does not prove that no read occurred"
)


def dangling_text(d: dict[str, Any]) -> Text:
    """The calls made on the evicted ground while it stayed dangling, and how many passes failed."""
    out = _heading("CALLS MADE WHILE THE GROUND WAS GONE")
    passes = d.get("passes")
    if passes:
        out.append_text(
            _line(
                "  the check failed on ",
                (f"{passes['findings']} of {passes['checked']} passes", "bold red"),
                (
                    " (the disposition ledger counts every pass; the framework files one event per defect)",
                    "dim",
                ),
            )
        )
    calls = d.get("calls") or []
    if not calls:
        out.append_text(_line(("  no call of the offered tool after the eviction", "dim italic")))
    for call in calls:
        parts: list[Any] = [
            "  ",
            _one(d.get("offered"), 80, style="bold"),
            " ",
            _one(call.get("call_id"), 80, style="dim"),
            (f" (iteration {call.get('iteration')})" if call.get("iteration") is not None else "", "dim"),
            " ",
        ]
        for arg in call.get("args") or []:
            parts += [_one(arg.get("path"), 60, style="dim"), "=", _one(_compact(arg.get("value")), 120)]
            seen = arg.get("in_evicted_result")
            if seen is False:
                parts.append(("  ✗ not in the evicted result (remembered or invented)", "bold red"))
            elif seen is True:
                parts.append(("  in the evicted result, no longer in view", "yellow"))
            parts.append("  ")
        out.append_text(_line(*parts))
    total = d.get("calls_total") or 0
    if total > len(calls):
        out.append_text(_line((f"  … {total - len(calls)} more calls", "dim italic")))
    if d.get("reestablished_by"):
        out.append_text(_line("  re-grounded by call ", _one(d["reestablished_by"], 80, style="bold green")))
    elif calls:
        out.append_text(_line(("  the ground was never re-fetched in this run", "yellow")))
    if d.get("results_cut"):
        out.append_text(_line(("  (the evicted result was read in part: long results are cut)", "dim")))
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
    ev: dict[str, Any],
    *,
    reviewer: str | None = None,
    pending_note: str | None = None,
    keys: Mapping[str, str] | None = None,
) -> Text:
    """Everything about one finding a reviewer needs to label it, top to bottom (`keys`: the label keys as
    remapped by the user's keymap, binding id -> key)."""
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
            ("  received: ", "dim") if run.get("delivery_headline") else "",
            _one(run.get("delivery_headline") or "", 200),
            ("  pack ", "dim") if finding.get("pack_version") else "",
            _one(finding.get("pack_version") or "", 80),
            ("  iteration ", "dim") if finding.get("iteration") is not None else "",
            str(finding.get("iteration")) if finding.get("iteration") is not None else "",
        )
    )
    out.append_text(safe_text(finding.get("message") or "", limit=2_000))
    out.append("\n")
    out.append_text(_heading("LABELS"))
    out.append_text(labels_text(current, reviewer, kind, pending_note, keys))

    if kind == WITHHELD_ANSWER:
        out.append_text(withheld_text(ev))
        out.append_text(reads_text(ev, title="READS OF THE RUN", unnamed="  every call of the run:"))
    elif kind == "dangling-reference":
        out.append_text(eviction_text(ev))
    else:
        sentence = sentence_text(ev)
        if sentence is not None or finding.get("span_text"):
            field = (ev.get("sentence") or {}).get("field")
            out.append_text(
                _heading(
                    f"FLAGGED CLAUSE, IN ITS SENTENCE (field {field})"
                    if field
                    else "FLAGGED CLAUSE, IN ITS SENTENCE"
                )
            )
            if sentence is not None:
                out.append_text(Text.assemble("  ", sentence, "\n"))
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
        if "no_read" in ev:
            out.append_text(no_read_text(ev))
        if "licensing" in ev:
            out.append_text(_heading("DOES THE EVIDENCE LICENSE THE WORDING?"))
            out.append_text(licensing_text(ev))
            out.append_text(
                reads_text(
                    ev,
                    title="EVIDENCE: THE READS THE FINDING NAMES",
                    unnamed="  the finding names no read: nothing here is its evidence",
                    none="  no named read",
                )
            )
            out.append_text(context_reads_text(ev))
        else:
            unnamed = (
                "  the gate looks through every tool result; every call of the run:"
                if kind == "evidence-gate"
                else None
            )
            out.append_text(reads_text(ev, unnamed=unnamed))
    out.append_text(history_text(history))
    out.append_text(_line(("id ", "dim"), _one(finding.get("id"), 80, style="dim")))
    return out
