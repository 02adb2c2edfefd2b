"""Each shared rule is defined once, in `store.vocab`: on one table of cases the SQL, the Python rule, the
app's widgets and the CLI all say the same thing (so a copy that drifted would fail here)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlite_utils import Database

from reviewer.cli.main import VERDICT_CHOICES, cli
from reviewer.review.stats import label_state as stats_label_state
from reviewer.ui.screens.queue import STATES
from reviewer.ui.widgets.evidence import evidence_text, verdict_for
from reviewer.ui.widgets.finding_list import label_state as list_label_state
from reviewer.ui.widgets.run_list import PAUSED_MARK, WITHHELD_MARK, outcome_text
from reviewer.ui.widgets.timeline import label_marks, timeline_row_text
from store import labels, vocab
from store.db.connection import open_database
from store.db.ingest import ingest
from store.errors import StoreError
from store.findings import queue_page, queue_progress
from store.runs import run_filters
from tests.conftest import FIXTURE_RECORDINGS, REPO

RECORDINGS = [
    FIXTURE_RECORDINGS / name
    for name in (
        "answer-withheld-by-output-middleware.json",
        "failed-tool-turn2-of-conversation.json",
        "paused-awaiting-human-args-invalid.json",
        "absent-coverage-clarify-ceiling.json",
        "unsupported-claim-findings.json",
        "plain-tool-run.json",
    )
]

#: outcome -> was a drafted answer kept from the person (negative-claims.md section 3: a contract unmet is
#: delivered raw, a cut-short run delivered, a pause awaits a person, a halt had no draft)
WITHHELD_CASES = [(o, o in ("withheld", "refused", "denied")) for o in vocab.OUTCOMES] + [(None, False)]

#: (outcome, delivered) as stored -> did the person receive nothing (NULL: read before `delivered` existed)
NOTHING_CASES = [
    ("delivered", 1, False),
    ("contract_unmet", 1, False),
    ("cut_short", 1, False),
    ("refused", 0, True),
    ("denied", 0, True),
    ("withheld", 0, True),
    ("halted", 0, True),
    ("paused", 0, True),
    ("incomplete", 0, False),
    ("refused", None, False),
]

#: a target's label history as (reviewer, verdict or "undo") -> {reviewer: current verdict}
HISTORY_CASES = [
    ([], {}),
    ([("ann", "tp")], {"ann": "tp"}),
    ([("ann", "tp"), ("ann", "fp")], {"ann": "fp"}),
    ([("ann", "tp"), ("bob", "fp")], {"ann": "tp", "bob": "fp"}),
    ([("ann", "tp"), ("bob", "tp")], {"ann": "tp", "bob": "tp"}),
    ([("ann", "tp"), ("ann", "undo")], {}),
    ([("ann", "tp"), ("bob", "fp"), ("bob", "undo")], {"ann": "tp"}),
    ([("ann", "tp"), ("ann", "fp"), ("ann", "undo"), ("bob", "unsure")], {"ann": "tp", "bob": "unsure"}),
]

#: (tool_end.error, tool_end.status) -> failed
FAILED_CASES = [
    (0, None, False),
    (1, None, True),
    (True, "success", True),
    (0, "success", False),
    (0, "failure", True),
    (0, "invalid", True),
    (0, "denied", True),
    (0, "partial", False),
    (0, "pending", False),
    (0, "absent", False),
    (0, "error", False),  # not a status the framework declares
]


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Database:
    path = tmp_path_factory.mktemp("vocab") / "review.db"
    db = open_database(path)
    ingest(db, RECORDINGS, db_path=str(path))
    return db


@pytest.mark.parametrize(("outcome", "withheld"), WITHHELD_CASES)
def test_withheld_rule_agrees_in_python_sql_and_ui(outcome: str | None, withheld: bool) -> None:
    assert vocab.is_withheld(outcome) is withheld
    mem = Database(memory=True)
    mem.execute("CREATE TABLE runs (key TEXT, outcome TEXT)")
    mem.execute("INSERT INTO runs VALUES ('r', ?)", [outcome])
    where, params = run_filters(mem, withheld=True)
    rows = mem.execute(f"SELECT key FROM runs r WHERE {' AND '.join(where)}", params).fetchall()
    assert bool(rows) is withheld


@pytest.mark.parametrize(("outcome", "delivered", "nothing"), NOTHING_CASES)
def test_received_nothing_agrees_in_python_sql_and_ui(
    outcome: str, delivered: int | None, nothing: bool
) -> None:
    stored = None if delivered is None else bool(delivered)
    assert vocab.received_nothing(stored, outcome) is nothing
    mem = Database(memory=True)
    mem.execute("CREATE TABLE runs (key TEXT, outcome TEXT, delivered INTEGER)")
    mem.execute("INSERT INTO runs VALUES ('r', ?, ?)", [outcome, delivered])
    where, params = run_filters(mem, undelivered=True)
    rows = mem.execute(f"SELECT key FROM runs r WHERE {' AND '.join(where)}", params).fetchall()
    assert bool(rows) is nothing
    marked = outcome_text(outcome, 30, stored).plain.startswith((WITHHELD_MARK, PAUSED_MARK))
    assert marked is nothing


def test_withheld_answer_findings_follow_the_outcome(loaded: Database) -> None:
    seen = set()
    for key, outcome in loaded.execute("SELECT key, outcome FROM runs"):
        kinds = {r[0] for r in loaded.execute("SELECT kind FROM findings WHERE run_key = ?", [key])}
        assert (vocab.WITHHELD_ANSWER in kinds) is vocab.is_withheld(outcome), (key, outcome)
        seen.add(vocab.is_withheld(outcome))
    assert seen == {True, False}


def _apply(db: Database, target: str, history: list[tuple[str, str]]) -> None:
    for who, verdict in history:
        if verdict == "undo":
            labels.undo_last(db, who, target)
        else:
            labels.label_finding(db, target, verdict, who)


@pytest.mark.parametrize(("history", "expected"), HISTORY_CASES)
def test_current_label_and_disagreement_agree_everywhere(
    tmp_path: Path, history: list[tuple[str, str]], expected: dict[str, str]
) -> None:
    db = open_database(tmp_path / "review.db")
    ingest(db, [FIXTURE_RECORDINGS / "unsupported-claim-findings.json"], db_path=str(tmp_path / "review.db"))
    target = db.execute(
        "SELECT id FROM findings WHERE kind != ? ORDER BY id", [vocab.WITHHELD_ANSWER]
    ).fetchone()[0]
    _apply(db, target, history)
    rows = labels.history(db, target)
    python_rule = {r: row["verdict"] for r, row in vocab.current_labels(rows).items()}
    sql_view = labels.current(db, target)
    assert python_rule == sql_view == expected
    agree = not vocab.disagreement(expected.values())
    assert agree is (len(set(expected.values())) <= 1)
    in_queue = {r["id"] for r in queue_page(db, state=vocab.DISAGREEMENT)}
    assert (target in in_queue) is not agree
    assert queue_progress(db, reviewer="ann")["disagreements"] == (0 if agree else 1)
    assert (list_label_state(expected, "ann") == vocab.DISAGREEMENT) is not agree
    assert label_marks(expected).plain.strip().startswith("≠") is not agree
    assert (stats_label_state(expected) == vocab.DISAGREEMENT) is not agree
    finding = dict(
        zip(
            ("id", "kind"),
            db.execute("SELECT id, kind FROM findings WHERE id = ?", [target]).fetchone(),
            strict=True,
        )
    )
    ev = evidence_text({"finding": finding, "history": rows}, reviewer="ann").plain
    assert ("DISAGREEMENT" in ev) is not agree
    for who, verdict in expected.items():
        assert f"{who}: {verdict}" in ev or (who == "ann" and f"you (ann): {verdict}" in ev)
    db.close()


def test_queue_label_states_are_the_vocabulary() -> None:
    assert tuple(STATES) == tuple(sorted(vocab.LABEL_STATES, key=tuple(STATES).index))
    assert set(STATES) == set(vocab.LABEL_STATES)


@pytest.mark.parametrize("state", vocab.LABEL_STATES)
def test_every_label_state_filters_the_queue(loaded: Database, state: str) -> None:
    total = len(queue_page(loaded, limit=10_000))
    assert len(queue_page(loaded, state=state, reviewer="ann", limit=10_000)) <= total


def test_verdicts_each_kind_accepts_agree_in_store_ui_and_cli(loaded: Database, tmp_path: Path) -> None:
    kinds = dict(loaded.execute("SELECT kind, min(id) FROM findings GROUP BY kind").fetchall())
    assert vocab.WITHHELD_ANSWER in kinds and len(kinds) > 1
    assert set(vocab.JUDGEMENTS) <= set(VERDICT_CHOICES)
    for kind, finding_id in kinds.items():
        accepted = vocab.verdicts_for(kind)
        assert tuple(verdict_for(k, kind) for k in "123") == accepted
        assert verdict_for("4", kind) is None
        for verdict in vocab.JUDGEMENTS:
            try:
                labels.label_finding(loaded, finding_id, verdict, "vocab-test")
                ok = True
            except StoreError:
                ok = False
            assert ok is (verdict in accepted), (kind, verdict)
    db_file = loaded.conn.execute("PRAGMA database_list").fetchone()[2]
    runner = CliRunner()
    for kind, finding_id in kinds.items():
        for verdict in vocab.JUDGEMENTS:
            result = runner.invoke(
                cli, ["label", finding_id, "--verdict", verdict, "--db", db_file, "--reviewer", "cli-test"]
            )
            assert (result.exit_code == 0) is (verdict in vocab.verdicts_for(kind)), (
                kind,
                verdict,
                result.output,
            )


@pytest.mark.parametrize(("error", "status", "failed"), FAILED_CASES)
def test_failed_call_agrees_in_rule_and_timeline(error: object, status: str | None, failed: bool) -> None:
    assert vocab.call_failed(error, status) is failed
    row = {"kind": "tool_call", "tool_name": "t", "call_id": "c", "error": error, "status": status}
    assert timeline_row_text(row).plain.strip().startswith("✗") is failed


def test_failed_call_counts_follow_the_rule(loaded: Database) -> None:
    totals = 0
    for key, failed_calls in loaded.execute("SELECT key, failed_calls FROM runs"):
        calls = loaded.execute("SELECT error, status FROM tool_calls WHERE run_key = ?", [key]).fetchall()
        assert failed_calls == sum(vocab.call_failed(e, s) for e, s in calls), key
        totals += failed_calls
    assert totals >= 3  # the thrown tool, the invalid args and the ceiling refusal


#: spellings of a rule that only `store/vocab.py` may hold
COPIES = (
    '"withheld-answer"',
    '"missed-negative"',
    '"cleared"',
    "'cleared'",
    '("delivered", "incomplete"',
    "('delivered', 'incomplete'",
    "count(DISTINCT l.verdict)",
    "len(set(labels.values()))",
    '("failure", "invalid", "denied")',
    '("tp", "fp", "unsure")',
    '("justified", "wrong"',
)


def test_each_rule_is_spelt_only_in_the_vocabulary() -> None:
    found = {
        (str(path.relative_to(REPO)), copy)
        for folder in ("store", "reviewer")
        for path in (REPO / folder).rglob("*.py")
        if path.name != "vocab.py"
        for copy in COPIES
        if copy in path.read_text()
    }
    assert found == set()
