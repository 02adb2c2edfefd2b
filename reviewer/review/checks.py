"""Which integrity checks a run's recording shows ran, from its `integrity.disposition` (recording-format.md
section 9.2; the framework's `src/integrity/disposition/types.ts`).

Every check files one disposition per encounter (checked-pass, checked-fail, not-applicable, unreachable),
so "0 findings" and "this check never ran" are different states, and the reviewer must see which one a
clean run is. An unarmed check is noted `not-applicable` once; an armed check out of scope on every
encounter looks the same, so that state is named for both. Pure: no store, no UI.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: the states a check row can be in, most telling first
FOUND, RAN, UNREACHABLE, NOT_APPLICABLE, NEVER_MET = (
    "found",
    "ran",
    "unreachable",
    "not-applicable",
    "never-met",
)


@dataclass(frozen=True)
class CheckState:
    """One (check, seam) row read as a state and a sentence."""

    check: str
    seam: str
    state: str
    text: str


def _count(row: dict[str, Any], key: str) -> int:
    value = row.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n:,} times"


def check_state(row: dict[str, Any]) -> CheckState:
    """The state of one disposition row, with what it means in words."""
    checked, found = _count(row, "checked"), _count(row, "findings")
    not_applicable, unreachable = _count(row, "notApplicable"), _count(row, "unreachable")
    if found:
        state = FOUND
        text = f"ran {_times(checked)}, failed {_times(found)}"
    elif checked:
        state = RAN
        text = f"ran {_times(checked)}: 0 findings"
    elif unreachable:
        state = UNREACHABLE
        text = f"never ran: unreachable {_times(unreachable)} (no identity edge)"
    elif not_applicable:
        state = NOT_APPLICABLE
        text = f"never ran: unarmed or out of scope ({not_applicable:,} n/a)"
    else:
        state = NEVER_MET
        text = "never met anything to check"
    extras = []
    if (checked or found) and unreachable:
        extras.append(f"unreachable {_times(unreachable)}")
    if (checked or found) and not_applicable:
        extras.append(f"not applicable {_times(not_applicable)}")
    if synthetic := _count(row, "synthetic"):
        extras.append(f"dev canary caught {synthetic:,} (counted apart)")
    if extras:
        text += "; " + "; ".join(extras)
    return CheckState(str(row.get("check") or "?"), str(row.get("seam") or "?"), state, text)


def check_states(disposition: dict[str, Any] | None) -> list[CheckState]:
    """Every row of a disposition, in the recorded order (empty when the recording has none)."""
    rows = (disposition or {}).get("rows")
    return [check_state(r) for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def checks_summary(disposition: dict[str, Any] | None) -> str:
    """One line: how many checks ran and how many never did, so a clean run says what was checked."""
    if not isinstance(disposition, dict):
        return "no integrity.disposition in this recording: which checks ran cannot be told"
    states = check_states(disposition)
    ran = [s for s in states if s.state in (FOUND, RAN)]
    found = [s for s in states if s.state == FOUND]
    idle = len(states) - len(ran)
    names = ", ".join(f"{s.check}@{s.seam}" for s in ran) or "none"
    line = f"{len(ran)} of {len(states)} checks ran ({names}); {idle} never ran"
    if ran and not found:
        line += "; the ones that ran found nothing"
    posture = disposition.get("posture")
    if posture:
        line += f" · posture {posture}"
    if disposition.get("workExisted") is False:
        line += " · no work existed for the checks to examine"
    return line
