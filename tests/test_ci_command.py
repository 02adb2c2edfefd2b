"""CI runs exactly what the README tells a newcomer to run, and never passes without the browser tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import REPO

INTRO = "this is exactly what `.ci/run` runs"


def readme_test_command() -> str:
    lines = (REPO / "README.md").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if INTRO in line)
    fence = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
    end = next(i for i in range(fence + 1, len(lines)) if lines[i].startswith("```"))
    block = [line for line in lines[fence + 1 : end] if line.strip()]
    assert len(block) == 1, block
    return block[0].strip()


def ci_commands() -> list[str]:
    """The lines of .ci/run that do something (comments, blank lines and the shell preamble left out)."""
    text = (REPO / ".ci" / "run").read_text()
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_ci_runs_exactly_the_readme_command() -> None:
    command = readme_test_command()
    lines = ci_commands()
    assert lines[-1] == command
    # nothing else in .ci/run installs Python packages or runs tests: the README command is the whole of it
    tools = ("pytest", "pip ", "pip3", "npm")
    assert not [line for line in lines[:-1] if any(tool in line for tool in tools)]


def test_readme_command_installs_the_typescript_checker() -> None:
    assert "(cd .ci/ts && npm install --no-audit --no-fund --no-package-lock)" in readme_test_command()
    package = json.loads((REPO / ".ci" / "ts" / "package.json").read_text())
    assert package == {"private": True, "devDependencies": {"typescript": "5.9.3"}}
    assert ".ci/ts/node_modules/" in (REPO / ".gitignore").read_text().splitlines()


def _run_browser_test(env_ci: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    # no third-party plugins: the browser tests need none, and pytest starts in a fraction of the time
    env |= {"REVIEWER_CHROMIUM": "", "PYTHONPATH": str(REPO), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    if env_ci is not None:
        env["CI"] = env_ci
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            str(REPO / "tests" / "test_serve_e2e.py"),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_browser_tests_fail_loudly_without_chromium_in_ci() -> None:
    result = _run_browser_test("true")
    assert result.returncode == 1, result.stdout
    assert "CI=true but the browser tests cannot run: no Chromium installed" in result.stdout
    assert " passed" not in result.stdout and "skipped" not in result.stdout


def test_browser_tests_skip_with_a_reason_without_chromium_outside_ci() -> None:
    result = _run_browser_test(None)
    assert result.returncode == 0, result.stdout
    assert "SKIPPED" in result.stdout and "no Chromium installed (apt-get install chromium)" in result.stdout
    assert "failed" not in result.stdout
