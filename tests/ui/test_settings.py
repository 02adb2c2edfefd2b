"""One Settings object: flags, then environment, then defaults; an unknown setting is an error."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from reviewer.service import Settings
from reviewer.ui.app import make_app
from tests.ui.conftest import SIZE, runs_screen_ready, wait_until


def test_flags_then_environment_then_defaults(tmp_path: Path) -> None:
    env = {
        "REVIEWER_DB": str(tmp_path / "env.db"),
        "REVIEWER_NAME": " erin ",
        "REVIEWER_KEYMAP": str(tmp_path / "env.toml"),
        "REVIEWER_THEME": "nord",
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
    }
    flags = Settings.resolve(
        db_path=tmp_path / "flag.db",
        reviewer="fay",
        keymap_path=tmp_path / "k.toml",
        theme="gruvbox",
        environ=env,
    )
    assert (flags.db_path, flags.reviewer, flags.keymap_path, flags.theme) == (
        tmp_path / "flag.db",
        "fay",
        tmp_path / "k.toml",
        "gruvbox",
    )
    from_env = Settings.resolve(environ=env)
    assert (from_env.db_path, from_env.reviewer, from_env.keymap_path, from_env.theme) == (
        tmp_path / "env.db",
        "erin",
        tmp_path / "env.toml",
        "nord",
    )
    defaults = Settings.resolve(environ={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert defaults.db_path == Path("reviewer.db") and defaults.theme is None and defaults.reviewer
    assert defaults.keymap_path == tmp_path / "xdg" / "footprint-reviewer" / "keymap.toml"


def test_an_unknown_setting_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="db_paht"):
        Settings(db_paht=tmp_path / "x.db", reviewer="a", keymap_path=tmp_path / "k.toml")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="revewer"):
        Settings.resolve(revewer="a")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="db_path"):
        make_app(db_path=tmp_path / "x.db")  # type: ignore[call-arg]


async def test_the_app_uses_its_settings(ui_db: Path, tmp_path: Path) -> None:
    keymap = tmp_path / "keys.toml"
    keymap.write_text('"app.help" = "f2"\n')
    settings = Settings.resolve(db_path=ui_db, reviewer="gil", keymap_path=keymap, theme="textual-light")
    app = make_app(settings)
    async with app.run_test(size=SIZE) as pilot:
        await runs_screen_ready(pilot)
        assert app.reviewer_name == "gil" and app.theme == "textual-light"
        assert app.service.db_path == ui_db and app.sub_title == ui_db.name
        await pilot.press("f2")  # the keymap file named by the settings is applied
        await wait_until(pilot, lambda: type(app.screen).__name__ == "HelpScreen", timeout=60)
