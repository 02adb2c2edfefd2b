"""Exports write exactly the path given, atomically, and never replace a file without being told to."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reviewer.cli.exports import ExportError, write_export


def test_writes_exactly_the_path_and_nothing_else(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    write_export(target, "[]\n")
    assert target.read_text() == "[]\n"
    assert sorted(os.listdir(tmp_path)) == ["out.json"]  # no temporary file left behind


def test_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("keep")
    with pytest.raises(ExportError, match="already exists"):
        write_export(target, "new")
    assert target.read_text() == "keep"
    write_export(target, "new", force=True)
    assert target.read_text() == "new"


def test_refuses_symlinks_and_folders(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("precious")
    link = tmp_path / "link.json"
    link.symlink_to(outside)
    with pytest.raises(ExportError, match="symbolic link"):
        write_export(link, "x", force=True)
    assert outside.read_text() == "precious"
    with pytest.raises(ExportError, match="is a folder"):
        write_export(tmp_path, "x", force=True)
    with pytest.raises(ExportError, match="no such folder"):
        write_export(tmp_path / "missing" / "out.json", "x")


def test_csv_cells_that_a_spreadsheet_would_run_are_neutralised() -> None:
    import csv
    import io

    from reviewer.service.label_export import labels_text

    hostile = ['=HYPERLINK("http://evil")', "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx", "plain"]
    rows = [
        {"uid": f"u{n}", "note": text, "reviewer": text, "span_start": -1} for n, text in enumerate(hostile)
    ]
    parsed = list(csv.DictReader(io.StringIO(labels_text(rows, "csv"))))
    for row, text in zip(parsed, hostile, strict=True):
        expected = text if text == "plain" else "'" + text
        assert row["note"] == expected and row["reviewer"] == expected
        assert row["span_start"] == "-1", "numbers stay numbers"
