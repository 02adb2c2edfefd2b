"""User key remapping: an optional TOML file of `binding_id = "key"` lines, applied with `App.set_keymap`.

Looked for at `$REVIEWER_KEYMAP`, else `~/.config/footprint-reviewer/keymap.toml` (`$XDG_CONFIG_HOME` honoured).
A `[keymap]` table is accepted too. A value may be a list of keys (`["j", "down"]`).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from reviewer.service.settings import resolve_keymap_path


class KeymapError(ValueError):
    """The keymap file exists but cannot be used (the message says why)."""


def keymap_path() -> Path:
    """Where the keymap is looked for when no path is given (the `Settings` rule)."""
    return resolve_keymap_path()


def load_keymap(path: str | Path | None = None) -> dict[str, str]:
    """The keymap in the file (empty when there is no file). Raises `KeymapError` for a bad file."""
    target = Path(path) if path is not None else keymap_path()
    if not target.is_file():
        return {}
    try:
        data = tomllib.loads(target.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise KeymapError(f"{target}: cannot read the keymap ({exc})") from exc
    table = data.get("keymap", data) if isinstance(data.get("keymap"), dict) else data
    keymap: dict[str, str] = {}
    for binding_id, keys in table.items():
        if isinstance(keys, list) and keys and all(isinstance(k, str) and k.strip() for k in keys):
            keymap[str(binding_id)] = ",".join(k.strip() for k in keys)
        elif isinstance(keys, str) and keys.strip():
            keymap[str(binding_id)] = ",".join(k.strip() for k in keys.split(","))
        else:
            raise KeymapError(f'{target}: {binding_id!r} must map to a key string such as "j" or "ctrl+n"')
    return keymap
