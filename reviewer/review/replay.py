"""What-if replay: how a candidate pack would change the warnings over stored answers, and what the
labels say about it. A streaming fold (feed answers one at a time) so a whole database can be replayed
in constant memory; labels are held in memory because people make few of them.

Unit of counting: a CLAUSE hit by a pack (several phrase hits in one clause flag it once). A hit clause
is *labelled* when it overlaps a tp/fp finding label or a missed-negative label ("unsure" does not count),
*confirmed* when it overlaps a tp finding or a missed-negative label. Spans are Python str indices.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from reviewer.review.matching import CompiledPack, PhraseHit, TextLayout, compile_pack
from reviewer.review.phrase_pack import ListName, PhrasePack

Verdict = Literal["tp", "fp", "unsure"]
FlaggedSpan = tuple[int, int] | tuple[int, int, str | None]
DEFAULT_SEED = "footprint-reviewer"


@dataclass(frozen=True, slots=True)
class ReplayAnswer:
    """One stored answer; `flagged` are the spans the recorded detector flagged (pack version optional)."""

    key: str
    text: str
    flagged: Sequence[FlaggedSpan] = ()


AnswerLike = ReplayAnswer | tuple[str, str, Sequence[FlaggedSpan]]


@dataclass(frozen=True, slots=True)
class FindingLabel:
    """A reviewer's verdict on a recorded finding, located by its span in the answer."""

    answer_key: str
    start: int
    end: int
    verdict: Verdict


@dataclass(frozen=True, slots=True)
class MissedLabel:
    """A negative the detector missed: the span of the words that carry it, and the list it belongs to."""

    answer_key: str
    start: int
    end: int
    list_name: ListName


def _unit(key: str, seed: str) -> float:
    digest = hashlib.sha256(f"{seed}\x00{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def in_holdout(key: str, share: float = 0.2, seed: str = DEFAULT_SEED) -> bool:
    """Whether `key` is held out: decided by the key and seed alone, so never by input order."""
    return _unit(key, seed) < share


def split_holdout(
    label_keys: Iterable[str], share: float = 0.2, seed: str = DEFAULT_SEED
) -> tuple[list[str], list[str]]:
    """(train, holdout) in first-seen order, duplicates dropped; about `share` of keys are held out."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"holdout share must be between 0 and 1, got {share}")
    train: list[str] = []
    holdout: list[str] = []
    for key in dict.fromkeys(label_keys):
        (holdout if in_holdout(key, share, seed) else train).append(key)
    return train, holdout


@dataclass(frozen=True, slots=True)
class PackScore:
    """One pack's figures against the labels of one part of the corpus."""

    labelled_hits: int = 0
    confirmed_hits: int = 0
    fp_hits: int = 0
    misses: int = 0
    misses_covered: int = 0

    @property
    def precision(self) -> float | None:
        """Confirmed share of labelled hit clauses (None without any)."""
        return self.confirmed_hits / self.labelled_hits if self.labelled_hits else None

    @property
    def recall(self) -> float | None:
        """Share of missed-negative labels whose span a hit clause overlaps (None without labels)."""
        return self.misses_covered / self.misses if self.misses else None


@dataclass(frozen=True, slots=True)
class LabelFigures:
    """Candidate vs current on one part; `fp_added` counts FP-labelled clauses only the candidate hits."""

    candidate: PackScore
    current: PackScore
    fp_added: int
    labelled_answers: int


@dataclass(frozen=True, slots=True)
class ClauseRef:
    """A clause whose flagging changed, with the phrases responsible (kept only as examples)."""

    answer_key: str
    start: int
    end: int
    text: str
    phrases: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PhraseStats:
    """Per candidate phrase: hits in all answers; of those on labelled clauses, confirmed and FP."""

    hits: int = 0
    confirmed: int = 0
    fp: int = 0


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """Everything the replay measured."""

    answers: int
    current_hash: str
    candidate_hash: str
    newly_flagged: int
    newly_flagged_unrecorded: int  # of which no recorded finding overlaps: brand-new warnings
    no_longer_flagged: int
    newly_flagged_examples: tuple[ClauseRef, ...]
    no_longer_flagged_examples: tuple[ClauseRef, ...]
    phrase_stats: dict[str, PhraseStats]
    all: LabelFigures
    train: LabelFigures
    holdout: LabelFigures
    labelled_answers_not_seen: int


def spans_overlap(a0: int, a1: int, b0: int, b1: int) -> bool:
    """Half-open overlap; an empty span [a0, a0) counts as the point a0."""
    if a0 == a1:
        return b0 <= a0 < b1
    return a0 < b1 and b0 < a1


@dataclass
class _Tally:
    labelled: int = 0
    confirmed: int = 0
    fp: int = 0
    misses: int = 0
    covered: int = 0

    def score(self) -> PackScore:
        return PackScore(self.labelled, self.confirmed, self.fp, self.misses, self.covered)

    def plus(self, o: _Tally) -> _Tally:
        return _Tally(
            self.labelled + o.labelled,
            self.confirmed + o.confirmed,
            self.fp + o.fp,
            self.misses + o.misses,
            self.covered + o.covered,
        )


@dataclass
class _Part:
    cand: _Tally = field(default_factory=_Tally)
    cur: _Tally = field(default_factory=_Tally)
    fp_added: int = 0
    answers: int = 0

    def figures(self) -> LabelFigures:
        return LabelFigures(self.cand.score(), self.cur.score(), self.fp_added, self.answers)


def _by_clause(hits: list[PhraseHit]) -> dict[tuple[int, int], list[PhraseHit]]:
    out: dict[tuple[int, int], list[PhraseHit]] = {}
    for h in hits:
        out.setdefault((h.clause_start, h.clause_end), []).append(h)
    return out


class Replayer:
    """The fold: `feed` answers, then `report()`. An unlabelled answer that neither pack can hit costs
    one combined regex scan; per-phrase matching, clause layout and label checks run only when needed."""

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
        self._gate = CompiledPack(current, candidate.phrases())  # one scan answers "either pack?"
        self._findings: dict[str, list[FindingLabel]] = {}
        self._misses: dict[str, list[MissedLabel]] = {}
        for f in findings:
            self._findings.setdefault(f.answer_key, []).append(f)
        for m in misses:
            self._misses.setdefault(m.answer_key, []).append(m)
        labelled = set(self._findings) | set(self._misses)
        self._holdout = {k: in_holdout(k, holdout_share, seed) for k in labelled}
        self._unseen = set(labelled)
        self._parts = {False: _Part(), True: _Part()}
        self._progress = progress
        self._every = max(1, progress_every)
        self._limit = example_limit
        self._n = 0
        self._new = self._new_unrecorded = self._gone = 0
        self._new_examples: list[ClauseRef] = []
        self._gone_examples: list[ClauseRef] = []
        self._stats = {p: [0, 0, 0] for _, p in candidate.phrases()}

    def feed(self, answer: AnswerLike) -> None:
        """Fold one answer into the tallies."""
        if isinstance(answer, ReplayAnswer):
            key, text, flagged = answer.key, answer.text, answer.flagged
        else:
            key, text, flagged = answer
        self._n += 1
        if key in self._holdout or self._gate.could_hit(text):
            self._fold(key, text, flagged)
        if self._progress is not None and self._n % self._every == 0:
            self._progress(self._n)

    def feed_all(self, answers: Iterable[AnswerLike]) -> ReplayReport:
        """Feed every answer and report."""
        for answer in answers:
            self.feed(answer)
        return self.report()

    def _fold(self, key: str, text: str, flagged: Sequence[FlaggedSpan]) -> None:
        layout = TextLayout(text)
        cur = _by_clause(self._cur.hits(text, layout))
        cand = _by_clause(self._cand.hits(text, layout))
        for clause in cand.keys() - cur.keys():
            self._new += 1
            if not any(spans_overlap(s[0], s[1], *clause) for s in flagged):
                self._new_unrecorded += 1
            if len(self._new_examples) < self._limit:
                self._new_examples.append(self._ref(key, text, clause, cand[clause]))
        for clause in cur.keys() - cand.keys():
            self._gone += 1
            if len(self._gone_examples) < self._limit:
                self._gone_examples.append(self._ref(key, text, clause, cur[clause]))
        findings = self._findings.get(key, [])
        misses = self._misses.get(key, [])

        def judge(clause: tuple[int, int]) -> tuple[bool, bool]:
            """(confirmed, fp) for a hit clause."""
            good = any(f.verdict == "tp" and spans_overlap(f.start, f.end, *clause) for f in findings) or any(
                spans_overlap(m.start, m.end, *clause) for m in misses
            )
            bad = any(f.verdict == "fp" and spans_overlap(f.start, f.end, *clause) for f in findings)
            return good, bad

        for clause, hits in cand.items():
            good, bad = judge(clause)
            for h in hits:
                stats = self._stats[h.phrase]
                stats[0] += 1
                stats[1] += good
                stats[2] += bad
        if key not in self._holdout:
            return
        self._unseen.discard(key)
        part = self._parts[self._holdout[key]]
        part.answers += 1
        for hit_clauses, tally in ((cand, part.cand), (cur, part.cur)):
            for clause in hit_clauses:
                good, bad = judge(clause)
                tally.labelled += good or bad
                tally.confirmed += good
                tally.fp += bad
                if bad and tally is part.cand and clause not in cur:
                    part.fp_added += 1
            tally.misses += len(misses)
            tally.covered += sum(any(spans_overlap(m.start, m.end, *c) for c in hit_clauses) for m in misses)

    @staticmethod
    def _ref(key: str, text: str, clause: tuple[int, int], hits: list[PhraseHit]) -> ClauseRef:
        phrases = tuple(dict.fromkeys(h.phrase for h in hits))
        return ClauseRef(key, clause[0], clause[1], text[clause[0] : clause[1]], phrases)

    def report(self) -> ReplayReport:
        """The figures so far (may be called more than once)."""
        train, holdout = self._parts[False], self._parts[True]
        both = _Part(
            train.cand.plus(holdout.cand),
            train.cur.plus(holdout.cur),
            train.fp_added + holdout.fp_added,
            train.answers + holdout.answers,
        )
        return ReplayReport(
            answers=self._n,
            current_hash=self._cur.pack.content_hash,
            candidate_hash=self._cand.pack.content_hash,
            newly_flagged=self._new,
            newly_flagged_unrecorded=self._new_unrecorded,
            no_longer_flagged=self._gone,
            newly_flagged_examples=tuple(self._new_examples),
            no_longer_flagged_examples=tuple(self._gone_examples),
            phrase_stats={p: PhraseStats(*s) for p, s in self._stats.items()},
            all=both.figures(),
            train=train.figures(),
            holdout=holdout.figures(),
            labelled_answers_not_seen=len(self._unseen),
        )


def replay(
    answers: Iterable[AnswerLike],
    current: PhrasePack,
    candidate: PhrasePack,
    findings: Iterable[FindingLabel] = (),
    misses: Iterable[MissedLabel] = (),
    *,
    holdout_share: float = 0.2,
    seed: str = DEFAULT_SEED,
    progress: Callable[[int], None] | None = None,
    progress_every: int = 10_000,
) -> ReplayReport:
    """One-call replay over an iterable (a generator keeps memory constant)."""
    replayer = Replayer(
        current,
        candidate,
        findings,
        misses,
        holdout_share=holdout_share,
        seed=seed,
        progress=progress,
        progress_every=progress_every,
    )
    return replayer.feed_all(answers)
