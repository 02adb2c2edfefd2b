"""In a served app each tab asks who is reviewing, and that name goes with every label it makes; a tab
never labels as whoever started the server."""

from __future__ import annotations

from textual.command import CommandPalette
from textual.widgets import Input

from reviewer.ui.screens.modals import ReviewerNameScreen
from tests.ui.conftest import SIZE, wait_until


async def test_each_session_can_name_its_reviewer(app_factory) -> None:
    app = app_factory(reviewer="default-user", ask_reviewer=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewerNameScreen))
        for _ in range(len("default-user")):
            await pilot.press("backspace")
        for ch in "carol":
            await pilot.press(ch)
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, ReviewerNameScreen))
        assert app.reviewer_name == "carol"


async def test_escape_keeps_the_suggested_name(app_factory) -> None:
    app = app_factory(reviewer="dave", ask_reviewer=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewerNameScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ReviewerNameScreen))
        assert app.reviewer_name == "dave"


async def test_a_served_tab_starts_with_no_name_and_cannot_skip_naming(app_factory, monkeypatch) -> None:
    """`reviewer serve` without --reviewer: the box is empty (not the server owner's login or $REVIEWER_NAME),
    escape and an empty enter leave the tab unnamed and asking, and the palette stays shut until named."""
    monkeypatch.setenv("REVIEWER_NAME", "server-owner")
    app = app_factory(ask_reviewer=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewerNameScreen))
        box = app.screen.query_one(Input)
        assert box.value == ""
        await pilot.press("escape")
        await pilot.press("enter")
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(app.screen, ReviewerNameScreen)
        assert app.reviewer_name == ""
        assert any("type your name first" in n.message for n in app._notifications)
        for ch in "erin":
            await pilot.press(ch)
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, ReviewerNameScreen))
        assert app.reviewer_name == "erin"
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
