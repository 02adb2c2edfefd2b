"""The caveats that travel with the data: provenance (age), grain, what is not covered, clarify."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from rich.text import Text
from textual.widgets import Static

from .chart import grain_lines, parse_time
from .safe import as_dict, as_list, item_str, line, show

#: Coverage lines listed per section at most.
MAX_ITEMS = 50


def format_age(seconds: float) -> str:
    """3600 → "1h 0m"; 300 → "5m 0s"; 90061 → "1d 1h"."""
    s = int(max(0, round(seconds)))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60}s"
    if s < 86400:
        return f"{s // 3600}h {(s % 3600) // 60}m"
    return f"{s // 86400}d {(s % 86400) // 3600}h"


def age_at(measured_at: Any, now: datetime | None) -> str | None:
    """How old `measured_at` is at `now` ("2d 3h old now"), or None when it is not a parseable time."""
    when = parse_time(measured_at)
    if when is None:
        return None
    now = now or datetime.now(UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    delta = (now - when).total_seconds()
    if delta < 0:
        return f"{format_age(-delta)} in the future of the review clock"
    return f"{format_age(delta)} old now"


def provenance_lines(provenance: Any, now: datetime | None, *, has_data: bool) -> list[Text]:
    prov = as_dict(provenance)
    if not prov:
        return [line(("provenance: not stated", "bold yellow"))] if has_data else []
    out: list[Text] = []
    measured = prov.get("measured_at")
    text = line(("measured_at: ", "bold"), show(measured, 120) if measured is not None else "not stated")
    ages = []
    age_s = prov.get("age_seconds")
    if isinstance(age_s, int | float) and not isinstance(age_s, bool):
        ages.append(f"{format_age(age_s)} old when the tool answered")
    ago = age_at(measured, now)
    if ago:
        ages.append(ago)
    if ages:
        text.append(f"  ({'; '.join(ages)})", style="cyan")
    out.append(text)
    src = line(
        ("source: ", "bold"),
        show(prov.get("source"), 300) if prov.get("source") is not None else "not stated",
    )
    if prov.get("source_export_date") is not None:
        src.append_text(line(("   source_export_date: ", "bold"), show(prov["source_export_date"], 80)))
    out.append(src)
    for key, value in prov.items():
        if key not in ("measured_at", "age_seconds", "source", "source_export_date"):
            out.append(line((f"{show(key, 40)}: ", "bold"), show(value, 300)))
    return out


def coverage_from_rows(rows: list[dict[str, Any]] | None, call_id: Any) -> dict[str, list[str]]:
    """Pure: the store's coverage rows for one call as {checked, not_checked, cannot_cover} lists."""
    out: dict[str, list[str]] = {"checked": [], "not_checked": [], "cannot_cover": []}
    for row in rows or []:
        if not isinstance(row, dict) or (call_id is not None and row.get("call_id") != call_id):
            continue
        kind = row.get("list")
        if kind in out:
            out[kind].append(item_str({"what": row.get("what"), "why": row.get("why")}))
    return out


def coverage_lists(
    semantics: dict[str, Any] | None, rows: list[dict[str, Any]] | None, call_id: Any
) -> tuple[list[str], list[str]]:
    """Pure: (checked, not_covered) — the envelope's own lists first, the store's rows otherwise."""
    sem = as_dict(semantics)
    cov = as_dict(sem.get("coverage"))
    from_rows = coverage_from_rows(rows, call_id)
    checked = [item_str(i) for i in as_list(cov.get("checked"))] or from_rows["checked"]
    not_covered = [
        show(x, 1000, one_line=False) if isinstance(x, str) else item_str(x)
        for x in as_list(sem.get("not_covered"))
    ]
    if not not_covered:
        not_covered = [
            item_str(i) for i in as_list(cov.get("not_checked")) + as_list(cov.get("cannot_cover"))
        ]
    if not not_covered:
        not_covered = from_rows["not_checked"] + from_rows["cannot_cover"]
    return checked, not_covered


def clarify_lines(semantics: dict[str, Any] | None) -> list[Text]:
    """`clarify: null` → considered, no ambiguity; a question → the question and its candidates."""
    sem = as_dict(semantics)
    if "clarify" not in sem:
        return []
    clarify = sem["clarify"]
    if clarify is None:
        return [line(("clarify: ", "bold"), ("considered, no ambiguity", "dim"))]
    c = as_dict(clarify)
    out = [line(("? clarify: ", "bold magenta"), (show(c.get("question"), 1000), "bold"))]
    candidates = as_list(c.get("candidates"))
    if candidates:
        out.append(line(("  candidates: ", "bold"), ", ".join(show(x, 120) for x in candidates[:MAX_ITEMS])))
    return out


def _bullets(title: str, style: str, items: list[str]) -> list[Text]:
    if not items:
        return []
    out = [line((title, style))]
    out += [line("  • ", item) for item in items[:MAX_ITEMS]]
    if len(items) > MAX_ITEMS:
        out.append(Text(f"  … {len(items) - MAX_ITEMS} more", style="dim"))
    return out


def caveat_lines(
    call: dict[str, Any],
    semantics: dict[str, Any] | None,
    rows: list[dict[str, Any]] | None,
    *,
    now: datetime | None = None,
    include_grain: bool = True,
) -> list[Text]:
    """Pure: every caveat line for one call, in reading order."""
    sem = as_dict(semantics)
    has_data = any(as_list(sem.get(k)) for k in ("facts", "series", "edges"))
    out = provenance_lines(sem.get("provenance"), now, has_data=has_data)
    if include_grain and ("grain" in sem or as_list(sem.get("series"))):
        grain = grain_lines(sem.get("grain"), has_series=bool(as_list(sem.get("series"))))
        if grain:
            out.append(line(("grain: ", "bold")) + Text("  ·  ").join(grain))
    checked, not_covered = coverage_lists(sem, rows, call.get("call_id"))
    out += _bullets("not covered:", "bold yellow", not_covered)
    if checked:
        out.append(line(("checked: ", "bold green"), "; ".join(checked[:MAX_ITEMS])))
    out += clarify_lines(sem)
    return out


def brief_provenance(provenance: Any, now: datetime | None, *, has_data: bool) -> Text | None:
    """Pure: the provenance on one line ("measured … (age) · source …"), None when there is nothing to say."""
    prov = as_dict(provenance)
    if not prov:
        return line(("provenance: not stated", "bold yellow")) if has_data else None
    measured = prov.get("measured_at")
    out = line(("measured ", "bold"), show(measured, 60) if measured is not None else "not stated")
    ago = age_at(measured, now)
    if ago:
        out.append(f" ({ago.removesuffix(' now')})", style="cyan")
    out.append_text(
        line(("  source ", "bold"), show(prov.get("source"), 120) if prov.get("source") else "not stated")
    )
    return out


def brief_caveat_lines(
    call: dict[str, Any],
    semantics: dict[str, Any] | None,
    rows: list[dict[str, Any]] | None,
    *,
    now: datetime | None = None,
) -> list[Text]:
    """Pure: the caveats in at most three lines (provenance; what is not covered; a clarify question), for a
    short panel where the full box would push the result out of sight. The full box follows the result."""
    sem = as_dict(semantics)
    has_data = any(as_list(sem.get(k)) for k in ("facts", "series", "edges"))
    out: list[Text] = []
    prov = brief_provenance(sem.get("provenance"), now, has_data=has_data)
    if prov is not None:
        out.append(prov)
    _, not_covered = coverage_lists(sem, rows, call.get("call_id"))
    if not_covered:
        out.append(line((f"not covered ({len(not_covered)}): ", "bold yellow"), "; ".join(not_covered[:3])))
    clarify = sem.get("clarify")
    if isinstance(clarify, dict):
        out.append(line(("? clarify: ", "bold magenta"), (show(clarify.get("question"), 300), "bold")))
    if not out:
        out.append(Text("no caveats recorded", style="dim"))
    out[-1].append("  (all caveats below the result)", style="dim italic")
    return out


def brief_caveats_widget(lines: list[Text]) -> Static:
    return Static(Text("\n").join(lines), classes="result-caveats-brief")


def caveats_widget(lines: list[Text]) -> Static:
    body = Text("\n").join(lines) if lines else Text("no caveats recorded", style="dim")
    return Static(body, classes="result-caveats")
