"""The keymap file: `binding_id = "key"` lines, optional, errors reported clearly."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewer.ui.keymap import KeymapError, keymap_path, load_keymap


def test_missing_file_is_an_empty_keymap(tmp_path: Path) -> None:
    assert load_keymap(tmp_path / "absent.toml") == {}


def test_strings_lists_and_a_keymap_table(tmp_path: Path) -> None:
    path = tmp_path / "k.toml"
    path.write_text('"list.down" = "n"\n"list.up" = ["p", "ctrl+k"]\n', encoding="utf-8")
    assert load_keymap(path) == {"list.down": "n", "list.up": "p,ctrl+k"}
    path.write_text('[keymap]\n"run.next-finding" = "n, N"\n', encoding="utf-8")
    assert load_keymap(path) == {"run.next-finding": "n,N"}


@pytest.mark.parametrize("body", ["not = = toml", '"list.down" = 3', '"list.down" = ""'])
def test_bad_files_raise_keymap_error(tmp_path: Path, body: str) -> None:
    path = tmp_path / "k.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(KeymapError):
        load_keymap(path)


def test_path_from_env_then_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REVIEWER_KEYMAP", str(tmp_path / "mine.toml"))
    assert keymap_path() == tmp_path / "mine.toml"
    monkeypatch.delenv("REVIEWER_KEYMAP")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert keymap_path() == tmp_path / "footprint-reviewer" / "keymap.toml"


@pytest.mark.parametrize("body", ['"list.down" = 3', '"list.down" = ["j", 4]', '"list.down" = []'])
def test_a_bad_keymap_entry_is_named_in_the_error(tmp_path: Path, body: str) -> None:
    path = tmp_path / "k.toml"
    path.write_text(f'"list.up" = "k"\n{body}\n', encoding="utf-8")
    with pytest.raises(KeymapError, match="'list.down' must map to a key string"):
        load_keymap(path)
