"""The `reviewer` CLI: exit codes, the progress-free JSON views and their stable field names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reviewer.cli.main import cli
from tests.conftest import FIXTURE_RECORDINGS

RUN_FIELDS = {
    "run_id",
    "run_key",
    "agent_id",
    "outcome",
    "tool_calls",
    "findings",
    "started_at",
    "coverage_gaps",
    "evictions",
    "tenant",
    "principal",
    "session_id",
    "delivered",
    "delivered_as",
    "source",
    "sources",
}
FINDING_FIELDS = {"id", "run_id", "kind", "codes", "message", "span_text", "placeable", "pack_version"}


@pytest.fixture
def ingested(tmp_path: Path) -> Path:
    db = tmp_path / "cli.db"
    result = CliRunner().invoke(cli, ["ingest", str(FIXTURE_RECORDINGS), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "23 stored" in result.output
    return db


def _json(args: list[str]) -> object:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_runs_json_fields_and_filters(ingested: Path) -> None:
    runs = _json(["runs", "--json", "--db", str(ingested)])
    # 25 runs in 23 files, three of them read twice (a bare recording and its envelope): 22 runs
    assert isinstance(runs, list) and len(runs) == 22
    assert sorted(len(r["sources"]) for r in runs)[-4:] == [1, 2, 2, 2]
    assert all(set(r) >= RUN_FIELDS for r in runs)
    refused = _json(["runs", "--json", "--outcome", "refused", "--db", str(ingested)])
    assert [r["run_id"] for r in refused] == ["run-1796002023213-3"]
    with_findings = _json(["runs", "--json", "--has-findings", "--db", str(ingested)])
    assert with_findings and all(r["findings"] > 0 for r in with_findings)
    assert len(with_findings) < len(runs)


def test_show_json(ingested: Path) -> None:
    run = _json(["show", "run-1796001963675-1", "--json", "--db", str(ingested)])
    assert isinstance(run, dict)
    assert run["outcome"] == "delivered" and run["answer"].startswith("vol-002 is 93.2% used")
    names = {c["tool_name"]: c for c in run["tool_calls"]}
    assert names["volume_inventory"]["render"]["default"] == "table"
    assert names["volume_inventory"]["result"] is not None
    assert {"list", "what", "why", "tool_name"} <= set(run["coverage"][0])
    assert isinstance(run["evictions"], list) and isinstance(run["findings"], list)
    plain = _json(["show", "run-1796001919298-1", "--json", "--db", str(ingested)])
    assert plain["tool_calls"][0]["render"] is None


def test_json_says_what_the_person_received(ingested: Path) -> None:
    unmet = _json(["runs", "--json", "--outcome", "contract_unmet", "--db", str(ingested)])
    assert [(r["delivered"], r["delivered_as"]) for r in unmet] == [(True, "raw")]
    run = _json(["show", unmet[0]["run_key"], "--json", "--db", str(ingested)])
    assert (run["delivered"], run["delivered_as"]) == (True, "raw")
    assert run["delivery_headline"] == "delivered raw: failed its output contract"
    assert [r["check"] for r in run["disposition"]["rows"]] == [
        "invariant-violation",
        "invariant-violation",
        "dangling-reference",
        "unsupported-claim",
    ]
    paused = _json(["show", "run-1796002101665-1", "--json", "--db", str(ingested)])
    assert (paused["outcome"], paused["delivered"], paused["delivered_as"]) == ("paused", False, None)
    text = CliRunner().invoke(cli, ["show", "run-1796002023213-3", "--db", str(ingested)]).output
    assert "received: WITHHELD: Refused by the evidence gate" in text


def test_show_unknown_run_is_a_clear_error(ingested: Path) -> None:
    result = CliRunner().invoke(cli, ["show", "run-nope", "--db", str(ingested)])
    assert result.exit_code == 1 and "no run 'run-nope'" in result.output


def test_findings_json(ingested: Path) -> None:
    findings = _json(["findings", "--json", "--db", str(ingested)])
    assert findings and all(set(f) >= FINDING_FIELDS for f in findings)
    dangling = _json(["findings", "--json", "--kind", "dangling-reference", "--db", str(ingested)])
    assert [f["run_id"] for f in dangling] == ["run-1796001996843-1"]
    of_run = _json(["findings", "--json", "--run", "run-1796002007389-1", "--db", str(ingested)])
    assert sorted(f["kind"] for f in of_run) == ["unsupported-claim"] * 3


def test_findings_unlabelled_lists_what_nobody_has_labelled_by_run(ingested: Path) -> None:
    every = _json(["findings", "--json", "--db", str(ingested)])
    assert isinstance(every, list)
    keys = [f["run_key"] for f in every]
    assert keys == sorted(keys)  # by run (and position in it), as the queue reads them
    first, second = every[0]["id"], every[1]["id"]
    for fid in (first, second):
        result = CliRunner().invoke(
            cli, ["label", fid, "--verdict", "unsure", "--reviewer", "ann", "--db", str(ingested)]
        )
        assert result.exit_code == 0, result.output
    left = _json(["findings", "--json", "--unlabelled", "--db", str(ingested)])
    assert [f["id"] for f in left] == [f["id"] for f in every[2:]]
    assert left and set(left[0]) == set(every[2])  # the same fields, nothing renamed
    plain = CliRunner().invoke(cli, ["findings", "--unlabelled", "--db", str(ingested)]).output
    assert first not in plain and every[2]["id"] in plain


def test_ingest_exit_code_and_quarantine_json(tmp_path: Path) -> None:
    db = tmp_path / "q.db"
    bad = tmp_path / "bad.json"
    bad.write_text('{"events": [')
    result = CliRunner().invoke(
        cli, ["ingest", str(bad), str(FIXTURE_RECORDINGS / "plain-tool-run.json"), "--db", str(db)]
    )
    assert result.exit_code == 1
    assert "1 stored" in result.output and "1 quarantined" in result.output
    rows = _json(["quarantine", "--json", "--db", str(db)])
    assert rows == [{**rows[0], "path": str(bad), "code": "truncated"}]
    assert "reason" in rows[0] and str(bad) in rows[0]["reason"]


def test_ingest_json_summary(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["ingest", str(FIXTURE_RECORDINGS / "plain-tool-run.json"), "--json", "--db", str(tmp_path / "j.db")],
    )
    assert result.exit_code == 0
    summary = json.loads(result.stdout)
    assert (summary["stored"], summary["runs"], summary["quarantined"]) == (1, 1, [])


def test_db_defaults_to_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "env.db"
    monkeypatch.setenv("REVIEWER_DB", str(target))
    result = CliRunner().invoke(cli, ["ingest", str(FIXTURE_RECORDINGS / "plain-tool-run.json")])
    assert result.exit_code == 0 and target.exists()


def test_not_a_database_is_refused_not_overwritten(tmp_path: Path) -> None:
    precious = tmp_path / "notes.db"
    precious.write_text("my notes, not a database")
    result = CliRunner().invoke(cli, ["runs", "--db", str(precious)])
    assert result.exit_code == 1 and "not an SQLite database" in result.output
    assert precious.read_text() == "my notes, not a database"


@pytest.mark.parametrize("module", ["reviewer", "reviewer.cli.main"])
def test_the_cli_runs_as_a_module(module: str) -> None:
    """`python -m reviewer` and `python -m reviewer.cli.main` both answer like the `reviewer` command."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "Usage:" in out.stdout and "ingest" in out.stdout
