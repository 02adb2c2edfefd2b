"""Literal phrase matching with the extension's rules: same language, code and clause rules as the grammar.

Rules (a documented approximation of the framework's, kept simple on purpose):

- Case-insensitive (regex IGNORECASE, i.e. simple case folding) and whitespace-tolerant: the words of a
  phrase match across any run of whitespace. The text is never rewritten, so every index is a Python
  `str` index into the ORIGINAL text (astral characters count 1 here; UTF-16 conversion is the store's).
- Word boundaries: no word character may touch either end of a hit ("no incidents" is not in
  "no incidentsX" nor in "sono incidents").
- Code is skipped: a hit overlapping a ``` or ~~~ fenced block (to the closing fence, or the end of the
  text when unclosed) or an `inline code` span (one line) does not count.
- One clause: a hit may not cross a clause cut. Cuts fall after a run of `.!?;:` followed by whitespace
  or the end of the text, after every newline, after a comma that introduces a contrastive conjunction
  (", but", ", yet", ", although", ", though", ", whereas", ", while", ", however", ", except"),
  and at both edges of a fenced code block. Punctuation inside code spans does not cut. A clause is
  the text between two cuts with surrounding whitespace trimmed; its end includes its punctuation.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from reviewer.review.phrase_pack import ListName, PhrasePack

_CODE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|`[^`\n]+`", re.S)
_CUT = re.compile(
    r"[.!?;:]+(?=\s|\Z)|\n|,(?=[^\S\n]+(?:but|yet|although|though|whereas|while|however|except)\b)",
    re.I,
)


def phrase_pattern(phrase: str) -> str:
    """Regex source for one literal phrase: escaped words, `\\s+` between, word boundaries around."""
    return r"(?<!\w)" + r"\s+".join(re.escape(w) for w in phrase.split()) + r"(?!\w)"


def compile_phrase(phrase: str) -> re.Pattern[str]:
    """One phrase as a compiled, case-insensitive pattern (ignores clause and code rules)."""
    return re.compile(phrase_pattern(phrase), re.I)


@dataclass(frozen=True, slots=True)
class PhraseHit:
    """One phrase found in one clause; all indices are Python str indices, end exclusive."""

    phrase: str
    list_name: ListName
    start: int
    end: int
    clause_start: int
    clause_end: int


class TextLayout:
    """Code spans and clause cuts of one text: computed once, shared by every pack matched on it."""

    __slots__ = ("text", "code", "cuts")

    def __init__(self, text: str) -> None:
        self.text = text
        self.code: list[tuple[int, int]] = []
        cuts = {0, len(text)}
        for m in _CODE.finditer(text):
            self.code.append((m.start(), m.end()))
            if m.group().startswith(("```", "~~~")):
                cuts.update((m.start(), m.end()))
        for m in _CUT.finditer(text):
            if not self.in_code(m.end() - 1, m.end()):
                cuts.add(m.end())
        self.cuts = sorted(cuts)

    def in_code(self, start: int, end: int) -> bool:
        """Whether [start, end) overlaps any code span."""
        return any(cs < end and start < ce for cs, ce in self.code)

    def one_clause(self, start: int, end: int) -> bool:
        """Whether no clause cut falls strictly inside [start, end)."""
        return bisect_right(self.cuts, start) == bisect_left(self.cuts, end)

    def clause_at(self, index: int) -> tuple[int, int]:
        """The trimmed clause holding `index` (the last clause for an index at the end)."""
        i = max(0, min(bisect_right(self.cuts, index), len(self.cuts) - 1) - 1)
        start, end = self.cuts[i], self.cuts[i + 1] if i + 1 < len(self.cuts) else len(self.text)
        text = self.text
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        return start, end

    def clauses(self) -> list[tuple[int, int]]:
        """Every non-empty trimmed clause, in order."""
        spans = (self.clause_at(c) for c in self.cuts[:-1])
        return [s for s in dict.fromkeys(spans) if s[0] < s[1]]


_Trie = dict[str, "_Trie"]


def _trie_pattern(phrases: Iterable[str]) -> str:
    """One regex for many phrases, factored by shared leading words. A single alternation of literals
    lets the regex engine skip ahead by first character, which is what makes a replay over 10^5
    answers cheap. No leading boundary: callers confirm each start with the per-phrase pattern."""
    end = ""
    root: _Trie = {}
    for phrase in phrases:
        node = root
        for word in phrase.split():
            node = node.setdefault(word, {})
        node[end] = {}

    def emit(node: _Trie) -> str:
        alts = []
        for word, child in node.items():
            if word == end:
                continue
            tail = emit(child)
            optional = "?" if end in child else ""
            alts.append(re.escape(word) + (rf"(?:\s+{tail}){optional}" if tail else ""))
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")" if alts else ""

    return emit(root) + r"(?!\w)"


_Entry = tuple[str, ListName, "re.Pattern[str]"]


class CompiledPack:
    """A pack ready to match. One combined regex finds every position where some phrase may start;
    only there are the per-phrase patterns tried, and only on a real hit is the clause layout built.

    ASCII text against an all-ASCII pack is lowercased and matched without IGNORECASE (same indices,
    same result, about twice as fast); anything else is matched with IGNORECASE on the original."""

    __slots__ = ("pack", "_ascii", "_low_any", "_i_any", "_low_by_first", "_i_entries")

    def __init__(self, pack: PhrasePack, extra: Iterable[tuple[ListName, str]] = ()) -> None:
        self.pack = pack
        phrases = pack.phrases() + list(extra)
        self._ascii = all(p.isascii() for _, p in phrases)
        lowered = [p.lower() for _, p in phrases]
        self._i_any = re.compile(_trie_pattern(lowered), re.I) if phrases else None
        self._low_any = re.compile(_trie_pattern(lowered)) if phrases and self._ascii else None
        self._i_entries: list[_Entry] = [(p, n, compile_phrase(p)) for n, p in phrases]
        self._low_by_first: dict[str, list[_Entry]] = {}
        if self._ascii:
            for n, p in phrases:
                entry = (p, n, re.compile(phrase_pattern(p.lower())))
                self._low_by_first.setdefault(p[0].lower(), []).append(entry)

    def could_hit(self, text: str) -> bool:
        """Cheap necessary condition: some phrase occurs somewhere, ignoring clause and code rules."""
        if self._low_any is not None and text.isascii():
            return self._low_any.search(text.lower()) is not None
        return self._i_any is not None and self._i_any.search(text) is not None

    def candidate_starts(self, text: str) -> list[int]:
        """Every index where some phrase may start (ignoring boundary, clause and code rules), in order:
        no phrase occurrence starts anywhere else."""
        if self._low_any is not None and text.isascii():
            subject, scan = text.lower(), self._low_any
        elif self._i_any is not None:
            subject, scan = text, self._i_any
        else:
            return []
        out: list[int] = []
        pos = 0
        while (m := scan.search(subject, pos)) is not None:
            out.append(m.start())
            pos = m.start() + 1
        return out

    def hits(self, text: str, layout: TextLayout | None = None) -> list[PhraseHit]:
        """Every hit that survives the code and clause rules, ordered by position."""
        if self._low_any is not None and text.isascii():
            subject, scan = text.lower(), self._low_any
        elif self._i_any is not None:
            subject, scan = text, self._i_any
        else:
            return []
        found: list[PhraseHit] = []
        pos = 0
        while (m := scan.search(subject, pos)) is not None:
            start = pos = m.start()
            pos += 1
            entries = self._low_by_first.get(subject[start], []) if scan is self._low_any else self._i_entries
            for phrase, list_name, pattern in entries:
                pm = pattern.match(subject, start)
                if pm is None:
                    continue
                end = pm.end()
                layout = layout or TextLayout(text)
                if layout.in_code(start, end) or not layout.one_clause(start, end):
                    continue
                cs, ce = layout.clause_at(start)
                found.append(PhraseHit(phrase, list_name, start, end, cs, ce))
        found.sort(key=lambda h: (h.start, h.end, h.phrase))
        return found


@lru_cache(maxsize=64)
def compile_pack(pack: PhrasePack) -> CompiledPack:
    """Cached compilation: packs are frozen and hashable, and the UI matches the same few repeatedly."""
    return CompiledPack(pack)


def find_phrase_hits(text: str, pack: PhrasePack | CompiledPack) -> list[PhraseHit]:
    """Hits of `pack` in `text` under the literal-extension rules (see the module docstring)."""
    compiled = pack if isinstance(pack, CompiledPack) else compile_pack(pack)
    return compiled.hits(text)


def clause_at(text: str, index: int) -> tuple[int, int]:
    """The clause (trimmed start, end) that holds Python str index `index` of `text`."""
    return TextLayout(text).clause_at(index)


def clauses(text: str) -> list[tuple[int, int]]:
    """All clauses of `text` as (start, end) str indices."""
    return TextLayout(text).clauses()
