"""Every word the store, the domain, the app and the CLI share, defined once.

Outcomes and which of them mean the person received nothing, finding kinds and the verdicts each accepts,
label states, the "current label" and "disagreement" rules, and what makes a tool call "failed". Where a
rule is also needed in SQL, the SQL is generated here from the same definition (and
tests/test_vocabulary.py checks both on one table of cases), so no caller re-derives it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

# -- outcomes: what happened to a run's answer (decided in store/reading/outcome.py) ---------------------------

DELIVERED = "delivered"
#: the recording stops before the run ended: shown apart, never as withheld
INCOMPLETE = "incomplete"
#: a permission policy stopped the run (`permission.halt`): nothing delivered, no draft withheld
HALTED = "halted"
PAUSED = "paused"
OUTCOMES = (
    DELIVERED,
    "withheld",
    "refused",
    "denied",
    "contract_unmet",
    PAUSED,
    "cut_short",
    HALTED,
    INCOMPLETE,
)
#: outcomes whose drafted answer was kept from the person (negative-claims.md section 3): the only ones
#: a withheld-answer finding, and its justified / wrong verdicts, apply to. A contract unmet (delivered raw),
#: a cut-short or wrapped-up run (delivered), a pause (awaiting a person) and a halt (no draft) are not.
WITHHOLDING = ("withheld", "refused", "denied")
#: what the person received, when something was (`runs.delivered_as`; decided in store/reading/delivery.py)
DELIVERED_AS = ("drafted", "raw", "fallback", "wrap-up", "fragment")


def is_withheld(outcome: str | None) -> bool:
    """True when a drafted answer was kept from the person: refused, denied, or a typed negative withheld."""
    return outcome in WITHHOLDING


def withheld_sql(column: str) -> str:
    """`is_withheld` as an SQL condition on `column` (NULL is not withheld, as in Python)."""
    return f"{column} IN ({', '.join(repr(o) for o in WITHHOLDING)})"


def received_nothing(delivered: Any, outcome: str | None) -> bool:
    """True when the recording shows the person received nothing (withheld, refused, denied, halted,
    paused). An incomplete recording (no answer recorded) and a run read before `delivered` existed
    (NULL, until `reviewer reextract`) are not counted: the record cannot say."""
    return delivered is not None and not delivered and outcome != INCOMPLETE


def received_nothing_sql(delivered_column: str, outcome_column: str) -> str:
    """`received_nothing` as an SQL condition, in a form both backends read (PostgreSQL has no `IS NOT 'x'`);
    schema m017's partial indexes are made with it, so SQLite reads those runs from them."""
    return f"({delivered_column} = 0 AND coalesce({outcome_column}, '') <> '{INCOMPLETE}')"


# -- finding kinds (the recording names most of them; these are the ones a rule depends on) ---------------------

WITHHELD_ANSWER = "withheld-answer"
EVIDENCE_GATE = "evidence-gate"
COVERAGE_GAP = "coverage-gap"
DANGLING_REFERENCE = "dangling-reference"
NEGATIVE_CLAIM = "negative-claim"
#: a label target that is not a finding: words of an answer the detector did not flag
MISSED_NEGATIVE = "missed-negative"

# -- verdicts: which judgements fit which target ---------------------------------------------------------------

FINDING_VERDICTS = ("tp", "fp", "unsure")
WITHHELD_VERDICTS = ("justified", "wrong", "unsure")
MISSED = "missed"
#: the verdict an undo appends when the reviewer had nothing before: it removes their current label
CLEARED = "cleared"
#: every verdict a person can give on a finding (either kind), in the order the CLI offers them
JUDGEMENTS = tuple(dict.fromkeys(FINDING_VERDICTS + WITHHELD_VERDICTS))
#: every verdict a label row may carry, besides CLEARED
VERDICTS = (*JUDGEMENTS, MISSED)
MISSED_LISTS = ("none", "complete")
VERDICT_NAMES = {
    "tp": "true positive",
    "fp": "false positive",
    "unsure": "unsure",
    "justified": "withholding justified",
    "wrong": "withholding wrong",
    MISSED: "missed negative",
}


def verdicts_for(kind: str | None) -> tuple[str, ...]:
    """The verdicts a target of `kind` accepts, in key order (1, 2, 3 in the app)."""
    if kind == WITHHELD_ANSWER:
        return WITHHELD_VERDICTS
    if kind == MISSED_NEGATIVE:
        return (MISSED,)
    return FINDING_VERDICTS


# -- current label and disagreement ----------------------------------------------------------------------------

#: the one SQL definition of a current label: each reviewer's latest row on a target, unless it clears.
#: "Latest" is by the time the label was made (`created_at`), ties broken by row order, never by row order
#: alone: an older export merged in later gets larger row ids and must not become the current verdict.
#: (Schema m002-m028's view, which chose each row's latest with a subquery per label row; m029 keeps the
#: choice in `label_latest` as each label is written, LABEL_LATEST_KEPT, and reads it in CURRENT_LABELS_VIEW.)
_LATEST_LABEL_ROW = """l.id = (SELECT m.id FROM labels m WHERE m.target_id = l.target_id AND m.reviewer = l.reviewer
                      ORDER BY m.created_at DESC, m.id DESC LIMIT 1)"""
CURRENT_LABELS_BY_SUBQUERY = f"""
        CREATE VIEW current_labels AS
        SELECT l.* FROM labels l
        WHERE {_LATEST_LABEL_ROW}
          AND l.verdict != '{CLEARED}'"""

#: Each reviewer's latest label row on each target (schema m029): the choice CURRENT_LABELS_BY_SUBQUERY made
#: at every read, made once as each label is written. A cleared one is kept too (an older label merged in
#: later must not become current), and left out by the view.
LABEL_LATEST_TABLE = """
        CREATE TABLE label_latest (
            target_id TEXT NOT NULL, reviewer TEXT NOT NULL, label_id BIGINT NOT NULL,
            created_at TEXT NOT NULL, verdict TEXT NOT NULL, PRIMARY KEY (target_id, reviewer)
        )"""
#: Fills `label_latest` from the labels already written (the rule of CURRENT_LABELS_BY_SUBQUERY).
LABEL_LATEST_FILL = f"""
        INSERT INTO label_latest (target_id, reviewer, label_id, created_at, verdict)
        SELECT l.target_id, l.reviewer, l.id, l.created_at, l.verdict FROM labels l WHERE {_LATEST_LABEL_ROW}"""
#: The statement a label's insert runs (as a trigger's body; `new` is the label row): it becomes the latest
#: of its reviewer on its target unless a later one (by `created_at`, then row order) is already there.
LABEL_LATEST_KEPT = """
        INSERT INTO label_latest (target_id, reviewer, label_id, created_at, verdict)
        VALUES (new.target_id, new.reviewer, new.id, new.created_at, new.verdict)
        ON CONFLICT (target_id, reviewer) DO UPDATE SET label_id = excluded.label_id,
            created_at = excluded.created_at, verdict = excluded.verdict
        WHERE (excluded.created_at, excluded.label_id) > (label_latest.created_at, label_latest.label_id)"""
CURRENT_LABELS_VIEW = f"""
        CREATE VIEW current_labels AS
        SELECT l.id, l.uid, c.target_id, l.target_kind, c.verdict, l.note, c.reviewer, l.created_at, l.undoes,
               l.run_key, l.run_id, l.field, l.span_start, l.span_end, l.span_text, l.list
        FROM label_latest c CROSS JOIN labels l ON l.id = c.label_id
        WHERE c.verdict != '{CLEARED}'"""


def current_labels(history: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """reviewer -> their latest row in a target's history (given oldest first), by `created_at` with ties
    going to the later row; CLEARED removes one. The Python twin of CURRENT_LABELS_VIEW (and of LABEL_LATEST_KEPT's rule).
    """
    latest: dict[str, tuple[tuple[str, int], Mapping[str, Any]]] = {}
    for n, row in enumerate(history):
        key = (str(row.get("created_at") or ""), n)
        held = latest.get(row["reviewer"])
        if held is None or key >= held[0]:
            latest[row["reviewer"]] = (key, row)
    return {r: row for r, (_, row) in sorted(latest.items()) if row.get("verdict") != CLEARED}


def disagreement(verdicts: Iterable[Any]) -> bool:
    """Reviewers disagree when their current verdicts on one target are not all the same."""
    return len(set(verdicts)) > 1


def disagreement_sql(verdict_column: str) -> str:
    """`disagreement` as an SQL aggregate over a target's current labels (1 or 0)."""
    return f"count(DISTINCT {verdict_column}) > 1"


#: the label states the findings queue filters on
LABEL_STATES = ("any", "unlabelled", "mine", "not-mine", "disagreement", "labelled")
UNLABELLED = "unlabelled"
DISAGREEMENT = "disagreement"

# -- tool calls ------------------------------------------------------------------------------------------------

#: declared `tool_end.status` values that mean the call failed (recording-format.md: status is one of
#: success, failure, denied, invalid, partial, pending, absent; "error" is not among them)
FAILED_STATUSES = ("failure", "invalid", "denied")


def call_failed(error: Any, status: str | None) -> bool:
    """A failed tool call: `tool_end.error === true`, or a declared failure, denial or invalid-args status."""
    return bool(error) or status in FAILED_STATUSES


#: a call's state when its `tool_end` declared no status: ended (`done`) or never ended in the recording (`open`)
CALL_DONE = "done"
CALL_OPEN = "open"


def call_status(status: str | None, completed: Any) -> str:
    """What a call's state is called everywhere (the run screen's timeline, `reviewer show`): its declared
    status, else done when it ended, else open."""
    return status or (CALL_DONE if completed else CALL_OPEN)
