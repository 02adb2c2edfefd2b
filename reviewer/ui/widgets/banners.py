"""What the run screen says above the answer: what the person received (never WITHHELD for a delivered
answer), what the recording cannot show (a capped or mid-run recording), and which integrity checks ran.

Every recorded string is drawn inert and bounded (`safe_text`).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from reviewer.review.checks import FOUND, NOT_APPLICABLE, RAN, UNREACHABLE, check_states, checks_summary
from reviewer.service.vocabulary import HALTED, INCOMPLETE, PAUSED, is_withheld
from reviewer.ui.widgets.run_list import PAUSED_MARK, PROBLEM_MARK, WITHHELD_MARK
from reviewer.ui.widgets.safe import safe_text

#: what each kind of delivered-with-a-problem answer is, for the answer panel's title
ANSWER_TITLES = {
    "raw": "Answer — delivered raw (it failed its output contract)",
    "fragment": "Answer — delivered as a fragment (cut short)",
    "wrap-up": "Answer — the wrap-up answer, delivered",
}
NO_FALLBACK_TEXT = (
    "the recording does not hold the fallback's text; the answer shown is the draft it replaced"
)


def _summary(run: dict[str, Any]) -> str:
    detail = run.get("outcome_detail")
    return str(detail.get("summary") or "") if isinstance(detail, dict) else ""


def fallback_without_text(run: dict[str, Any]) -> bool:
    """An output fallback replaced the draft and the recording cannot show what it delivered."""
    return (
        bool(run.get("delivered")) and run.get("delivered_as") == "fallback" and not run.get("delivered_text")
    )


def outcome_banner(run: dict[str, Any]) -> Text:
    """One banner from what the person received; the outcome's own summary beside it."""
    outcome = run.get("outcome")
    delivered = run.get("delivered")
    headline = run.get("delivery_headline") or ""
    summary = _summary(run)
    if delivered is None:
        return Text.assemble(
            (" DELIVERY UNKNOWN ", "bold black on yellow"),
            "  stored by an older version: run `reviewer reextract` to read what the person received  ",
            safe_text(summary, limit=400, one_line=True, style="dim"),
        )
    if outcome == PAUSED:
        return Text.assemble(
            (f" {PAUSED_MARK} PAUSED, awaiting a person — nothing delivered yet ", "bold black on cyan"),
            "  ",
            safe_text(headline, limit=600, one_line=True),
        )
    if is_withheld(outcome):
        return Text.assemble(
            (f" {WITHHELD_MARK} WITHHELD — not delivered ", "bold white on red"),
            "  ",
            (f"outcome: {outcome}", "bold red"),
            "  ",
            safe_text(summary, limit=600, one_line=True),
        )
    if outcome == HALTED:
        return Text.assemble(
            (f" {WITHHELD_MARK} HALTED — nothing delivered ", "bold white on red"),
            "  ",
            safe_text(headline, limit=600, one_line=True),
        )
    if not delivered:
        return Text.assemble(
            (" INCOMPLETE RECORDING ", "bold black on yellow"),
            "  ",
            safe_text(summary or "the recording ends before the answer", limit=600, one_line=True),
        )
    if run.get("delivered_as") in (None, "drafted"):
        return Text.assemble(
            (" ✓ delivered ", "bold black on green"),
            "  ",
            safe_text(summary, limit=600, one_line=True, style="dim"),
        )
    parts: list[Any] = [
        (f" {PROBLEM_MARK} DELIVERED, WITH A PROBLEM ", "bold black on yellow"),
        "  ",
        safe_text(headline, limit=600, one_line=True, style="bold"),
    ]
    if fallback_without_text(run):
        parts += ["  ·  ", (NO_FALLBACK_TEXT, "yellow")]
    if summary:
        parts += ["  ·  ", safe_text(summary, limit=400, one_line=True, style="dim")]
    return Text.assemble(*parts)


def answer_title(run: dict[str, Any]) -> str:
    """The answer panel's title: what the text below is to the person."""
    outcome, delivered_as = run.get("outcome"), run.get("delivered_as")
    if is_withheld(outcome):
        return f"Answer — {WITHHELD_MARK} WITHHELD, the caller never received it ({outcome})"
    if outcome == PAUSED:
        return "Answer — none yet: paused, awaiting a person"
    if outcome == HALTED:
        return "Answer — none: halted by a permission policy"
    if outcome == INCOMPLETE:
        return "Answer — none recorded"
    if delivered_as == "fallback":
        return "Answer — the DRAFT, not what was delivered: a fallback replaced it"
    return ANSWER_TITLES.get(str(delivered_as), "Answer")


def recording_banner(run: dict[str, Any]) -> Text | None:
    """What a capped or mid-run recording cannot show; None when the recording starts at the run's start."""
    dropped = run.get("dropped_events")
    dropped = dropped if isinstance(dropped, int) and dropped > 0 else 0
    if not dropped and not run.get("starts_mid_run"):
        return None
    if dropped:
        lost = f"{dropped:,} earlier event(s) were dropped (a capped recording)"
    else:
        lost = "it starts mid-run (its first event is not run_configured) and does not say how many events it lost"
    return Text.assemble(
        (f" {PROBLEM_MARK} PARTIAL RECORDING ", "bold black on yellow"),
        "  ",
        (lost, "bold"),
        (
            ": the prompt, reads, calls and findings before that point are not in it; what is shown is "
            "not the whole run",
            "",
        ),
    )


STATE_STYLES = {
    FOUND: "bold red",
    RAN: "green",
    UNREACHABLE: "bold yellow",
    NOT_APPLICABLE: "dim",
}


def checks_text(disposition: dict[str, Any] | None) -> Text:
    """The checks panel: the summary line, then one line per (check, seam) with what it did."""
    out = safe_text(checks_summary(disposition), limit=600, style="bold")  # it names recorded checks
    for state in check_states(disposition)[:16]:
        out.append("\n")
        out.append_text(
            Text.assemble(
                safe_text(f"{state.check}@{state.seam}", limit=80, one_line=True, style="bold"),
                "  ",
                safe_text(state.text, limit=300, one_line=True, style=STATE_STYLES.get(state.state, "dim")),
            )
        )
    return out
