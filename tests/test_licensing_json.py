"""`findings --json` carries `assertion` and `licensing` for each negative claim (issue 12 point 3)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from reviewer.cli.main import cli
from tests.licensing_recordings import ABSOLUTE, BOUNDED, vault_recording


def _findings(tmp_path: Path, **kwargs: str) -> dict[str | None, dict[str, object]]:
    rec = tmp_path / "vault.json"
    rec.write_text(json.dumps(vault_recording(**kwargs)), encoding="utf-8")
    db = str(tmp_path / "review.db")
    assert CliRunner().invoke(cli, ["ingest", str(rec), "--db", db]).exit_code == 0
    result = CliRunner().invoke(cli, ["findings", "--json", "--db", db])
    assert result.exit_code == 0, result.output
    return {f["span_text"] or f["kind"]: f for f in json.loads(result.stdout)}


def test_absolute_wording_outruns_a_search_that_declares_no_completeness(tmp_path: Path) -> None:
    rows = _findings(tmp_path)
    assert (rows[ABSOLUTE]["assertion"], rows[ABSOLUTE]["licensing"]) == ("absolute", "outruns")
    assert (rows[BOUNDED]["assertion"], rows[BOUNDED]["licensing"]) == ("bounded", "licensed")
    gap = rows["coverage-gap"]  # a kind the question does not apply to
    assert (gap["assertion"], gap["licensing"]) == (None, None)


def test_a_declared_complete_basis_licenses_the_absolute_wording(tmp_path: Path) -> None:
    rows = _findings(tmp_path, complete="within-arguments")
    assert (rows[ABSOLUTE]["assertion"], rows[ABSOLUTE]["licensing"]) == ("absolute", "licensed")


def test_a_finding_that_names_no_read_cannot_be_judged(tmp_path: Path) -> None:
    rec = vault_recording()
    for event in rec["events"]:
        if event["type"].endswith("negative_claim"):
            event["payload"]["refs"] = []
    (tmp_path / "in").mkdir()
    path = tmp_path / "in" / "vault.json"
    path.write_text(json.dumps(rec), encoding="utf-8")
    db = str(tmp_path / "review.db")
    assert CliRunner().invoke(cli, ["ingest", str(path), "--db", db]).exit_code == 0
    out = json.loads(
        CliRunner().invoke(cli, ["findings", "--json", "--kind", "negative-claim", "--db", db]).stdout
    )
    assert {f["licensing"] for f in out} == {"unjudgeable"}
