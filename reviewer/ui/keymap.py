"""User key remapping: an optional TOML file of `binding_id = "key"` lines, applied with `App.set_keymap`.

Looked for at `$REVIEWER_KEYMAP`, else `~/.config/footprint-reviewer/keymap.toml` (`$XDG_CONFIG_HOME` honoured).
A `[keymap]` table is accepted too. A value may be a list of keys (`["j", "down"]`). Both `label.tp = "y"`
(which TOML reads as a nested table) and `"label.tp" = "y"` name the binding `label.tp`. Each entry is
validated by the pydantic `KeymapEntry`; a bad line is reported on its own, naming its line, its binding id and
the field (`k.toml:3: 'list.down', field keys[1]: ...`), and the rest of the file still applies.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator

from reviewer.service.settings import resolve_keymap_path

#: A binding id as the app's bindings spell them ("label.tp", "run.next-finding").
BINDING_ID = r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$"
#: Most keys one binding may get, and characters of one key name ("ctrl+shift+pagedown").
MAX_KEYS, MAX_KEY = 10, 40
_CONTROL_OR_SPACE = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")


class KeymapError(ValueError):
    """The keymap file exists but cannot be read at all (the message says why)."""


@dataclass
class Keymap:
    """What the file maps (binding id -> comma-separated keys) and one message per line that was left out."""

    bindings: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    #: where each binding id was read ("path:line", or the path when its line is not known)
    where: dict[str, str] = field(default_factory=dict)


def _one_key(value: str) -> str:
    key = value.strip()
    if not key:
        raise ValueError("is empty")
    if len(key) > MAX_KEY:
        raise ValueError(f"is {len(key)} characters long; a key name has at most {MAX_KEY}")
    if _CONTROL_OR_SPACE.search(key):
        raise ValueError("has a space or a control character in it (one key per item)")
    return key


Key = Annotated[str, AfterValidator(_one_key)]


class KeymapEntry(BaseModel):
    """One line of the keymap file: a binding id and the key, or keys, it gets (validated before use)."""

    model_config = ConfigDict(strict=True, frozen=True)

    binding_id: str = Field(min_length=1, max_length=100, pattern=BINDING_ID)
    keys: list[Key] = Field(min_length=1, max_length=MAX_KEYS)

    @field_validator("keys", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        """ "j, down" is the list ["j", "down"] (empty pieces dropped)."""
        if isinstance(value, str):
            return [k.strip() for k in value.split(",") if k.strip()]
        return value

    @property
    def textual_keys(self) -> str:
        """The keys as Textual's keymap wants them: "j,down"."""
        return ",".join(self.keys)


#: pydantic's errors, said in the keymap file's words.
_PLAIN = {
    "list_type": 'must be a key string such as "j" or "ctrl+n", or a list of them',
    "string_type": 'must be a key string such as "j" or "ctrl+n"',
    "too_short": 'must name at least one key, such as "j" or "ctrl+n"',
    "too_long": f"names too many keys (at most {MAX_KEYS})",
    "string_pattern_mismatch": 'is not a binding id such as "label.tp" (letters, digits, ".", "_", "-")',
    "string_too_long": "is too long for a binding id",
}


def _toml_type(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"


def validated_entry(binding_id: str, value: Any, at: str) -> KeymapEntry | str:
    """The entry `binding_id = value`, or the message saying why it is left out: the line, the binding and the
    field (`keys`, `keys[1]`, `binding_id`)."""
    try:
        return KeymapEntry.model_validate({"binding_id": binding_id, "keys": value})
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = [str(p) for p in first["loc"]]
        place = loc[0] + "".join(f"[{p}]" for p in loc[1:]) if loc else "keys"
        kind = str(first["type"])
        if kind in ("string_type", "list_type"):
            message = f"{_PLAIN[kind]}, not {_toml_type(first.get('input'))}"
        elif kind == "value_error":
            message = str(first["msg"]).removeprefix("Value error, ")
        else:
            message = _PLAIN.get(kind, str(first["msg"]))
        return f"{at}: {binding_id[:100]!r}, field {place}: {message} (left out)"


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


def _table_name(line: str) -> str | None:
    """ "[keymap]" -> "keymap", "[label]" -> "label"; None when the line is not a table header."""
    if not line.startswith("[") or line.startswith("[["):
        return None
    try:
        header: Any = tomllib.loads(line)
    except tomllib.TOMLDecodeError:
        return None
    names: list[str] = []
    while isinstance(header, dict) and len(header) == 1:
        name, header = next(iter(header.items()))
        names.append(name)
    return ".".join(names) if names and header == {} else None


def _parse_lines(text: str, where: Path) -> tuple[dict[str, tuple[int, Any]], list[str]]:
    """Parse line by line, under the table header above each line: each good line kept (with its number),
    each line that is not TOML reported."""
    data: dict[str, tuple[int, Any]] = {}
    problems: list[str] = []
    prefix = ""
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        table = _table_name(stripped)
        if table is not None:
            prefix = f"{table}."
            continue
        try:
            parsed = tomllib.loads(line)
        except tomllib.TOMLDecodeError as exc:
            problems.append(f'{where}:{number}: not a `binding_id = "key"` line ({exc}): {stripped[:80]!r}')
            continue
        for key, value in _flatten(parsed, prefix).items():
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
    by_line, line_problems = _parse_lines(text, target)
    located: dict[str, tuple[int | None, Any]]
    try:
        whole = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        located, problems = dict(by_line), line_problems
    else:
        # the whole file is TOML: its values (a list may span lines), each located by the line scan
        problems = []
        located = {k: (by_line[k][0] if k in by_line else None, v) for k, v in _flatten(whole).items()}
    result = Keymap(problems=problems)
    for name, (number, value) in located.items():
        binding_id = name.removeprefix("keymap.")
        at = f"{target}:{number}" if number is not None else str(target)
        entry = validated_entry(binding_id, value, at)
        if isinstance(entry, str):
            result.problems.append(entry)
        else:
            result.bindings[binding_id] = entry.textual_keys
            result.where[binding_id] = at
    return result


def load_keymap(path: str | Path | None = None) -> dict[str, str]:
    """Only the usable bindings of the file (see `read_keymap` for what was left out)."""
    return read_keymap(path).bindings
