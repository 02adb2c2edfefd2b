"""The TypeScript export pastes: it imports its type, refuses names that would not compile, shows
invisible characters as escapes, and compiles with tsc against a declaration written from the seed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from reviewer.review.phrase_pack import PhrasePack
from reviewer.review.ts_export import ConstNameError, check_const_name, js_string
from tests.conftest import REPO

TSC = REPO / ".ci" / "ts" / "node_modules" / ".bin" / "tsc"
DECLARATION = REPO / "tests" / "fixtures" / "ts" / "agentfootprint.d.ts"


def test_snippet_starts_with_the_type_import() -> None:
    ts = PhrasePack.create("p", ["came up empty"]).to_typescript()
    assert ts.startswith("import type { NegativeClaimsOptions } from 'agentfootprint';\n")
    assert "content id" in ts and "version hash" in ts  # never presented as the framework's hash


@pytest.mark.parametrize(
    "name", ["class", "await", "yield", "let", "enum", "undefined", "1st", "my-pack", "", "a b"]
)
def test_const_names_that_would_not_compile_are_refused(name: str) -> None:
    with pytest.raises(ConstNameError):
        check_const_name(name)
    with pytest.raises(ConstNameError):
        PhrasePack.create("p", ["x"]).to_typescript(name)


@pytest.mark.parametrize("name", ["phrases", "$pack", "_p2", "café", "customObservation"])
def test_valid_const_names_are_kept(name: str) -> None:
    assert check_const_name(name) == name


def test_invisible_and_direction_changing_characters_are_written_as_u_escapes() -> None:
    assert js_string("no\u200brows") == '"no\\u200Brows"'
    assert js_string("a\u202eb\u2066c\u2069") == '"a\\u202Eb\\u2066c\\u2069"'
    assert js_string("x\u00a0y\ufeff") == '"x\\u00A0y\\uFEFF"'
    assert js_string("tag\U000e0041") == '"tag\\uDB40\\uDC41"'  # astral: its surrogate pair
    assert js_string('rien trouvé "ici" \U0001f600') == '"rien trouvé \\"ici\\" \U0001f600"'  # visible: kept


def test_escaped_phrases_read_back_to_the_same_pack() -> None:
    pack = PhrasePack.create("p", ["no\u200b rows", "bidi \u202ethere"], ["the list\u00adis whole"])
    ts = pack.to_typescript()
    assert "\u200b" not in ts and "\u202e" not in ts and "\u00ad" not in ts
    assert PhrasePack.from_typescript(ts, name="p") == pack


def _tsc() -> Path | None:
    if TSC.exists():
        return TSC
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but the TypeScript compiler is missing at {TSC} (see .ci/ts/package.json)")
    found = shutil.which("tsc")
    if found is None:
        pytest.skip(
            "no TypeScript compiler: run (cd .ci/ts && npm install --no-audit --no-fund --no-package-lock)"
        )
    return Path(found)


def _compile(tmp_path: Path, **sources: str) -> subprocess.CompletedProcess[str]:
    """One tsc run over the declaration and each `name=source` as `name.ts`."""
    tsc = _tsc()
    assert tsc is not None
    files = []
    for name, source in sources.items():
        files.append(tmp_path / f"{name}.ts")
        files[-1].write_text(source, encoding="utf-8")
    return subprocess.run(
        [
            str(tsc),
            "--noEmit",
            "--strict",
            "--target",
            "es2022",
            "--module",
            "es2022",
            "--moduleResolution",
            "bundler",
            str(DECLARATION),
            *map(str, files),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_exported_snippet_compiles_against_the_seeds_declaration(tmp_path: Path) -> None:
    pack = PhrasePack.create(
        "p", ["came up empty", 'it\'s "gone"', "no\u200brows \U0001f600"], ["the entire inventory is here"]
    )
    result = _compile(tmp_path, pack=pack.to_typescript("customObservation"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_compiler_check_fails_a_snippet_that_breaks_the_declaration(tmp_path: Path) -> None:
    ts = PhrasePack.create("p", ["came up empty"]).to_typescript()
    broken = ts.replace("prose: true,", "prose: true,\n  field: 'negatives',")  # mixes the two forms
    result = _compile(tmp_path, broken=broken, no_import=ts.split("\n", 2)[2])
    assert result.returncode != 0
    assert "broken.ts" in result.stdout
    assert "no_import.ts" in result.stdout and "NegativeClaimsOptions" in result.stdout
