"""User key remapping: an optional TOML file of `binding_id = "key"` lines, applied with `App.set_keymap`.

Looked for at `$REVIEWER_KEYMAP`, else `~/.config/footprint-reviewer/keymap.toml` (`$XDG_CONFIG_HOME` honoured).
A `[keymap]` table is accepted too. A value may be a list of keys (`["j", "down"]`).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated

from pydantic import ConfigDict, RootModel, StringConstraints, ValidationError

from reviewer.service.settings import resolve_keymap_path


class KeymapError(ValueError):
    """The keymap file exists but cannot be used (the message says why)."""


def keymap_path() -> Path:
    """Where the keymap is looked for when no path is given (the `Settings` rule)."""
    return resolve_keymap_path()


#: A keymap file larger than this is refused unread (a real one is a few hundred bytes).
MAX_KEYMAP_BYTES = 64 * 1024

_Keys = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]


class KeymapFile(
    RootModel[dict[Annotated[str, StringConstraints(min_length=1, max_length=200)], _Keys | list[_Keys]]]
):
    """The file's table: binding id -> a key string (`"j"`, `"ctrl+n, N"`) or a non-empty list of them."""

    model_config = ConfigDict(strict=True)


def load_keymap(path: str | Path | None = None) -> dict[str, str]:
    """The keymap in the file (empty when there is no file). Raises `KeymapError` for a bad file, naming the
    binding id and what is wrong with it."""
    target = Path(path) if path is not None else keymap_path()
    if not target.is_file():
        return {}
    try:
        if target.stat().st_size > MAX_KEYMAP_BYTES:
            raise KeymapError(f"{target}: larger than {MAX_KEYMAP_BYTES:,} bytes; not a keymap")
        data = tomllib.loads(target.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise KeymapError(f"{target}: cannot read the keymap ({exc})") from exc
    table = data.get("keymap", data) if isinstance(data.get("keymap"), dict) else data
    try:
        parsed = KeymapFile.model_validate(table).root
    except ValidationError as exc:
        first = exc.errors()[0]
        binding = next((str(part) for part in first["loc"] if isinstance(part, str)), "?")
        raise KeymapError(
            f'{target}: {binding!r} must map to a key string such as "j" or "ctrl+n" ({first["msg"]})'
        ) from exc
    keymap: dict[str, str] = {}
    for binding_id, keys in parsed.items():
        listed = keys if isinstance(keys, list) else keys.split(",")
        cleaned = [k.strip() for k in listed if k.strip()]
        if not cleaned:
            raise KeymapError(f'{target}: {binding_id!r} must map to a key string such as "j" or "ctrl+n"')
        keymap[binding_id] = ",".join(cleaned)
    return keymap
