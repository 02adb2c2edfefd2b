"""The TypeScript snippet of a phrase pack, written so it pastes and compiles as it stands: it imports
the type it is checked against, its constant name is a valid, non-reserved identifier, and every
character a reader cannot see (or that reorders the text around it) is written as a `\\u` escape, so
the phrase on screen is the phrase in the code.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable

IMPORT_LINE = "import type { NegativeClaimsOptions } from 'agentfootprint';"

#: ECMAScript reserved words (strict mode and modules included), plus names a module cannot bind.
RESERVED = frozenset(
    [
        "await",
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "debugger",
        "default",
        "delete",
        "do",
        "else",
        "enum",
        "export",
        "extends",
        "false",
        "finally",
        "for",
        "function",
        "if",
        "implements",
        "import",
        "in",
        "instanceof",
        "interface",
        "let",
        "new",
        "null",
        "package",
        "private",
        "protected",
        "public",
        "return",
        "static",
        "super",
        "switch",
        "this",
        "throw",
        "true",
        "try",
        "typeof",
        "var",
        "void",
        "while",
        "with",
        "yield",
        "arguments",
        "eval",
        "undefined",
        "NaN",
        "Infinity",
    ]
)

# Invisible or direction-changing: controls, format characters (zero-width, bidi marks, embeddings,
# overrides, isolates, BOM, soft hyphen), separators other than the plain space, private use,
# unassigned code points, variation selectors, the combining grapheme joiner and the Hangul fillers.
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp", "Co", "Cn", "Cs"})
_ESCAPED_EXTRA = frozenset({0x034F, 0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800}) | frozenset(
    [*range(0x180B, 0x1810), *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)]
)


class ConstNameError(ValueError):
    """The requested constant name would not compile, or would shadow a reserved word."""


def check_const_name(name: str) -> str:
    """`name` if it can be `export const NAME = ...`; otherwise ConstNameError saying why."""
    if not name.replace("$", "_").isidentifier():
        raise ConstNameError(
            f"{name!r} is not a JavaScript identifier (letters, digits, '_' or '$', not starting with a digit)"
        )
    if name in RESERVED:
        raise ConstNameError(f"{name!r} is a reserved word in JavaScript modules; choose another name")
    return name


def needs_escape(ch: str) -> bool:
    """Whether `ch` is invisible or direction-changing (a plain space is not)."""
    if ch == " ":
        return False
    return unicodedata.category(ch) in _ESCAPED_CATEGORIES or ord(ch) in _ESCAPED_EXTRA


def _u_escape(ch: str) -> str:
    units = ch.encode("utf-16-be")
    return "".join(f"\\u{int.from_bytes(units[i : i + 2], 'big'):04X}" for i in range(0, len(units), 2))


def js_string(s: str) -> str:
    """A double-quoted JavaScript string: JSON escaping, then every invisible character as `\\u` escapes
    (an astral one as its surrogate pair)."""
    body = json.dumps(s, ensure_ascii=False)[1:-1]
    return '"' + "".join(_u_escape(ch) if needs_escape(ch) else ch for ch in body) + '"'


def _js_list(items: Iterable[str]) -> str:
    return "[" + ", ".join(js_string(p) for p in items) + "]"


def typescript_snippet(
    none: Iterable[str], complete: Iterable[str], *, const_name: str = "phrases", content_id: str = ""
) -> str:
    """The snippet: the type import, a comment naming the pack's content id, the checked constant."""
    check_const_name(const_name)
    comment = (
        f"// phrase pack, content id {content_id} (not the framework's version hash)\n" if content_id else ""
    )
    return (
        f"{IMPORT_LINE}\n\n"
        f"{comment}"
        f"export const {const_name} = {{\n"
        "  prose: true,\n"
        "  phrases: {\n"
        f"    none: {_js_list(none)},\n"
        f"    complete: {_js_list(complete)},\n"
        "  },\n"
        "} satisfies NegativeClaimsOptions;\n"
    )
