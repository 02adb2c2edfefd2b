"""One `Settings` object: database path, reviewer name, keymap path, theme.

Built once (`Settings.resolve`) from flags, then the environment, then defaults, and handed to the app
(`make_app(settings)`) and used by the CLI. These were resolved in four places before (the store's default
path, the CLI, the app factory, the keymap loader); now each rule is here once. A setting this object does
not know is an error: `Settings(**values)` refuses it, and `resolve` takes no other names.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict

#: Environment variables, one per setting.
ENV = {
    "db_path": "REVIEWER_DB",
    "reviewer": "REVIEWER_NAME",
    "keymap_path": "REVIEWER_KEYMAP",
    "theme": "REVIEWER_THEME",
}
#: The database when neither --db nor $REVIEWER_DB names one.
DEFAULT_DB = Path("reviewer.db")


class Settings(BaseModel):
    """What the app and the CLI are configured with (immutable once built)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    db_path: Path
    reviewer: str
    keymap_path: Path
    #: A Textual theme name; None keeps Textual's default.
    theme: str | None = None

    @classmethod
    def resolve(
        cls,
        *,
        db_path: str | Path | None = None,
        reviewer: str | None = None,
        keymap_path: str | Path | None = None,
        theme: str | None = None,
        environ: Mapping[str, str] | None = None,
        served_tab: bool = False,
    ) -> Settings:
        """Each setting from its flag (given here), else its environment variable, else its default.

        A `served_tab` (a browser tab of `reviewer serve`) takes its reviewer from the flag only, never from
        `$REVIEWER_NAME` or the login, so a tab never labels as the server's owner: it must name itself."""
        env = os.environ if environ is None else environ
        return cls(
            db_path=resolve_db_path(db_path, env),
            reviewer=(reviewer or "").strip() if served_tab else resolve_reviewer(reviewer, env),
            keymap_path=resolve_keymap_path(keymap_path, env),
            theme=_flag_or_env(theme, env, "theme"),
        )


def _flag_or_env(flag: str | Path | None, env: Mapping[str, str], name: str) -> str | None:
    if flag is not None and str(flag).strip():
        return str(flag).strip()
    value = env.get(ENV[name], "").strip()
    return value or None


def resolve_db_path(flag: str | Path | None = None, environ: Mapping[str, str] | None = None) -> Path:
    """--db, else $REVIEWER_DB, else ./reviewer.db."""
    if isinstance(flag, Path):
        return flag
    value = _flag_or_env(flag, os.environ if environ is None else environ, "db_path")
    return Path(value) if value else DEFAULT_DB


def resolve_reviewer(flag: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """--reviewer, else $REVIEWER_NAME, else the system user."""
    value = _flag_or_env(flag, os.environ if environ is None else environ, "reviewer")
    if value:
        return value
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "reviewer"


def resolve_keymap_path(flag: str | Path | None = None, environ: Mapping[str, str] | None = None) -> Path:
    """The keymap file: given, else $REVIEWER_KEYMAP, else ~/.config/footprint-reviewer/keymap.toml
    ($XDG_CONFIG_HOME honoured)."""
    env = os.environ if environ is None else environ
    value = _flag_or_env(flag, env, "keymap_path")
    if value:
        return Path(value).expanduser()
    base = Path(env.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "footprint-reviewer" / "keymap.toml"
