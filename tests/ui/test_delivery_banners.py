"""Pilot tests: per case, what the run screen tells the reviewer the person received (issue #12 point 1),
what the recording cannot show and which integrity checks ran (point 4).

Delivered answers with a problem (contract unmet, wrapped up, cut short, an output fallback) are shown
as delivered with their problem, never WITHHELD; refused, denied, halted and paused runs as not delivered.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from store.db.connection import open_database
from store.db.ingest import ingest
from store.runs import list_runs
from tests.conftest import FIXTURE_RECORDINGS, SAMPLES
from tests.ui.conftest import SIZE, copy_db, wait_until

FILES = {
    "raw (real)": FIXTURE_RECORDINGS / "output-schema-retry-then-contract-unmet.json",
    "raw": SAMPLES / "schema-failed-delivered-raw.json",
    "wrapped up": SAMPLES / "wrapped-up-max-iterations.json",
    "cut short": SAMPLES / "cut-short-max-iterations.json",
    "fallback": SAMPLES / "output-fallback-delivered.json",
    "refused": FIXTURE_RECORDINGS / "evidence-gate-rails-refused.json",
    "denied": FIXTURE_RECORDINGS / "answer-withheld-by-output-middleware.json",
    "halted": SAMPLES / "halted-by-permission-policy.json",
    "paused": FIXTURE_RECORDINGS / "paused-awaiting-human-args-invalid.json",
    "capped envelope": FIXTURE_RECORDINGS / "envelope-capped-recording-maxEvents-150.json",
    "capped bare": FIXTURE_RECORDINGS / "capped-recording-maxEvents-150.json",
    "clean": FIXTURE_RECORDINGS / "plain-tool-run.json",
    "dangling": FIXTURE_RECORDINGS / "window-eviction-dangling-reference.json",
    "no-read": SAMPLES / "envelope-negative-claim-no-read.json",
}
#: written by the fixture: the no-read sample as a capped recorder would keep it (its first 5 events lost)
CAPPED_NO_READ = "capped no-read"

#: case -> (text the outcome banner must hold, text it must not, text the answer panel's title must hold)
BANNERS = {
    "raw (real)": (
        ["DELIVERED, WITH A PROBLEM", "delivered raw: failed its output contract"],
        "WITHHELD",
        "raw",
    ),
    "raw": (["delivered raw: failed its output contract", "refund.amount"], "WITHHELD", "delivered raw"),
    "wrapped up": (
        ["delivered the wrap-up answer after max-iterations"],
        "WITHHELD",
        "wrap-up answer, delivered",
    ),
    "cut short": (["delivered a fragment: cut short at max-iterations"], "WITHHELD", "as a fragment"),
    "fallback": (
        ["delivered the output fallback", "the recording does not hold the fallback's text"],
        "WITHHELD",
        "the DRAFT, not what was delivered",
    ),
    "refused": (["WITHHELD — not delivered", "refused", "evidence gate"], "DELIVERED", "WITHHELD"),
    "denied": (["WITHHELD — not delivered", "denied"], "DELIVERED", "WITHHELD"),
    "halted": (["HALTED — nothing delivered", "refund_order", "refunds over 1000"], "WITHHELD", "halted"),
    "paused": (["PAUSED, awaiting a person", "Approve refund of 80.00 on ORD-9?"], "WITHHELD", "paused"),
}


def capped_copy(source: Path, target: Path, dropped: int) -> Path:
    """The envelope `source` as a capped recorder keeps it: the first `dropped` events gone, and said so."""
    doc = json.loads(source.read_text())
    doc["recording"]["events"] = doc["recording"]["events"][dropped:]
    doc["run"].update(droppedEvents=dropped, firstRetainedEventIndex=dropped)
    target.write_text(json.dumps(doc), encoding="utf-8")
    return target


@pytest.fixture(scope="module")
def delivery_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("delivery")
    path = root / "template.db"
    FILES[CAPPED_NO_READ] = capped_copy(FILES["no-read"], root / "capped-no-read.json", 5)
    # the bare capped recording under a run id of its own: with its envelope's it would be one run with both
    # sources (and the envelope's count of what was dropped), and this case is the bare recording alone
    bare = root / "capped-bare-alone.json"
    bare.write_text(
        FIXTURE_RECORDINGS.joinpath("capped-recording-maxEvents-150.json")
        .read_text()
        .replace("run-1796002161653-1", "run-1796002161653-9")
    )
    FILES["capped bare"] = bare
    db = open_database(path)
    report = ingest(db, [str(p) for p in FILES.values()], db_path=str(path))
    assert not report.quarantined, report.quarantined
    db.close()
    return path


@pytest.fixture
def delivery_db(delivery_template: Path, tmp_path: Path) -> Path:
    return copy_db(delivery_template, tmp_path / "delivery.db")


@pytest.fixture
def delivery_app(delivery_db: Path, app_factory: Any) -> Any:
    return app_factory(db_path=delivery_db)


def run_key_of(db_path: Path, case: str) -> str:
    db = open_database(db_path)
    try:
        rows = list_runs(db)
        keys = [r["run_key"] for r in rows if r["source"] == str(FILES[case])]
        assert len(keys) == 1, [r["source"] for r in rows]
        return keys[0]
    finally:
        db.close()


def drawn(screen: Any, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def open_case(pilot: Any, db_path: Path, case: str) -> Any:
    """Open the case's run (as the palette's "jump to run" does); wait, generously, for it to be drawn."""
    from reviewer.ui.screens.run import RunScreen
    from reviewer.ui.screens.runs import RunsScreen

    app = pilot.app
    await wait_until(
        pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.run_list.loaded, timeout=60
    )
    app.open_run(run_key_of(db_path, case))
    await wait_until(
        pilot,
        lambda: (
            isinstance(app.screen, RunScreen)
            and app.screen.run is not None
            and bool(app.screen.timeline.rows)
        ),
        timeout=60,
    )
    return app.screen


@pytest.mark.parametrize("case", BANNERS)
async def test_the_banner_says_what_the_person_received(
    delivery_app: Any, delivery_db: Path, case: str
) -> None:
    must, must_not, title = BANNERS[case]
    async with delivery_app.run_test(size=SIZE) as pilot:
        screen = await open_case(pilot, delivery_db, case)
        banner = drawn(screen, "#outcome-banner")
        for text in must:
            assert text in banner, (case, banner)
        assert must_not not in banner, (case, banner)
        assert title in str(screen.query_one("#answer-scroll").border_title)
        kinds = {f["kind"] for f in screen.findings}
        # the withheld-answer finding (and its justified / wrong keys) exists only where a draft was kept back
        assert ("withheld-answer" in kinds) is (case in ("refused", "denied")), kinds


async def test_the_runs_list_marks_follow_delivered(delivery_app: Any, delivery_db: Path) -> None:
    from reviewer.ui.widgets.run_list import PAUSED_MARK, PROBLEM_MARK, WITHHELD_MARK
    from tests.ui.conftest import runs_screen_ready

    async with delivery_app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: bool(pilot.app.screen.query("RunList")), timeout=60)
        screen = await runs_screen_ready(pilot)
        lines = [screen.run_list.render_line(y).text for y in range(screen.run_list.size.height)]
        marks = {line[:1] for line in lines if "run-" in line}
        assert marks == {WITHHELD_MARK, PAUSED_MARK, PROBLEM_MARK, " "}
        halted = next(line for line in lines if " halted" in line)
        assert halted.startswith(WITHHELD_MARK)
        for problem in ("cut_short (wrap-up)", "cut_short (fragment)", "contract_unmet (raw)", "(fallback)"):
            line = next(line for line in lines if problem in line)
            assert line.startswith(PROBLEM_MARK) and WITHHELD_MARK not in line, line


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("capped envelope", "184 earlier event(s) were dropped"),
        ("capped bare", "it starts mid-run"),
    ],
)
async def test_a_capped_recording_is_bannered(
    delivery_app: Any, delivery_db: Path, case: str, expected: str
) -> None:
    async with delivery_app.run_test(size=SIZE) as pilot:
        screen = await open_case(pilot, delivery_db, case)
        recording = screen.query_one("#recording-banner", Static)
        assert recording.display
        text = str(recording.render())
        assert "PARTIAL RECORDING" in text and expected in text and "not the whole run" in text
        # the answer that survived is still shown delivered; the missing prompt is said to be missing
        assert "✓ delivered" in drawn(screen, "#outcome-banner")
        prompt = drawn(screen, "#prompt")
        assert "starts mid-run" in prompt or "no prompt recorded" not in prompt


async def test_a_complete_recording_has_no_partial_banner(delivery_app: Any, delivery_db: Path) -> None:
    async with delivery_app.run_test(size=SIZE) as pilot:
        screen = await open_case(pilot, delivery_db, "clean")
        assert not screen.query_one("#recording-banner", Static).display


async def test_the_checks_panel_of_a_clean_run_says_which_checks_ran(
    delivery_app: Any, delivery_db: Path
) -> None:
    async with delivery_app.run_test(size=SIZE) as pilot:
        screen = await open_case(pilot, delivery_db, "clean")
        assert not screen.findings  # a run with no findings ...
        checks = drawn(screen, "#checks")
        # ... says which checks actually ran, and "0 findings" is not "never armed"
        assert "1 of 4 checks ran (invariant-violation@wire); 3 never ran" in checks
        assert "the ones that ran found nothing" in checks
        lines = checks.splitlines()
        wire = next(line for line in lines if line.startswith("invariant-violation@wire"))
        assert "ran" in wire and "0 findings" in wire
        claim = next(line for line in lines if line.startswith("unsupported-claim@claim"))
        assert "never ran: unarmed or out of scope" in claim and "0 findings" not in claim


async def test_the_checks_panel_counts_failing_passes(delivery_app: Any, delivery_db: Path) -> None:
    async with delivery_app.run_test(size=SIZE) as pilot:
        screen = await open_case(pilot, delivery_db, "dangling")
        checks = drawn(screen, "#checks")
        line = next(x for x in checks.splitlines() if x.startswith("dangling-reference@compose"))
        assert "ran 6 times, failed 6 times" in line


async def first_finding_evidence(pilot: Any, screen: Any) -> str:
    """Walk to the first finding (`]`) and return the detail panel's text once its evidence is drawn."""
    from reviewer.ui.widgets.detail import DetailPanel

    panel = screen.query_one(DetailPanel)
    await pilot.press("right_square_bracket")
    await wait_until(pilot, lambda: (panel.showing or "").startswith("finding:"), timeout=60)
    return "\n".join(str(w.render()) for w in panel.query(Static))


async def test_dangling_evidence_lists_the_calls_made_while_the_ground_was_gone(
    delivery_app: Any, delivery_db: Path
) -> None:
    async with delivery_app.run_test(size=(200, 80)) as pilot:
        screen = await open_case(pilot, delivery_db, "dangling")
        detail = await first_finding_evidence(pilot, screen)
        assert "CALLS MADE WHILE THE GROUND WAS GONE" in detail
        assert "the check failed on 6 of 6 passes" in detail
        lines = detail.splitlines()
        # f3..f7 were made after whats_here left the window; f7's screen id is in no evicted result
        made = [line for line in lines if line.strip().startswith("screen_fire f")]
        assert [line.split()[1] for line in made] == ["f3", "f4", "f5", "f6", "f7"]
        invented = next(line for line in made if " f7 " in line)
        assert "scr-9013" in invented and "not in the evicted result" in invented
        assert all("not in the evicted result" not in line for line in made if " f7 " not in line)
        assert "the ground was never re-fetched in this run" in detail


@pytest.mark.parametrize("case", ["no-read", CAPPED_NO_READ])
async def test_no_read_says_what_the_record_shows(delivery_app: Any, delivery_db: Path, case: str) -> None:
    async with delivery_app.run_test(size=(200, 80)) as pilot:
        screen = await open_case(pilot, delivery_db, case)
        detail = await first_finding_evidence(pilot, screen)
        assert "no-read: no read was recorded for this turn" in detail
        assert "nothing was searched" not in detail
        incomplete = "ledger is incomplete" in detail
        assert incomplete is (case == CAPPED_NO_READ)
        assert screen.query_one("#recording-banner", Static).display is (case == CAPPED_NO_READ)
