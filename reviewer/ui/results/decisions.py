"""The decisions recorded around a tool call, beside its drawn result (recording-format.md section 17).

A call denied by middleware, declined at a check-in or halted by a permission policy ends with neither
`error` nor `status`: without the decision the drawn result would look like an ordinary one. An
after-tool middleware that changed the result means `tool_end.result` is what the tool returned, not
what the model read (src/core/agent/middleware/runChain.ts). `call["decisions"]` is the store's list.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static

from .safe import as_dict, as_list, line, scalar_str, truncate

#: Outcomes that stop a call (or, after the tool, keep its result from the model).
STOPPING = frozenset({"deny", "declined", "halt"})
AFTER_TOOL_NOTE = (
    "the recorded tool_end result is what the tool returned, not what the model read "
    "(after-tool middleware changed it)"
)
BEFORE_TOOL_CHANGED = (
    "a before-tool middleware changed the arguments: the args above are what the model sent, "
    "the tool ran with the changed ones"
)


def show(value: Any, limit: int) -> str:
    """Bounded plain text; `line` makes it inert."""
    return truncate(scalar_str(value), limit)


def _who(d: dict[str, Any]) -> str:
    event = str(d.get("event") or "")
    by = show(d.get("by"), 120) if d.get("by") else None
    if event == "middleware.decision":
        return f"middleware {by!s}" if by else "a middleware"
    if event.startswith("checkin."):
        return f"the check-in ({by})" if by else "the check-in"
    if event == "permission.halt":
        return f"permission checker {by}" if by else "a permission policy"
    rule = f" (rule {show(d['rule'], 120)})" if d.get("rule") else ""
    return f"permission policy{(' ' + by) if by else ''}{rule}"


def _why(d: dict[str, Any]) -> tuple[str, str]:
    return (f": {show(d['why'], 500)}", "") if d.get("why") else (": no reason recorded", "dim")


def decision_lines(call: dict[str, Any]) -> tuple[list[Text], list[Text]]:
    """(lines that say what stopped or changed the call, lines that record what merely allowed it)."""
    stopped: list[Text] = []
    allowed: list[Text] = []
    for d in (as_dict(x) for x in as_list(call.get("decisions"))):
        outcome = str(d.get("outcome") or "")
        after = d.get("moment") == "after-tool"
        if outcome in STOPPING and after:
            stopped.append(
                line(
                    (" ⛔ the model did not read this result ", "bold white on dark_red"),
                    " ",
                    (f"{_who(d)} denied it after the tool ran", "bold"),
                    _why(d),
                )
            )
            stopped.append(line((AFTER_TOOL_NOTE.replace("changed it", "replaced it"), "yellow")))
        elif outcome in STOPPING:
            verb = {"deny": "denied", "declined": "declined", "halt": "halted"}[outcome]
            stopped.append(
                line(
                    (f" ⛔ {verb}, not run ", "bold white on dark_red"),
                    " ",
                    (f"{_who(d)} {verb} this call", "bold"),
                    _why(d),
                )
            )
        elif after and d.get("changed") is True:
            stopped.append(line((f"✎ {_who(d)} changed this result", "bold yellow"), _why(d)))
            stopped.append(line((AFTER_TOOL_NOTE, "yellow")))
        elif d.get("moment") == "before-tool" and d.get("changed") is True:
            stopped.append(line((f"✎ {_who(d)} changed the arguments", "bold yellow"), _why(d)))
            stopped.append(line((BEFORE_TOOL_CHANGED, "yellow")))
        else:
            allowed.append(line((f"{_who(d)}: {show(outcome or '?', 40)}", "dim"), _why(d)))
    return stopped, allowed


def decision_widgets(call: dict[str, Any]) -> list[Widget]:
    """The call's decisions as widgets for the drawn result (none when nothing was recorded)."""
    stopped, allowed = decision_lines(call)
    out: list[Widget] = []
    if stopped:
        out.append(Static(Text("\n").join(stopped), classes="result-decisions"))
    if allowed:
        out.append(Static(Text("\n").join(allowed), classes="result-notes"))
    return out
