"""Marking a missed negative by keyboard takes a few keys: `m` offers the unflagged clause that looks most
negative, `tab` the next one, `{`/`}` and `(`/`)` jump by clause and sentence, and `enter` takes the list its
words suggest. Keys are counted from the run screen; the label is read back from the store. A clause that is
flagged already is refused, and the labels show on the run afterwards."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from reviewer.review.missed_negatives import flagged_by, negative_candidates
from reviewer.ui.app import ReviewerApp
from reviewer.ui.widgets.answer import MISSED_STYLE, SPAN_STYLES, AnswerView
from reviewer.ui.widgets.inline_prompts import MissedBar
from store.db.connection import open_database
from store.db.ingest import ingest
from store.runs import get_run, list_runs
from tests.conftest import FIXTURE_RECORDINGS, SAMPLES
from tests.ui.conftest import SIZE, jump_to_run, wait_until
from tests.ui.test_labelling import MISSED_COUNT, PROSE_RUN, one

#: keys after `m` a missed negative may take at most (issue 15)
MAX_KEYS = 5


def missed_rows(db_path: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(db_path) as conn:
        conn.row_factory = sqlite3.Row
        rows = conn.execute(
            "SELECT run_key, span_start, span_end, span_text, list, reviewer FROM labels "
            "WHERE verdict = 'missed' ORDER BY id"
        ).fetchall()
    return [dict(r) for r in rows]


async def mark(pilot: Any, *keys: str) -> None:
    """`m`, then `keys` (counted), from the run screen."""
    assert len(keys) <= MAX_KEYS, keys
    await pilot.press("m", *keys)


async def labelled(pilot: Any, db_path: Path, count: int) -> list[dict[str, Any]]:
    await wait_until(pilot, lambda: one(db_path, MISSED_COUNT) == count)
    return missed_rows(db_path)


async def test_the_clause_that_looks_negative_is_offered_first(app_factory, label_db: Path) -> None:
    app: ReviewerApp = app_factory(db_path=label_db, reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await jump_to_run(pilot, PROSE_RUN)
        text = screen.run["answer"]
        await mark(pilot, "enter", "enter")  # the offered clause, the list its words suggest
        [row] = await labelled(pilot, label_db, 1)
        start = text.index("No pods are pending")
        assert row == {
            "run_key": screen.run_key,
            "span_start": start,
            "span_end": start + len("No pods are pending"),
            "span_text": "No pods are pending",
            "list": "none",
            "reviewer": "ann",
        }

        # the next offered clause is one tab away (the one just labelled is not offered again)
        await mark(pilot, "enter")
        assert screen.answer.selected_text == "I did not read the deploy log"
        await pilot.press("escape", "escape")
        await mark(pilot, "tab", "enter", "n")  # tab wraps round the one clause left
        rows = await labelled(pilot, label_db, 2)
        assert rows[-1]["span_text"] == "I did not read the deploy log" and rows[-1]["list"] == "none"
        assert text[rows[-1]["span_start"] : rows[-1]["span_end"]] == rows[-1]["span_text"]


async def test_jumps_by_clause_and_sentence_and_word(app_factory, label_db: Path) -> None:
    app: ReviewerApp = app_factory(db_path=label_db, reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await jump_to_run(pilot, PROSE_RUN)
        answer = screen.answer
        await pilot.press("m")
        assert answer.selected_text == "No pods are pending"
        hints = str(screen.query_one("#answer-scroll").border_subtitle)
        assert "tab next of 2 negative-looking · {/} clause · (/) sentence · h/l end" in hints
        await pilot.press("left_parenthesis", "left_parenthesis")  # two sentences back (past the code block)
        assert (
            answer.selected_text
            == "I did not read the deploy log, but nothing is failing in eu-west-1 either"
        )
        await pilot.press("right_curly_bracket")  # the clause after that sentence's start
        assert answer.selected_text == "but nothing is failing in eu-west-1 either"
        await pilot.press("left_curly_bracket", "left_curly_bracket")
        assert answer.selected_text == "there are no open incidents for payments"
        await pilot.press("escape")
        # three clauses back, extended by a word, then its list: m and five keys
        await mark(pilot, "left_curly_bracket", "left_curly_bracket", "left_curly_bracket", "l", "enter")
        assert answer.selected_text == "I did not read the deploy log, but"
        await wait_until(pilot, lambda: bool(screen.query(MissedBar)))
        await pilot.press("c")
        [row] = await labelled(pilot, label_db, 1)
        assert row["span_text"] == "I did not read the deploy log, but" and row["list"] == "complete"


async def test_a_flagged_clause_is_refused(app_factory, label_db: Path) -> None:
    app: ReviewerApp = app_factory(db_path=label_db, reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await jump_to_run(pilot, PROSE_RUN)
        await mark(pilot, "left_curly_bracket", "left_curly_bracket", "enter")
        assert screen.answer.selected_text == "but nothing is failing in eu-west-1 either"
        await wait_until(pilot, lambda: any("flagged already" in n.message for n in app._notifications))
        warning = next(n for n in app._notifications if "flagged already" in n.message)
        assert warning.severity == "warning" and "negative-claim" in warning.message
        assert not screen.query(MissedBar) and screen.answer.selecting  # still choosing other words
        await pilot.press("n")
        await pilot.pause()
        assert one(label_db, MISSED_COUNT) == 0
        # no flagged clause is ever offered
        flagged = [f for f in screen.findings if f.get("span")]
        assert flagged and all(
            flagged_by((c.start, c.end), flagged) is None for c in screen.answer.candidates
        )


async def test_missed_labels_show_on_the_run_apart_from_flagged_spans(app_factory, label_db: Path) -> None:
    app: ReviewerApp = app_factory(db_path=label_db, reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await jump_to_run(pilot, PROSE_RUN)
        box = screen.query_one("#missed-negatives")
        assert not box.display
        await mark(pilot, "enter", "enter")
        await labelled(pilot, label_db, 1)
        answer: AnswerView = screen.answer
        await wait_until(pilot, lambda: len(answer.missed) == 1 and box.display)
        listed = str(box.render())
        assert "MISSED NEGATIVES" in listed and "“No pods are pending”" in listed and "none · you" in listed
        plain = answer.answer_text.plain

        def styles_at(index: int) -> list[Any]:
            return [s.style for s in answer.answer_text.spans if s.start <= index < s.end]

        assert MISSED_STYLE in styles_at(plain.index("No pods"))
        flagged = styles_at(plain.index("there are no open"))
        assert SPAN_STYLES["negative-claim"] in flagged and MISSED_STYLE not in flagged

    # …and still there when the run is opened again
    app = app_factory(db_path=label_db, reviewer="bob")
    async with app.run_test(size=SIZE) as pilot:
        screen = await jump_to_run(pilot, PROSE_RUN)
        box = screen.query_one("#missed-negatives")
        await wait_until(pilot, lambda: box.display and len(screen.answer.missed) == 1)
        assert "“No pods are pending”" in str(box.render()) and "none · ann" in str(box.render())


@pytest.fixture(scope="module")
def samples_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("samples") / "review.db"
    db = open_database(path)
    ingest(db, [str(SAMPLES), str(FIXTURE_RECORDINGS)], db_path=str(path))
    db.close()
    return path


def offered_runs(path: Path) -> list[tuple[str, str, tuple[int, int]]]:
    """(run key, clause words, their span) of every sample run whose prose answer has an offered clause."""
    from reviewer.review.typed_fields import field_lines
    from reviewer.ui.widgets.answer import word_spans

    db = open_database(path)
    out = []
    for listed in list_runs(db):
        run = get_run(db, listed["run_key"])
        answer = run.get("answer") or ""
        if not answer or field_lines(answer) is not None:
            continue
        found = negative_candidates(answer, run["findings"], limit=1)
        if found:
            words = [(s, e) for s, e in word_spans(answer) if s < found[0].end and e > found[0].start]
            span = (words[0][0], words[-1][1])
            out.append((run["run_key"], answer[span[0] : span[1]], span))
    db.close()
    return out


async def test_every_bundled_sample_marks_its_offered_clause_in_two_keys(
    app_factory, samples_db: Path
) -> None:
    cases = offered_runs(samples_db)
    assert len(cases) >= 5
    app: ReviewerApp = app_factory(db_path=samples_db, reviewer="ann")
    async with app.run_test(size=SIZE) as pilot:
        for n, (run_key, words, (start, end)) in enumerate(cases, 1):
            screen = await jump_to_run(pilot, run_key)
            await mark(pilot, "enter", "enter")
            rows = await labelled(pilot, samples_db, n)
            assert (rows[-1]["run_key"], rows[-1]["span_start"], rows[-1]["span_end"]) == (
                run_key,
                start,
                end,
            )
            assert rows[-1]["span_text"] == words
            await wait_until(pilot, lambda screen=screen: not screen.answer.selecting)
            await pilot.press("escape")
