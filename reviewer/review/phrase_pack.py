"""Phrase packs: the literal extension of `.negativeClaims()`, validated the way the framework will.

A pack that breaks a limit is refused with the limit it breaks, never trimmed, because a trimmed pack
would not be the pack the reviewer measured. Phrases keep the reviewer's spelling (whitespace
collapsed). Duplicates and diffs compare the normalised form (casefolded, invisible format characters
dropped, whitespace collapsed); the pack's content id is over the exact exported object
(`store.pack_identity`), so two packs that export different JSON never share it. That id names a pack
stored here; it is not the framework's version hash.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, cast

from store.pack_identity import exported_object, pack_content_id
from store.spans import utf16_len

ListName = Literal["none", "complete"]
LIST_NAMES: tuple[ListName, ...] = ("none", "complete")

MAX_PHRASES = 32
MAX_PHRASE_UTF16 = 128


def clean_phrase(phrase: str) -> str:
    """The stored spelling: surrounding whitespace stripped, inner runs collapsed to one space."""
    return " ".join(phrase.split())


def normalise_phrase(phrase: str) -> str:
    """The comparison form of a phrase: matching ignores case and whitespace, and nobody can see a
    zero-width or direction mark, so duplicates ignore all three."""
    visible = "".join(ch for ch in phrase if unicodedata.category(ch) != "Cf" and ch not in _BLANK_LETTERS)
    return " ".join(visible.casefold().split())


#: Characters that draw as blank space without being format characters: the Hangul fillers, the braille
#: blank and the combining grapheme joiner (a phrase of only these would look empty and match nothing).
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f")


# Each rule: (pattern, what it looks like). Literal prose rarely needs these, regexes and slots always do.
_NOT_LITERAL: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"[{}]"), "slot braces '{' '}'"),
    (re.compile(r"\\"), "a backslash escape such as '\\d'"),
    (re.compile(r"\(\?"), "a regex group '(?'"),
    (re.compile(r"[\[\]]"), "square brackets (a regex character class such as '[a-z]')"),
    (re.compile(r"\|"), "an alternation bar '|'"),
    (re.compile(r"[.)\]][*+?]|\*"), "a regex wildcard or quantifier such as '.*'"),
    (re.compile(r"\A\^|\$\Z"), "a regex anchor '^' or '$'"),
    (re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"), "a control character"),
)


def literal_problem(phrase: str) -> str | None:
    """Why `phrase` looks like a regex or slot pattern rather than literal words (None if literal)."""
    for pattern, what in _NOT_LITERAL:
        if pattern.search(phrase):
            return what
    return None


@dataclass(frozen=True, slots=True)
class PackProblem:
    """One broken limit, located so an editor can point at the offending phrase."""

    code: str  # too-many-phrases | not-text | empty | too-long | not-literal | duplicate
    message: str
    list_name: ListName | None = None
    index: int | None = None
    phrase: str | None = None


class PackLimitError(ValueError):
    """The pack breaks a framework limit; the message names every limit broken."""

    def __init__(self, problems: list[PackProblem]) -> None:
        super().__init__("; ".join(p.message for p in problems))
        self.problems = problems


class PackFormatError(ValueError):
    """An imported object is not a phrase pack (wrong shape or types)."""


def phrase_problem(phrase: object, where: str = "phrase") -> PackProblem | None:
    """The first per-phrase limit `phrase` breaks, ignoring list-level rules (count, duplicates)."""
    if not isinstance(phrase, str):
        return PackProblem("not-text", f"{where} is not a string ({type(phrase).__name__})")
    cleaned = clean_phrase(phrase)
    if not normalise_phrase(cleaned):
        return PackProblem(
            "empty",
            f"{where} is empty after stripping whitespace and invisible characters (zero-width, direction marks)",
            phrase=phrase,
        )
    units = utf16_len(cleaned)
    if units > MAX_PHRASE_UTF16:
        return PackProblem(
            "too-long",
            f"{where} is {units} UTF-16 code units long; the limit is {MAX_PHRASE_UTF16} per phrase",
            phrase=phrase,
        )
    what = literal_problem(cleaned)
    if what is not None:
        return PackProblem(
            "not-literal",
            f"{where} {cleaned!r} is not literal text: it contains {what}; phrases are literal words, "
            "never regexes or slot patterns",
            phrase=phrase,
        )
    return None


def validate_phrases(none: Iterable[object], complete: Iterable[object]) -> list[PackProblem]:
    """Every limit the two lists break, in list order; empty when the pack is acceptable."""
    problems: list[PackProblem] = []
    lists: dict[ListName, list[object]] = {"none": list(none), "complete": list(complete)}
    total = len(lists["none"]) + len(lists["complete"])
    if total > MAX_PHRASES:
        problems.append(
            PackProblem(
                "too-many-phrases",
                f"{total} phrases across none and complete; the limit is {MAX_PHRASES} in total",
            )
        )
    seen: dict[str, str] = {}
    for list_name, phrases in lists.items():
        for index, phrase in enumerate(phrases):
            where = f"{list_name}[{index}]"
            problem = phrase_problem(phrase, where)
            if problem is not None:
                problems.append(PackProblem(problem.code, problem.message, list_name, index, problem.phrase))
                continue
            key = normalise_phrase(cast(str, phrase))
            if key in seen:
                problems.append(
                    PackProblem(
                        "duplicate",
                        f"{where} {phrase!r} duplicates {seen[key]} after normalisation "
                        "(case and whitespace are ignored); each phrase may appear once",
                        list_name,
                        index,
                        cast(str, phrase),
                    )
                )
            else:
                seen[key] = where
    return problems


@dataclass(frozen=True)
class PhrasePack:
    """A frozen, valid pack; constructing an invalid one raises `PackLimitError`."""

    name: str
    none: tuple[str, ...] = ()
    complete: tuple[str, ...] = ()
    parent_hash: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        problems = validate_phrases(self.none, self.complete)
        if problems:
            raise PackLimitError(problems)
        object.__setattr__(self, "none", tuple(clean_phrase(p) for p in self.none))
        object.__setattr__(self, "complete", tuple(clean_phrase(p) for p in self.complete))

    @classmethod
    def create(
        cls,
        name: str,
        none: Iterable[str] = (),
        complete: Iterable[str] = (),
        parent_hash: str | None = None,
    ) -> PhrasePack:
        """Build from any iterables (lists from an editor or the store)."""
        return cls(name, tuple(none), tuple(complete), parent_hash)

    def phrases(self) -> list[tuple[ListName, str]]:
        """All phrases with the list they extend, none first."""
        return [("none", p) for p in self.none] + [("complete", p) for p in self.complete]

    def __len__(self) -> int:
        return len(self.none) + len(self.complete)

    @cached_property
    def content_hash(self) -> str:
        """The content id: sha256 over the exact exported object (`to_json_obj`), so packs that export
        different JSON never share it. Not the framework's version hash."""
        return pack_content_id(self.none, self.complete)

    @property
    def short_hash(self) -> str:
        """The content id's first 12 hex digits, enough to tell packs apart on screen."""
        return self.content_hash[:12]

    def with_phrase(self, list_name: ListName, phrase: str) -> PhrasePack:
        """A child pack with one phrase added (its parent is this pack)."""
        none, complete = list(self.none), list(self.complete)
        (none if list_name == "none" else complete).append(phrase)
        return PhrasePack(self.name, tuple(none), tuple(complete), self.content_hash)

    def without_phrase(self, phrase: str) -> PhrasePack:
        """A child pack without `phrase` (compared normalised) in either list."""
        key = normalise_phrase(phrase)

        def keep(ps: tuple[str, ...]) -> tuple[str, ...]:
            return tuple(p for p in ps if normalise_phrase(p) != key)

        return PhrasePack(self.name, keep(self.none), keep(self.complete), self.content_hash)

    def to_json_obj(self) -> dict[str, object]:
        """The object `.negativeClaims(...)` accepts (the one the content id is computed over)."""
        return exported_object(self.none, self.complete)

    def to_json_text(self) -> str:
        """`to_json_obj` as indented JSON text."""
        return json.dumps(self.to_json_obj(), ensure_ascii=False, indent=2)

    @classmethod
    def from_json_obj(
        cls, obj: object, *, name: str = "imported", parent_hash: str | None = None
    ) -> PhrasePack:
        """Accept `{prose, phrases: {none, complete}}` or a bare `{none, complete}`; refuse the rest, naming
        the place of each problem (`phrases.none[3]: ...`: the pydantic model in `pack_file`)."""
        from reviewer.review.pack_file import read_pack_object

        lists = read_pack_object(obj)
        return cls(name, tuple(lists.none), tuple(lists.complete), parent_hash)

    def to_typescript(self, const_name: str = "phrases") -> str:
        """A snippet to paste into code (see `ts_export`); a bad const name raises ConstNameError."""
        from reviewer.review.ts_export import typescript_snippet

        return typescript_snippet(self.none, self.complete, const_name=const_name, content_id=self.short_hash)

    @classmethod
    def from_typescript(cls, source: str, *, name: str = "imported") -> PhrasePack:
        """Read back a pasted snippet (ours or the doc's): the first object literal in `source`."""
        start = source.find("{", source.find("=") + 1)
        if start < 0:
            raise PackFormatError("no object literal found in the TypeScript snippet")
        try:
            obj = json.loads(_js_object_to_json(source, start))
        except json.JSONDecodeError as exc:
            raise PackFormatError(f"the object literal is not plain data: {exc.msg}") from exc
        return cls.from_json_obj(obj, name=name)


_JS_SIMPLE_ESCAPES = {"'": "'", '"': '\\"', "v": "\\u000b", "0": "\\u0000", "x": "\\u00"}
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_SPACE = re.compile(r"\s*")


def _js_object_to_json(src: str, start: int) -> str:
    """Turn one JS object literal of plain data (bare keys, quotes of either kind, trailing commas,
    comments) into JSON text; stops at the brace that closes the literal at `start`."""
    out: list[str] = []
    depth, i, n = 0, start, len(src)
    while i < n:
        c = src[i]
        if c in "\"'":
            j, buf = i + 1, ['"']
            while j < n and src[j] != c:
                if src[j] == "\\" and j + 1 < n:
                    nxt = src[j + 1]
                    buf.append(_JS_SIMPLE_ESCAPES.get(nxt, "\\" + nxt))
                    j += 2
                    continue
                buf.append('\\"' if src[j] == '"' else src[j])
                j += 1
            out.append("".join(buf) + '"')
            i = j + 1
        elif src.startswith("//", i):
            newline = src.find("\n", i)
            i = n if newline < 0 else newline
        elif src.startswith("/*", i):
            end = src.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c in "]}":
            while out and (out[-1].isspace() or out[-1] == ","):
                out.pop()
            out.append(c)
            i += 1
            if c == "}":
                depth -= 1
                if depth == 0:
                    return "".join(out)
        elif (m := _IDENT.match(src, i)) is not None:
            word = m.group()
            after = _SPACE.match(
                src, m.end()
            )  # never copy the rest of the source: that made import quadratic
            is_key = after is not None and src.startswith(":", after.end())
            out.append(f'"{word}"' if is_key else word)
            i = m.end()
        else:
            if c == "{":
                depth += 1
            out.append(c)
            i += 1
    raise PackFormatError("the object literal is not closed")


@dataclass(frozen=True, slots=True)
class PackDiff:
    """What changed from one pack to another; phrases compared normalised, shown as spelled."""

    added_none: tuple[str, ...]
    removed_none: tuple[str, ...]
    added_complete: tuple[str, ...]
    removed_complete: tuple[str, ...]

    @property
    def is_empty(self) -> bool:
        return not (self.added_none or self.removed_none or self.added_complete or self.removed_complete)


def diff(a: PhrasePack, b: PhrasePack) -> PackDiff:
    """Changes from `a` to `b`; moving a phrase between lists shows as a removal plus an addition."""

    def minus(xs: tuple[str, ...], ys: tuple[str, ...]) -> tuple[str, ...]:
        keys = {normalise_phrase(y) for y in ys}
        return tuple(x for x in xs if normalise_phrase(x) not in keys)

    return PackDiff(
        added_none=minus(b.none, a.none),
        removed_none=minus(a.none, b.none),
        added_complete=minus(b.complete, a.complete),
        removed_complete=minus(a.complete, b.complete),
    )
