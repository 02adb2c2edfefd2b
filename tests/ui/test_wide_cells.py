"""Emoji and wide characters keep every border in line: each line of the app's screen is exactly the screen's
width whether a terminal counts grapheme clusters (Rich, which lays the screen out) or code point by code
point (xterm.js in the browser, tmux), and the panels' right borders stay in one column."""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len

from reviewer.ui.widgets.safe import agreed_cells
from store.db.connection import open_database
from store.db.ingest import ingest
from tests.ui.conftest import run_screen_ready, runs_screen_ready, wait_until
from tests.wide_recordings import write_wide_recording

WIDTH, HEIGHT = 120, 40
#: the characters that draw a panel's vertical edges
EDGES = set("│┃║▌▐█▏▕")


def per_code_point(text: str) -> int:
    """Cells as a terminal that ignores grapheme clusters counts them (xterm.js's Unicode 11 table, tmux):
    marks and format characters none, East Asian wide and fullwidth two, everything else one."""
    return sum(
        0
        if unicodedata.category(ch) in ("Mn", "Me", "Cf")
        else 2
        if unicodedata.east_asian_width(ch) in "WF"
        else 1
        for ch in text
    )


def screen_lines(app: Any) -> list[str]:
    """The screen as the driver writes it (line filters applied), one string per row."""
    return ["".join(seg.text for seg in strip) for strip in app.screen._compositor.render_strips()]


def edge_columns(line: str) -> list[int]:
    """The column (in per-code-point cells) of each vertical edge character on a line."""
    columns, col = [], 0
    for ch in line:
        if ch in EDGES:
            columns.append(col)
        col += per_code_point(ch)
    return columns


@pytest.fixture
def wide_db(tmp_path: Path) -> Path:
    path = tmp_path / "wide.db"  # (app_factory's own database is review.db)
    db = open_database(path)
    report = ingest(db, [str(write_wide_recording(tmp_path / "in"))], db_path=str(path))
    assert not report.quarantined, report.quarantined
    db.close()
    return path


def assert_every_line_fits(app: Any, must_show: str) -> None:
    lines = screen_lines(app)
    assert len(lines) == HEIGHT
    assert any(must_show in line for line in lines), f"{must_show!r} is not on the screen"
    for number, line in enumerate(lines):
        assert cell_len(line) == WIDTH, (number, line)
        assert per_code_point(line) == WIDTH, (number, line)


def test_agreed_cells_keeps_the_text_and_rich_width() -> None:
    for text, shown in [
        ("🛰️ uplink", "🛰  uplink"),  # the emoji keeps the two cells it asked for
        ("⚠️", "⚠ "),
        ("1\ufe0f\u20e3", "1\u20e3 "),
        ("👍🏽", "👍"),
        ("🚀\ufe0f", "🚀"),  # already wide: the selector goes, nothing is added
        ("衛星 café", "衛星 café"),
        ("cafe\u0301", "cafe\u0301"),
    ]:
        assert agreed_cells(text) == shown
        assert cell_len(shown) == cell_len(text) == per_code_point(shown)


async def test_a_run_with_emoji_keeps_the_runs_screen_borders_in_line(app_factory, wide_db: Path) -> None:
    app = app_factory(db_path=wide_db)
    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        screen = await runs_screen_ready(pilot)
        await wait_until(pilot, lambda: screen.run_list.row_count == 1)
        await pilot.pause()
        assert_every_line_fits(app, "衛星-agent")
        rows = [line for line in screen_lines(app) if "🛰" in line]
        assert rows, "the emoji row is not drawn"


async def test_an_answer_with_emoji_cjk_and_accents_keeps_the_run_screen_borders_in_line(
    app_factory, wide_db: Path
) -> None:
    app = app_factory(db_path=wide_db)
    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        screen = await runs_screen_ready(pilot)
        await wait_until(pilot, lambda: screen.run_list.row_count == 1)
        await pilot.press("enter")
        await run_screen_ready(pilot)
        await pilot.pause()
        assert_every_line_fits(app, "衛星通信")
        lines = screen_lines(app)
        # two panels side by side: every row that passes through both has its four edges in the same columns,
        # the rows holding the emoji, the CJK and the accents among them
        both = [line for line in lines if line.startswith("│") and len(edge_columns(line)) == 4]
        wide = [line for line in both if "🛰" in line or "衛星" in line or "é" in line]
        assert len(wide) >= 3, both
        assert {tuple(edge_columns(line)) for line in both} == {tuple(edge_columns(both[-1]))}, wide
        assert "\ufe0f" not in "".join(lines)  # what the terminal would count differently is not sent
