"""In a served app each tab asks who is reviewing, and that name goes with every label it makes."""

from __future__ import annotations

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
