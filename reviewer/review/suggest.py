"""Phrase suggestions from missed-negative labels: the reviewer's words, plus what several labels share.

A suggestion must stay literal and within the pack limits, and it must be literally present in the text,
so sub-phrases are word n-grams taken inside one punctuation-free run of a label (an n-gram across a
comma would never match the answer). Each suggestion carries its cost: how many already-flagged and
false-positive clauses it would also match.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from reviewer.review.matching import compile_phrase
from reviewer.review.phrase_pack import LIST_NAMES, ListName, PhrasePack, normalise_phrase, phrase_problem

_STOPWORDS_TEXT = """
    a about above after again all also am an and any are as at be because been before being below
    between both by can could did do does doing down during each few for from further had has have
    having he her here hers him his how i if in into is it its itself just me more most my of off on
    once only or other our ours out over own same she should so some such than that the their theirs
    them then there these they this those through to too under until up very was we were what when
    where which while who whom why will with would you your yours"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())
_EDGE_PUNCT = ".,;:!?\"'()“”‘’…"
_RUNS = re.compile(r"[^\w\s'’-]+")


@dataclass(frozen=True, slots=True)
class MissedWords:
    """A missed-negative label: the words that carry the negative, and the list they would extend."""

    words: str
    list_name: ListName
    key: str = ""


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A candidate phrase with what it would gain (`covers`) and cost (`touches_*`)."""

    phrase: str
    list_name: ListName
    covers: int
    touches_flagged: int
    touches_fp: int
    from_label: bool  # the whole words of some label, rather than a shared sub-phrase
    covered_keys: tuple[str, ...]


def _lower(words: str) -> str:
    """Lowercase, not casefold: "ß" must stay "ß" or the phrase would no longer match its own text."""
    return " ".join(words.lower().split())


def _label_phrase(words: str) -> str:
    return _lower(words).strip(_EDGE_PUNCT + " ")


def _grams(words: str) -> set[str]:
    """Distinct n-grams (n >= 2) and content words of >= 4 letters, never crossing punctuation."""
    out: set[str] = set()
    for run in _RUNS.split(_lower(words)):
        tokens = [t.strip("'’-") for t in run.split()]
        tokens = [t for t in tokens if t]
        for n in range(2, len(tokens) + 1):
            for i in range(len(tokens) - n + 1):
                gram = tokens[i : i + n]
                if not all(t in STOPWORDS for t in gram):
                    out.add(" ".join(gram))
        out.update(t for t in tokens if sum(ch.isalpha() for ch in t) >= 4 and t not in STOPWORDS)
    return out


def suggest_phrases(
    misses: Iterable[MissedWords],
    *,
    flagged_clauses: Iterable[str] = (),
    fp_clauses: Iterable[str] = (),
    existing: PhrasePack | None = None,
    limit: int | None = 50,
) -> list[Suggestion]:
    """Ranked suggestions: covers desc, then fewer false-positive touches, then shorter phrases."""
    labels = list(misses)
    flagged, fps = list(flagged_clauses), list(fp_clauses)
    taken = {normalise_phrase(p) for _, p in existing.phrases()} if existing else set()
    found: list[Suggestion] = []
    for list_name in LIST_NAMES:
        mine = [m for m in labels if m.list_name == list_name]
        whole = {_label_phrase(m.words) for m in mine}
        shared = Counter(g for m in mine for g in _grams(m.words))
        candidates = whole | {g for g, n in shared.items() if n >= 2}
        for phrase in sorted(candidates):
            if not phrase or normalise_phrase(phrase) in taken or phrase_problem(phrase) is not None:
                continue
            pattern = compile_phrase(phrase)
            covered = [m for m in mine if pattern.search(m.words)]
            found.append(
                Suggestion(
                    phrase=phrase,
                    list_name=list_name,
                    covers=len(covered),
                    touches_flagged=sum(1 for c in flagged if pattern.search(c)),
                    touches_fp=sum(1 for c in fps if pattern.search(c)),
                    from_label=phrase in whole,
                    covered_keys=tuple(m.key for m in covered),
                )
            )
    found.sort(key=lambda s: (-s.covers, s.touches_fp, len(s.phrase), s.phrase))
    return found if limit is None else found[:limit]
