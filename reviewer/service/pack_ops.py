"""Phrase-pack operations shared by `reviewer pack`, the packs screen and the benchmarks.

Each takes an open store database and returns plain data. SQL stays in `store.packs`; limits, hashing,
matching and figures stay in `reviewer.review`; the click commands live in `reviewer.cli.pack_commands`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from reviewer.review.observed_replay import StoredAnswer, observed_prose
from reviewer.review.pack_replay import (
    DEFAULT_HOLDOUT,
    build_labels,
    diff_json,
    figures_summary,
    replay_rows,
    report_json,
    suggest_from_rows,
    suggestion_json,
)
from reviewer.review.phrase_ledger import phrase_ledger
from reviewer.review.phrase_pack import (
    PackFormatError,
    PhrasePack,
    diff,
    normalise_phrase,
)
from reviewer.review.production import measured_precision, predicted_precision
from reviewer.review.replay import DEFAULT_SEED
from store import labels as store_labels
from store import packs as store_packs
from store.errors import NotFound, StoreError
from store.packs import StoredPack

#: The baseline when a pack has no parent, no earlier version, and none was named.
EMPTY_REF = "(empty pack)"


def to_domain(stored: StoredPack | None) -> PhrasePack:
    """The domain pack of a stored version (the empty pack for None)."""
    if stored is None:
        return PhrasePack(EMPTY_REF)
    return PhrasePack.create(stored.name, stored.none, stored.complete, stored.parent_hash)


def ref_json(stored: StoredPack | None, pack: PhrasePack | None = None) -> dict[str, Any]:
    """How a pack is named in JSON output: `{ref, name, version, hash}` (ref null for the empty pack)."""
    if stored is None:
        return {
            "ref": None,
            "name": None,
            "version": None,
            "hash": (pack or PhrasePack(EMPTY_REF)).content_hash,
        }
    return {"ref": stored.ref, "name": stored.name, "version": stored.version, "hash": stored.content_hash}


def _save(db: Any, pack: PhrasePack, name: str, who: str | None, note: str | None) -> StoredPack:
    return store_packs.save_pack(
        db,
        name,
        content_hash=pack.content_hash,
        none=pack.none,
        complete=pack.complete,
        parent_hash=pack.parent_hash,
        created_by=who,
        note=note,
    )


def create_pack(
    db: Any,
    name: str,
    none: Iterable[str] = (),
    complete: Iterable[str] = (),
    *,
    from_ref: str | None = None,
    who: str | None = None,
    note: str | None = None,
) -> StoredPack:
    """The first version of a new pack (optionally starting from another pack's phrases)."""
    name = store_packs.check_name(name)
    if store_packs.latest_pack(db, name) is not None:
        raise StoreError(f"a pack named {name!r} exists; change it with `reviewer pack add/remove`")
    base = store_packs.find_pack(db, from_ref) if from_ref else None
    pack = PhrasePack.create(
        name,
        [*(base.none if base else ()), *none],
        [*(base.complete if base else ()), *complete],
        base.content_hash if base else None,
    )
    return _save(db, pack, name, who, note)


class UnchangedError(StoreError):
    """The change would leave the pack as it is; no version was written."""


def change_pack(
    db: Any,
    name: str,
    *,
    add: Iterable[str] = (),
    list_name: str = "none",
    remove: Iterable[str] = (),
    who: str | None = None,
    note: str | None = None,
) -> StoredPack:
    """A new version of `name` with phrases added to `list_name` and/or removed (parent: the latest)."""
    latest = store_packs.latest_pack(db, name)
    if latest is None:
        raise NotFound(f"no phrase pack {name!r}; create it with `reviewer pack new {name}`")
    current = to_domain(latest)
    keys = {normalise_phrase(p) for _, p in current.phrases()}
    missing = [p for p in remove if normalise_phrase(p) not in keys]
    if missing:
        raise NotFound(f"pack {latest.ref} has no phrase {missing[0]!r}")
    drop = {normalise_phrase(p) for p in remove}
    none = [p for p in current.none if normalise_phrase(p) not in drop]
    complete = [p for p in current.complete if normalise_phrase(p) not in drop]
    (complete if list_name == "complete" else none).extend(add)
    pack = PhrasePack.create(name, none, complete, latest.content_hash)
    if pack.content_hash == latest.content_hash:
        raise UnchangedError(f"pack {latest.ref} already holds exactly these phrases; nothing saved")
    return _save(db, pack, name, who, note)


def parse_pack_text(text: str, name: str) -> PhrasePack:
    """A pack from JSON text (`{prose, phrases: {none, complete}}` or bare lists) or a TypeScript snippet."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        if "=" in text and "{" in text:
            return PhrasePack.from_typescript(text, name=name)
        raise PackFormatError("not JSON, and not a TypeScript `export const ... = {...}` snippet") from None
    return PhrasePack.from_json_obj(obj, name=name)


def import_pack(
    db: Any, name: str, text: str, *, who: str | None = None, note: str | None = None
) -> StoredPack:
    """Save an imported pack as a new version of `name` (its parent: the latest version, if any)."""
    name = store_packs.check_name(name)
    latest = store_packs.latest_pack(db, name)
    parsed = parse_pack_text(text, name)
    pack = PhrasePack.create(name, parsed.none, parsed.complete, latest.content_hash if latest else None)
    if latest is not None and pack.content_hash == latest.content_hash:
        raise UnchangedError(f"pack {latest.ref} already holds exactly these phrases; nothing saved")
    return _save(db, pack, name, who, note or "imported")


def baseline_for(
    db: Any, candidate: StoredPack, against: str | None = None, against_empty: bool = False
) -> StoredPack | None:
    """The pack a candidate is measured against: the one named, else its parent, else the version before
    it, else None (the empty pack)."""
    if against_empty:
        return None
    if against:
        return store_packs.find_pack(db, against)
    if candidate.parent_hash and candidate.parent_hash != candidate.content_hash:
        parent = store_packs.pack_by_hash(db, candidate.parent_hash)
        if parent is not None and parent.content_hash == candidate.parent_hash:
            return parent
    return store_packs.previous_version(db, candidate)


def pack_diff(db: Any, a_ref: str, b_ref: str | None = None) -> dict[str, Any]:
    """Changes from A to B; with only A, from A's baseline (parent / previous version / empty) to A."""
    if b_ref is None:
        b = store_packs.find_pack(db, a_ref)
        a = baseline_for(db, b)
    else:
        a, b = store_packs.find_pack(db, a_ref), store_packs.find_pack(db, b_ref)
    return {"from": ref_json(a), "to": ref_json(b), **diff_json(diff(to_domain(a), to_domain(b)))}


def load_labels(db: Any) -> Any:
    return build_labels(store_labels.iter_finding_labels(db), store_labels.iter_missed_labels(db))


@dataclass
class Replay:
    """A finished replay's figures, and what its trial record needs (written separately: it is a write)."""

    data: dict[str, Any]
    candidate_hash: str
    baseline_hash: str | None
    labels_fingerprint: str


def run_replay(
    db: Any,
    ref: str,
    *,
    against: str | None = None,
    against_empty: bool = False,
    holdout_share: float = DEFAULT_HOLDOUT,
    seed: str = DEFAULT_SEED,
    examples: int = 20,
    progress: Callable[[int, int], None] | None = None,
    progress_every: int = 5_000,
) -> dict[str, Any]:
    """Replay `ref` against its baseline over every stored answer, record the trial, return the figures.
    `progress(done, total)` is called every `progress_every` answers (it may raise to cancel)."""
    replay = replay_figures(
        db,
        ref,
        against=against,
        against_empty=against_empty,
        holdout_share=holdout_share,
        seed=seed,
        examples=examples,
        progress=progress,
        progress_every=progress_every,
    )
    return record_replay(db, replay)


def replay_figures(
    db: Any,
    ref: str,
    *,
    against: str | None = None,
    against_empty: bool = False,
    holdout_share: float = DEFAULT_HOLDOUT,
    seed: str = DEFAULT_SEED,
    examples: int = 20,
    progress: Callable[[int, int], None] | None = None,
    progress_every: int = 5_000,
) -> Replay:
    """The replay's figures, reading only (so the app runs it on a read-only connection)."""
    if not 0.0 <= holdout_share <= 1.0:
        raise ValueError(f"holdout share must be between 0 and 1, got {holdout_share}")
    cand_row = store_packs.find_pack(db, ref)
    base_row = baseline_for(db, cand_row, against, against_empty)
    candidate, baseline = to_domain(cand_row), to_domain(base_row)
    labels = load_labels(db)
    total = store_packs.count_answers(db)
    on_step = (lambda n: progress(n, total)) if progress is not None else None
    started = time.perf_counter()
    report = replay_rows(
        store_packs.iter_replay_answers(db),
        baseline,
        candidate,
        labels,
        holdout_share=holdout_share,
        seed=seed,
        progress=on_step,
        progress_every=progress_every,
        example_limit=max(examples, 0),
    )
    seconds = time.perf_counter() - started
    if progress is not None and (report.answers == 0 or report.answers % progress_every):
        progress(report.answers, total)
    data = report_json(
        report, candidate, baseline, labels=labels, holdout_share=holdout_share, seed=seed, examples=examples
    )
    data = {
        "candidate": ref_json(cand_row),
        "baseline": ref_json(base_row, baseline),
        "seconds": round(seconds, 3),
        "answers_per_second": round(report.answers / seconds) if seconds > 0 else None,
        **data,
    }
    return Replay(data, candidate.content_hash, baseline.content_hash, labels.fingerprint)


def record_replay(db: Any, replay: Replay) -> dict[str, Any]:
    """Record the replay as a trial (a write); returns its figures with `trial`."""
    trial = store_packs.record_trial(
        db,
        replay.candidate_hash,
        replay.baseline_hash,
        replay.labels_fingerprint,
        figures_summary(replay.data),
    )
    return {**replay.data, "trial": trial}


def overview(db: Any, name: str | None, holdout: float, seed: str) -> dict[str, Any]:
    """Everything the packs screen draws except the replay: packs, the chosen pack (else the latest
    updated), suggestions for it."""
    packs = store_packs.list_packs(db)
    if name is None and packs:
        name = max(packs, key=lambda p: p["updated_at"])["name"]
    stored = store_packs.latest_pack(db, name) if name else None
    sugg = suggestions(db, stored.ref if stored else None, holdout_share=holdout, seed=seed, limit=100)
    return {"packs": packs, "name": name, "stored": stored, "suggestions": sugg}


def rejected_phrases(db: Any, pack_name: str | None) -> set[str]:
    """Phrases whose latest decision for this pack is a rejection (normalised)."""
    if not pack_name:
        return set()
    latest: dict[str, str] = {}
    for d in store_packs.list_decisions(db, pack_name):
        latest[normalise_phrase(d["phrase"])] = d["decision"]
    return {p for p, decision in latest.items() if decision == "rejected"}


def suggestions(
    db: Any,
    ref: str | None = None,
    *,
    holdout_share: float = DEFAULT_HOLDOUT,
    seed: str = DEFAULT_SEED,
    limit: int | None = 50,
) -> dict[str, Any]:
    """Suggested phrases for `ref` (or for a new pack) from the training part of the labels."""
    stored = store_packs.find_pack(db, ref) if ref else None
    existing = to_domain(stored) if stored else None
    labels = load_labels(db)
    found, used = suggest_from_rows(
        labels,
        store_packs.iter_answers(db, only_flagged=True),
        existing=existing,
        exclude=rejected_phrases(db, stored.name if stored else None),
        holdout_share=holdout_share,
        seed=seed,
        limit=limit,
    )
    return {
        "pack": ref_json(stored) if stored else None,
        "holdout": {"share": holdout_share, "seed": seed},
        "used": used,
        "suggestions": [suggestion_json(s) for s in found],
    }


def decide(db: Any, name: str, phrase: str, list_name: str, decision: str, who: str | None) -> dict[str, Any]:
    """Accept (a new version holding the phrase; the pack is created if new) or reject a suggestion;
    both are recorded in pack_decisions. Returns {decision, pack}."""
    pack: StoredPack | None = None
    if decision == "accepted":
        if store_packs.latest_pack(db, name) is None:
            pack = create_pack(
                db, name, *(([phrase], []) if list_name == "none" else ([], [phrase])), who=who
            )
        else:
            pack = change_pack(
                db, name, add=[phrase], list_name=list_name, who=who, note="accepted suggestion"
            )
    row = store_packs.record_decision(db, name, phrase, list_name, decision, who)
    return {"decision": row, "pack": pack.as_dict() if pack else None}


def export_text(stored: StoredPack, *, ts: bool = False, const_name: str = "phrases") -> str:
    """The JSON object `.negativeClaims(...)` accepts, or the same as a TypeScript snippet."""
    pack = to_domain(stored)
    return pack.to_typescript(const_name) if ts else pack.to_json_text() + "\n"


# -- deployed packs, measured in production ---------------------------------------------------------------------


def record_deployed(
    db: Any,
    ref: str,
    version: str,
    *,
    replaces: str | None = None,
    who: str | None = None,
    note: str | None = None,
) -> dict[str, Any]:
    """Link the `phrasePackVersion` string `version` to stored pack `ref`. The version it replaced:
    `replaces` if given, else the newest other version string linked to a pack of the same name."""
    stored = store_packs.find_pack(db, ref)
    if replaces is None:
        same_name = [
            d
            for d in store_packs.deployments(db)
            if d["pack_version"] != version.strip() and str(d["pack"] or "").partition("@")[0] == stored.name
        ]
        replaces = same_name[-1]["pack_version"] if same_name else None
    return store_packs.record_deployment(db, version, stored, replaces=replaces, created_by=who, note=note)


def _side(db: Any, version: str, link: dict[str, Any] | None) -> dict[str, Any]:
    pack = link["pack"] if link else None
    trial = store_packs.latest_trial(db, link["content_hash"]) if link and link["content_hash"] else None
    return {
        "version": version,
        "pack": pack,
        "measured": measured_precision(store_packs.version_verdicts(db, version)).as_dict(),
        "predicted": predicted_precision(trial),
    }


def production(db: Any, version: str | None = None) -> list[dict[str, Any]]:
    """For every version string linked to a stored pack (or just `version`): the precision of its labelled
    findings and the replay's prediction for its pack, and the same for the version it replaced."""
    links = {d["pack_version"]: d for d in store_packs.deployments(db)}
    if version is not None and version not in links:
        raise NotFound(f"no stored pack is linked to {version!r} (see `reviewer pack deployed REF VERSION`)")
    out = []
    for v, link in links.items():
        if version is not None and v != version:
            continue
        row = _side(db, v, link)
        old = link["replaces"]
        row["replaces"] = _side(db, old, links.get(old)) if old else None
        out.append(row)
    return out


# -- the per-phrase ledger ---------------------------------------------------------------------------------------


def ledger(db: Any, ref: str) -> dict[str, Any]:
    """The per-phrase ledger of pack `ref` over the prose answers the observer reads, each false positive
    located by run key, clause span and the fp-labelled finding in it (to step through in the run screen)."""
    stored = store_packs.find_pack(db, ref)
    rows = list(store_labels.iter_finding_labels(db))
    labels = build_labels(rows, store_labels.iter_missed_labels(db))
    targets: dict[str, list[tuple[int, int, str]]] = {}
    for target, run_key, start, end, _who, _verdict in rows:
        targets.setdefault(run_key, []).append((start, end, target))
    fp_spans = {(f.answer_key, f.start, f.end) for f in labels.findings if f.verdict == "fp"}
    answers = (
        StoredAnswer(key, text, run_id, outcome, delivered, calls, flagged)
        for key, run_id, text, outcome, delivered, calls, flagged in store_packs.iter_replay_answers(db)
    )
    found = phrase_ledger(to_domain(stored), observed_prose(answers), labels.findings, labels.misses)

    def finding_in(key: str, cs: int, ce: int) -> str | None:
        return next(
            (t for s, e, t in targets.get(key, []) if (key, s, e) in fp_spans and s < ce and cs < e), None
        )

    return {
        "pack": ref_json(stored),
        "phrases": [
            {
                "phrase": r.phrase,
                "list": r.list_name,
                "hits": r.hits,
                "true_positives": r.true_positives,
                "false_positives": r.false_positives,
                "misses_covered": r.misses_covered,
                "precision": None if r.precision is None else round(r.precision, 4),
                "false_positives_at": [
                    {"run_key": k, "start": cs, "end": ce, "finding_id": finding_in(k, cs, ce)}
                    for k, cs, ce in r.false_positive_clauses
                ],
            }
            for r in found
        ],
    }
