"""One answer observed the way the prose observer would, restricted to the literal phrase extension:
its predictions in the framework's shape (`negative-claim` per clause, `negative-claim-note` with its
code per answer or unit). The English grammar, anchoring to read evidence and entity resolution are not
modelled, so a claim here is "a pack phrase hit an eligible clause", never "the framework would flag it".

Order of the rules, each from the documentation:
1. the input budget (values, code units, path length): over it, one `input-limit` note and nothing else;
2. every field is split into units; the three filtered clauses are skipped;
3. a phrase hit in recognised code gives an `in-code-block` note for its unit, one in a unit the language
   heuristic rejects a `language-unsupported` note; otherwise the unit is a detected claim;
4. claims plus unjudged units over 32: one `too-many-claims` note replaces everything;
5. detected claims and no dispatched read recorded this turn: one `no-read` note for the answer (in
   place of the per-clause claims: the documentation's two-negative example "produces one warning").
Spans are Python str indices into the field's text (the store converts to UTF-16).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from reviewer.review.matching import CompiledPack, compile_phrase
from reviewer.review.observer.budgets import input_over_limit, too_many_claims
from reviewer.review.observer.filtered import is_filtered_clause
from reviewer.review.observer.language import language_unsupported
from reviewer.review.observer.no_read import DispatchedRead, needs_no_read_note
from reviewer.review.observer.units import Unit, inline_code_spans, split_units
from reviewer.review.phrase_pack import PhrasePack

Kind = Literal["negative-claim", "negative-claim-note"]
ANSWER_FIELD = "answer"


@dataclass(frozen=True, slots=True)
class Prediction:
    """One finding the observer would file: a claim (with the phrases that hit) or a note (with its code)."""

    kind: Kind
    field: str = ANSWER_FIELD
    start: int | None = None
    end: int | None = None
    code: str | None = None
    phrases: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def _note(code: str, path: str = ANSWER_FIELD, unit: Unit | None = None) -> Prediction:
    if unit is None:
        return Prediction("negative-claim-note", path, code=code)
    return Prediction("negative-claim-note", path, unit.start, unit.end, code=code)


@lru_cache(maxsize=64)
def _phrase_patterns(pack: PhrasePack) -> tuple[re.Pattern[str], ...]:
    """Each phrase of `pack` compiled once (packs are frozen and hashable)."""
    return tuple(compile_phrase(p) for _, p in pack.phrases())


def _code_hit(pack: CompiledPack, text: str, spans: Iterable[tuple[int, int]]) -> bool:
    """Whether some phrase occurs inside one of the code spans (the matcher itself skips code)."""
    patterns = _phrase_patterns(pack.pack)
    return any(pat.search(text, s, e) for s, e in spans for pat in patterns)


@lru_cache(maxsize=16)
def _layout(text: str) -> tuple[tuple[Unit, ...], tuple[tuple[int, int], ...]]:
    """Units and inline code spans of a text, kept for the next call: a replay observes every answer with
    two packs in a row."""
    return tuple(split_units(text)), tuple(inline_code_spans(text))


def _unit_predictions(path: str, text: str, pack: CompiledPack) -> list[Prediction]:
    starts = pack.candidate_starts(text)
    if not starts:  # no phrase occurs anywhere: no claim and no code note
        return []
    units, inline = _layout(text)
    out: list[Prediction] = []
    for unit in units:
        if bisect_left(starts, unit.start) == bisect_left(starts, unit.end):
            continue  # no phrase starts inside this unit
        clause = text[unit.start : unit.end]
        if unit.code:
            if _code_hit(pack, text, [(unit.start, unit.end)]):
                out.append(_note("in-code-block", path, unit))
            continue
        if is_filtered_clause(clause):
            continue
        hits = pack.hits(clause)
        if not hits:
            spans = [(s, e) for s, e in inline if unit.start <= s and e <= unit.end]
            if spans and _code_hit(pack, text, spans):
                out.append(_note("in-code-block", path, unit))
        elif language_unsupported(clause):
            out.append(_note("language-unsupported", path, unit))
        else:
            phrases = tuple(dict.fromkeys(h.phrase for h in hits))
            out.append(Prediction("negative-claim", path, unit.start, unit.end, phrases=phrases))
    return out


def observe_answer(
    fields: Sequence[tuple[str, str]],
    pack: CompiledPack,
    *,
    turn: int = 0,
    reads: Iterable[DispatchedRead] = (),
) -> list[Prediction]:
    """The predictions for one answer: `fields` are (path, text) pairs, `("answer", text)` for prose."""
    if input_over_limit(fields):
        return [_note("input-limit")]
    found: list[Prediction] = []
    for path, text in fields:
        found.extend(_unit_predictions(path, text, pack))
    if too_many_claims(len(found)):
        return [_note("too-many-claims")]
    claims = [p for p in found if p.kind == "negative-claim"]
    unjudged = [p for p in found if p.kind != "negative-claim"]
    if needs_no_read_note(len(claims), reads, turn):
        return [*unjudged, _note("no-read")]
    return found
