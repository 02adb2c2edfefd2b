"""Triage and labelling through the keyboard: the findings queue, the evidence beside a finding, labels of
every kind, notes, undo, several reviewers, missed negatives on the run screen, and a busy database.

Every test drives the real app over a real database and then asserts what the database holds."""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from sqlite_utils import Database
from textual.widgets import Checkbox, Select, Static

from reviewer.ui.app import ReviewerApp
from reviewer.ui.commands import ReviewerCommands
from reviewer.ui.screens.help import HelpScreen, binding_rows
from reviewer.ui.screens.queue import QueueScreen
from reviewer.ui.screens.run import RunScreen
from reviewer.ui.screens.runs import RunsScreen
from reviewer.ui.screens.stats import StatsScreen
from reviewer.ui.widgets.answer import AnswerView
from reviewer.ui.widgets.detail import DetailPanel
from reviewer.ui.widgets.inline_prompts import MissedBar, NoteBar
from store import labels
from store.db.connection import connect
from store.findings import queue_count, queue_page
from tests.ui.conftest import SIZE, jump_to_run, wait_until

PROSE_RUN = "run-1796003100000-1"  # sample_recordings/negative-claims-prose.json
TYPED_RUN = "run-1796003280000-1"  # sample_recordings/typed-negatives-withheld.json
REFUSED_RUN = "run-1796002023213-3"  # evidence-gate-rails-refused.json
CLAUSE = "there are no open incidents for payments"
MISSED_COUNT = "SELECT count(*) FROM labels WHERE verdict = 'missed'"


def reader(db_path: Path) -> Database:
    """A plain connection (no `open_database`: its header check opens and closes the file from Python, which
    drops this process's SQLite locks on it, the POSIX-lock pitfall, while the app's connection is mid-wait)."""
    return Database(connect(db_path))


def one(db_path: Path, sql: str, params: list[Any] | None = None) -> Any:
    db = reader(db_path)
    try:
        row = db.execute(sql, params or []).fetchone()
        return row[0] if row else None
    finally:
        db.close()


def finding(db_path: Path, where: str, params: list[Any] | None = None) -> str:
    fid = one(db_path, f"SELECT id FROM findings WHERE {where} ORDER BY id LIMIT 1", params)
    assert fid, where
    return str(fid)


def with_db(db_path: Path, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    db = reader(db_path)
    try:
        return fn(db, *args, **kwargs)
    finally:
        db.close()


def drawn(panel: DetailPanel) -> str:
    return "\n".join(str(w.render()) for w in panel.query(Static))


async def open_queue(pilot: Any, *, key: bool = False) -> QueueScreen:
    """The queue over the runs screen: with the `q` key, or (quicker) the app action the key runs."""
    app = pilot.app
    await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen))
    if key:
        await wait_until(pilot, lambda: app.screen.run_list.loaded)
        await pilot.press("q")
    else:
        await app.action_open_queue()
    # `showing` is set once the list and the first evidence are drawn (the screen is composed by then)
    await wait_until(pilot, lambda: isinstance(app.screen, QueueScreen) and app.screen.showing is not None)
    return app.screen


async def show(pilot: Any, screen: QueueScreen, finding_id: str) -> str:
    """Put the queue cursor on a finding and wait for its evidence; returns the panel's text."""
    await screen.go_to(finding_id)
    await wait_until(
        pilot,
        lambda: (
            screen.showing == finding_id
            and screen.query_one("#evidence", DetailPanel).showing == f"finding:{finding_id}"
        ),
    )
    return drawn(screen.query_one("#evidence", DetailPanel))


async def labelled(pilot: Any, db_path: Path, finding_id: str, count: int = 1) -> list[dict[str, Any]]:
    await wait_until(pilot, lambda: len(with_db(db_path, labels.history, finding_id)) >= count)
    return with_db(db_path, labels.history, finding_id)  # type: ignore[no-any-return]


open_run = jump_to_run


def errors(app: ReviewerApp) -> list[str]:
    return [n.message for n in app._notifications if n.severity == "error"]


async def test_documented_keymap_form_remaps_label_keys_in_footer_and_hints(
    app_factory, label_db: Path, tmp_path: Path, monkeypatch
) -> None:
    from textual.widgets._footer import FooterKey

    keymap = tmp_path / "keymap.toml"
    keymap.write_text('label.tp = "y"\nthis = = bad\n"label.note" = "N"\n', encoding="utf-8")
    monkeypatch.setenv("REVIEWER_KEYMAP", str(keymap))
    app: ReviewerApp = app_factory(db_path=label_db, reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen))
        warnings = [n.message for n in app._notifications if "keymap" in (n.title or "")]
        assert len(warnings) == 1 and ":2:" in warnings[0]
        screen = await open_queue(pilot)
        await wait_until(pilot, lambda: bool(screen.query(FooterKey)))
        footer = {(k.key_display, k.description) for k in screen.query(FooterKey)}
        assert ("y", "TP / justified") in footer
        assert ("N", "Note") in footer
        hints = "\n".join(str(w.render()) for w in screen.query_one("#evidence").query(Static))
        assert "keys: y true positive" in hints or "keys: y withholding justified" in hints
        assert "N note" in hints
        target = screen.showing
        await pilot.press("y")
        assert target is not None
        assert [row["verdict"] for row in await labelled(pilot, label_db, target)] in (["tp"], ["justified"])


# -- the queue --------------------------------------------------------------------------------------------------


async def test_queue_counter_filters_and_next_unlabelled(app_factory, label_db: Path) -> None:
    gap = finding(label_db, "kind = 'coverage-gap'")
    with_db(label_db, labels.label_finding, gap, "tp", "bob")
    ids = [r["id"] for r in with_db(label_db, queue_page, limit=4)]
    with_db(label_db, labels.label_finding, ids[1], "unsure", "ann")  # unsure fits every kind
    with_db(label_db, labels.label_finding, ids[2], "unsure", "ann")
    app: ReviewerApp = app_factory(db_path=label_db, reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_queue(pilot, key=True)
        total = with_db(label_db, queue_count)
        assert screen.total == total == screen.finding_list.row_count
        labelled_now = len({gap, ids[1], ids[2]})
        status = str(screen.query_one("#queue-status", Static).render())
        assert f"{labelled_now} / {total} labelled" in status and "(2 by you)" in status
        assert "0 disagreements" in status
        lines = [screen.finding_list.render_line(y).text for y in range(screen.finding_list.size.height)]
        assert sum(1 for line in lines if line.strip()) == min(total, screen.finding_list.size.height)
        assert lines[1].startswith("✓") and "you:unsure" in lines[1]

        # n: the next finding I have not labelled (1 and 2 carry my labels; bob's label on another does not count)
        assert screen.finding_list.cursor == 0
        await pilot.press("n")
        expected = next(i for i in ids[3:] if i != gap) if ids[3] != gap else ids[3]
        await wait_until(pilot, lambda: screen.showing == expected)
        assert screen.finding_list.row_at(screen.finding_list.cursor)["id"] == expected

        # filters: kind, then label state
        kind: Select = screen.query_one("#q-kind", Select)
        await wait_until(pilot, lambda: len(kind._options) > 5)
        kind.value = "coverage-gap"
        gaps = with_db(label_db, queue_count, kind="coverage-gap")
        await wait_until(pilot, lambda: screen.total == gaps)
        assert 0 < gaps < total
        assert {screen.finding_list.row_at(i)["kind"] for i in range(gaps)} == {"coverage-gap"}
        assert "kind=coverage-gap" in str(screen.query_one("#queue-status", Static).render())
        await pilot.press("s")  # label state: any -> unlabelled
        unlabelled = with_db(label_db, queue_count, kind="coverage-gap", state="unlabelled")
        await wait_until(
            pilot, lambda: screen.filters.get("state") == "unlabelled" and screen.total == unlabelled
        )
        assert unlabelled < gaps and gap not in {
            screen.finding_list.row_at(i)["id"] for i in range(unlabelled)
        }
        screen.query_one("#q-state", Select).value = "not-mine"  # bob's label does not take it out
        not_mine = with_db(label_db, queue_count, kind="coverage-gap", state="not-mine", reviewer="ann")
        await wait_until(
            pilot, lambda: screen.filters.get("state") == "not-mine" and screen.total == not_mine
        )
        assert gap in {screen.finding_list.row_at(i)["id"] for i in range(not_mine)}
        await pilot.press("x")
        await wait_until(pilot, lambda: screen.filters == {} and screen.total == total)

        # the palette opens the same screen narrowed to a label state
        await app.action_open_queue("disagreement")
        await wait_until(pilot, lambda: screen.filters == {"state": "disagreement"} and screen.total == 0)


# -- the evidence beside a finding, and labels of every kind ----------------------------------------------------


async def test_label_every_kind_from_the_keyboard(app_factory, label_db: Path) -> None:
    """One finding of each kind, with what its evidence must show, labelled with one key."""
    clause = finding(label_db, "run_id = ? AND span_text = ?", [PROSE_RUN, CLAUSE])
    cases = [
        (
            clause,
            "1",
            "tp",
            [
                "FLAGGED CLAUSE",
                "Release check for",
                "EVIDENCE: THE READS THE FINDING NAMES",
                "list_incidents",
                "call-inc-1",
                "absent()",
                "checked",
                "the incident store (tenant acme-corp)",
                "not checked",
                "incidents opened in the last 5 minutes",
                "the search index lags by up to 5 minutes",
                "cannot cover",
                "incidents filed by email",
                "email reports never enter this store",
                "bounded negative",
                "reason to believe they cover everything",
                "ABSOLUTE",
                "outruns its evidence",
            ],
        ),  # "there are no …" outruns a search that declares gaps
        (finding(label_db, "kind = 'coverage-gap'"), "2", "fp", ["cannot cover", "incidents filed by email"]),
        (
            finding(label_db, "kind = 'dangling-reference'"),
            "2",
            "fp",
            [
                "EVICTED GROUND",
                "whats_here left the window at iteration 4 by sliding-window",
                "offered tool screen_fire depends on it",
            ],
        ),
        (
            finding(label_db, "kind = 'evidence-gate' AND run_id = ?", [REFUSED_RUN]),
            "3",
            "unsure",
            ["unsupported value 1500", "THE ANSWER, THOSE VALUES MARKED"],
        ),
        (
            finding(label_db, "kind = 'withheld-answer' AND run_id = ?", [TYPED_RUN]),
            "1",
            "justified",
            [
                "1 withholding justified",
                "WITHHELD ANSWER",
                "typed negative refused",
                "Payments looks quiet",
                "none about payments: refused (contrary-read)",
                "contrary read r2: rows INC-7",
                "incidents filed by email",
            ],
        ),
        (
            finding(label_db, "kind = 'withheld-answer' AND run_id = ?", [REFUSED_RUN]),
            "2",
            "wrong",
            ["evidence gate", "about 1500 rx errors"],
        ),
    ]
    app: ReviewerApp = app_factory(db_path=label_db, reviewer="ann", auto_advance=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_queue(pilot)
        for fid, key, verdict, needles in cases:
            text = await show(pilot, screen, fid)
            for needle in needles:
                assert needle in text, (fid, needle)
            if fid == clause:  # the flagged span is highlighted inside its sentence
                content = screen.query_one("#evidence", DetailPanel).query_one(Static).content
                start = content.plain.index(CLAUSE, content.plain.index("FLAGGED CLAUSE"))
                assert any(s.start <= start and s.end >= start + len(CLAUSE) for s in content.spans)
            await pilot.press(key)
            rows = await labelled(pilot, label_db, fid)
            assert [(r["reviewer"], r["verdict"]) for r in rows] == [("ann", verdict)]
            assert with_db(label_db, labels.current, fid) == {"ann": verdict}
            mine = f"you (ann): {verdict}"
            await wait_until(
                pilot, lambda mine=mine: mine in drawn(screen.query_one("#evidence", DetailPanel))
            )
            assert screen.finding_list.cursor == screen.finding_list.index_of(fid)  # auto-advance is off
        await wait_until(
            pilot, lambda: f"({len(cases)} by you)" in str(screen.query_one("#queue-status", Static).render())
        )
        assert f"{len(cases)} / " in str(screen.query_one("#queue-status", Static).render())
        assert errors(app) == []


# -- undo, auto-advance, notes, several reviewers ---------------------------------------------------------------


async def test_auto_advance_and_undo(app_factory, label_db: Path) -> None:
    first = finding(label_db, "run_id = ? AND span_text = ?", [PROSE_RUN, CLAUSE])
    gap = finding(label_db, "kind = 'coverage-gap'")
    app: ReviewerApp = app_factory(db_path=label_db, reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_queue(pilot)
        panel = screen.query_one("#evidence", DetailPanel)
        await show(pilot, screen, first)
        await pilot.press("1")
        await labelled(pilot, label_db, first)
        await wait_until(
            pilot, lambda: screen.showing not in (None, first)
        )  # advanced to the next unlabelled
        # u right after: undoes the label just made (the cursor moved on) and goes back to it
        await pilot.press("u")
        rows = await labelled(pilot, label_db, first, 2)
        assert [r["verdict"] for r in rows] == ["tp", "cleared"] and rows[1]["undoes"] == rows[0]["uid"]
        assert with_db(label_db, labels.current, first) == {}
        await wait_until(pilot, lambda: screen.showing == first)

        # turn auto-advance off, then change a verdict and undo the change: the previous one comes back
        await pilot.press("a")
        await wait_until(
            pilot, lambda: screen.auto_advance is False and not screen.query_one("#q-advance", Checkbox).value
        )
        await show(pilot, screen, gap)
        await pilot.press("1")
        await labelled(pilot, label_db, gap)
        await pilot.press("2")
        await labelled(pilot, label_db, gap, 2)
        assert screen.showing == gap  # stayed
        await pilot.press("u")
        rows = await labelled(pilot, label_db, gap, 3)
        assert [r["verdict"] for r in rows] == ["tp", "fp", "tp"]
        assert rows[-1]["undoes"] == rows[1]["uid"]  # appended, nothing deleted
        assert with_db(label_db, labels.current, gap) == {"ann": "tp"}
        await wait_until(pilot, lambda: "(undo)" in drawn(panel) and "you (ann): tp" in drawn(panel))


async def test_notes_and_two_reviewers_disagreeing(app_factory, label_db: Path) -> None:
    gap = finding(label_db, "kind = 'coverage-gap'")
    fid = finding(label_db, "run_id = ? AND span_text = ?", [PROSE_RUN, CLAUSE])
    with_db(label_db, labels.label_finding, fid, "fp", "bob", "the store is authoritative")
    app: ReviewerApp = app_factory(db_path=label_db, reviewer="ann", auto_advance=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_queue(pilot)
        panel = screen.query_one("#evidence", DetailPanel)
        # a note before any verdict waits for the next label
        await show(pilot, screen, gap)
        await pilot.press("o")
        await wait_until(pilot, lambda: bool(screen.query(NoteBar)))
        await pilot.press(*"[b]x[/b]")  # markup-looking text stays literal
        await pilot.press("enter")
        await wait_until(pilot, lambda: not screen.query(NoteBar) and app.focused is screen.finding_list)
        assert with_db(label_db, labels.history, gap) == []  # nothing written until a verdict
        await wait_until(pilot, lambda: "note waiting for your next label" in drawn(panel))
        await pilot.press("1")
        rows = await labelled(pilot, label_db, gap)
        assert (rows[0]["verdict"], rows[0]["note"]) == ("tp", "[b]x[/b]")
        await wait_until(pilot, lambda: "[b]x[/b]" in drawn(panel))
        # editing the note re-labels with the same verdict
        await pilot.press("o")
        await wait_until(pilot, lambda: bool(screen.query(NoteBar)))
        assert screen.query_one("#note-input").value == "[b]x[/b]"
        await pilot.press("ctrl+u", "o", "k", "enter")
        rows = await labelled(pilot, label_db, gap, 2)
        assert (rows[1]["verdict"], rows[1]["note"]) == ("tp", "ok")

        # bob labelled this one fp (through the store); ann says tp: the panel marks the disagreement
        text = await show(pilot, screen, fid)
        assert "bob: fp" in text and "the store is authoritative" in text and "DISAGREEMENT" not in text
        await pilot.press("1")
        await labelled(pilot, label_db, fid, 2)
        await wait_until(pilot, lambda: "DISAGREEMENT" in drawn(panel))
        assert "you (ann): tp" in drawn(panel) and "bob: fp" in drawn(panel)
        assert with_db(label_db, labels.current, fid) == {"ann": "tp", "bob": "fp"}
        await wait_until(
            pilot, lambda: "1 disagreement" in str(screen.query_one("#queue-status", Static).render())
        )
        index = screen.finding_list.index_of(fid)
        assert index is not None
        assert screen.finding_list.render_line(index - screen.finding_list.scroll_offset.y).text.startswith(
            "≠"
        )
        screen.query_one("#q-state", Select).value = "disagreement"
        await wait_until(pilot, lambda: screen.total == 1 and screen.finding_list.row_at(0)["id"] == fid)


# -- the run screen ---------------------------------------------------------------------------------------------


async def test_run_screen_labels_missed_negatives_and_queue_link(app_factory, label_db: Path) -> None:
    clause = finding(label_db, "run_id = ? AND span_text = ?", [PROSE_RUN, CLAUSE])
    app: ReviewerApp = app_factory(db_path=label_db, reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_run(pilot, PROSE_RUN)
        await pilot.press("1")  # the cursor is on an iteration: nothing to label
        await wait_until(pilot, lambda: any("finding first" in n.message for n in app._notifications))
        await pilot.press("right_square_bracket")
        row = screen.timeline.row_at(screen.timeline.cursor)
        assert row is not None and row["kind"] == "finding"
        panel = screen.query_one(DetailPanel)
        await wait_until(pilot, lambda: "LABELS" in drawn(panel) and "READS IT RESTS ON" in drawn(panel))
        await pilot.press("1")
        rows = await labelled(pilot, label_db, row["id"])
        expected = "justified" if row["finding"]["kind"] == "withheld-answer" else "tp"
        assert [(r["reviewer"], r["verdict"]) for r in rows] == [("ann", expected)]
        await wait_until(pilot, lambda: f"you (ann): {expected}" in drawn(panel))
        assert screen.timeline.cursor == screen.timeline.index_of_finding(row["id"])  # no auto-advance here
        await pilot.press("u")
        rows = await labelled(pilot, label_db, row["id"], 2)
        assert rows[-1]["verdict"] == "cleared"

        # missed negatives: words of the answer chosen with the keyboard
        answer = screen.query_one(AnswerView)
        text = screen.run["answer"]
        await pilot.press("m")
        assert answer.selecting and app.focused is answer
        assert answer.selected_text == "No pods are pending"  # the unflagged clause that looks negative
        await pilot.press("home")
        assert answer.selected_text == "Release"  # the first word (the 🚀 before it is not a word)
        await pilot.press("l", "l", "l", "l")  # end → ×4
        assert answer.selected_text == "Release check for 𝔘S-East payments"
        await pilot.press("L", "L", "h")  # start → ×2, end ← ×1
        assert answer.selected_text == "for 𝔘S-East"
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(screen.query(MissedBar)))
        await pilot.press("n")
        await wait_until(pilot, lambda: one(label_db, MISSED_COUNT) == 1)
        db = reader(label_db)
        names = (
            "run_key",
            "span_start",
            "span_end",
            "span_text",
            "list",
            "reviewer",
            "verdict",
            "target_kind",
        )
        row = dict(
            zip(
                names,
                db.execute(f"SELECT {', '.join(names)} FROM labels WHERE verdict = 'missed'").fetchone(),
                strict=True,
            )
        )
        db.close()
        target = text.index("for 𝔘S-East")  # a Python index: 🚀 and 𝔘 are one character each
        assert row == {
            "run_key": screen.run_key,
            "span_start": target,
            "span_end": target + len("for 𝔘S-East"),
            "span_text": "for 𝔘S-East",
            "list": "none",
            "reviewer": "ann",
            "verdict": "missed",
            "target_kind": "missed-negative",
        }
        assert text[row["span_start"] : row["span_end"]] == row["span_text"]
        assert not answer.selecting and app.focused is screen.timeline
        await wait_until(pilot, lambda: len(answer.missed) == 1)  # drawn underlined from now on

        # …and with a mouse drag, from inside "check" to inside "East": it snaps out to whole words
        plain = answer.answer_text.plain
        words = "check for 𝔘S-East"
        at = plain.index(words)
        x0, x1 = cell_len(plain[: at + 2]), cell_len(plain[: at + len(words) - 2])  # 🚀 takes two cells
        await pilot.mouse_down(answer, offset=(x0, 0))
        await pilot.hover(answer, offset=(x1, 0))
        await pilot.mouse_up(answer, offset=(x1, 0))
        await pilot.pause()
        assert (
            screen.get_selected_text() or "x"
        ) in words  # part of the words, cut inside the first and last
        await pilot.press("m")
        assert answer.selected_text == words and answer.selection_span[0] == text.index(words)
        await pilot.press("escape")  # escape leaves selection mode without a label
        assert not answer.selecting and isinstance(app.screen, RunScreen)
        assert one(label_db, MISSED_COUNT) == 1

        # enter in the queue opens the run with the timeline cursor on that finding
        await pilot.press("escape")
        queue = await open_queue(pilot)
        await show(pilot, queue, clause)
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: (
                isinstance(app.screen, RunScreen)
                and app.screen.run is not None
                and bool(app.screen.timeline.rows)
            ),
        )
        run_screen = app.screen
        assert run_screen.timeline.row_at(run_screen.timeline.cursor)["id"] == clause
        await pilot.press("2")
        await labelled(pilot, label_db, clause)
        await pilot.press("escape")  # back in the queue, the label shows there too
        await wait_until(pilot, lambda: app.screen is queue)
        await wait_until(pilot, lambda: "you (ann): fp" in drawn(queue.query_one("#evidence", DetailPanel)))


# -- a busy database --------------------------------------------------------------------------------------------

HOLDER = """
import sqlite3, sys, time
path = sys.argv[1]
reader = sqlite3.connect(path, isolation_level=None)
reader.execute("BEGIN")
reader.execute("SELECT count(*) FROM labels").fetchone()   # a read transaction, open throughout
writer = sqlite3.connect(path, isolation_level=None)
writer.execute("BEGIN IMMEDIATE")                            # and the write lock
writer.execute("INSERT INTO labels (uid, target_id, target_kind, verdict, reviewer, created_at) "
               "VALUES ('holder', 'nothing', 'x', 'cleared', 'holder', '2026-01-01')")
print("locked", flush=True)
sys.stdin.readline()                                         # held until the test says so
writer.execute("COMMIT")
reader.execute("COMMIT")
print("released", flush=True)
"""


async def test_a_label_waits_for_another_process_holding_the_database(app_factory, label_db: Path) -> None:
    fid = finding(label_db, "kind = 'coverage-gap'")
    app: ReviewerApp = app_factory(db_path=label_db, reviewer="ann", auto_advance=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_queue(pilot)
        await show(pilot, screen, fid)
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(label_db)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdin is not None and holder.stdout is not None
            assert holder.stdout.readline().strip() == "locked"
            await pilot.press("1")
            await pilot.pause(0.3)
            assert with_db(label_db, labels.history, fid) == []  # queued behind the other writer…
            assert holder.poll() is None  # (which still holds the lock)
            holder.stdin.write("release\n")
            holder.stdin.flush()
            rows = await labelled(pilot, label_db, fid)  # …then lands once it lets go
            assert [r["verdict"] for r in rows] == ["tp"]
            assert holder.stdout.readline().strip() == "released"
            assert holder.wait(timeout=60) == 0
        finally:
            if holder.poll() is None:
                holder.kill()
        await pilot.pause(0.1)
        assert errors(app) == [] and not any("locked" in n.message for n in app._notifications)


# -- stats, packs, keys -----------------------------------------------------------------------------------------


async def test_stats_packs_and_help(app_factory, label_db: Path) -> None:
    ids = [r["id"] for r in with_db(label_db, queue_page, kind="coverage-gap", limit=3)]
    for fid, (a, b) in zip(ids, (("tp", "tp"), ("fp", "fp"), ("tp", "fp")), strict=True):
        with_db(label_db, labels.label_finding, fid, a, "ann")
        with_db(label_db, labels.label_finding, fid, b, "bob")
    app: ReviewerApp = app_factory(db_path=label_db, reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.run_list.loaded)
        # the palette offers the new screens; the stats show counts per kind and kappa per reviewer pair
        titles = [title for title, _callback, _help in ReviewerCommands(app.screen)._commands()]
        assert {"Findings queue", "Findings queue: disagreements", "Label stats", "Phrase packs"} <= set(
            titles
        )
        app.action_open_stats()
        await wait_until(pilot, lambda: isinstance(app.screen, StatsScreen) and app.screen.stats is not None)
        stats = app.screen.stats
        assert stats["agreement"][0]["reviewers"] == ["ann", "bob"] and stats["agreement"][0]["shared"] == 3
        console = Console(width=160, record=True, file=io.StringIO())
        console.print(app.screen.query_one("#stats", Static).content)
        out = console.export_text()
        assert "coverage-gap" in out and "ann × bob" in out and f"{stats['agreement'][0]['kappa']:.2f}" in out
        await pilot.press("escape")

        # p on the runs screen opens the phrase packs, for this reviewer
        from reviewer.ui.screens.packs import PacksScreen

        await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen))
        await pilot.press("p")
        await wait_until(pilot, lambda: isinstance(app.screen, PacksScreen))
        assert app.screen.reviewer == "ann"
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen))

        # ? lists every key with its binding id: q and p here, the label keys on the queue and run screens
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        rows = {(keys, binding_id) for _s, keys, _d, binding_id in app.screen.rows}
        assert {("q", "runs.queue"), ("p", "runs.packs")} <= rows
        queue_rows = {(keys, binding_id) for _s, keys, _d, binding_id in binding_rows(app, QueueScreen())}
        assert {
            ("1", "label.tp"),
            ("2", "label.fp"),
            ("3", "label.unsure"),
            ("o", "label.note"),
            ("u", "label.undo"),
            ("n", "queue.next-unlabelled"),
        } <= queue_rows
        run_rows = {(keys, binding_id) for _s, keys, _d, binding_id in binding_rows(app, RunScreen("x"))}
        assert {("m", "run.mark-missed"), ("1", "label.tp"), ("u", "label.undo")} <= run_rows


async def test_each_kind_says_what_true_and_false_positive_mean_beside_the_keys(
    app_factory, label_db: Path
) -> None:
    from reviewer.ui.widgets.evidence import MEANINGS

    gap = finding(label_db, "kind = 'coverage-gap'")
    withheld = finding(label_db, "kind = 'withheld-answer'")
    app: ReviewerApp = app_factory(db_path=label_db, reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_queue(pilot)
        text = await show(pilot, screen, gap)
        keys_line = text.index("keys: 1 true positive")
        assert text.index(MEANINGS["coverage-gap"]) > keys_line
        assert "TP: the answer relies on what this tool did not check" in text
        text = await show(pilot, screen, withheld)
        assert MEANINGS["withheld-answer"] in text


def uncovered(screen: Any, widget: Any) -> bool:
    """`widget` is displayed, has room, and what is drawn at its centre belongs to it (nothing covers it)."""
    region = widget.region
    if not (widget.display and widget.visible and region.height >= 3 and region.width >= 10):
        return False
    at, _ = screen.get_widget_at(region.x + region.width // 2, region.y + region.height // 2)
    return at is widget or widget in at.ancestors


async def test_note_and_missed_negative_prompts_leave_the_finding_and_its_evidence_in_view(
    app_factory, label_db: Path
) -> None:
    fid = finding(label_db, "run_id = ? AND span_text = ?", [PROSE_RUN, CLAUSE])
    app: ReviewerApp = app_factory(db_path=label_db, reviewer="ann")
    async with app.run_test(size=(120, 40)) as pilot:
        queue = await open_queue(pilot)
        await show(pilot, queue, fid)
        panel = queue.query_one("#evidence", DetailPanel)
        await pilot.press("o")
        await wait_until(pilot, lambda: bool(queue.query(NoteBar)) and app.focused is not None)
        await pilot.pause()
        bar = queue.query_one(NoteBar)
        assert app.screen is queue and app.focused is queue.query_one("#note-input")
        assert uncovered(queue, panel) and uncovered(queue, queue.finding_list)
        assert not panel.region.overlaps(bar.region)
        assert CLAUSE in drawn(panel)  # the flagged clause is still what the panel shows
        await pilot.press("escape")
        await wait_until(pilot, lambda: not queue.query(NoteBar))
        assert app.screen is queue and app.focused is queue.finding_list

        # the missed-negative choice on the run screen: the answer and the detail stay in view
        await pilot.press("enter")
        screen = await wait_run(pilot)
        await pilot.press("m", "enter")
        await wait_until(pilot, lambda: bool(screen.query(MissedBar)))
        await pilot.pause()
        bar = screen.query_one(MissedBar)
        answer_box = screen.query_one("#answer-scroll")
        detail = screen.query_one(DetailPanel)
        assert app.screen is screen
        assert (
            uncovered(screen, answer_box) and uncovered(screen, detail) and uncovered(screen, screen.timeline)
        )
        assert not answer_box.region.overlaps(bar.region) and not detail.region.overlaps(bar.region)
        assert screen.answer.selecting  # the selection being labelled is still drawn in the answer
        await pilot.press("escape")
        await wait_until(pilot, lambda: not screen.query(MissedBar))
        assert one(label_db, MISSED_COUNT) == 0


async def wait_run(pilot: Any) -> RunScreen:
    app = pilot.app
    await wait_until(
        pilot,
        lambda: (
            isinstance(app.screen, RunScreen)
            and app.screen.run is not None
            and bool(app.screen.timeline.rows)
        ),
    )
    return app.screen  # type: ignore[return-value]
