"""User key remapping: an optional TOML file of `binding_id = "key"` lines, applied with `App.set_keymap`.

Looked for at `$REVIEWER_KEYMAP`, else `~/.config/footprint-reviewer/keymap.toml` (`$XDG_CONFIG_HOME` honoured).
A `[keymap]` table is accepted too. A value may be a list of keys (`["j", "down"]`). Both `label.tp = "y"`
(which TOML reads as a nested table) and `"label.tp" = "y"` name the binding `label.tp`. A bad line is
reported on its own and the rest of the file still applies.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewer.service.settings import resolve_keymap_path


class KeymapError(ValueError):
    """The keymap file exists but cannot be read at all (the message says why)."""


@dataclass
class Keymap:
    """What the file maps (binding id -> comma-separated keys) and one message per line that was left out."""

    bindings: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def keymap_path() -> Path:
    """Where the keymap is looked for when no path is given (the `Settings` rule)."""
    return resolve_keymap_path()


def _flatten(table: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """`{"label": {"tp": "y"}}` -> `{"label.tp": "y"}`: a dotted bare key names one binding id."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


def _keys(value: Any) -> str | None:
    """The binding's keys as Textual wants them ("j,down"), or None when the value is not a key string/list."""
    if isinstance(value, str) and value.strip():
        return ",".join(k.strip() for k in value.split(",") if k.strip()) or None
    if isinstance(value, list) and value and all(isinstance(k, str) and k.strip() for k in value):
        return ",".join(k.strip() for k in value)
    return None


def _parse_lines(text: str, where: Path) -> tuple[dict[str, Any], list[str]]:
    """Parse line by line (the file as a whole is not TOML): each good line kept, each bad one reported."""
    data: dict[str, Any] = {}
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped == "[keymap]":
            continue
        try:
            parsed = tomllib.loads(line)
        except tomllib.TOMLDecodeError as exc:
            problems.append(f'{where}:{number}: not a `binding_id = "key"` line ({exc}): {stripped[:80]}')
            continue
        for key, value in _flatten(parsed).items():
            data[key] = (number, value)
    return data, problems


def read_keymap(path: str | Path | None = None) -> Keymap:
    """The keymap in the file (empty when there is no file), with a message per line it could not use.
    Raises `KeymapError` only when the file cannot be read at all."""
    target = Path(path) if path is not None else keymap_path()
    if not target.is_file():
        return Keymap()
    try:
        text = target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise KeymapError(f"{target}: cannot read the keymap ({exc})") from exc
    located: dict[str, tuple[int | None, Any]]
    try:
        whole = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        located, problems = _parse_lines(text, target)
    else:
        problems = []
        if isinstance(whole.get("keymap"), dict):
            whole = {**{k: v for k, v in whole.items() if k != "keymap"}, **whole["keymap"]}
        located = {k: (None, v) for k, v in _flatten(whole).items()}
    result = Keymap(problems=problems)
    for binding_id, (number, value) in located.items():
        binding_id = binding_id.removeprefix("keymap.")
        keys = _keys(value)
        if keys is None:
            at = f"{target}:{number}" if number is not None else str(target)
            result.problems.append(
                f'{at}: {binding_id!r} must map to a key string such as "j" or "ctrl+n" (left out)'
            )
        else:
            result.bindings[binding_id] = keys
    return result


def load_keymap(path: str | Path | None = None) -> dict[str, str]:
    """Only the usable bindings of the file (see `read_keymap` for what was left out)."""
    return read_keymap(path).bindings
