"""Distinct copies of real recordings, for tests that need many files (crash, concurrency)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import FIXTURE_RECORDINGS

BASES = ("plain-tool-run.json", "semantics-table-and-chart.json", "window-eviction-dangling-reference.json")


def make_copies(folder: Path, count: int, *, prefix: str = "copy") -> list[Path]:
    """`count` recordings whose bytes (and run ids) all differ, cycling through a few real ones."""
    folder.mkdir(parents=True, exist_ok=True)
    texts = [(FIXTURE_RECORDINGS / name).read_text() for name in BASES]
    paths = []
    for n in range(count):
        text = texts[n % len(texts)]
        marker = f"{prefix}{n:05d}"
        # every run id becomes unique; JSON stays valid because run ids are plain ascii strings
        text = text.replace('"runId": "run-', f'"runId": "run-{marker}-').replace(
            '"runId":"run-', f'"runId":"run-{marker}-'
        )
        path = folder / f"{marker}.json"
        path.write_text(text)
        paths.append(path)
    return paths
