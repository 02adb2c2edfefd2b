"""The architecture rules of docs/design.md, enforced: imports point down only, SQL stays in `store`."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {
                a.name.split(".")[0] if a.name.split(".")[0] != "reviewer" else a.name for a in node.names
            }
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _py(folder: str) -> list[Path]:
    return sorted((REPO / folder).rglob("*.py"))


def test_store_imports_neither_textual_nor_reviewer() -> None:
    offenders = {
        str(p.relative_to(REPO)): sorted(
            n for n in _imports(p) if n.split(".")[0] in ("textual", "reviewer", "rich")
        )
        for p in _py("store")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_review_domain_imports_no_textual_and_no_database() -> None:
    offenders = {
        str(p.relative_to(REPO)): sorted(
            n
            for n in _imports(p)
            if n.split(".")[0] in ("textual", "sqlite3", "sqlite_utils", "psycopg", "store.db")
        )
        for p in _py("reviewer/review")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_no_sql_or_database_driver_outside_store() -> None:
    offenders = []
    for p in _py("reviewer"):
        rel = str(p.relative_to(REPO))
        if rel.startswith("reviewer/service/"):
            continue
        if {"sqlite3", "sqlite_utils", "psycopg"} & {n.split(".")[0] for n in _imports(p)}:
            offenders.append(rel)
        text = p.read_text()
        if any(word in text for word in ("SELECT ", "INSERT INTO", "CREATE TABLE", "DELETE FROM")):
            offenders.append(rel)
    assert offenders == []


def test_only_the_store_imports_the_postgresql_driver() -> None:
    """psycopg (the PostgreSQL backend) is imported by the store's dialect seam alone, service included."""
    offenders = [
        str(p.relative_to(REPO))
        for p in _py("reviewer")
        if "psycopg" in {n.split(".")[0] for n in _imports(p)}
    ]
    offenders += [
        str(p.relative_to(REPO))
        for p in _py("store")
        if "psycopg" in {n.split(".")[0] for n in _imports(p)} and p.name != "postgres.py"
    ]
    assert offenders == []


def test_ui_never_uses_markup_on_recorded_text() -> None:
    offenders = []
    for p in _py("reviewer"):
        text = p.read_text()
        if "Text.from_markup(" in text or "markup=True" in text:
            offenders.append(str(p.relative_to(REPO)))
    assert offenders == []


def test_import_linter_contracts_hold() -> None:
    """The contracts in pyproject.toml's [tool.importlinter]: UI -> service -> store, nothing upwards."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from importlinter.cli import lint_imports_command as lint; lint()",
            "--no-cache",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 kept, 0 broken" in done.stdout


def _project_modules(path: Path) -> set[str]:
    """The project modules (store.*, reviewer.*) a file imports, `from pkg import mod` resolved to pkg.mod."""

    def is_module(dotted: str) -> bool:
        base = REPO.joinpath(*dotted.split("."))
        return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names if is_module(f"{node.module}.{a.name}")}
    return {m for m in found if m.split(".")[0] in ("store", "reviewer") and is_module(m)}


def test_no_two_modules_imported_by_one_file_share_a_basename() -> None:
    """Four modules were named `packs.py`; a reader of a file importing two of them had to check which was which."""
    offenders: dict[str, list[str]] = {}
    for p in _py("reviewer") + _py("store") + _py("bench"):
        by_name: dict[str, set[str]] = {}
        for module in _project_modules(p):
            by_name.setdefault(module.rsplit(".", 1)[-1], set()).add(module)
        clashes = sorted(m for mods in by_name.values() if len(mods) > 1 for m in mods)
        if clashes:
            offenders[str(p.relative_to(REPO))] = clashes
    assert offenders == {}
