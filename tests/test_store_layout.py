"""The store's rooms keep to their jobs: reading needs no review database, no module reaches into another's
private helpers, and the reading modules do not import each other in a circle."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

STORE = REPO / "store"
#: reads the framework's sqliteArtifacts files (an input format), read-only; nothing else in reading may
SQLITE_INPUT_READER = "store/reading/artifacts.py"


def _module(path: Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")


def _imports(path: Path) -> list[ast.ImportFrom | ast.Import]:
    return [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Import | ast.ImportFrom)]


def _imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in _imports(path):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif node.module and node.level == 0:
            names.add(node.module)
    return names


def test_reading_needs_no_review_database() -> None:
    offenders = {}
    for path in sorted((STORE / "reading").rglob("*.py")):
        rel = str(path.relative_to(REPO))
        banned = {"sqlite_utils", "store.db"} | (set() if rel == SQLITE_INPUT_READER else {"sqlite3"})
        found = sorted(m for m in _imported_modules(path) if m in banned or m.startswith("store.db."))
        text = path.read_text()
        if rel != SQLITE_INPUT_READER and any(w in text for w in ("SELECT ", "INSERT INTO", "CREATE TABLE")):
            found.append("SQL")
        if found:
            offenders[rel] = found
    assert offenders == {}


def test_no_private_helper_is_imported_across_modules() -> None:
    offenders = []
    for folder in ("store", "reviewer", "bench", "tools"):
        for path in sorted((REPO / folder).rglob("*.py")):
            for node in _imports(path):
                if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in (
                    "store",
                    "reviewer",
                ):
                    offenders += [
                        f"{path.relative_to(REPO)}: {a.name}" for a in node.names if a.name.startswith("_")
                    ]
    assert offenders == []


def test_store_modules_import_no_cycle() -> None:
    graph = {
        _module(p): {m for m in _imported_modules(p) if m.startswith("store")} for p in STORE.rglob("*.py")
    }

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph.get(start, set()):
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    assert sorted(m for m in graph if reaches(m, m, {m})) == []


def test_the_consumer_named_query_modules_are_gone() -> None:
    assert [
        n for n in ("queries.py", "ui_queries.py", "queue.py", "extract.py", "db.py") if (STORE / n).exists()
    ] == []
