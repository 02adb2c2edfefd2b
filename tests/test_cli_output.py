"""The CLI's plain output: rich tables that fit the terminal, TSV when piped, the app's words for a call's
state, coverage in `show`, pack refs that say why they name no pack, label exports with `finding_codes` an
array, and `reviewer schema`: the JSON Schema of every --json output, which that output validates against."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner
from rich.cells import cell_len

from reviewer.cli.main import cli
from reviewer.cli.schemas import SCHEMAS
from store import labels
from store.db.connection import open_database
from store.db.ingest import ingest
from tests.conftest import FIXTURE_RECORDINGS

LONG_AGENT = "fleet-capacity-and-storage-incident-triage-agent-for-emea-dc"
#: rich's own styling (the program's escapes, not recorded text: that is shown inert before rich sees it)
SGR = re.compile(r"\x1b\[[0-9;]*m")


def terminal(columns: int) -> dict[str, str]:
    """The environment of a terminal `columns` wide (rich reads TTY_COMPATIBLE and COLUMNS)."""
    return {"TTY_COMPATIBLE": "1", "COLUMNS": str(columns), "TERM": "xterm-256color", "NO_COLOR": "1"}


def invoke(args: list[str], env: dict[str, str] | None = None, code: int = 0) -> str:
    result = CliRunner().invoke(cli, args, env=env)
    assert result.exit_code == code, (result.output, result.exception)
    return SGR.sub("", result.output)


@pytest.fixture(scope="module")
def cli_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cli-output")
    text = (FIXTURE_RECORDINGS / "plain-tool-run.json").read_text()
    long_run = folder / "long-agent.json"
    long_run.write_text(
        text.replace("Agent:agent", f"Agent:{LONG_AGENT}")
        .replace('"agentId":"agent"', f'"agentId":"{LONG_AGENT}"')
        .replace("run-1796001919298-1", "run-long-agent-1")
    )
    db_path = folder / "cli.db"
    db = open_database(db_path)
    ingest(db, [FIXTURE_RECORDINGS, long_run], db_path=str(db_path))
    fid = db.execute("SELECT id FROM findings WHERE kind = 'coverage-gap' ORDER BY id LIMIT 1").fetchone()[0]
    labels.label_finding(db, fid, "tp", "ann")
    labels.label_finding(db, fid, "fp", "bob")
    db.close()
    return db_path


def test_runs_is_tsv_when_piped(cli_db: Path) -> None:
    out = invoke(["runs", "--db", str(cli_db)])
    lines = out.splitlines()
    assert lines[0].split("\t") == ["started (UTC)", "agent", "outcome", "calls", "finds", "gaps", "run"]
    runs = json.loads(invoke(["runs", "--json", "--db", str(cli_db)]))
    assert len(lines) == 1 + len(runs)
    assert all(line.count("\t") == 6 for line in lines), "one row per line, every row the same columns"
    long = next(line.split("\t") for line in lines if LONG_AGENT in line)
    assert long[1] == LONG_AGENT and long[6].startswith("run-long-agent-1@")


@pytest.mark.parametrize("columns", [80, 120])
def test_runs_table_fits_the_terminal_with_a_long_agent_name(cli_db: Path, columns: int) -> None:
    out = invoke(["runs", "--db", str(cli_db)], env=terminal(columns))
    lines = out.splitlines()
    assert "\t" not in out
    assert max(cell_len(line) for line in lines) <= columns, "no line is wider than the terminal"
    key = json.loads(invoke(["runs", "--json", "--db", str(cli_db), "--agent", LONG_AGENT]))[0]["run_key"]
    [row] = [n for n, line in enumerate(lines) if key in line]  # the run key stays whole, on one line
    # the columns stay aligned: each run key starts at the same column as the header's "run"
    header = next(line for line in lines if line.rstrip().endswith(" run"))
    assert lines[row].index(key) == header.rindex("run")
    # the long name is folded inside its column, all of it there
    agent_col = header.index("agent")
    pieces = "".join(line[agent_col:].split(" ")[0] for line in lines[row : row + 12])
    assert LONG_AGENT in pieces


def test_show_names_a_calls_state_as_the_app_does_and_its_coverage(cli_db: Path) -> None:
    out = invoke(["show", "run-1796001963675-1", "--db", str(cli_db)], env=terminal(160))
    assert "status=None" not in out and "None" not in out
    call_lines = [line for line in out.splitlines() if line.startswith(("call-inv-1", "call-iops-1"))]
    assert len(call_lines) == 2 and all(" done " in line for line in call_lines)
    assert "checked: all volumes on" in out and "not covered: snapshot" in out
    piped = invoke(["show", "run-1796001963675-1", "--db", str(cli_db)])
    assert "call\ttool\tstatus\tms\tcoverage" in piped
    [inv] = [line.split("\t") for line in piped.splitlines() if line.startswith("call-inv-1\t")]
    assert inv[:3] == ["call-inv-1", "volume_inventory", "done"]
    assert inv[4].startswith("checked: all volumes on VMAX-0457, capacity counters (live REST query)")
    assert "not covered: snapshot capacity (snapshot API timed out — ask again)" in inv[4]
    [iops] = [line.split("\t") for line in piped.splitlines() if line.startswith("call-iops-1\t")]
    assert iops[4].endswith("not covered: fabric B (SANnav instance for fabric B is not connected)")


def test_show_says_what_is_missing_as_the_app_does(cli_db: Path) -> None:
    out = invoke(["show", "run-1796002161653-1", "--db", str(cli_db)])  # capped: its turn's start was dropped
    assert "prompt: (no prompt in this recording: it starts mid-run" in out and "None" not in out
    assert "source: " in out and "envelope-capped-recording-maxEvents-150.json" in out


def test_stats_is_a_table(cli_db: Path) -> None:
    out = invoke(["stats", "--db", str(cli_db)], env=terminal(100))
    assert "=" not in out.replace("─", "")
    header = next(line for line in out.splitlines() if line.startswith("kind"))
    assert header.split() == ["kind", "total", "disagreement", "unlabelled"]
    gap = next(line for line in out.splitlines() if line.startswith("coverage-gap"))
    stats = json.loads(invoke(["stats", "--json", "--db", str(cli_db)]))
    counts = stats["kinds"]["coverage-gap"]
    assert gap.split() == ["coverage-gap", str(counts["total"]), "1", str(counts["unlabelled"])]
    assert "ann" in out and "bob" in out and "kappa" in out
    piped = invoke(["stats", "--db", str(cli_db)]).splitlines()
    assert piped[0] == "kind\ttotal\tdisagreement\tunlabelled"


def test_pack_show_says_why_a_prefix_names_no_pack(tmp_path: Path) -> None:
    db = ["--db", str(tmp_path / "packs.db")]
    made = [
        json.loads(invoke(["pack", "new", f"p{n}", "--none", f"phrase {n}", "--json", *db])) for n in range(3)
    ]
    content = made[0]["content_hash"]
    short = invoke(["pack", "show", content[:4], *db], code=1)
    assert "no phrase pack" not in short
    assert f"'{content[:4]}' is too short for a content id: give at least 6 characters" in short
    assert "p0@1" in short, "the candidates are listed"
    unknown = invoke(["pack", "show", "abcdef0123", *db], code=1)
    assert "no phrase pack is named 'abcdef0123' and no content id starts with it" in unknown
    miss = next(
        p for p in ("000", "111", "222", "333") if not any(m["content_hash"].startswith(p) for m in made)
    )
    none_short = invoke(["pack", "show", miss, *db], code=1)
    assert f"no content id starts with it (and '{miss}' is too short for one: give at least 6)" in none_short
    assert json.loads(invoke(["pack", "show", content[:8], "--json", *db]))["content_hash"] == content


def test_two_packs_sharing_a_long_prefix_are_ambiguous(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from store import packs as store_packs

    db = open_database(tmp_path / "p.db")
    store_packs.save_pack(db, "a", content_hash="abcdef01" + "0" * 56, none=["x"], complete=[])
    store_packs.save_pack(db, "b", content_hash="abcdef02" + "0" * 56, none=["y"], complete=[])
    db.close()
    out = invoke(["pack", "show", "abcdef0", "--db", str(tmp_path / "p.db")], code=1)
    assert "'abcdef0' is ambiguous: 2 packs" in out and "a@1" in out and "b@1" in out
    assert (
        json.loads(invoke(["pack", "show", "abcdef02", "--json", "--db", str(tmp_path / "p.db")]))["name"]
        == "b"
    )


def test_label_exports_keep_finding_codes_an_array(cli_db: Path) -> None:
    rows = json.loads(invoke(["labels", "--json", "--db", str(cli_db)]))
    assert rows and all(
        r["finding_codes"] == ["not_checked"] or isinstance(r["finding_codes"], list) for r in rows
    )
    assert isinstance(rows[0]["finding_codes"], list) and rows[0]["finding_codes"]
    table = list(csv.DictReader(io.StringIO(invoke(["labels", "--csv", "--db", str(cli_db)]))))
    assert [json.loads(r["finding_codes"]) for r in table] == [r["finding_codes"] for r in rows]


def _outputs(db_path: Path, tmp_path: Path) -> dict[str, Any]:
    """Every --json output on a database with runs, labels, packs, a deployment and a replay."""
    db = ["--db", str(db_path)]
    run = json.loads(invoke(["runs", "--json", *db]))[0]["run_key"]
    bad = tmp_path / "bad.json"
    bad.write_text('{"events": [')
    ingested = CliRunner().invoke(cli, ["ingest", str(bad), str(FIXTURE_RECORDINGS), "--json", *db])
    finding = json.loads(invoke(["findings", "--json", *db]))[0]["id"]
    out: dict[str, Any] = {
        "ingest": json.loads(ingested.stdout),
        "runs": json.loads(invoke(["runs", "--json", *db])),
        "show": json.loads(invoke(["show", run, "--json", *db])),
        "findings": json.loads(invoke(["findings", "--json", *db])),
        "quarantine": json.loads(invoke(["quarantine", "--json", *db])),
        "label": json.loads(
            invoke(["label", finding, "--verdict", "unsure", "--reviewer", "cy", "--json", *db])
        ),
        "labels": json.loads(invoke(["labels", "--json", *db])),
        "stats": json.loads(invoke(["stats", "--json", *db])),
        "pack-saved": json.loads(invoke(["pack", "new", "ops", "--none", "came up empty", "--json", *db])),
    }
    invoke(["pack", "add", "ops", "nothing turned up", *db])
    out["pack-deployed"] = json.loads(invoke(["pack", "deployed", "ops@1", "en-negatives@3", "--json", *db]))
    out["pack-replay"] = json.loads(invoke(["pack", "replay", "ops", "--json", *db]))
    out["pack-list"] = json.loads(invoke(["pack", "list", "--json", *db]))
    out["pack-versions"] = json.loads(invoke(["pack", "versions", "--json", *db]))
    out["pack-production"] = json.loads(invoke(["pack", "production", "--json", *db]))
    out["pack-show"] = json.loads(invoke(["pack", "show", "ops", "--json", *db]))
    out["pack-diff"] = json.loads(invoke(["pack", "diff", "ops", "--json", *db]))
    out["pack-suggest"] = json.loads(invoke(["pack", "suggest", "ops", "--json", *db]))
    return out


def test_reviewer_schema_prints_a_schema_every_json_output_validates_against(
    cli_db: Path, tmp_path: Path
) -> None:
    from shutil import copyfile

    db_path = tmp_path / "copy.db"
    copyfile(cli_db, db_path)
    every = json.loads(invoke(["schema"]))
    assert set(every) == set(SCHEMAS)
    outputs = _outputs(db_path, tmp_path)
    assert set(outputs) == set(SCHEMAS), "every --json output is covered"
    for name, value in outputs.items():
        schema = json.loads(invoke(["schema", name]))
        assert schema == every[name]
        jsonschema.Draft202012Validator.check_schema(schema)
        jsonschema.validate(value, schema, cls=jsonschema.Draft202012Validator)
        # the schema names every field printed (no key slips out undescribed)
        rows = value if isinstance(value, list) else [value]
        props = (schema["items"] if schema.get("type") == "array" else schema).get("properties")
        if props is None:  # a list of a referenced model
            ref = schema["items"]["$ref"].rsplit("/", 1)[-1]
            props = schema["$defs"][ref]["properties"]
        for row in rows:
            assert set(row) <= set(props), (name, set(row) - set(props))
    assert outputs["runs"][0]["sources"] and "sources" in every["runs"]["$defs"]["RunRow"]["required"]
    assert (
        every["labels"]["$defs"]["LabelExportRow"]["properties"]["finding_codes"]["anyOf"][0]["type"]
        == "array"
    )
    broken = CliRunner().invoke(cli, ["schema", "nope"])
    assert broken.exit_code == 2 and "known: runs, show" in broken.output


def test_json_field_names_are_those_printed_before_the_models(cli_db: Path) -> None:
    """Serializing through the models kept every field name (and value) of the store's rows."""
    from store.runs import get_run, list_runs

    db = open_database(cli_db)
    try:
        raw_runs = list_runs(db)
        raw_show = get_run(db, raw_runs[0]["run_key"])
    finally:
        db.close()
    printed = json.loads(invoke(["runs", "--json", "--db", str(cli_db)]))
    assert printed == json.loads(json.dumps(raw_runs))
    shown = json.loads(invoke(["show", raw_runs[0]["run_key"], "--json", "--db", str(cli_db)]))
    assert shown == json.loads(json.dumps(raw_show))
