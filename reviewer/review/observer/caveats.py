"""The replay's caveat, generated from the rules a replay actually applies, so it can never claim a rule
it does not model nor stay silent about one it leaves out. Each item says what is reproduced, what is
not modelled (yet: the observer package has the rule, this replay does not apply it), and what a replay
over stored text cannot reproduce at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

CaveatKind = Literal["reproduces", "not-modelled", "cannot"]

#: Every rule a replay may apply, by id, with what applying it reproduces.
RULES: dict[str, str] = {
    "literal-phrases": "the literal phrase extension: a pack phrase counts where its words occur whole, "
    "case and whitespace ignored",
    "code-skipped": "hits inside recognised code (fenced blocks, inline code) do not count as claims",
    "observer-units": "clauses split as the observer does (a colon does not cut: 'Tests: 0 failed.' stays whole)",
    "filtered-clauses": "the exact normalized clauses 'None.', 'No action is needed.' and 'Tests: 0 failed.' "
    "are filtered",
    "no-read": "one no-read note per answer when the turn recorded no dispatched read",
    "claim-budget": "over 32 claims and unjudged units, one too-many-claims note replaces the findings",
    "input-budget": "over 65,536 UTF-16 code units or 256 string values, one input-limit note",
    "code-notes": "a phrase hit in recognised code gives an in-code-block note",
    "language-heuristic": "a closed heuristic (not the framework's) marks non-English units "
    "language-unsupported",
    "coverage-block-stripped": "the framework-appended coverage block is not read",
}

#: What no replay over stored text can reproduce, whatever rules it applies.
CANNOT: dict[str, str] = {
    "grammar": "the framework's own English grammar beyond the literal extension: negatives it flags "
    "without any pack phrase are not predicted",
    "anchoring": "anchoring a claim to read evidence (declared said words, sent values, resolved names) "
    "and the notes that depend on it",
    "entity-resolution": "entity resolution and coverage checks (entity-unresolved and the other claim notes)",
    "work-budget": "the framework's shared work budget for pattern preparation and matching "
    "(its size is not published)",
}


@dataclass(frozen=True, slots=True)
class Caveat:
    """One line of the caveat: its kind, the rule it is about, and the sentence shown."""

    kind: CaveatKind
    rule: str
    text: str


def replay_caveats(modelled: Iterable[str]) -> list[Caveat]:
    """The caveat list for a replay that applies the rules `modelled` (ids of RULES), in RULES' order."""
    applied = set(modelled)
    unknown = applied - RULES.keys()
    if unknown:
        raise ValueError(f"unknown observer rules: {sorted(unknown)}")
    out = [Caveat("reproduces", r, t) for r, t in RULES.items() if r in applied]
    out += [Caveat("not-modelled", r, t) for r, t in RULES.items() if r not in applied]
    out += [Caveat("cannot", r, t) for r, t in CANNOT.items()]
    return out


_HEADINGS: dict[CaveatKind, str] = {
    "reproduces": "reproduced",
    "not-modelled": "not modelled by this replay",
    "cannot": "cannot be reproduced",
}


def caveat_summary(caveats: Iterable[Caveat]) -> str:
    """One paragraph of the caveat list, grouped by kind."""
    groups: dict[CaveatKind, list[str]] = {}
    for c in caveats:
        groups.setdefault(c.kind, []).append(c.text)
    parts = [f"{_HEADINGS[k].capitalize()}: {'; '.join(texts)}." for k, texts in groups.items()]
    return " ".join(parts)
