"""Pilot tests: drive the real app over a real database and assert what a reviewer sees."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual.widgets import Input, Static

from reviewer.ui.app import ReviewerApp
from reviewer.ui.screens.help import HelpScreen
from reviewer.ui.screens.run import RunScreen
from reviewer.ui.screens.runs import RunsScreen
from reviewer.ui.widgets import detail as detail_module
from reviewer.ui.widgets.answer import CURRENT_SPAN, AnswerView
from reviewer.ui.widgets.detail import DetailPanel
from reviewer.ui.widgets.run_list import PAUSED_MARK, PROBLEM_MARK, WITHHELD_MARK, RunList
from reviewer.ui.widgets.timeline import Timeline
from store.db.connection import open_database
from store.runs import list_runs
from tests.ui.conftest import SIZE, palette_offers, run_screen_ready, wait_until
from tests.ui.recordings import CLAUSE_1, CLAUSE_2, DENIED_RUN, EMOJI_RUN, PROMPT

#: outcomes of the shared recordings after which the person received nothing (a draft kept back)
SHARED_WITHHELD = {"refused", "denied"}


def lines(widget: Any) -> list[str]:
    """The widget's lines as drawn (line API)."""
    return [widget.render_line(y).text for y in range(widget.size.height)]


def strip_for(widget: Any, needle: str) -> Any:
    for y in range(widget.size.height):
        strip = widget.render_line(y)
        if needle in strip.text:
            return strip
    raise AssertionError(f"{needle!r} not drawn in {type(widget).__name__}")


async def runs_loaded(pilot: Any) -> RunsScreen:
    app = pilot.app
    await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.run_list.loaded)
    return app.screen


async def open_run(pilot: Any, run_id: str) -> RunScreen:
    """Find the run in the list (every test database fits in the first block), put the cursor on it, enter."""
    screen = await runs_loaded(pilot)
    run_list = screen.run_list
    index = next(i for i in range(run_list.row_count) if (run_list.row_at(i) or {}).get("run_id") == run_id)
    run_list.move_to(index)
    await pilot.pause()
    await pilot.press("enter")
    return await run_screen_ready(pilot)


def expected_runs(db_path: Path, **filters: Any) -> list[str]:
    db = open_database(db_path)
    try:
        return [r["run_key"] for r in list_runs(db, **filters)]
    finally:
        db.close()


# -- runs screen ------------------------------------------------------------------------------------------------


async def test_runs_listed_with_withheld_runs_marked(app_factory, ui_db: Path) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await runs_loaded(pilot)
        total = len(expected_runs(ui_db))
        assert screen.total == total == screen.run_list.row_count
        status = str(screen.query_one("#runs-status", Static).render())
        assert f"{total} runs" in status
        drawn = lines(screen.run_list)
        assert sum(1 for line in drawn if "run-" in line) == total  # every run is on screen at 160x50
        for outcome in SHARED_WITHHELD | {"denied"}:
            strip = strip_for(screen.run_list, f"{WITHHELD_MARK} {outcome}")
            assert strip.text.startswith(WITHHELD_MARK)  # the row's first column marks it too
            styles = [seg.style for seg in strip if f"{WITHHELD_MARK} {outcome}" in seg.text]
            assert styles and styles[0].color is not None and styles[0].color.name == "red" and styles[0].bold
        delivered = [line for line in drawn if " delivered " in line]
        assert delivered and not any(WITHHELD_MARK in line for line in delivered)
        # a pause is not a withholding; an unmet contract was delivered raw: marked as a problem, not withheld
        assert strip_for(screen.run_list, f"{PAUSED_MARK} paused").text.startswith(PAUSED_MARK)
        raw = strip_for(screen.run_list, f"{PROBLEM_MARK} contract_unmet (raw)")
        assert raw.text.startswith(PROBLEM_MARK) and WITHHELD_MARK not in raw.text
        header = str(screen.query_one("#runs-columns", Static).render())
        for title in ("agent", "outcome", "calls", "finds", "gaps", "evict", "unlab"):
            assert title in header
        # unlabelled counts come from the service (no labels yet: every finding is unlabelled)
        row = next(
            screen.run_list.row_at(i)
            for i in range(total)
            if screen.run_list.row_at(i)["run_id"] == EMOJI_RUN
        )
        assert row["unlabelled"] == row["findings"] == 2


async def test_filter_withheld_and_by_outcome(app_factory, ui_db: Path) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await runs_loaded(pilot)
        await pilot.press("w")
        withheld = expected_runs(ui_db, undelivered=True)
        await wait_until(pilot, lambda: screen.total == len(withheld))
        drawn = [line for line in lines(screen.run_list) if "run-" in line]
        # refused, denied (twice) and paused; the contract unmet (delivered raw) is no longer among them
        assert len(drawn) == len(withheld) == 4
        assert all(line.startswith((WITHHELD_MARK, PAUSED_MARK)) for line in drawn)
        assert not any("contract_unmet" in line for line in drawn)
        await pilot.press("w")  # toggles off
        await wait_until(pilot, lambda: screen.total == len(expected_runs(ui_db)))

        # the command palette filters by outcome
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"outcome: refused")
        await palette_offers(pilot, "outcome: refused")
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.total == 1)
        assert screen.filters == {"outcome": "refused"}
        assert [line for line in lines(screen.run_list) if "run-" in line][0].count("refused") == 1
        assert "outcome=refused" in str(screen.query_one("#runs-status", Static).render())
        await pilot.press("x")
        await wait_until(pilot, lambda: screen.total == len(expected_runs(ui_db)))


async def test_slash_search_narrows_the_list(app_factory, ui_db: Path) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await runs_loaded(pilot)
        before = screen.total
        await pilot.press("slash")
        assert isinstance(app.focused, Input) and app.focused.id == "search"
        await pilot.press(*"weather")
        await pilot.press("enter")
        expected = expected_runs(ui_db, search="weather")
        assert before is not None and 0 < len(expected) < before
        await wait_until(pilot, lambda: screen.total == len(expected))
        shown = [screen.run_list.row_at(i)["run_key"] for i in range(screen.run_list.row_count)]
        assert shown == expected
        assert app.focused is screen.run_list  # enter in the search box returns to the list
        # a search with no match says so
        await pilot.press("slash", "ctrl+u", *"zzqqxx", "enter")
        await wait_until(pilot, lambda: screen.total == 0)
        assert "no runs match" in lines(screen.run_list)[0]


async def test_sort_oldest_first(app_factory, ui_db: Path) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await runs_loaded(pilot)
        newest = [screen.run_list.row_at(i)["run_key"] for i in range(screen.run_list.row_count)]
        await pilot.press("s")
        await wait_until(
            pilot, lambda: screen.sort == "oldest" and screen.run_list.row_at(0)["run_key"] == newest[-1]
        )
        oldest = [screen.run_list.row_at(i)["run_key"] for i in range(screen.run_list.row_count)]
        assert oldest == newest[::-1]


# -- run screen -------------------------------------------------------------------------------------------------


async def test_enter_opens_run_with_answer_spans_on_the_right_characters(app_factory) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_run(pilot, EMOJI_RUN)
        answer = screen.query_one(AnswerView)
        text = answer.answer_text
        plain = text.plain
        # the escape and the zero-width space before the spans are drawn inert (and lengthen the text)
        assert "\x1b" not in plain and "␛" in plain and "\\u200b" in plain and "\u200b" not in plain
        assert plain.startswith("🚀 Release check 🛰")
        for clause in (CLAUSE_1, CLAUSE_2):
            start = plain.index(clause)
            styled = [s for s in text.spans if (s.start, s.end) == (start, start + len(clause))]
            assert styled, f"no highlight exactly on {clause!r}"
            assert isinstance(styled[0].style, Style) and styled[0].style.bgcolor is not None
            assert plain[styled[0].start : styled[0].end] == clause
        # nothing outside the two clauses is highlighted
        highlighted = {i for s in text.spans for i in range(s.start, s.end)}
        expect = {i for c in (CLAUSE_1, CLAUSE_2) for i in range(plain.index(c), plain.index(c) + len(c))}
        assert highlighted == expect
        # delivered: no withheld mark
        banner = str(screen.query_one("#outcome-banner", Static).render())
        assert "delivered" in banner and "WITHHELD" not in banner
        # the recorded prompt looks like markup but is shown literally
        prompt = screen.query_one("#prompt", Static).render()
        assert str(prompt) == PROMPT
        # the timeline: iterations, the tool call, both findings, in order
        kinds = [r["kind"] for r in screen.timeline.rows]
        assert kinds == ["iteration", "tool_call", "iteration", "finding", "finding"]
        assert "list_incidents" in "\n".join(lines(screen.timeline))


async def test_brackets_walk_findings_and_emphasise_the_span(app_factory) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_run(pilot, EMOJI_RUN)
        timeline = screen.timeline
        answer = screen.query_one(AnswerView)
        finding_rows = timeline.finding_indices
        assert len(finding_rows) == 2

        def current_clause() -> str:
            spans = [s for s in answer.answer_text.spans if s.style == CURRENT_SPAN]
            assert len(spans) == 1
            return answer.answer_text.plain[spans[0].start : spans[0].end]

        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert timeline.cursor == finding_rows[0]
        assert current_clause() == CLAUSE_1
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert timeline.cursor == finding_rows[1]
        assert current_clause() == CLAUSE_2
        await wait_until(pilot, lambda: (screen.query_one(DetailPanel).showing or "").startswith("finding:"))
        detail = "\n".join(str(w.render()) for w in screen.query_one(DetailPanel).query(Static))
        assert "entity-unresolved" in detail and CLAUSE_2 in detail
        await pilot.press("left_square_bracket")
        await pilot.pause()
        assert timeline.cursor == finding_rows[0]
        assert current_clause() == CLAUSE_1
        await pilot.press("left_square_bracket")  # wraps around
        await pilot.pause()
        assert timeline.cursor == finding_rows[1]


async def test_tool_call_detail_shows_the_result(app_factory) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_run(pilot, EMOJI_RUN)
        await pilot.press("j")  # iteration 1 -> the tool call
        panel = screen.query_one(DetailPanel)
        await wait_until(pilot, lambda: panel.showing == "call:call-1")
        await pilot.pause()
        assert len(panel.children) == 1
        result = panel.children[0]
        assert type(result).__name__ == "ToolResultView"  # drawn by the results package
        drawn = "\n".join(str(w.render()) for w in panel.query(Static))
        assert "list_incidents" in drawn and "call-1" in drawn


async def test_tool_call_detail_falls_back_to_json(app_factory, monkeypatch) -> None:
    def broken_renderer(*_: object, **__: object) -> None:
        raise RuntimeError("renderer bug")

    monkeypatch.setattr(detail_module, "render_tool_result", broken_renderer)
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_run(pilot, EMOJI_RUN)
        await pilot.press("j")
        panel = screen.query_one(DetailPanel)
        await wait_until(pilot, lambda: panel.showing == "call:call-1")
        await pilot.pause()
        [static] = panel.query(".result-fallback")
        assert "renderer failed: RuntimeError" in str(static.border_title)
        assert isinstance(static.content, Text)
        plain = static.content.plain
        assert '"note": "[b]none[/b]"' in plain  # the recorded markup-looking string, literally
        assert '"service": "payments"' in plain


async def test_withheld_answer_is_shown_as_withheld(app_factory) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_run(pilot, DENIED_RUN)
        banner = str(screen.query_one("#outcome-banner", Static).render())
        assert "WITHHELD" in banner and "not delivered" in banner and "denied" in banner
        assert "refund-guard" in banner and "refunds over 100 need a human" in banner
        scroll = screen.query_one("#answer-scroll")
        assert scroll.has_class("-withheld")
        assert "WITHHELD" in str(scroll.border_title) and "never received" in str(scroll.border_title)
        assert screen.query_one(AnswerView).answer_text.plain.startswith("The refund of 250 was approved.")


async def test_shared_refused_run_opens_withheld(app_factory, ui_db: Path) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await runs_loaded(pilot)
        refused = next(k for k in expected_runs(ui_db, outcome="refused"))
        app.open_run(refused)  # the palette's "jump to run" path
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.run is not None)
        banner = str(app.screen.query_one("#outcome-banner", Static).render())
        assert "WITHHELD" in banner and "refused" in banner and "evidence gate" in banner


async def test_escape_goes_back_to_the_list(app_factory) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, EMOJI_RUN)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen))
        assert app.screen.run_list.row_at(app.screen.run_list.cursor)["run_id"] == EMOJI_RUN


async def test_jump_to_missing_run_notifies_and_keeps_running(app_factory) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await runs_loaded(pilot)
        app.open_run("no-such-run")
        await wait_until(pilot, lambda: any("no run" in n.message for n in app._notifications))
        assert isinstance(app.screen, RunsScreen)
        assert app.is_running


# -- keys -------------------------------------------------------------------------------------------------------


async def test_help_lists_every_binding_from_the_bindings(app_factory) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, EMOJI_RUN)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        rows = {(keys, binding_id) for _section, keys, _desc, binding_id in app.screen.rows}
        for expected in (
            ("]", "run.next-finding"),
            ("[", "run.prev-finding"),
            ("esc", "run.back"),
            ("↓, j", "list.down"),
            ("↑, k", "list.up"),
            ("?, f1", "app.help"),
            ("^p", "app.commands"),
        ):
            assert expected in rows, expected
        console = Console(width=160, file=io.StringIO(), record=True)
        console.print(app.screen.query_one("#help-bindings", Static).content)
        table_text = console.export_text()
        assert "run.next-finding" in table_text and "Next finding" in table_text
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen))


async def test_every_binding_has_an_id(app_factory) -> None:
    from reviewer.ui.screens.help import HelpScreen as Help
    from reviewer.ui.screens.labelling import LabellingScreen
    from reviewer.ui.screens.queue import QueueScreen
    from reviewer.ui.screens.stats import StatsScreen
    from reviewer.ui.widgets.answer import AnswerView
    from reviewer.ui.widgets.cursor_list import CursorList
    from reviewer.ui.widgets.finding_list import FindingList
    from reviewer.ui.widgets.inline_prompts import MissedBar, NoteBar

    for cls in (
        ReviewerApp,
        RunsScreen,
        RunScreen,
        Help,
        CursorList,
        RunList,
        Timeline,
        LabellingScreen,
        QueueScreen,
        StatsScreen,
        NoteBar,
        MissedBar,
        AnswerView,
        FindingList,
    ):
        for binding in cls.BINDINGS:
            assert binding.id, f"{cls.__name__} {binding.key} has no id"  # type: ignore[union-attr]


async def test_keymap_file_remaps_a_binding(app_factory, tmp_path: Path, monkeypatch) -> None:
    keymap = tmp_path / "keymap.toml"
    keymap.write_text('"list.down" = "n"\n"runs.withheld" = ["W", "ctrl+w"]\n', encoding="utf-8")
    monkeypatch.setenv("REVIEWER_KEYMAP", str(keymap))
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await runs_loaded(pilot)
        assert screen.run_list.cursor == 0
        await pilot.press("n")
        await pilot.pause()
        assert screen.run_list.cursor == 1
        await pilot.press("j")  # replaced by the keymap
        await pilot.pause()
        assert screen.run_list.cursor == 1
        await pilot.press("W")
        await wait_until(pilot, lambda: screen.filters.get("undelivered") is True)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert ("n", "list.down") in {(k, i) for _s, k, _d, i in app.screen.rows}


async def test_bad_keymap_file_is_reported_not_fatal(app_factory, tmp_path: Path, monkeypatch) -> None:
    keymap = tmp_path / "keymap.toml"
    keymap.write_text("this is = = not toml", encoding="utf-8")
    monkeypatch.setenv("REVIEWER_KEYMAP", str(keymap))
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await runs_loaded(pilot)
        assert any("keymap" in n.message for n in app._notifications)


async def test_palette_jumps_to_a_run_by_id(app_factory) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await runs_loaded(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*DENIED_RUN)
        await palette_offers(pilot, f"Jump to run {DENIED_RUN}")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.run is not None)
        assert app.screen.run["run_id"] == DENIED_RUN


async def test_palette_jumps_from_one_run_to_another_and_escape_returns_to_the_list(app_factory) -> None:
    """The jump replaces the run on screen (a second run screen used to crash the app: DuplicateIds)."""
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, EMOJI_RUN)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*DENIED_RUN)
        await palette_offers(pilot, f"Jump to run {DENIED_RUN}")
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, RunScreen) and (app.screen.run or {}).get("run_id") == DENIED_RUN,
        )
        assert app.is_running and not [n for n in app._notifications if n.severity == "error"]
        assert [type(s).__name__ for s in app.screen_stack[1:]] == ["RunsScreen", "RunScreen"]
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen))


async def test_slash_on_a_run_returns_to_the_search_box(app_factory) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, EMOJI_RUN)
        await pilot.press("slash")
        await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen) and isinstance(app.focused, Input))
        await pilot.press("escape")
        await pilot.pause()
        assert app.focused is app.screen.run_list


async def test_service_closed_with_the_app(app_factory) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await runs_loaded(pilot)
    assert app.service._closed


async def test_a_database_that_cannot_open_is_reported(app_factory, tmp_path: Path) -> None:
    bad = tmp_path / "not-a.db"
    bad.write_bytes(b"this is not sqlite at all, not even close")
    app: ReviewerApp = app_factory(db_path=bad)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(
            pilot, lambda: any("not an SQLite database" in n.message for n in app._notifications)
        )
        assert isinstance(app.screen, RunsScreen) and app.is_running
    assert bad.read_bytes().startswith(b"this is not sqlite")


async def test_filter_selects_offer_database_values(app_factory, ui_db: Path) -> None:
    from textual.widgets import Select

    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await runs_loaded(pilot)
        agent: Select = screen.query_one("#f-agent", Select)
        await wait_until(pilot, lambda: len(agent._options) > 1)
        assert "tiny-agent" in {value for _label, value in agent._options}
        agent.value = "tiny-agent"
        await wait_until(pilot, lambda: screen.total == len(expected_runs(ui_db, agent="tiny-agent")) == 2)
        kind: Select = screen.query_one("#f-kind", Select)
        kind.value = "negative-claim"
        expected = expected_runs(ui_db, agent="tiny-agent", kind="negative-claim")
        await wait_until(pilot, lambda: screen.filters.get("kind") == "negative-claim" and screen.total == 1)
        assert [screen.run_list.row_at(0)["run_key"]] == expected
        await pilot.press("x")
        await wait_until(pilot, lambda: screen.filters == {} and agent.is_blank() and kind.is_blank())


async def test_r_shows_raw_json_of_the_selected_item_wherever_the_focus_is(app_factory) -> None:
    from reviewer.ui.results import ToolResultView
    from reviewer.ui.results.raw import RawView

    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_run(pilot, EMOJI_RUN)
        await pilot.press("j")  # iteration 1 -> the tool call; the focus stays on the timeline
        panel = screen.query_one(DetailPanel)
        await wait_until(pilot, lambda: panel.showing == "call:call-1" and bool(panel.query(ToolResultView)))
        assert app.focused is screen.timeline
        await pilot.press("r")
        await wait_until(pilot, lambda: bool(panel.query(RawView)) and panel.query_one(RawView).display)
        view = panel.query_one(ToolResultView)
        assert not view.query_one(".result-drawn").display
        raw = "\n".join(str(w.render()) for w in panel.query(".result-raw-json"))
        assert '"note": "[b]none[/b]"' in raw  # the recorded result, markup-looking text kept literal
        await pilot.press("a", "r")  # from the answer too: back to the drawn view
        await wait_until(pilot, lambda: view.query_one(".result-drawn").display)
        assert app.focused is not None and app.focused.id == "answer-scroll"
        await pilot.press("t", "k")  # an iteration row: its recorded row as JSON, r again goes back
        await wait_until(pilot, lambda: (panel.showing or "").startswith("iteration:"))
        await pilot.press("r")
        await wait_until(pilot, lambda: (panel.showing or "").startswith("raw:iteration"))
        assert '"kind": "iteration"' in "\n".join(str(w.render()) for w in panel.query(Static))
        await pilot.press("r")
        await wait_until(pilot, lambda: (panel.showing or "").startswith("iteration:"))


async def palette_prompts(pilot: Any, typed: str, expect: str) -> list[str]:
    """Open the palette, type `typed`, wait until an option containing `expect` is listed; the options' text."""
    from textual.command import CommandPalette
    from textual.widgets import OptionList

    app = pilot.app
    await pilot.press("ctrl+p")
    await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
    await pilot.press(*typed)

    def prompts() -> list[str]:
        options = app.screen.query_one(OptionList)
        return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]

    await wait_until(pilot, lambda: any(expect in p for p in prompts()), timeout=60)
    await pilot.pause(0.3)  # every provider has answered by then; the list is in score order
    return prompts()


async def test_palette_lists_runs_matching_a_prefix_or_fuzzy_text_as_you_type(app_factory) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await runs_loaded(pilot)
        listed = await palette_prompts(pilot, "run-tiny-d", "Jump to run run-tiny-denied-1")
        runs = [p for p in listed if p.startswith("Jump to run")]
        assert runs[0].startswith("Jump to run run-tiny-denied-1")
        assert not any("run-tiny-emoji-1" in p for p in runs)  # a prefix, not every run
        await pilot.press("escape")
        await pilot.pause()
        listed = await palette_prompts(pilot, "tnyemj", "run-tiny-emoji-1")  # letters in order: fuzzy
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.run is not None)
        assert app.screen.run["run_id"] == EMOJI_RUN


async def test_palette_built_in_maximize_and_theme_are_not_crowded_out(app_factory) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_run(pilot, EMOJI_RUN)
        listed = await palette_prompts(pilot, "maximize", "Maximize")
        assert listed[0].startswith("Maximize")
        assert not any(p.startswith("Jump to run") for p in listed)
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.maximized is screen.timeline)
        await pilot.press("escape")  # the built-in minimize
        await wait_until(pilot, lambda: screen.maximized is None)
        assert app.screen is screen  # escape restored the panel, it did not leave the run
        listed = await palette_prompts(pilot, "theme", "Theme")
        assert listed[0].startswith("Theme")


async def test_narrow_terminal_header_one_line_each_and_every_footer_key_on_screen(app_factory) -> None:
    from textual.widgets._footer import FooterKey

    app: ReviewerApp = app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        for screen in (await runs_loaded(pilot), await open_run(pilot, EMOJI_RUN)):
            await wait_until(pilot, lambda s=screen: bool(s.query(FooterKey)))
            await pilot.pause()
            keys = list(screen.query(FooterKey))
            assert "Help" in {k.description for k in keys}
            assert all(k.region.x >= 0 and k.region.right <= 80 for k in keys), [
                (k.description, k.region) for k in keys
            ]
            spans = sorted((k.region.x, k.region.right) for k in keys)
            assert all(
                a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False)
            )  # none hidden under another
        title = screen.query_one("#run-title", Static)
        assert title.region.height == 2
        first, second = title.content.plain.split("\n")  # type: ignore[union-attr]
        assert first.startswith(f"run {EMOJI_RUN}") and "findings" in second
        assert title.content.no_wrap  # type: ignore[union-attr]
        assert {"TP / justified", "Next finding"} <= {k.description for k in screen.query(FooterKey)}


async def test_a_selected_tool_result_is_the_largest_panel_and_z_maximizes_any_panel(app_factory) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_run(pilot, "run-1796001963675-1")  # semantics-table-and-chart.json
        panel = screen.query_one(DetailPanel)
        answer_box = screen.query_one("#answer-scroll")

        def areas() -> dict[str, int]:
            widgets = {"answer": answer_box, "timeline": screen.timeline, "detail": panel}
            widgets["prompt"] = screen.query_one("#prompt")
            return {name: w.region.area if w.display else 0 for name, w in widgets.items()}

        index = next(i for i, r in enumerate(screen.timeline.rows) if r.get("call_id") == "call-iops-1")
        screen.timeline.move_to(index)
        await wait_until(pilot, lambda: panel.showing == "call:call-iops-1")
        await pilot.pause()
        got = areas()
        assert max(got, key=got.__getitem__) == "detail" and got["detail"] > 2 * got["answer"], got
        timeline = screen.timeline  # shrunk to make room, it still shows the selected row
        await wait_until(
            pilot, lambda: 0 <= index - timeline.scroll_offset.y < timeline.scrollable_content_region.height
        )
        # back on a finding, the answer gets its room again
        await pilot.press("right_square_bracket")
        await wait_until(pilot, lambda: (panel.showing or "").startswith("finding:"))
        await pilot.pause()
        assert answer_box.region.width >= panel.region.width - 2

        # z maximizes the focused panel and z puts it back; from the timeline, from the detail
        assert app.focused is screen.timeline
        await pilot.press("z")
        await wait_until(pilot, lambda: screen.maximized is screen.timeline)
        assert screen.timeline.region.height > 15
        await pilot.press("z")
        await wait_until(pilot, lambda: screen.maximized is None)
        await pilot.press("d", "z")
        await wait_until(pilot, lambda: screen.maximized is panel)
        assert not answer_box.region.area  # nothing else is drawn
        await pilot.press("z")
        await wait_until(pilot, lambda: screen.maximized is None)
        await pilot.press("a", "z")  # the answer too
        await wait_until(pilot, lambda: screen.maximized is answer_box)
        await pilot.press("escape")  # escape puts it back too, without leaving the run
        await wait_until(pilot, lambda: screen.maximized is None)
        assert app.screen is screen


async def test_a_keymap_line_naming_no_binding_is_reported_and_the_rest_applies(
    app_factory, tmp_path: Path, monkeypatch
) -> None:
    keymap = tmp_path / "keymap.toml"
    keymap.write_text('lable.tp = "y"\nlist.down = "n"\n', encoding="utf-8")
    monkeypatch.setenv("REVIEWER_KEYMAP", str(keymap))
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await runs_loaded(pilot)
        warnings = [n.message for n in app._notifications if "keymap" in (n.title or "")]
        assert len(warnings) == 1 and "'lable.tp'" in warnings[0]
        await pilot.press("n")
        await wait_until(pilot, lambda: screen.run_list.cursor == 1)


async def test_palette_maximize_reaches_a_panel_the_built_in_does_not_offer(app_factory) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_run(pilot, EMOJI_RUN)
        screen.set_focus(None)  # nothing focused (a click outside the panels): no built-in Maximize
        await pilot.pause()
        listed = await palette_prompts(pilot, "maximize", "Maximize")
        assert listed[0].startswith("Maximize a panel") and not any(
            p.startswith("Jump to run") for p in listed
        )
        await pilot.press("enter")
        panels = (screen.query_one(DetailPanel), screen.query_one("#answer-scroll"), screen.timeline)
        await wait_until(
            pilot, lambda: screen.maximized in panels
        )  # the focus the palette gave back, or the detail


async def test_run_screen_hints_name_the_remapped_keys(app_factory, tmp_path: Path, monkeypatch) -> None:
    keymap = tmp_path / "keymap.toml"
    keymap.write_text('answer.extend = "e"\nanswer.shrink = "w"\n', encoding="utf-8")
    monkeypatch.setenv("REVIEWER_KEYMAP", str(keymap))
    app: ReviewerApp = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_run(pilot, EMOJI_RUN)
        await pilot.press("m")
        answer = screen.query_one(AnswerView)
        await wait_until(pilot, lambda: answer.selecting)
        hints = str(screen.query_one("#answer-scroll").border_subtitle)
        assert hints.startswith("selecting: ") and " w/e end · " in hints
        before = answer.selected_text
        await pilot.press("e")
        await wait_until(pilot, lambda: answer.selected_text != before)


async def test_less_and_greater_than_resize_the_answer_against_the_other_panes(app_factory) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot, EMOJI_RUN)
        answer_box, panel = screen.query_one("#answer-scroll"), screen.query_one(DetailPanel)
        start = answer_box.region.width
        await pilot.press("less_than_sign")
        await wait_until(pilot, lambda: answer_box.region.width < start)
        assert panel.region.width > answer_box.region.width
        await pilot.press("greater_than_sign", "greater_than_sign", "greater_than_sign")
        await wait_until(pilot, lambda: answer_box.region.width > start)
        assert answer_box.region.width > panel.region.width
