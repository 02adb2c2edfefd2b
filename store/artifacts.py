"""The framework's artifact stores (fileArtifacts directories, sqliteArtifacts databases).

PLACEHOLDER under construction by a helper; see store/sources.py for how it is called.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from store.sources import SourceItem, SourceProblem


def is_file_artifact_store(root: Path) -> bool:
    return False


def is_sqlite_artifact_store(path: Path) -> bool:
    return False


def iter_file_artifacts(root: Path) -> Iterator[SourceItem | SourceProblem]:
    return iter(())


def iter_sqlite_artifacts(path: Path) -> Iterator[SourceItem | SourceProblem]:
    return iter(())


def read_artifact(item: SourceItem) -> bytes:
    raise NotImplementedError
