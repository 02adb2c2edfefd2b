"""Hostile recorded text (markup, ANSI/OSC escapes, control characters, bidi overrides, zero-width characters,
1 MB lines) stays literal and inert: on screen, in the CLI's text output, and in its --json output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reviewer.cli.main import cli
from reviewer.service import Settings
from reviewer.ui.app import make_app
from reviewer.ui.screens.run import RunScreen
from store.db.connection import open_database
from store.db.ingest import ingest
from tests.conftest import FIXTURE_RECORDINGS
from tests.ui.conftest import SIZE
from tests.ui.test_app import open_run

MARKUP = "[bold red]ALARM[/bold red] [link=https://evil.example]click[/link]"
ESCAPES = "\x1b[2J\x1b[H\x1b]52;c;aGFja2Vk\x07\x1b]0;pwned\x07"
CONTROLS = "nul\x00bell\x07bs\x08del\x7fc1\x9b"
BIDI = "abc\u202edcba\u202c zero\u200bwidth\u2066iso\u2069"
HOSTILE = f"{MARKUP} {ESCAPES} {CONTROLS} {BIDI}"
RUN_ID = "run-1796009999000-1"


def hostile_recording(path: Path) -> Path:
    """A real recording with hostile text in the prompt, answer, tool result, fact cells and column names,
    and a negative-claim finding whose message carries it too."""
    doc = json.loads((FIXTURE_RECORDINGS / "semantics-table-and-chart.json").read_text())
    for e in doc["events"]:
        e["meta"]["runId"] = RUN_ID
        t, p = e["type"], e["payload"]
        if t.endswith("turn_start"):
            p["userPrompt"] = "prompt " + HOSTILE
        elif t.endswith("turn_end"):
            p["finalContent"] = "answer " + HOSTILE + " there are no incidents. " + "x" * 1_000_000
        elif t.endswith("tool_end"):
            p["result"] = {"note": HOSTILE, HOSTILE: "column"}
        elif t.endswith("semantics_declared"):
            sem = p["semantics"]
            if sem.get("facts"):
                sem["facts"][0]["tier"] = HOSTILE
                sem["facts"][0][f"col {MARKUP}"] = 1
                sem["render"]["columns"].append(f"col {MARKUP}")
                sem["render"]["filter_note"] = HOSTILE
    doc["events"].append(
        {
            "type": "agentfootprint.findings.negative_claim",
            "payload": {
                "kind": "negative-claim",
                "field": "answer",
                "notes": [f"code-{MARKUP}"],
                "phrasePackVersion": f"pack {ESCAPES}",
                "span": {"start": 0, "end": 6},
            },
            "meta": dict(doc["events"][-1]["meta"]),
        }
    )
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture
def hostile_db(tmp_path: Path) -> Path:
    db_path = tmp_path / "hostile.db"
    db = open_database(db_path)
    report = ingest(db, [hostile_recording(tmp_path / "hostile.json")], db_path=str(db_path))
    assert report.stored == 1, report.quarantined
    db.close()
    return db_path


def screen_text(app: Any) -> str:
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(seg.text for seg in strip) for strip in strips)


def assert_inert(text: str) -> None:
    for bad in ("\x1b", "\x07", "\x00", "\x08", "\x9b", "\u202e", "\u2066", "\u200b"):
        assert bad not in text, f"{bad!r} reached the screen"


async def test_run_screen_shows_hostile_text_literally(hostile_db: Path) -> None:
    app = make_app(Settings.resolve(db_path=hostile_db, reviewer="ann"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_run(pilot, RUN_ID)
        assert isinstance(screen, RunScreen)
        await pilot.pause()
        text = screen_text(app)
        assert "[bold red]ALARM[/bold red]" in text, "the markup must show as literal text"
        assert "[link=https://evil.example]" in text
        assert_inert(text)
        # walk the timeline onto the tool calls: their drawn results must stay inert as well
        for _ in range(6):
            await pilot.press("j")
            await pilot.pause()
            assert_inert(screen_text(app))
    app.service.close()


def _cli(args: list[str]) -> str:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_cli_json_stays_valid_and_exact(hostile_db: Path) -> None:
    run = json.loads(_cli(["show", RUN_ID, "--json", "--db", str(hostile_db)]))
    assert run["prompt"] == "prompt " + HOSTILE  # exact, escaped by JSON, never altered
    assert len(run["answer"]) > 1_000_000
    findings = json.loads(_cli(["findings", "--json", "--db", str(hostile_db)]))
    assert any(f["pack_version"] == f"pack {ESCAPES}" for f in findings)
    runs = json.loads(_cli(["runs", "--json", "--db", str(hostile_db)]))
    assert runs[0]["run_id"] == RUN_ID


def test_cli_text_output_is_inert(hostile_db: Path) -> None:
    for args in (["show", RUN_ID], ["findings"], ["runs"]):
        out = _cli([*args, "--db", str(hostile_db)])
        assert "\x1b" not in out and "\x07" not in out and "\x00" not in out
    assert "[bold red]ALARM[/bold red]" in _cli(["show", RUN_ID, "--db", str(hostile_db)])
