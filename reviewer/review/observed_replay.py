"""The replay over what the framework's prose observer reads, predicted in the observer's shape.

What is read (issue #13 point 1): only delivered answers (withheld, denied, refused... drafts are counted
apart by outcome, never mixed into the figures), without the framework-appended coverage block, once per
run (one run ingested from two files, say a bare recording and its envelope, is one answer: same run id
and same text), and for a typed answer every free-form string field with its path.

What is predicted (point 2): `observe_answer` for each pack (a `negative-claim` per clause, a
`negative-claim-note` with its code), a dispatched read counted when the run recorded any tool call (a run
is one turn). Precision and recall come from `score_predictions` on that shape, against the labels of the
labelled answers of each part (train, holdout, all). A streaming fold: labelled answers' predictions are
kept (people label few); everything else is counted and dropped.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from reviewer.review.matching import CompiledPack, compile_pack
from reviewer.review.observer.coverage_block import strip_coverage_block
from reviewer.review.observer.no_read import DispatchedRead
from reviewer.review.observer.predict import ANSWER_FIELD, Prediction, observe_answer
from reviewer.review.observer.scoring import ObserverScore, score_predictions
from reviewer.review.phrase_pack import PhrasePack
from reviewer.review.replay import (
    DEFAULT_SEED,
    ClauseRef,
    FindingLabel,
    FlaggedSpan,
    MissedLabel,
    PhraseStats,
    in_holdout,
    spans_overlap,
)
from reviewer.review.typed_fields import parse_typed, string_fields

#: why an answer was left out because it was read already
DUPLICATE_RUN = "duplicate-run"
#: outcome name used when an undelivered answer has none
UNKNOWN_OUTCOME = "unknown"


@dataclass(frozen=True, slots=True)
class StoredAnswer:
    """One stored answer as the store's replay source gives it (see `store.packs.iter_replay_answers`)."""

    key: str
    text: str
    run_id: str | None = None
    outcome: str | None = "delivered"
    delivered: bool = True
    dispatched_calls: int = 0
    flagged: Sequence[FlaggedSpan] = ()


def observed_fields(text: str) -> tuple[list[tuple[str, str]], bool]:
    """The (path, text) values the observer reads from a stored answer, and whether a coverage block was
    removed first. A typed (JSON) answer gives every string leaf with its path; prose gives `answer`."""
    stripped = strip_coverage_block(text)
    typed = parse_typed(stripped)
    fields = string_fields(typed) if typed is not None else [(ANSWER_FIELD, stripped)]
    return fields, stripped != text


class ReadOnce:
    """Which stored answers the observer reads: delivered ones, once per run (run id + text)."""

    def __init__(self) -> None:
        self._seen: set[bytes] = set()

    def why_not(self, answer: StoredAnswer) -> str | None:
        """None when `answer` is read (and remembered), else why not: its outcome, or `duplicate-run`."""
        if not answer.delivered:
            return answer.outcome or UNKNOWN_OUTCOME
        if answer.run_id:
            ident = hashlib.blake2b(f"{answer.run_id}\x00{answer.text}".encode(), digest_size=16).digest()
            if ident in self._seen:
                return DUPLICATE_RUN
            self._seen.add(ident)
        return None


def observed_prose(answers: Iterable[StoredAnswer]) -> Iterator[tuple[str, str]]:
    """(key, text) of the prose answers the observer reads, coverage block removed (typed answers, whose
    labels never sit on the answer text, are left out): what the per-phrase ledger counts over."""
    once = ReadOnce()
    for answer in answers:
        if once.why_not(answer) is None:
            fields, _ = observed_fields(answer.text)
            if len(fields) == 1 and fields[0][0] == ANSWER_FIELD:
                yield answer.key, fields[0][1]


@dataclass(frozen=True, slots=True)
class Excluded:
    """An answer the replay did not read, and why (an outcome, or `duplicate-run`)."""

    run_key: str
    why: str


@dataclass(frozen=True, slots=True)
class PartFigures:
    """One part's scores for candidate and baseline; `fp_added`: FP-labelled claims only the candidate makes."""

    candidate: ObserverScore
    baseline: ObserverScore
    fp_added: int
    labelled_answers: int


@dataclass(frozen=True, slots=True)
class ObservedReport:
    """Everything the observed replay measured."""

    answers_read: int
    answers: int
    excluded: dict[str, int]
    excluded_examples: tuple[Excluded, ...]
    coverage_blocks_removed: int
    typed_answers: int
    newly_flagged: int
    newly_flagged_unrecorded: int
    no_longer_flagged: int
    newly_flagged_examples: tuple[ClauseRef, ...]
    no_longer_flagged_examples: tuple[ClauseRef, ...]
    notes: dict[str, dict[str, int]]  # "candidate" / "baseline" -> code -> count, over every answer
    phrase_stats: dict[str, PhraseStats]
    all: PartFigures
    train: PartFigures
    holdout: PartFigures
    labelled_answers_not_seen: int


def _claims(preds: list[Prediction]) -> dict[tuple[str, int, int], Prediction]:
    return {
        (p.field, p.start, p.end): p
        for p in preds
        if p.kind == "negative-claim" and p.start is not None and p.end is not None
    }


@dataclass
class _Labelled:
    cand: list[tuple[str, Prediction]] = field(default_factory=list)
    cur: list[tuple[str, Prediction]] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    fp_added: int = 0


class ObservedReplayer:
    """The fold: `feed` stored answers, then `report()`. An answer in which neither pack's phrases occur
    costs one regex scan per pack and field (`observe_answer` stops there)."""

    def __init__(
        self,
        current: PhrasePack,
        candidate: PhrasePack,
        findings: Iterable[FindingLabel] = (),
        misses: Iterable[MissedLabel] = (),
        *,
        holdout_share: float = 0.2,
        seed: str = DEFAULT_SEED,
        progress: Callable[[int], None] | None = None,
        progress_every: int = 10_000,
        example_limit: int = 50,
    ) -> None:
        self._cur: CompiledPack = compile_pack(current)
        self._cand: CompiledPack = compile_pack(candidate)
        self._findings: dict[str, list[FindingLabel]] = {}
        self._misses: dict[str, list[MissedLabel]] = {}
        for f in findings:
            self._findings.setdefault(f.answer_key, []).append(f)
        for m in misses:
            self._misses.setdefault(m.answer_key, []).append(m)
        labelled = set(self._findings) | set(self._misses)
        self._holdout = {k: in_holdout(k, holdout_share, seed) for k in labelled}
        self._unseen = set(labelled)
        self._parts = {False: _Labelled(), True: _Labelled()}
        self._progress = progress
        self._every = max(1, progress_every)
        self._limit = example_limit
        self._read = self._n = self._stripped = self._typed = 0
        self._excluded: Counter[str] = Counter()
        self._excluded_examples: list[Excluded] = []
        self._once = ReadOnce()
        self._new = self._new_unrecorded = self._gone = 0
        self._new_examples: list[ClauseRef] = []
        self._gone_examples: list[ClauseRef] = []
        self._notes = {"candidate": Counter[str](), "baseline": Counter[str]()}
        self._stats = {p: [0, 0, 0] for _, p in candidate.phrases()}

    def _exclude(self, key: str, why: str) -> None:
        self._excluded[why] += 1
        if len(self._excluded_examples) < self._limit:
            self._excluded_examples.append(Excluded(key, why))

    def feed(self, answer: StoredAnswer) -> None:
        """Fold one stored answer into the tallies (or count it apart, with why)."""
        self._read += 1
        if self._progress is not None and self._read % self._every == 0:
            self._progress(self._read)
        why = self._once.why_not(answer)
        if why is not None:
            self._exclude(answer.key, why)
            return
        fields, stripped = observed_fields(answer.text)
        self._n += 1
        self._stripped += stripped
        self._typed += not (len(fields) == 1 and fields[0][0] == ANSWER_FIELD)
        reads = (DispatchedRead(0),) if answer.dispatched_calls else ()
        cand = observe_answer(fields, self._cand, reads=reads)
        cur = observe_answer(fields, self._cur, reads=reads)
        if cand or cur or answer.key in self._holdout:
            self._fold(answer, dict(fields), cand, cur)

    def _fold(
        self, answer: StoredAnswer, texts: dict[str, str], cand: list[Prediction], cur: list[Prediction]
    ) -> None:
        key = answer.key
        for name, preds in (("candidate", cand), ("baseline", cur)):
            for p in preds:
                if p.kind == "negative-claim-note":
                    self._notes[name][p.code or p.kind] += 1
        cand_claims, cur_claims = _claims(cand), _claims(cur)
        for where in cand_claims.keys() - cur_claims.keys():
            self._new += 1
            recorded = where[0] == ANSWER_FIELD and any(
                spans_overlap(s[0], s[1], where[1], where[2]) for s in answer.flagged
            )
            self._new_unrecorded += not recorded
            if len(self._new_examples) < self._limit:
                self._new_examples.append(self._ref(key, texts, where, cand_claims[where]))
        for where in cur_claims.keys() - cand_claims.keys():
            self._gone += 1
            if len(self._gone_examples) < self._limit:
                self._gone_examples.append(self._ref(key, texts, where, cur_claims[where]))
        findings = self._findings.get(key, [])
        misses = self._misses.get(key, [])

        def judged(where: tuple[str, int, int]) -> tuple[bool, bool]:
            if where[0] != ANSWER_FIELD:
                return False, False
            s, e = where[1], where[2]
            good = any(f.verdict == "tp" and spans_overlap(f.start, f.end, s, e) for f in findings) or any(
                spans_overlap(m.start, m.end, s, e) for m in misses
            )
            return good, any(f.verdict == "fp" and spans_overlap(f.start, f.end, s, e) for f in findings)

        for where, p in cand_claims.items():
            good, bad = judged(where)
            for phrase in p.phrases:
                stats = self._stats[phrase]
                stats[0] += 1
                stats[1] += good
                stats[2] += bad
        if key not in self._holdout:
            return
        self._unseen.discard(key)
        part = self._parts[self._holdout[key]]
        part.keys.append(key)
        part.cand.extend((key, p) for p in cand)
        part.cur.extend((key, p) for p in cur)
        part.fp_added += sum(judged(w)[1] for w in cand_claims.keys() - cur_claims.keys())

    @staticmethod
    def _ref(key: str, texts: dict[str, str], where: tuple[str, int, int], p: Prediction) -> ClauseRef:
        path, start, end = where
        return ClauseRef(key, start, end, texts.get(path, "")[start:end], p.phrases)

    def _figures(self, parts: list[_Labelled]) -> PartFigures:
        keys = {k for part in parts for k in part.keys}
        findings = [f for k in keys for f in self._findings.get(k, [])]
        misses = [m for k in keys for m in self._misses.get(k, [])]
        cand = [x for part in parts for x in part.cand]
        cur = [x for part in parts for x in part.cur]
        return PartFigures(
            score_predictions(cand, findings, misses),
            score_predictions(cur, findings, misses),
            sum(part.fp_added for part in parts),
            len(keys),
        )

    def report(self) -> ObservedReport:
        """The figures so far (may be called more than once)."""
        train, holdout = self._parts[False], self._parts[True]
        return ObservedReport(
            answers_read=self._read,
            answers=self._n,
            excluded=dict(self._excluded),
            excluded_examples=tuple(self._excluded_examples),
            coverage_blocks_removed=self._stripped,
            typed_answers=self._typed,
            newly_flagged=self._new,
            newly_flagged_unrecorded=self._new_unrecorded,
            no_longer_flagged=self._gone,
            newly_flagged_examples=tuple(self._new_examples),
            no_longer_flagged_examples=tuple(self._gone_examples),
            notes={name: dict(c) for name, c in self._notes.items()},
            phrase_stats={p: PhraseStats(*s) for p, s in self._stats.items()},
            all=self._figures([train, holdout]),
            train=self._figures([train]),
            holdout=self._figures([holdout]),
            labelled_answers_not_seen=len(self._unseen),
        )
