"""An imported phrase-pack file, validated by a pydantic model before anything is stored (a trust boundary).

The file is `{prose, phrases: {none, complete}}` (what `reviewer pack export` writes) or the bare
`{none, complete}`; a TypeScript snippet is read into the same object first. Every problem is named by its
place in the file (`phrases.none[3]: ...`, `prose: ...`), and the framework's limits are checked here with the
same rules as `phrase_pack.validate_phrases`: at most 32 phrases in total (counted before any phrase is
read, so a huge list costs nothing), each at most 128 UTF-16 code units of literal words, none empty after
normalisation, none twice. A file that breaks a limit raises `PackLimitError`; any other problem (shape,
types, unknown keys) `PackFormatError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, cast

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from reviewer.review.phrase_pack import (
    LIST_NAMES,
    MAX_PHRASES,
    ListName,
    PackFormatError,
    PackLimitError,
    PackProblem,
    normalise_phrase,
    phrase_problem,
)

#: The type of an error that breaks a framework limit (its context carries the PackProblem code).
LIMIT = "pack_limit"
#: Most problems one message lists (the rest are counted).
MAX_REPORTED = 8
SHAPE = (
    "expected {'prose': true, 'phrases': {'none': [...], 'complete': [...]}} or the bare "
    "{'none': [...], 'complete': [...]}"
)


def _limit(code: str, message: str) -> PydanticCustomError:
    return PydanticCustomError(LIMIT, "{message}", {"message": message, "code": code})


def _one_phrase(value: str) -> str:
    """A phrase within the per-phrase limits (not empty, not too long, literal words)."""
    problem = phrase_problem(value, "phrase")
    if problem is not None:
        raise _limit(problem.code, problem.message)
    return value


Phrase = Annotated[str, AfterValidator(_one_phrase)]


class PhraseLists(BaseModel):
    """`{none: [...], complete: [...]}`: at least one of the two, nothing else."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    none: list[Phrase] = Field(default_factory=list)
    complete: list[Phrase] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _counted_first(cls, data: Any) -> Any:
        """The total is checked before any phrase is read: a million-phrase file is refused at once."""
        if isinstance(data, Mapping):
            if not data:
                raise PydanticCustomError("pack_shape", SHAPE)
            sizes = [len(v) for name in LIST_NAMES if isinstance(v := data.get(name), list)]
            if sum(sizes) > MAX_PHRASES:
                raise _limit(
                    "too-many-phrases",
                    f"{sum(sizes)} phrases across none and complete; the limit is {MAX_PHRASES} in total",
                )
        return data

    @model_validator(mode="after")
    def _each_once(self) -> PhraseLists:
        """No phrase twice across both lists, compared normalised (the message names both places)."""
        seen: dict[str, str] = {}
        for list_name in LIST_NAMES:
            for index, phrase in enumerate(cast(list[str], getattr(self, list_name))):
                key, where = normalise_phrase(phrase), f"{list_name}[{index}]"
                if key in seen:
                    raise _limit(
                        "duplicate",
                        f"{where}: {phrase!r} duplicates {seen[key]} after normalisation (case and "
                        "whitespace are ignored); each phrase may appear once",
                    )
                seen[key] = where
        return self


class PackFile(BaseModel):
    """`{prose, phrases}`: what `reviewer pack export` writes (other keys of the options object are left)."""

    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)

    prose: bool = True
    phrases: PhraseLists


def read_pack_object(obj: object) -> PhraseLists:
    """The two phrase lists of an imported object; raises PackLimitError / PackFormatError naming the place."""
    if not isinstance(obj, Mapping):
        raise PackFormatError(f"a phrase pack must be a JSON object, not {type(obj).__name__}; {SHAPE}")
    try:
        if "phrases" in obj:
            return PackFile.model_validate(obj).phrases
        return PhraseLists.model_validate(obj)
    except ValidationError as exc:
        raise pack_error(exc) from None


#: pydantic's type errors, said in the file's own (JSON) words.
_PLAIN = {
    "string_type": "must be a string",
    "list_type": "must be a list of strings",
    "bool_type": "must be true or false",
    "model_type": "must be an object with 'none' and/or 'complete' lists",
    "dict_type": "must be an object",
}


def _json_type(value: object) -> str:
    """What a JSON value is, by JSON's names (a Python type name would mean nothing to the file's author)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def _place(loc: tuple[int | str, ...]) -> str:
    """("phrases", "none", 3) -> "phrases.none[3]"."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _located(error: Any) -> tuple[str, str]:
    """(place, message) of one pydantic error; a list-level check names its place itself ("none[4]: ...")."""
    place = _place(tuple(error["loc"]))
    message = str(error["msg"])
    kind = error["type"]
    if kind == "extra_forbidden":
        message = "unknown key (a pack has only 'none' and 'complete' lists)"
    elif kind in _PLAIN:
        message = f"{_PLAIN[kind]}, not {_json_type(error.get('input'))}"
    elif kind == LIMIT and message.split("[", 1)[0] in LIST_NAMES and "]: " in message:
        inner, _, message = message.partition(": ")
        place = f"{place}.{inner}" if place else inner
    return place, message


def pack_error(exc: ValidationError) -> PackLimitError | PackFormatError:
    """The model's errors as one message, each `place: what`: a PackLimitError when every one breaks a
    framework limit (each a located PackProblem), else a PackFormatError."""
    errors = exc.errors()
    located = [_located(e) for e in errors]
    lines = [f"{place}: {message}" if place else message for place, message in located[:MAX_REPORTED]]
    if len(errors) > MAX_REPORTED:
        lines.append(f"and {len(errors) - MAX_REPORTED} more problem(s)")
    if any(e["type"] == "extra_forbidden" for e in errors):
        lines.append(SHAPE)
    if all(e["type"] == LIMIT for e in errors):
        problems = []
        for (place, _message), line, error in zip(located, lines, errors[:MAX_REPORTED], strict=False):
            list_name, index = _list_index(place)
            problems.append(PackProblem(str(error["ctx"]["code"]), line, list_name, index))
        if len(errors) > MAX_REPORTED:
            problems.append(PackProblem(problems[-1].code, lines[-1]))
        return PackLimitError(problems)
    return PackFormatError("; ".join(lines))


def _list_index(place: str) -> tuple[ListName | None, int | None]:
    """("phrases.none[3]") -> ("none", 3): where an editor would point."""
    tail = place.rsplit(".", 1)[-1]
    name, _, rest = tail.partition("[")
    if name in LIST_NAMES and rest.endswith("]") and rest[:-1].isdigit():
        return cast(ListName, name), int(rest[:-1])
    return None, None
