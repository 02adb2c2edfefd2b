"""The run screen as a new user first meets it (issue 15, checked on the merged whole): on an 80x24 terminal
the run header stays two lines whatever the agent is called, and a panel maximized while a tool result is
selected takes the whole screen, not the share it had beside the result."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from reviewer.ui.app import ReviewerApp
from tests.ui.conftest import jump_to_run, wait_until
from tests.ui.test_labelling import TYPED_RUN


async def test_a_long_agent_name_keeps_the_run_header_to_two_lines_at_80x24(
    app_factory, label_db: Path
) -> None:
    app: ReviewerApp = app_factory(db_path=label_db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await jump_to_run(
            pilot, TYPED_RUN
        )  # agent incident-desk-typed: the first line needs 85 cells
        title = screen.query_one("#run-title", Static)
        await wait_until(pilot, lambda: "findings" in str(title.render()))
        await pilot.pause()
        assert title.region.height == 2, title.region
        drawn = [
            "".join(seg.text for seg in strip) for strip in title.render_lines(title.region.reset_offset)
        ]
        assert drawn[0].startswith(f"run {TYPED_RUN}  agent incident-desk-typed") and drawn[
            0
        ].rstrip().endswith("…")
        assert drawn[1].startswith("3 iterations, 2 calls, 3 findings")


async def test_z_on_the_timeline_beside_a_tool_result_fills_the_screen(app_factory) -> None:
    app: ReviewerApp = app_factory()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await jump_to_run(pilot, "run-1796001963675-1")  # semantics-table-and-chart.json
        timeline = screen.timeline
        index = next(i for i, r in enumerate(timeline.rows) if r.get("call_id") == "call-iops-1")
        timeline.move_to(index)
        await wait_until(pilot, lambda: screen.has_class("-result"))
        await pilot.pause()
        assert timeline.region.height <= 12  # beside the result it keeps a few rows
        assert app.focused is timeline
        await pilot.press("z")
        await wait_until(pilot, lambda: screen.maximized is timeline)
        await pilot.pause()
        assert timeline.region.height >= 40 - 2, timeline.region  # all but the footer (and its own border)
        await pilot.press("z")
        await wait_until(pilot, lambda: screen.maximized is None)
        await pilot.pause()
        assert timeline.region.height <= 12


async def test_the_start_of_an_agent_name_lists_its_runs_first_in_the_palette(app_factory) -> None:
    """Typing the start of an agent's name ("tiny", "support") puts its runs above the commands whose words
    merely contain those letters in order."""
    from tests.ui.test_app import palette_prompts, runs_loaded

    app: ReviewerApp = app_factory()
    async with app.run_test(size=(160, 50)) as pilot:
        await runs_loaded(pilot)
        for typed, agent in (("tiny", "tiny-agent"), ("supp", "support-desk")):
            listed = await palette_prompts(pilot, typed, "Jump to run")
            assert listed[0].startswith("Jump to run") and agent in listed[0], listed
            await pilot.press("escape")
            await pilot.pause()
