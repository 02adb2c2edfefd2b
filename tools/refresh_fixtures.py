"""Refresh the real recordings the tests use (tests/fixtures/recordings) from the project's shared corpus.

The suite never reads ../shared: it reads the copies committed here, so a clone alone passes. Run this when
the shared corpus gains or changes recordings, then review and commit the difference.

    python3 tools/refresh_fixtures.py [SOURCE]     (default: ../shared/recordings beside the repository)
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET = REPO / "tests" / "fixtures" / "recordings"
DEFAULT_SOURCE = REPO.parent / "shared" / "recordings"


def refresh(source: Path, target: Path = TARGET) -> list[str]:
    """Copy every recording (*.json) and INDEX.md from `source`; returns the names copied."""
    names = sorted(p.name for p in source.glob("*.json"))
    if not names or not (source / "INDEX.md").is_file():
        raise SystemExit(f"{source}: no recordings with an INDEX.md there")
    target.mkdir(parents=True, exist_ok=True)
    for name in [*names, "INDEX.md"]:
        shutil.copyfile(source / name, target / name)
    return names


if __name__ == "__main__":
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_SOURCE
    copied = refresh(src)
    print(f"{len(copied)} recordings copied from {src} to {TARGET.relative_to(REPO)}")
