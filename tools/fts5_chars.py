"""Write `store/db/fts5_chars.py`: what SQLite's FTS5 tokenizer of the `search` index (`unicode61
remove_diacritics 2`) treats as a separator, and how it folds each token character, read from SQLite itself.

Run from the repository root:  python tools/fts5_chars.py [--out store/db/fts5_chars.py]

PostgreSQL's full-text search tokenizes with its own parser (URLs, paths, versions, hyphenated words kept
whole; accents kept; letters classified by the server's locale), so the same word would find different runs on
the two backends. The PostgreSQL schema (m015) instead splits and folds text with exactly these tables,
which is only right if they are FTS5's: every code point is indexed alone ("q" + c + "q", one document each)
and the tokens FTS5 makes of it are read back through an `fts5vocab` table. One token "q?q" means c is a token
character folding to "?" (nothing, for a removed diacritic); two tokens "q", "q" mean c is a separator.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

from store.db.fts5_tables import ranges

TOKENIZER = "unicode61 remove_diacritics 2"
OUT = Path(__file__).resolve().parents[1] / "store" / "db" / "fts5_chars.py"


def code_points() -> list[int]:
    """Every code point a text can hold (no NUL, which PostgreSQL text refuses; no surrogates)."""
    return [c for c in range(1, 0x110000) if not 0xD800 <= c <= 0xDFFF]


def read_tokenizer() -> tuple[list[int], dict[int, int | None]]:
    """(separator code points, {token code point: folded code point or None when removed}) as FTS5 does it."""
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE s USING fts5(text, tokenize='{TOKENIZER}')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(s, 'instance')")
    points = code_points()
    db.executemany("INSERT INTO s (rowid, text) VALUES (?, ?)", ((c, f"q{chr(c)}q") for c in points))
    tokens: dict[int, list[str]] = {}
    for doc, term in db.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
        tokens.setdefault(doc, []).append(term)
    separators: list[int] = []
    folds: dict[int, int | None] = {}
    for c in points:
        got = tokens.get(c, [])
        if got == ["q", "q"]:
            separators.append(c)
        elif len(got) == 1 and len(got[0]) in (2, 3) and got[0][0] == got[0][-1] == "q":
            folded = got[0][1:-1]
            if folded != chr(c):
                folds[c] = ord(folded) if folded else None
        else:
            raise SystemExit(f"U+{c:04X}: FTS5 made {got!r} of q{chr(c)}q; this tool does not understand it")
    return separators, folds


def wrapped(items: list[str], indent: str = "    ") -> str:
    """Space-separated items as implicitly concatenated string literals of at most ~100 characters."""
    lines: list[str] = []
    line = ""
    for item in items:
        if line and len(line) + len(item) + 1 > 96:
            lines.append(line + " ")
            line = ""
        line = f"{line} {item}" if line else item
    lines.append(line)
    return "\n".join(f'{indent}"{text}"' for text in lines)


def module_text(separators: list[int], folds: dict[int, int | None]) -> str:
    seps = [f"{a:x}" if a == b else f"{a:x}-{b:x}" for a, b in ranges(separators)]
    folded = [f"{c:x}>{'' if f is None else f'{f:x}'}" for c, f in sorted(folds.items()) if c > 0x7F]
    ascii_folds = sorted(c for c in folds if c <= 0x7F)
    if ascii_folds != list(range(ord("A"), ord("Z") + 1)):
        raise SystemExit(f"FTS5 folds ASCII other than A-Z: {ascii_folds}")
    return f'''"""What SQLite's FTS5 tokenizer of the `search` index (`{TOKENIZER}`) does to each character,
read from SQLite {sqlite3.sqlite_version} by `python tools/fts5_chars.py` (generated: do not edit by hand).

PostgreSQL splits and folds the searched text with these tables (schema m015; read by
`store.db.fts5_tables`), so a word finds the same runs on both backends. Every character that is not a separator is a token character; ASCII folds A-Z to a-z.
"""

from __future__ import annotations

#: Code points FTS5 splits tokens at, as hex ranges "first-last" (or one code point), space-separated.
SEPARATORS = (
{wrapped(seps)}
)

#: Non-ASCII token characters FTS5 folds, as "code point>folded code point" in hex; nothing after ">" means
#: the character is removed (a combining diacritic). A folded character is never folded again, nor a separator.
FOLDS = (
{wrapped(folded)}
)
'''


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    separators, folds = read_tokenizer()
    separator_set = set(separators)
    if any(f is not None and (f in folds or f in separator_set) for f in folds.values()):
        raise SystemExit("a folded character is folded again or is a separator: one pass would not do")
    args.out.write_text(module_text(separators, folds))
    print(
        f"{args.out}: {len(separators):,} separators, {len(folds):,} folds (SQLite {sqlite3.sqlite_version})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
