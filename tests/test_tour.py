"""The README's tour cannot rot silently: tools/tour_screenshots.py, run from the samples into a temporary
folder, saves one screenshot per screen, and each shows that screen (its heading, no other screen's)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.slow]


def _tour() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tour_screenshots", REPO / "tools" / "tour_screenshots.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


async def test_the_tour_has_one_screenshot_per_screen_showing_that_screen(tmp_path: Path) -> None:
    tour = _tour()
    saved = await tour.take_tour(tmp_path / "tour")
    names = [stop.name for stop in tour.STOPS]
    assert names == ["runs", "run", "queue", "stats", "packs", "help", "quarantine"]
    assert sorted(saved) == sorted(names)
    assert sorted(p.name for p in (tmp_path / "tour").iterdir()) == sorted(f"{n}.svg" for n in names)
    for stop in tour.STOPS:
        text = tour.svg_text(saved[stop.name])
        assert f"footprint-reviewer: {stop.name}" in text
        assert stop.heading in text, f"the {stop.name} screenshot does not show {stop.heading!r}"
        others = [o.name for o in tour.STOPS if o is not stop and o.heading in text]
        assert not others, f"the {stop.name} screenshot shows the {others} screen(s)"
    assert re.search(r"3 / \d+ labelled \(3 by you\)", tour.svg_text(saved["queue"]))  # it labels as it goes
    assert "reviewers: tour (3)" in tour.svg_text(saved["stats"])


def test_the_readme_shows_every_screenshot_of_the_tour() -> None:
    tour = _tour()
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for stop in tour.STOPS:
        image = f"docs/tour/{stop.name}.svg"
        assert f"]({image})" in readme, f"README.md does not show {image}"
        assert (REPO / image).is_file(), f"{image} is not committed (python tools/tour_screenshots.py)"
