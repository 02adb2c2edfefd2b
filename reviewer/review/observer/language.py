"""A closed heuristic for units the English grammar cannot read. It is a heuristic, not language
identification: it can miss non-English text and can mistake short English for something else.

A unit is unsupported when most of its letters are outside the Latin script, or when it has at least
two words from a closed list of common non-English function words and more of those than of a closed
list of English ones. Words shared by several languages ("no", "a", "in") are on neither list.
"""

from __future__ import annotations

import re
import unicodedata

_FOREIGN = frozenset(
    [
        "le",
        "la",
        "les",
        "des",
        "une",
        "est",
        "sont",
        "pas",
        "aucun",
        "aucune",
        "il",
        "elle",
        "nous",
        "vous",
        "avec",
        "pour",
        "dans",
        "sur",
        "der",
        "das",
        "und",
        "ist",
        "nicht",
        "kein",
        "keine",
        "keinen",
        "wurde",
        "wurden",
        "sind",
        "gibt",
        "ein",
        "eine",
        "mit",
        "auf",
        "el",
        "los",
        "las",
        "una",
        "es",
        "está",
        "están",
        "hay",
        "ningún",
        "ninguna",
        "ninguno",
        "nada",
        "sin",
        "con",
        "para",
        "por",
        "del",
        "não",
        "nenhum",
        "nenhuma",
        "foi",
        "há",
        "uma",
        "com",
        "het",
        "een",
        "geen",
        "niet",
        "zijn",
        "werd",
        "van",
        "di",
        "che",
        "non",
        "nessun",
        "nessuna",
        "sono",
        "gli",
    ]
)
_ENGLISH = frozenset(
    [
        "the",
        "is",
        "are",
        "was",
        "were",
        "not",
        "none",
        "nothing",
        "there",
        "any",
        "and",
        "of",
        "to",
        "for",
        "has",
        "have",
        "had",
        "been",
        "with",
        "this",
        "that",
        "found",
        "which",
    ]
)
_WORD = re.compile(r"[^\W\d_]+")


def _latin_share(letters: list[str]) -> float:
    latin = sum(1 for ch in letters if unicodedata.name(ch, "").startswith("LATIN"))
    return latin / len(letters)


def language_unsupported(unit_text: str) -> bool:
    """Whether the heuristic judges `unit_text` not English (see the module docstring)."""
    if not unit_text.isascii():  # ASCII letters are all Latin: only other text can fail the script test
        letters = [ch for ch in unit_text if ch.isalpha()]
        if letters and _latin_share(letters) < 0.5:
            return True
    words = [w.casefold() for w in _WORD.findall(unit_text)]
    foreign = sum(1 for w in words if w in _FOREIGN)
    english = sum(1 for w in words if w in _ENGLISH)
    return foreign >= 2 and foreign > english
