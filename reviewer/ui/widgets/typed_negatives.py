"""A typed answer's cited negatives as the framework delivered them (`reviewer.review.typed_negatives`).

Beside the answer: the answer-level delivery, each delivered statement with its `delivery` marker, the
claims that failed and why, the fallback sentence and the failed complete-list verdict it keeps, the
checked count per source, and the diagnostics. Every recorded string is drawn inert.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from reviewer.review.typed_negatives import TypedAccount, TypedClaim, read_account
from reviewer.ui.widgets.safe import safe_text

#: What each answer-level delivery meant for the person.
DELIVERY_MEANING = {
    "as-checked": "the person received only the library's checked statements",
    "recorded": "checked statements, delivered among model-written fields nobody verified",
    "withheld": "the person received no answer",
    "state-searched": "the person received the fallback sentence in place of a failed complete-list claim",
}
DELIVERY_STYLE = {"withheld": "bold white on red", "state-searched": "bold black on yellow"}


def _one(value: Any, limit: int = 300, style: str = "") -> Text:
    return safe_text(value, limit=limit, one_line=True, style=style)


def _claim_line(claim: TypedClaim) -> Text:
    return Text.assemble(
        _one(claim.kind or "claim", 40, "bold"),
        " about ",
        _one(claim.about or "?", 200, "bold"),
        ("  rests on ", "dim"),
        _one(", ".join(claim.rests_on) or "nothing", 200),
    )


def _claim_details(claim: TypedClaim) -> Text:
    out = Text()
    for gap in claim.gaps:
        why = Text.assemble(("  — ", "dim"), _one(gap.why, 300, "dim")) if gap.why else Text()
        out.append_text(Text.assemble("      ", ("gap ", "yellow"), _one(gap.what), why, "\n"))
    for contrary in claim.contrary:
        out.append_text(
            Text.assemble(
                "      ",
                ("contrary read ", "bold red"),
                _one(contrary.handle or "?", 60),
                ": rows ",
                _one(", ".join(contrary.rows) or "none listed", 200, "bold"),
                (f" ({contrary.count})" if contrary.count is not None else "", "dim"),
                "\n",
            )
        )
    return out


def typed_negatives_text(account: TypedAccount) -> Text:
    """The whole account, top to bottom."""
    out = Text()
    delivery = account.delivery or "none recorded"
    meaning = DELIVERY_MEANING.get(delivery, "a delivery this reviewer does not know: shown as recorded")
    out.append_text(
        Text.assemble(
            ("TYPED NEGATIVES", "bold underline"),
            "  delivery ",
            _one(delivery, 40, DELIVERY_STYLE.get(delivery, "bold")),
            ("  " + meaning, "italic"),
            "\n",
        )
    )
    delivered = account.delivered
    if delivered:
        out.append_text(Text("delivered statements:\n", style="bold"))
    for claim in delivered:
        out.append_text(
            Text.assemble(
                ("  ✓ “", "green"),
                _one(claim.statement, 600),
                ("”  ", "green"),
                ("[", "dim"),
                _one(claim.delivery or "no delivery marker", 60, "bold cyan"),
                (f" v{claim.version}" if claim.version else "", "dim"),
                ("]", "dim"),
                "\n    ",
                _claim_line(claim),
                "\n",
            )
        )
        out.append_text(_claim_details(claim))
    if account.delivery == "withheld":
        out.append_text(Text("  no statement was delivered\n", style="bold red"))
    for claim in account.failed:
        out.append_text(
            Text.assemble(
                ("  ✗ ", "bold red"),
                _one(claim.verdict or "not established", 40, "bold red"),
                (" (" + claim.reason + ")" if claim.reason else "", "red"),
                ": ",
                _claim_line(claim),
                "\n",
            )
        )
        out.append_text(_claim_details(claim))
    if account.fallback:
        out.append_text(
            Text.assemble(("fallback delivered: ", "bold"), "“", _one(account.fallback, 600), "”\n")
        )
        for claim in account.kept_verdicts:
            out.append_text(
                Text.assemble(
                    ("  keeps the failed complete-list verdict: ", "dim"),
                    _claim_line(claim),
                    ": ",
                    _one(claim.verdict or "not established", 40, "bold red"),
                    (" (" + claim.reason + ")" if claim.reason else "", "red"),
                    "\n",
                )
            )
    if account.sources:
        out.append_text(Text("checked per source:\n", style="bold"))
        for source in account.sources:
            checked = "?" if source.checked is None else str(source.checked)
            out.append_text(
                Text.assemble("  ", _one(source.tool_name or "?", 80, "bold"), f": {checked} checked\n")
            )
    if account.diagnostics:
        out.append_text(Text("diagnostics:\n", style="bold"))
        for line in account.diagnostics:
            out.append_text(Text.assemble("  · ", _one(line, 600), "\n"))
    out.rstrip()
    return out


def typed_negatives_for(answer_negatives: Any) -> Text | None:
    """The drawn account of a run's `answer_negatives` (as stored), or None when the run has none."""
    account = read_account({"answerNegatives": answer_negatives})
    return None if account is None else typed_negatives_text(account)
