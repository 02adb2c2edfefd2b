"""Phrase packs: every framework limit refused by name, stable hashes, diff, JSON/TS round trips."""

from __future__ import annotations

import hashlib
import json

import pytest

from reviewer.review.phrase_pack import (
    MAX_PHRASE_UTF16,
    MAX_PHRASES,
    PackFormatError,
    PackLimitError,
    PhrasePack,
    diff,
    validate_phrases,
)

ASTRAL = "\U0001f600"  # one Python character, two UTF-16 code units


def codes(none: list[object], complete: list[object] = []) -> list[str]:  # noqa: B006
    return [p.code for p in validate_phrases(none, complete)]


def test_32_phrases_accepted_33_refused_naming_the_limit() -> None:
    ok = PhrasePack.create("p", [f"none {i}" for i in range(20)], [f"all {i}" for i in range(12)])
    assert len(ok) == MAX_PHRASES == 32
    with pytest.raises(PackLimitError) as err:
        PhrasePack.create("p", [f"none {i}" for i in range(20)], [f"all {i}" for i in range(13)])
    assert "33 phrases" in str(err.value) and "limit is 32" in str(err.value)
    assert [p.code for p in err.value.problems] == ["too-many-phrases"]


def test_phrase_length_counts_utf16_units_with_astral_as_two() -> None:
    assert MAX_PHRASE_UTF16 == 128
    assert codes(["a" * 128]) == []
    assert codes(["a" * 129]) == ["too-long"]
    assert codes(["a" * 126 + ASTRAL]) == []  # 127 characters, 128 units
    assert codes(["a" * 127 + ASTRAL]) == ["too-long"]  # 128 characters, 129 units
    with pytest.raises(PackLimitError, match="129 UTF-16 code units long; the limit is 128"):
        PhrasePack.create("p", ["a" * 127 + ASTRAL])


def test_length_is_measured_after_collapsing_whitespace() -> None:
    assert codes(["  " + "a " * 64 + "  "]) == []  # 127 units once collapsed


@pytest.mark.parametrize("phrase", ["", "   ", "\t\n "])
def test_empty_or_whitespace_phrase_refused(phrase: str) -> None:
    with pytest.raises(PackLimitError, match=r"none\[0\] is empty"):
        PhrasePack.create("p", [phrase])


def test_non_string_refused() -> None:
    assert codes([5]) == ["not-text"]


def test_duplicates_differing_in_case_or_spacing_refused_within_and_across_lists() -> None:
    assert codes(["No  Incidents", "no incidents"]) == ["duplicate"]
    with pytest.raises(PackLimitError, match=r"complete\[0\] .* duplicates none\[0\]"):
        PhrasePack.create("p", ["came up empty"], [" CAME\tup  Empty "])


@pytest.mark.parametrize(
    ("phrase", "what"),
    [
        ("nothing.* found", "wildcard"),
        (r"no \d+ rows", "backslash"),
        ("[a-z]+ came up empty", "square brackets"),
        ("(?i)none", "regex group"),
        ("none|nothing", "alternation"),
        ("^none found", "anchor"),
        ("none found$", "anchor"),
        ("no {entity} found", "slot braces"),
        ("no incidents*", "quantifier"),
    ],
)
def test_regex_or_slot_looking_input_refused_saying_what(phrase: str, what: str) -> None:
    with pytest.raises(PackLimitError) as err:
        PhrasePack.create("p", [phrase])
    assert err.value.problems[0].code == "not-literal"
    assert what in str(err.value) and "not literal text" in str(err.value)


@pytest.mark.parametrize(
    "phrase", ["it's empty, so far.", "we owe $0 in fees", "none (yet)", 'the "full" list', "ne trouve rien"]
)
def test_ordinary_punctuation_is_literal(phrase: str) -> None:
    assert codes([phrase]) == []


def test_all_problems_reported_together() -> None:
    with pytest.raises(PackLimitError) as err:
        PhrasePack.create("p", ["", "x" * 200, "a.*b"], ["ok", "OK"])
    assert [p.code for p in err.value.problems] == ["empty", "too-long", "not-literal", "duplicate"]
    assert [(p.list_name, p.index) for p in err.value.problems] == [
        ("none", 0),
        ("none", 1),
        ("none", 2),
        ("complete", 1),
    ]


def test_phrases_are_stored_with_whitespace_collapsed_and_case_kept() -> None:
    pack = PhrasePack.create("p", ["  Came   up\nEmpty "])
    assert pack.none == ("Came up Empty",)


def test_content_id_is_over_the_exact_export_ignoring_name_parent_and_extra_spaces() -> None:
    a = PhrasePack.create("a", ["came up empty", "no incidents"], ["the full list"])
    b = PhrasePack.create("b", [" came  up empty", "no\tincidents "], ["the full list"], parent_hash="x")
    assert a.to_json_obj() == b.to_json_obj() and a.content_hash == b.content_hash
    compact = json.dumps(a.to_json_obj(), ensure_ascii=False, separators=(",", ":"))
    assert a.content_hash == hashlib.sha256(compact.encode()).hexdigest()
    assert a.short_hash == a.content_hash[:12]


def test_packs_that_export_different_json_never_share_an_id() -> None:
    # Behaviour changed on purpose (issue #13): the id used to ignore order and case, so these shared one.
    a = PhrasePack.create("a", ["came up empty", "no incidents"], ["the full list"])
    reordered = PhrasePack.create("a", ["no incidents", "came up empty"], ["the full list"])
    recased = PhrasePack.create("a", ["Came up empty", "no incidents"], ["the full list"])
    ids = {p.content_hash for p in (a, reordered, recased)}
    exports = {json.dumps(p.to_json_obj()) for p in (a, reordered, recased)}
    assert len(ids) == len(exports) == 3


def test_duplicates_after_normalisation_and_invisible_only_phrases_are_refused() -> None:
    with pytest.raises(PackLimitError, match="duplicates"):
        PhrasePack.create("p", ["came up empty", "Came  UP empty"])
    with pytest.raises(PackLimitError, match="duplicates"):
        PhrasePack.create("p", ["came up empty", "came\u200b up empty"])
    for invisible in ("\u200b", "\u200b\u200b \u200b", "\u200e\u2066\ufeff"):
        with pytest.raises(PackLimitError, match="empty after stripping") as caught:
            PhrasePack.create("p", ["ok", invisible])
        assert caught.value.problems[0].code == "empty" and caught.value.problems[0].index == 1


def test_hash_sensitive_to_content_and_list() -> None:
    base = PhrasePack.create("p", ["came up empty"], ["the full list"])
    assert (
        PhrasePack.create("p", ["came up empty", "x y"], ["the full list"]).content_hash != base.content_hash
    )
    assert PhrasePack.create("p", ["came up emptyy"], ["the full list"]).content_hash != base.content_hash
    moved = PhrasePack.create("p", ["came up empty", "the full list"], [])
    assert moved.content_hash != base.content_hash
    assert PhrasePack.create("p").content_hash != base.content_hash


def test_with_and_without_phrase_record_parent() -> None:
    base = PhrasePack.create("p", ["came up empty"])
    child = base.with_phrase("complete", "the full list")
    assert child.complete == ("the full list",) and child.parent_hash == base.content_hash
    assert child.without_phrase("THE FULL  LIST").content_hash == base.content_hash
    with pytest.raises(PackLimitError):
        base.with_phrase("none", "Came Up Empty")


def test_diff_compares_normalised_and_reports_moves() -> None:
    a = PhrasePack.create("a", ["came up empty", "no incidents"], ["the full list"])
    b = PhrasePack.create("b", ["Came Up Empty", "nothing found", "the full list"], ["every service"])
    d = diff(a, b)
    assert d.added_none == ("nothing found", "the full list")
    assert d.removed_none == ("no incidents",)
    assert d.added_complete == ("every service",)
    assert d.removed_complete == ("the full list",)
    assert not d.is_empty and diff(a, a).is_empty


def test_json_export_shape_and_round_trip() -> None:
    pack = PhrasePack.create("p", ["came up empty", 'the "quoted" one'], ["the entire inventory is here"])
    obj = pack.to_json_obj()
    assert obj == {
        "prose": True,
        "phrases": {
            "none": ["came up empty", 'the "quoted" one'],
            "complete": ["the entire inventory is here"],
        },
    }
    back = PhrasePack.from_json_obj(json.loads(pack.to_json_text()), name="p")
    assert back == pack and back.content_hash == pack.content_hash


def test_json_import_accepts_bare_lists_and_missing_list() -> None:
    pack = PhrasePack.from_json_obj({"none": ["came up empty"]})
    assert pack.none == ("came up empty",) and pack.complete == ()


@pytest.mark.parametrize(
    "obj",
    [["came up empty"], "none", {"phrases": ["x"]}, {"foo": []}, {}, {"none": "x"}, {"none": [], "x": []}],
)
def test_json_import_refuses_other_shapes(obj: object) -> None:
    with pytest.raises(PackFormatError):
        PhrasePack.from_json_obj(obj)


def test_json_import_applies_limits() -> None:
    with pytest.raises(PackLimitError, match="limit is 32"):
        PhrasePack.from_json_obj({"prose": True, "phrases": {"none": [f"p {i}" for i in range(33)]}})


def test_typescript_export_escapes_and_round_trips() -> None:
    pack = PhrasePack.create("p", ['the "quoted" one', f"rien {ASTRAL} trouvé"], ["it's all here"])
    ts = pack.to_typescript()
    assert ts.rstrip().endswith("} satisfies NegativeClaimsOptions;")
    assert "export const phrases = {" in ts and "prose: true," in ts
    assert 'none: ["the \\"quoted\\" one", "rien \U0001f600 trouvé"],' in ts
    assert 'complete: ["it\'s all here"],' in ts
    assert PhrasePack.from_typescript(ts, name="p") == pack


def test_typescript_import_reads_the_framework_doc_example() -> None:
    snippet = """// Optional configuration: bounded literal words, never regexes or callbacks.
export const customObservation = {
  prose: true,
  phrases: { none: ['came up empty', 'it\\'s "gone"'], complete: ['the entire inventory is here'] },
} satisfies NegativeClaimsOptions;"""
    pack = PhrasePack.from_typescript(snippet)
    assert pack.none == ("came up empty", 'it\'s "gone"')
    assert pack.complete == ("the entire inventory is here",)


def test_typescript_import_refuses_code() -> None:
    with pytest.raises(PackFormatError):
        PhrasePack.from_typescript("export const x = { phrases: { none: makeList() } };")
    with pytest.raises(PackFormatError):
        PhrasePack.from_typescript("no object here")


def test_json_import_refuses_unknown_list_inside_phrases() -> None:
    with pytest.raises(PackFormatError, match="completes"):
        PhrasePack.from_json_obj({"prose": True, "phrases": {"none": [], "completes": ["x"]}})


@pytest.mark.parametrize(
    "blank", ["\u3164\u3164", "\u115f", "\u1160 \uffa0", "\u2800 \u2800", "\u200b\u2060\u034f"]
)
def test_a_phrase_that_draws_as_blank_is_refused(blank: str) -> None:
    from reviewer.review.phrase_pack import PackLimitError, PhrasePack

    with pytest.raises(PackLimitError) as err:
        PhrasePack("p", (blank,), ())
    assert "empty after stripping" in str(err.value)
