"""Glue between the store's plain-tuple streams and the pure pack domain (replay, suggestions, fingerprints),
plus the stable JSON shapes and text lines the CLI and the packs screen both show. No I/O here.

Label resolution: several reviewers may label one finding. Their current verdicts resolve to one: `tp` or
`fp` when every non-unsure verdict agrees, otherwise `unsure` (which the replay does not count). A
missed-negative label counts once however many reviewers made it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from reviewer.review.matching import TextLayout
from reviewer.review.observed_replay import ObservedReplayer, ObservedReport, PartFigures, StoredAnswer
from reviewer.review.observer.caveats import RULES, Caveat, caveat_summary, replay_caveats
from reviewer.review.observer.scoring import ObserverScore
from reviewer.review.phrase_pack import ListName, PackDiff, PhrasePack
from reviewer.review.replay import (
    DEFAULT_SEED,
    ClauseRef,
    FindingLabel,
    MissedLabel,
    Verdict,
    in_holdout,
)
from reviewer.review.suggest import MissedWords, Suggestion, suggest_phrases

#: The observer rules this replay applies (ids of `observer.caveats.RULES`); the caveat follows from it.
#: `observe_answer` applies every rule of the observer package, and the answer source strips the block.
REPLAY_RULES: tuple[str, ...] = tuple(RULES)
CAVEATS: tuple[Caveat, ...] = tuple(replay_caveats(REPLAY_RULES))
CAVEAT_LEAD = "this replay covers only the literal phrase extension of the framework's observer."
#: Shown once beside every replay (screen and CLI): what the replay can and cannot say.
CAVEAT = (
    "The framework's own English grammar is richer than this replay: it covers only the literal phrase "
    "extension. " + caveat_summary(CAVEATS)
)
DEFAULT_HOLDOUT = 0.2

FindingRow = tuple[str, str, int, int, str, str]
MissedRow = tuple[str, str, int, int, str, str, str]
AnswerRow = tuple[str, str, Sequence[tuple[int, int, str | None]]]
#: the store's replay source row: (key, run id, answer, outcome, delivered, dispatched calls, flagged)
ReplayRow = tuple[str, str | None, str, str | None, bool, int, Sequence[tuple[int, int, str | None]]]

#: What `replay --json` predicts, in the framework's finding shape (documented in README).
PREDICTION_SHAPE: dict[str, str] = {
    "negative-claim": "one per clause a pack phrase hits outside code, in English, not filtered, when the "
    "turn recorded a dispatched tool call; counted in `newly_flagged`, the phrase figures and precision",
    "negative-claim-note": "one per code: no-read (per answer, replacing its claims when the turn recorded "
    "no tool call), too-many-claims and input-limit (per answer, replacing everything), in-code-block and "
    "language-unsupported (per unit); counted in `notes`",
}


def consensus(verdicts: Iterable[str]) -> Verdict:
    """One verdict from several reviewers': tp or fp when all decided ones agree, else unsure."""
    decided = {v for v in verdicts if v in ("tp", "fp")}
    return cast(Verdict, decided.pop()) if len(decided) == 1 else "unsure"


@dataclass(frozen=True)
class LabelSet:
    """The labels a replay is measured against, resolved, with a fingerprint of exactly that set."""

    findings: tuple[FindingLabel, ...]
    misses: tuple[MissedLabel, ...]
    missed_words: tuple[tuple[str, MissedWords], ...]  # (run key, words) for suggestions
    fingerprint: str

    @property
    def size(self) -> int:
        return len(self.findings) + len(self.misses)


def build_labels(finding_rows: Iterable[FindingRow], missed_rows: Iterable[MissedRow]) -> LabelSet:
    """Resolve the store's label rows (one per reviewer) into one label per target."""
    by_finding: dict[str, tuple[str, int, int, list[str]]] = {}
    for target, run_key, start, end, _reviewer, verdict in finding_rows:
        by_finding.setdefault(target, (run_key, start, end, []))[3].append(verdict)
    findings = tuple(
        FindingLabel(run_key, start, end, consensus(verdicts))
        for _, (run_key, start, end, verdicts) in sorted(by_finding.items())
    )
    seen: dict[str, tuple[MissedLabel, MissedWords]] = {}
    for target, run_key, start, end, list_name, text, _reviewer in missed_rows:
        if target in seen or list_name not in ("none", "complete"):
            continue
        name = cast(ListName, list_name)
        seen[target] = (MissedLabel(run_key, start, end, name), MissedWords(text, name, target))
    misses = tuple(m for m, _ in seen.values())
    words = tuple((m.answer_key, w) for m, w in seen.values())
    lines = sorted(
        [f"f\t{f.answer_key}\t{f.start}\t{f.end}\t{f.verdict}" for f in findings]
        + [f"m\t{m.answer_key}\t{m.start}\t{m.end}\t{m.list_name}" for m in misses]
    )
    fingerprint = hashlib.sha256("\n".join(lines).encode()).hexdigest()
    return LabelSet(findings, misses, words, fingerprint)


def replay_rows(
    answers: Iterable[ReplayRow],
    baseline: PhrasePack,
    candidate: PhrasePack,
    labels: LabelSet,
    *,
    holdout_share: float = DEFAULT_HOLDOUT,
    seed: str = DEFAULT_SEED,
    progress: Callable[[int], None] | None = None,
    progress_every: int = 10_000,
    example_limit: int = 50,
) -> ObservedReport:
    """Fold the store's replay source through the observed replay (constant memory but labelled answers)."""
    replayer = ObservedReplayer(
        baseline,
        candidate,
        labels.findings,
        labels.misses,
        holdout_share=holdout_share,
        seed=seed,
        progress=progress,
        progress_every=progress_every,
        example_limit=example_limit,
    )
    for key, run_id, text, outcome, delivered, calls, flagged in answers:
        replayer.feed(StoredAnswer(key, text, run_id, outcome, delivered, calls, flagged))
    return replayer.report()


def suggest_from_rows(
    labels: LabelSet,
    flagged: Iterable[AnswerRow],
    *,
    existing: PhrasePack | None = None,
    exclude: Iterable[str] = (),
    holdout_share: float = DEFAULT_HOLDOUT,
    seed: str = DEFAULT_SEED,
    limit: int | None = 50,
) -> tuple[list[Suggestion], dict[str, int]]:
    """Suggestions from the training labels only (held-out answers are never seen), costed against the
    clauses the recorded detector flagged and the false-positive clauses of training answers.

    `flagged` is the store's stream of answers with flagged spans. `exclude`: phrases already decided
    (normalised comparison is the domain's). Returns (suggestions, counts of what was used)."""
    train_words = [w for key, w in labels.missed_words if not in_holdout(key, holdout_share, seed)]
    fp_spans = {
        (f.answer_key, f.start, f.end)
        for f in labels.findings
        if f.verdict == "fp" and not in_holdout(f.answer_key, holdout_share, seed)
    }
    flagged_clauses: list[str] = []
    fp_clauses: list[str] = []
    for key, text, spans in flagged:
        layout = TextLayout(text)
        clauses: dict[tuple[int, int], bool] = {}
        for start, end, *_ in spans:
            clause = layout.clause_at(start)
            clauses[clause] = clauses.get(clause, False) or (key, start, end) in fp_spans
        for (cs, ce), is_fp in clauses.items():
            flagged_clauses.append(text[cs:ce])
            if is_fp:
                fp_clauses.append(text[cs:ce])
    excluded = {" ".join(p.casefold().split()) for p in exclude}
    found = suggest_phrases(
        train_words, flagged_clauses=flagged_clauses, fp_clauses=fp_clauses, existing=existing, limit=None
    )
    found = [s for s in found if " ".join(s.phrase.casefold().split()) not in excluded]
    used = {
        "missed_labels": len(labels.missed_words),
        "missed_labels_used": len(train_words),
        "missed_labels_held_out": len(labels.missed_words) - len(train_words),
        "flagged_clauses": len(flagged_clauses),
        "fp_clauses": len(fp_clauses),
    }
    return (found if limit is None else found[:limit]), used


# -- stable JSON shapes ------------------------------------------------------------------------------------------


def suggestion_json(s: Suggestion) -> dict[str, Any]:
    return {
        "phrase": s.phrase,
        "list": s.list_name,
        "covers": s.covers,
        "touches_flagged": s.touches_flagged,
        "touches_fp": s.touches_fp,
        "from_label": s.from_label,
        "covered_labels": list(s.covered_keys),
    }


def diff_json(d: PackDiff) -> dict[str, Any]:
    return {
        "added": {"none": list(d.added_none), "complete": list(d.added_complete)},
        "removed": {"none": list(d.removed_none), "complete": list(d.removed_complete)},
        "unchanged": d.is_empty,
    }


def _score_json(s: ObserverScore) -> dict[str, Any]:
    return {
        "claims": s.claims,
        "labelled_hits": s.labelled_claims,
        "confirmed_hits": s.confirmed_claims,
        "fp_hits": s.fp_claims,
        "precision": None if s.precision is None else round(s.precision, 4),
        "misses": s.misses,
        "misses_covered": s.misses_covered,
        "misses_in_noted_answers": s.misses_in_noted_answers,
        "recall": None if s.recall is None else round(s.recall, 4),
        "notes": dict(sorted(s.notes.items())),
    }


def _figures_json(f: PartFigures) -> dict[str, Any]:
    return {
        "labelled_answers": f.labelled_answers,
        "candidate": _score_json(f.candidate),
        "baseline": _score_json(f.baseline),
        "fp_added": f.fp_added,
    }


def _clause_json(c: ClauseRef) -> dict[str, Any]:
    return {
        "run_key": c.answer_key,
        "start": c.start,
        "end": c.end,
        "text": c.text,
        "phrases": list(c.phrases),
    }


def caveat_json(c: Caveat) -> dict[str, str]:
    return {"kind": c.kind, "rule": c.rule, "text": c.text}


def report_json(
    report: ObservedReport,
    candidate: PhrasePack,
    baseline: PhrasePack,
    *,
    labels: LabelSet,
    holdout_share: float,
    seed: str,
    examples: int = 20,
) -> dict[str, Any]:
    """The replay's figures under stable names (the trial, candidate/baseline refs and timing are added
    by the caller, who knows them)."""
    lists = dict((p, n) for n, p in candidate.phrases())
    return {
        "answers": report.answers,
        "answers_read": report.answers_read,
        "excluded": {
            "total": sum(report.excluded.values()),
            "why": dict(sorted(report.excluded.items())),
            "examples": [{"run_key": e.run_key, "why": e.why} for e in report.excluded_examples[:examples]],
        },
        "coverage_blocks_removed": report.coverage_blocks_removed,
        "typed_answers": report.typed_answers,
        "prediction_shape": PREDICTION_SHAPE,
        "notes": {k: dict(sorted(v.items())) for k, v in report.notes.items()},
        "newly_flagged": report.newly_flagged,
        "newly_flagged_unrecorded": report.newly_flagged_unrecorded,
        "no_longer_flagged": report.no_longer_flagged,
        "newly_flagged_examples": [_clause_json(c) for c in report.newly_flagged_examples[:examples]],
        "no_longer_flagged_examples": [_clause_json(c) for c in report.no_longer_flagged_examples[:examples]],
        "phrases": [
            {"phrase": p, "list": lists.get(p), "hits": s.hits, "confirmed": s.confirmed, "fp": s.fp}
            for p, s in report.phrase_stats.items()
        ],
        "figures": {
            "all": _figures_json(report.all),
            "train": _figures_json(report.train),
            "holdout": _figures_json(report.holdout),
        },
        "labels": {
            "fingerprint": labels.fingerprint,
            "finding_labels": len(labels.findings),
            "missed_labels": len(labels.misses),
            "labelled_answers_not_seen": report.labelled_answers_not_seen,
        },
        "holdout": {"share": holdout_share, "seed": seed},
        "caveat": CAVEAT,
        "caveats": [caveat_json(c) for c in CAVEATS],
    }


def figures_summary(data: dict[str, Any]) -> dict[str, Any]:
    """What a trial row keeps: the counts and figures, not the example clauses."""
    keep = (
        "answers",
        "answers_read",
        "newly_flagged",
        "newly_flagged_unrecorded",
        "no_longer_flagged",
        "notes",
        "figures",
        "holdout",
    )
    return {k: data[k] for k in keep if k in data}


# -- text lines (CLI output; the screen wraps each in rich.text.Text) ---------------------------------------------


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.0%}"


def _score_line(label: str, s: dict[str, Any]) -> str:
    return (
        f"{label:9} precision {_pct(s['precision'])} ({s['confirmed_hits']}/{s['labelled_hits']} labelled claims), "
        f"recovers {_pct(s['recall'])} of misses ({s['misses_covered']}/{s['misses']}), fp hits {s['fp_hits']}"
    )


def caveat_lines(caveats: Iterable[dict[str, str]]) -> list[str]:
    """The caveat list (as in `report_json`), one line each, led by its kind."""
    return [f"{c['kind']}: {c['text']}" for c in caveats]


def report_lines(data: dict[str, Any], *, examples: int = 5, with_caveats: bool = True) -> list[str]:
    """A replay report (from `report_json`, plus `candidate`, `baseline`, `trial`) as plain text lines;
    `with_caveats=False` when the caveat is already shown beside it (the packs screen)."""
    out: list[str] = []
    cand, base = data.get("candidate", {}), data.get("baseline", {})
    if cand:
        out.append(f"candidate {cand.get('ref')} ({str(cand.get('hash'))[:12]})")
        out.append(f"baseline  {base.get('ref') or '(empty pack)'} ({str(base.get('hash'))[:12]})")
    trial = data.get("trial")
    if trial:
        out.append(
            f"variant {trial['variant']} tried against these labels "
            f"({trial['variants']} variant(s), {trial['trials']} replay(s) so far; labels {data['labels']['fingerprint'][:12]})"
        )
    rate = data.get("answers_per_second")
    timing = f" in {data['seconds']:.2f}s ({rate:,.0f} answers/s)" if rate else ""
    out.append(f"{data['answers']:,} answers replayed{timing}")
    excluded = data.get("excluded") or {}
    if excluded.get("total"):
        why = ", ".join(f"{n} {w}" for w, n in excluded["why"].items())
        out.append(f"not read: {excluded['total']} answer(s) ({why}), never in the figures")
    if data.get("coverage_blocks_removed"):
        out.append(
            f"framework-appended coverage block removed before reading: {data['coverage_blocks_removed']}"
        )
    for side in ("candidate", "baseline"):
        notes = (data.get("notes") or {}).get(side) or {}
        if notes:
            out.append(f"{side} notes: " + ", ".join(f"{code} {n}" for code, n in notes.items()))
    out.append(
        f"newly flagged clauses: {data['newly_flagged']} ({data['newly_flagged_unrecorded']} with no recorded "
        f"finding); no longer flagged: {data['no_longer_flagged']}"
    )
    for title, key in (
        ("newly flagged", "newly_flagged_examples"),
        ("no longer flagged", "no_longer_flagged_examples"),
    ):
        for c in data[key][:examples]:
            out.append(f"  {title}: {c['run_key']} “{c['text']}” [{', '.join(c['phrases'])}]")
    out.append("per phrase (hits / confirmed / false positive):")
    for p in data["phrases"]:
        out.append(f"  {p['list'] or '?':8} {p['phrase']}: {p['hits']} / {p['confirmed']} / {p['fp']}")
    for part in ("all", "train", "holdout"):
        f = data["figures"][part]
        out.append(f"labels, {part} ({f['labelled_answers']} labelled answers seen):")
        out.append("  " + _score_line("candidate", f["candidate"]))
        out.append("  " + _score_line("baseline", f["baseline"]))
        out.append(f"  false positives added by the candidate: {f['fp_added']}")
    out.append(
        f"holdout: {data['holdout']['share']:.0%} of labelled answers (seed {data['holdout']['seed']!r})"
    )
    if with_caveats:
        out.append(f"caveats: {CAVEAT_LEAD}")
        out.extend(
            "  " + line for line in caveat_lines(data.get("caveats", [caveat_json(c) for c in CAVEATS]))
        )
    return out
