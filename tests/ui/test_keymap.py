"""The keymap file: `binding_id = "key"` lines, optional, each bad line reported on its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewer.ui.keymap import KeymapError, keymap_path, load_keymap, read_keymap


def test_missing_file_is_an_empty_keymap(tmp_path: Path) -> None:
    assert load_keymap(tmp_path / "absent.toml") == {}


def test_strings_lists_and_a_keymap_table(tmp_path: Path) -> None:
    path = tmp_path / "k.toml"
    path.write_text('"list.down" = "n"\n"list.up" = ["p", "ctrl+k"]\n', encoding="utf-8")
    assert load_keymap(path) == {"list.down": "n", "list.up": "p,ctrl+k"}
    path.write_text('[keymap]\n"run.next-finding" = "n, N"\n', encoding="utf-8")
    assert load_keymap(path) == {"run.next-finding": "n,N"}


def test_the_documented_bare_dotted_form_and_the_quoted_form_both_work(tmp_path: Path) -> None:
    path = tmp_path / "k.toml"
    path.write_text('label.tp = "y"\n"label.fp" = "n"\nrun.next-finding = ["j", "down"]\n', encoding="utf-8")
    got = read_keymap(path)
    assert got.bindings == {"label.tp": "y", "label.fp": "n", "run.next-finding": "j,down"}
    assert got.problems == []
    path.write_text('[keymap]\nlabel.tp = "y"\n', encoding="utf-8")
    assert load_keymap(path) == {"label.tp": "y"}


# behaviour changed by issue 15: a bad line no longer rejects the whole file, it is reported on its own
@pytest.mark.parametrize(
    ("body", "bad_line"),
    [
        ('label.tp = "y"\nnot = = toml\n"list.up" = "p"\n', ":2:"),
        ('"list.down" = 3\nlabel.tp = "y"\n"list.up" = "p"\n', "'list.down'"),
        ('"list.down" = ""\nlabel.tp = "y"\n"list.up" = "p"\n', "'list.down'"),
    ],
)
def test_a_bad_line_is_reported_alone_and_the_rest_applies(tmp_path: Path, body: str, bad_line: str) -> None:
    path = tmp_path / "k.toml"
    path.write_text(body, encoding="utf-8")
    got = read_keymap(path)
    assert got.bindings == {"label.tp": "y", "list.up": "p"}
    assert len(got.problems) == 1 and bad_line in got.problems[0]


def test_an_unreadable_file_raises_keymap_error(tmp_path: Path) -> None:
    path = tmp_path / "k.toml"
    path.write_bytes(b"\xff\xfe label.tp")
    with pytest.raises(KeymapError):
        read_keymap(path)


def test_path_from_env_then_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REVIEWER_KEYMAP", str(tmp_path / "mine.toml"))
    assert keymap_path() == tmp_path / "mine.toml"
    monkeypatch.delenv("REVIEWER_KEYMAP")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert keymap_path() == tmp_path / "footprint-reviewer" / "keymap.toml"


@pytest.mark.parametrize("body", ['"list.down" = 3', '"list.down" = ["j", 4]', '"list.down" = []'])
def test_a_bad_keymap_entry_is_named_in_the_error(tmp_path: Path, body: str) -> None:
    """A value that is not a key string (or a list of them) is reported by its binding id; the other lines
    still apply (issue #15: one bad line never rejects the whole file)."""
    path = tmp_path / "k.toml"
    path.write_text(f'"list.up" = "k"\n{body}\n', encoding="utf-8")
    found = read_keymap(path)
    assert found.bindings == {"list.up": "k"}
    assert len(found.problems) == 1 and "list.down" in found.problems[0]


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ('"list.down" = 3', "k.toml:3: 'list.down', field keys: must be a key string"),
        ('"list.down" = ["j", 4]', "k.toml:3: 'list.down', field keys[1]: must be a key string such as"),
        ('"list.down" = []', "k.toml:3: 'list.down', field keys: must name at least one key"),
        (
            '"list.down" = "ctrl+ n"',
            "k.toml:3: 'list.down', field keys[0]: has a space or a control character",
        ),
        ('"list down!" = "n"', "k.toml:3: 'list down!', field binding_id: is not a binding id"),
        ('"list.down" = "' + "x" * 50 + '"', "field keys[0]: is 50 characters long"),
    ],
)
@pytest.mark.parametrize("table", ["", "[keymap]\n"])
def test_each_entry_is_validated_and_the_message_names_the_line_and_the_field(
    tmp_path: Path, line: str, named: str, table: str
) -> None:
    """Every entry goes through the pydantic `KeymapEntry` (issue #14 section 4): the one bad line is reported
    with its line number, its binding id and the field, and every other line still applies."""
    path = tmp_path / "k.toml"
    head = table or "# my keys\n"
    path.write_text(f'{head}"list.up" = "k"\n{line}\nlabel.tp = ["y", "Y"]\n', encoding="utf-8")
    found = read_keymap(path)
    assert found.bindings == {"list.up": "k", "label.tp": "y,Y"}
    [problem] = found.problems
    assert named in problem and problem.endswith("(left out)")


def test_the_line_is_named_under_a_table_header_and_in_a_file_that_is_not_toml(tmp_path: Path) -> None:
    path = tmp_path / "k.toml"
    path.write_text('[label]\ntp = "y"\nfp = 2\n[run]\nnext-finding = "n"\n', encoding="utf-8")
    found = read_keymap(path)
    assert found.bindings == {"label.tp": "y", "run.next-finding": "n"}
    assert found.problems == [
        f'{path}:3: \'label.fp\', field keys: must be a key string such as "j" or "ctrl+n", or a list of '
        "them, not a number (left out)"
    ]
    path.write_text('label.tp = "y"\nnot = = toml\n"list.up" = 5\n', encoding="utf-8")
    found = read_keymap(path)
    assert found.bindings == {"label.tp": "y"}
    assert [p.split(": ", 1)[0] for p in found.problems] == [f"{path}:2", f"{path}:3"]
    assert "field keys" in found.problems[1]


async def test_the_app_reports_the_bad_line_and_applies_the_rest(
    app_factory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.ui.conftest import SIZE, runs_screen_ready, wait_until

    path = tmp_path / "keys.toml"
    path.write_text('"runs.queue" = ["Q", 9]\n"runs.packs" = "P"\n', encoding="utf-8")
    monkeypatch.setenv("REVIEWER_KEYMAP", str(path))
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await runs_screen_ready(pilot)
        await wait_until(pilot, lambda: any("field keys[1]" in str(n.message) for n in app._notifications))
        [note] = [n for n in app._notifications if "field keys[1]" in str(n.message)]
        assert f"{path}:1: 'runs.queue'" in str(note.message) and note.title == "keymap line ignored"
        await pilot.press("P")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "PacksScreen")


async def test_a_binding_id_the_app_does_not_have_is_reported_with_its_line(
    app_factory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A misspelt id is reported as every other bad line is: the file and line first, then the id."""
    from tests.ui.conftest import SIZE, runs_screen_ready, wait_until

    path = tmp_path / "keys.toml"
    path.write_text('label.tp = "y"\nnav.bogus = "k"\n', encoding="utf-8")
    monkeypatch.setenv("REVIEWER_KEYMAP", str(path))
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await runs_screen_ready(pilot)
        await wait_until(pilot, lambda: any("nav.bogus" in str(n.message) for n in app._notifications))
        [note] = [n for n in app._notifications if "nav.bogus" in str(n.message)]
        assert str(note.message).startswith(f"{path}:2: no binding has the id 'nav.bogus'")
        assert not [n for n in app._notifications if "label.tp" in str(n.message)]  # the good line applies
