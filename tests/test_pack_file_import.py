"""A phrase-pack file is validated by a pydantic model before anything is stored: every problem is named by
its place in the file (`phrases.none[3]: ...`), the framework's limits are still refused, and a bad file
stores nothing (issue #14 section 4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reviewer.review.pack_file import PackFile, PhraseLists, read_pack_object
from reviewer.review.phrase_pack import PackFormatError, PackLimitError, PhrasePack
from tests.test_pack_cli import data, run


@pytest.mark.parametrize(
    ("obj", "named"),
    [
        (
            {"prose": True, "phrases": {"none": ["came up empty", "nothing", "zero", 7]}},
            "phrases.none[3]: must be a string, not a number",
        ),
        ({"none": ["fine", None]}, "none[1]: must be a string, not null"),
        (
            {"prose": True, "phrases": {"complete": "all of it"}},
            "phrases.complete: must be a list of strings",
        ),
        ({"prose": "yes", "phrases": {"none": ["x"]}}, "prose: must be true or false, not a string"),
        ({"prose": True, "phrases": {"none": [], "nonee": []}}, "phrases.nonee: unknown key"),
        ({"phrases": ["came up empty"]}, "phrases: must be an object with 'none' and/or 'complete' lists"),
        ({"phrases": {}}, "phrases: expected {'prose': true"),
        (["came up empty"], "a phrase pack must be a JSON object, not list"),
    ],
)
def test_a_badly_shaped_pack_names_the_field(obj: object, named: str) -> None:
    with pytest.raises(PackFormatError) as err:
        read_pack_object(obj)
    assert named in str(err.value)


@pytest.mark.parametrize(
    ("obj", "named", "where"),
    [
        (
            {"prose": True, "phrases": {"none": ["a", "b", "c", "\u200b\u200b "]}},
            "phrases.none[3]: phrase is empty after stripping whitespace and invisible characters",
            ("none", 3),
        ),
        (
            {"none": ["ok"], "complete": ["𝔘" * 65]},
            "complete[0]: phrase is 130 UTF-16 code units long; the limit is 128 per phrase",
            ("complete", 0),
        ),
        (
            {"prose": True, "phrases": {"none": ["no .* found"]}},
            "phrases.none[0]: phrase 'no .* found' is not literal text",
            ("none", 0),
        ),
        (
            {"prose": True, "phrases": {"none": ["came up empty"], "complete": ["Came  UP empty"]}},
            "phrases.complete[0]: 'Came  UP empty' duplicates none[0] after normalisation",
            ("complete", 0),
        ),
        (
            {"none": [f"p{i}" for i in range(30)], "complete": ["a", "b", "c"]},
            "33 phrases across none and complete; the limit is 32 in total",
            (None, None),
        ),
    ],
)
def test_the_framework_limits_are_refused_with_the_place_named(
    obj: object, named: str, where: tuple[str | None, int | None]
) -> None:
    with pytest.raises(PackLimitError) as err:
        PhrasePack.from_json_obj(obj)
    assert named in str(err.value)
    [problem] = err.value.problems
    assert (problem.list_name, problem.index) == where


def test_a_huge_list_is_refused_by_its_count_before_any_phrase_is_read() -> None:
    with pytest.raises(PackLimitError, match="1000000 phrases across none and complete; the limit is 32"):
        read_pack_object({"none": [{"not": "a string"}] * 1_000_000})


def test_many_problems_are_listed_up_to_a_bound() -> None:
    with pytest.raises(PackFormatError) as err:
        read_pack_object({"none": list(range(20))})
    message = str(err.value)
    assert message.startswith("none[0]: must be a string, not a number; none[1]:")
    assert "none[7]:" in message and "none[8]:" not in message and "and 12 more problem(s)" in message


def test_a_good_file_reads_as_before_and_the_model_describes_it() -> None:
    exported = PhrasePack.create("p", ["came up empty"], ["that is all of them"]).to_json_obj()
    assert PhrasePack.from_json_obj(exported, name="p").to_json_obj() == exported
    assert read_pack_object({"none": ["x"]}) == PhraseLists(none=["x"], complete=[])
    assert set(PackFile.model_json_schema()["properties"]) == {"prose", "phrases"}


def _stored(db_path: Path) -> list[Any]:
    return data(db_path, "list")


@pytest.mark.parametrize(
    ("text", "named"),
    [
        (
            json.dumps({"prose": True, "phrases": {"none": ["came up empty", "zero", "none at all", 3]}}),
            "phrases.none[3]: must be a string, not a number",
        ),
        (
            json.dumps({"prose": True, "phrases": {"none": ["came up empty", "\u200b"]}}),
            "phrases.none[1]: phrase is empty after stripping",
        ),
        (
            "export const phrases = {\n  prose: true,\n  phrases: { none: ['ok', 'no .* here'], complete: [] },\n};\n",
            "phrases.none[1]: phrase 'no .* here' is not literal text",
        ),
    ],
)
def test_a_bad_pack_file_names_the_field_and_stores_nothing(
    db_path: Path, tmp_path: Path, text: str, named: str
) -> None:
    source = tmp_path / "pack.json"
    source.write_text(text, encoding="utf-8")
    result = run(db_path, "import", str(source), "--name", "ops", code=1)
    assert named in result.output
    assert _stored(db_path) == []
    run(db_path, "new", "ops", "--none", "came up empty")
    result = run(db_path, "import", str(source), "--name", "ops", code=1)
    assert named in result.output
    assert [(p["name"], p["versions"]) for p in _stored(db_path)] == [("ops", 1)], "no new version"
