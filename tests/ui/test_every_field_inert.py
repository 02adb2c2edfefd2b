"""Every recorded value is inert on every screen and in every plain CLI output.

Every string in several real recordings (every field the store extracts, and the rest) gets hostile text
appended: OSC 52 (clipboard), OSC 0 (window title), CSI clear, BEL, NUL, C1 controls, Rich markup, bidi
overrides, Unicode tag characters, U+2060-U+2064, U+061C, U+2028/U+2029, a soft hyphen and Hangul fillers. Then
every screen and every CLI command is walked and nothing but visible, literal text may reach the output.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reviewer.cli.main import cli
from reviewer.service import Settings
from reviewer.ui.app import make_app
from store.db.connection import open_database
from store.db.ingest import ingest
from tests.conftest import FIXTURE_RECORDINGS
from tests.ui.conftest import SIZE, wait_until
from tests.ui.test_app import open_run, runs_loaded

HOSTILE = (
    " \x1b]52;c;aGFja2Vk\x07 \x1b]0;pwned\x1b\\ \x1b[2J\x1b[H bell\x07 nul\x00 c1\x9b\x85 [red]RED[/red] "
    "bidi\u202e\u2066\u2069 tag\U000e0041\U000e007f join\u2060\u2061\u2062\u2063\u2064 alm\u061c "
    "sep\u2028\u2029 shy\u00ad fill\u115f\u1160\u3164\uffa0"
)
#: What may never reach a terminal: C0 controls but tab and newline, DEL, C1, and the invisible or reordering
#: characters `reviewer.review.inert` shows visibly instead.
FORBIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u061c\u115f\u1160\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069"
    "\u3164\ufeff\uffa0\U000e0000-\U000e007f]"
)
RECORDINGS = (
    "evidence-gate-assist-flagged.json",
    "semantics-table-and-chart.json",
    "envelope-conversation-turn1.json",
    "failed-tool-turn2-of-conversation.json",
    "unsupported-claim-findings.json",
    "window-eviction-dangling-reference.json",
    "absent-coverage-clarify-ceiling.json",
    "answer-withheld-by-output-middleware.json",
)
#: Keys whose values select how a document is read; everything else is made hostile.
STRUCTURAL = {"type", "format"}


def poison(value: Any, key: str | None = None) -> Any:
    """Append the hostile text to every string (the same way everywhere, so ids still pair up)."""
    if isinstance(value, dict):
        return {k: poison(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [poison(v, key) for v in value]
    if isinstance(value, str) and key not in STRUCTURAL:
        return value + HOSTILE
    return value


def assert_inert(text: str, where: str) -> None:
    found = FORBIDDEN.search(text)
    assert found is None, (
        f"{found.group()!r} reached {where}: ...{text[max(0, found.start() - 200) : found.start() + 20]!r}"
        if found
        else ""
    )
    assert "[red]RED[/red]" in text or "RED" not in text, f"markup was interpreted in {where}"


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("every-field")
    paths = []
    for name in RECORDINGS:
        path = folder / name
        path.write_text(json.dumps(poison(json.loads((FIXTURE_RECORDINGS / name).read_text()))))
        paths.append(path)
    db_path = folder / "hostile.db"
    db = open_database(db_path)
    report = ingest(db, paths, db_path=str(db_path), workers=1)
    db.close()
    assert report.stored == len(RECORDINGS), report.quarantined
    runner = CliRunner()
    findings = json.loads(runner.invoke(cli, ["findings", "--json", "--db", str(db_path)]).stdout)
    assert len(findings) >= 5
    for finding in findings[:3]:
        done = runner.invoke(
            cli,
            [
                "label",
                finding["id"],
                "--verdict",
                "fp",
                "--note",
                "note" + HOSTILE,
                "--reviewer",
                "r" + HOSTILE,
                "--db",
                str(db_path),
            ],
        )
        assert done.exit_code == 0, done.output
    export = json.loads(runner.invoke(cli, ["labels", "--json", "--db", str(db_path)]).stdout)
    forged = dict(export[0], target_id="f-forged" + HOSTILE, reviewer="other" + HOSTILE)
    imported = folder / "imported.json"
    imported.write_text(json.dumps([forged]))
    runner.invoke(cli, ["labels", "--import", str(imported), "--db", str(db_path)])
    for args in (["pack", "new", "hostile"], ["pack", "add", "hostile", "no sign" + HOSTILE]):
        runner.invoke(cli, [*args, "--db", str(db_path)])
    return db_path


def test_every_plain_cli_output_is_inert(hostile_db: Path) -> None:
    runner = CliRunner()
    runs = json.loads(runner.invoke(cli, ["runs", "--json", "--db", str(hostile_db)]).stdout)
    commands = [
        ["runs"],
        ["findings"],
        ["quarantine"],
        ["stats"],
        ["pack", "list"],
        ["pack", "show", "hostile"],
        *(["show", run["run_key"]] for run in runs),
    ]
    pack = json.loads(
        runner.invoke(cli, ["pack", "show", "hostile", "--json", "--db", str(hostile_db)]).stdout
    )
    commands += [["pack", "show", pack["content_hash"][:3]], ["pack", "show", "hostile" + HOSTILE]]
    #: a terminal (rich tables, their own styling stripped: recorded text must be inert before rich sees it)
    terminal = {"TTY_COMPATIBLE": "1", "COLUMNS": "90", "TERM": "xterm-256color"}
    for args in commands:
        for env in (None, terminal):
            result = runner.invoke(cli, [*args, "--db", str(hostile_db)], env=env)
            assert result.exception is None or isinstance(result.exception, SystemExit), (
                args,
                result.exception,
            )
            shown = result.output if env is None else re.sub(r"\x1b\[[0-9;]*m", "", result.output)
            assert_inert(shown, " ".join(args) + (" (terminal)" if env else " (piped)"))


def test_every_json_output_is_exact_and_holds_no_raw_control_or_invisible_character(hostile_db: Path) -> None:
    """`--json` keeps the recorded values exactly, with every unsafe character written as its JSON escape
    (a raw U+009B is a CSI to some terminals; bidi and separator characters reorder or break the view)."""
    runner = CliRunner()
    db = ["--db", str(hostile_db)]
    runs = json.loads(runner.invoke(cli, ["runs", "--json", *db]).stdout)
    finding = json.loads(runner.invoke(cli, ["findings", "--json", *db]).stdout)[0]
    assert (
        runner.invoke(
            cli, ["label", finding["id"], "--verdict", "tp", "--note", "n" + HOSTILE, *db]
        ).exit_code
        == 0
    )

    def strings(value: Any) -> list[str]:
        if isinstance(value, dict):
            return [s for v in value.values() for s in strings(v)]
        if isinstance(value, list):
            return [s for v in value for s in strings(v)]
        return [value] if isinstance(value, str) else []

    recorded = (["runs"], ["findings"], ["labels"], ["show", runs[0]["run_key"]])
    for args in (*recorded, ["pack", "show", "hostile"], ["quarantine"], ["stats"]):
        out = runner.invoke(cli, [*args, "--json", *db]).stdout
        assert_inert(out, " ".join(args) + " --json")
        if args in recorded:  # parsed back, the recorded (hostile) text is there exactly
            assert any(HOSTILE in text for text in strings(json.loads(out))), args
    exported = json.loads(runner.invoke(cli, ["labels", "--json", *db]).stdout)
    assert "n" + HOSTILE in [label["note"] for label in exported], "the note comes back exactly as written"


def test_label_commands_and_their_errors_are_inert(hostile_db: Path, tmp_path: Path) -> None:
    """`label` says what it stored, `labels --import` what it took or which row it refused: the recorded
    values in those lines (an imported row's uid, target_id, verdict; a reviewer's name) are inert too."""
    runner = CliRunner()
    db = ["--db", str(hostile_db)]
    finding = json.loads(runner.invoke(cli, ["findings", "--json", *db]).stdout)[3]
    good = json.loads(runner.invoke(cli, ["labels", "--json", *db]).stdout)[0]
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps([dict(good, uid="u" + HOSTILE, target_id="f-ghost" + HOSTILE)]))
    refused = tmp_path / "refused.json"
    refused.write_text(json.dumps([dict(good, uid="v" + HOSTILE, verdict="zz" + HOSTILE)]))
    outputs = {
        "label": [
            "label",
            finding["id"],
            "--verdict",
            "tp",
            "--reviewer",
            "q" + HOSTILE,
            "--note",
            "n" + HOSTILE,
        ],
        "labels --import (taken)": ["labels", "--import", str(forged)],
        "labels --import (refused)": ["labels", "--import", str(refused)],
    }
    for where, args in outputs.items():
        result = runner.invoke(cli, [*args, *db])
        assert result.exception is None or isinstance(result.exception, SystemExit), (where, result.exception)
        assert result.output.strip(), where
        assert_inert(result.output, where)
    assert "label #1" in result.output and "field verdict" in result.output


#: The invisible and reordering characters issue #14 found left raw, one of each class.
INVISIBLE = {
    "tag character": "\U000e0041",
    "cancel tag": "\U000e007f",
    "word joiner": "\u2060",
    "invisible operators": "\u2061\u2062\u2063\u2064",
    "Arabic letter mark": "\u061c",
    "line and paragraph separators": "\u2028\u2029",
    "soft hyphen": "\u00ad",
    "Hangul fillers": "\u115f\u1160\u3164\uffa0",
}


def _visible(chars: str) -> str:
    return "".join(f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}" for c in chars)


@pytest.mark.parametrize("name", sorted(INVISIBLE))
def test_each_invisible_character_is_shown_visibly_not_dropped(hostile_db: Path, name: str) -> None:
    """Shown as its code point (as a zero-width space already was), in the inert text and in what the CLI
    prints of a hostile run, so a reviewer sees that it is there."""
    from reviewer.review.inert import inert

    chars = INVISIBLE[name]
    assert inert(f"a{chars}b") == f"a{_visible(chars)}b"
    runs = json.loads(CliRunner().invoke(cli, ["runs", "--json", "--db", str(hostile_db)]).stdout)
    shown = CliRunner().invoke(cli, ["show", runs[0]["run_key"], "--db", str(hostile_db)]).output
    assert _visible(chars) in shown


def screen_text(app: Any) -> str:
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(seg.text for seg in strip) for strip in strips)


def _run_ids(db_path: Path, recording: str) -> list[str]:
    db = open_database(db_path)
    try:
        return [
            r[0]
            for r in db.execute(
                "SELECT r.run_id FROM runs r JOIN recordings c ON c.id = r.recording_id WHERE c.source LIKE ?",
                [f"%/{recording}"],
            )
        ]
    finally:
        db.close()


@pytest.mark.parametrize("recording", RECORDINGS)
async def test_the_run_screen_shows_every_field_inert(hostile_db: Path, recording: str) -> None:
    run_ids = _run_ids(hostile_db, recording)
    assert run_ids, recording
    app = make_app(Settings.resolve(db_path=hostile_db, reviewer="ann"))
    async with app.run_test(size=SIZE) as pilot:
        for run_id in run_ids:
            await open_run(pilot, run_id)
            for _ in range(6):  # down the timeline: every call, eviction and finding drawn in the panels
                assert_inert(screen_text(app), f"run {run_id!r}")
                await pilot.press("j")
                await pilot.pause()
            await pilot.press("escape")
            await runs_loaded(pilot)
    app.service.close()


async def test_the_runs_queue_stats_and_packs_screens_show_every_field_inert(hostile_db: Path) -> None:
    from reviewer.ui.screens.queue import QueueScreen
    from reviewer.ui.screens.stats import StatsScreen

    app = make_app(Settings.resolve(db_path=hostile_db, reviewer="ann"))
    async with app.run_test(size=SIZE) as pilot:
        await runs_loaded(pilot)
        assert_inert(screen_text(app), "the runs screen")
        await app.run_action("open_queue")
        await wait_until(
            pilot, lambda: isinstance(app.screen, QueueScreen) and app.screen.showing is not None
        )
        for _ in range(8):
            assert_inert(screen_text(app), "the queue")
            await pilot.press("j")
            await pilot.pause()
        await app.run_action("open_stats")
        await wait_until(pilot, lambda: isinstance(app.screen, StatsScreen) and app.screen.stats is not None)
        assert_inert(screen_text(app), "the stats screen")
        app.pop_screen()
        await app.run_action("open_packs")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "PacksScreen")
        await wait_until(pilot, lambda: "hostile" in screen_text(app))
        assert_inert(screen_text(app), "the packs screen")
    app.service.close()
