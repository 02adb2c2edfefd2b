"""`reviewer pack ...`: limits refused with the limit named, hashes, versions, diff, import/export round
trips, suggestions from labelled recordings, and replay figures checked by hand against a stored corpus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from reviewer.cli.main import cli
from reviewer.review.replay import DEFAULT_SEED, in_holdout
from store import labels as store_labels
from store.db.connection import open_database
from store.db.ingest import ingest
from store.runs import resolve_run
from tests.conftest import SAMPLES
from tests.test_packs_store import build_hand_corpus, finding_id, missed


def run(db_path: Path, *args: str, code: int = 0) -> Result:
    result = CliRunner().invoke(cli, ["pack", *args, "--db", str(db_path)])
    assert result.exit_code == code, (result.output, result.exception)
    return result


def data(db_path: Path, *args: str) -> Any:
    return json.loads(run(db_path, *args, "--json").stdout)


# -- limits: refused, with the limit named, and nothing saved --------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (
            [arg for i in range(33) for arg in ("--none", f"phrase {i}")],
            "33 phrases across none and complete; the limit is 32 in total",
        ),
        (["--none", "𝔘" * 64 + "a"], "is 129 UTF-16 code units long; the limit is 128 per phrase"),
        (["--none", "   "], "none[0] is empty after stripping whitespace"),
        (
            ["--none", "came up empty", "--complete", "Came  UP empty"],
            "duplicates none[0] after normalisation",
        ),
        (["--none", "no .* found"], "is not literal text"),
    ],
)
def test_limits_via_new(db_path: Path, args: list[str], named: str) -> None:
    result = run(db_path, "new", "ops", *args, code=1)
    assert named in result.output
    assert data(db_path, "list") == []


def test_limits_via_add_and_import(db_path: Path, tmp_path: Path) -> None:
    assert len("𝔘" * 64) == 64 and len(("𝔘" * 64).encode("utf-16-le")) // 2 == 128
    run(db_path, "new", "ops", "--none", "𝔘" * 64)  # exactly 128 UTF-16 units (64 characters): accepted
    run(db_path, "add", "ops", *[f"phrase {i}" for i in range(31)])
    result = run(db_path, "add", "ops", "one too many", code=1)
    assert "33 phrases across none and complete; the limit is 32 in total" in result.output
    result = run(db_path, "add", "ops", "Phrase  0", code=1)
    assert "duplicates" in result.output
    too_many = {"prose": True, "phrases": {"none": [f"p{i}" for i in range(30)], "complete": ["a", "b", "c"]}}
    (tmp_path / "big.json").write_text(json.dumps(too_many))
    result = run(db_path, "import", str(tmp_path / "big.json"), "--name", "big", code=1)
    assert "the limit is 32 in total" in result.output
    result = run(db_path, "import", '{"prose": true, "phrases": {"none": [""]}}', "--name", "e", code=1)
    assert "empty" in result.output
    result = run(db_path, "import", '{"prose": true, "phrases": {"never": []}}', "--name", "e", code=1)
    assert "expected" in result.output
    assert [(p["name"], p["versions"]) for p in data(db_path, "list")] == [("ops", 2)]


# -- hash, versions, diff ----------------------------------------------------------------------------------------------


def test_versions_hash_and_diff(db_path: Path) -> None:
    v1 = data(db_path, "new", "ops", "--none", "came up empty", "--complete", "that is the full list")
    v2 = data(db_path, "add", "ops", "nothing turned up", "zero results")
    v3 = data(db_path, "remove", "ops", "ZERO results")
    assert (v1["version"], v2["version"], v3["version"]) == (1, 2, 3)
    assert (
        v1["parent_hash"] is None
        and v2["parent_hash"] == v1["content_hash"]
        and v3["parent_hash"] == v2["content_hash"]
    )
    assert v3["none"] == ["came up empty", "nothing turned up"]
    # the content id is over the exact export: other case or order is another id (changed on purpose,
    # issue #13: it used to ignore both), the same export spelled with other spacing is the same id
    same = data(
        db_path,
        "new",
        "same",
        "--none",
        "Nothing  turned UP",
        "--none",
        "came up empty",
        "--complete",
        "That is the full list",
    )
    assert same["content_hash"] != v3["content_hash"] != v2["content_hash"]
    twin = data(
        db_path, "new", "twin", "--none", " came up  empty", "--none", "nothing turned up",
        "--complete", "that is the full list",
    )  # fmt: skip
    assert twin["content_hash"] == v3["content_hash"]
    shown = data(db_path, "show", "ops")
    assert shown["ref"] == "ops@3" and [v["version"] for v in shown["versions"]] == [1, 2, 3]
    assert data(db_path, "show", "ops@1")["content_hash"] == v1["content_hash"]
    d = data(db_path, "diff", "ops@1", "ops@2")
    assert d["added"] == {"none": ["nothing turned up", "zero results"], "complete": []}
    assert d["removed"] == {"none": [], "complete": []} and d["unchanged"] is False
    assert d["from"]["ref"] == "ops@1" and d["to"]["hash"] == v2["content_hash"]
    d = data(db_path, "diff", "ops")  # against its parent
    assert d["from"]["ref"] == "ops@2" and d["removed"]["none"] == ["zero results"]
    assert data(db_path, "diff", "ops", "same")["unchanged"] is True
    run(db_path, "add", "ops", "came  UP empty", code=1)  # a duplicate: refused, no version
    result = run(db_path, "remove", "ops", "never there", code=1)
    assert "has no phrase" in result.output
    result = run(db_path, "new", "ops", code=1)
    assert "exists" in result.output
    run(db_path, "add", "nope", "x", code=1)
    text = run(db_path, "show", "ops").output
    assert "ops@3" in text and "came up empty" in text


# -- import / export round trips ------------------------------------------------------------------------------------------


def test_export_import_round_trip(db_path: Path, tmp_path: Path) -> None:
    src = data(
        db_path,
        "new",
        "ops",
        "--none",
        "came up empty",
        "--none",
        'said "none" 🚀',
        "--complete",
        "the entire inventory is here",
    )
    out = json.loads(run(db_path, "export", "ops").stdout)
    assert out == {
        "prose": True,
        "phrases": {
            "none": ["came up empty", 'said "none" 🚀'],
            "complete": ["the entire inventory is here"],
        },
    }
    target = tmp_path / "phrases.json"
    run(db_path, "export", "ops", "-o", str(target))
    assert json.loads(target.read_text()) == out
    result = run(db_path, "export", "ops", "-o", str(target), code=1)
    assert "already exists" in result.output and json.loads(target.read_text()) == out
    run(db_path, "export", "ops", "-o", str(target), "--force")
    copy = data(db_path, "import", str(target), "--name", "copy")
    assert copy["content_hash"] == src["content_hash"] and copy["none"] == src["none"]

    ts = tmp_path / "phrases.ts"
    run(db_path, "export", "ops", "--ts", "--const", "customObservation", "-o", str(ts))
    snippet = ts.read_text()
    assert "export const customObservation = {" in snippet and "} satisfies NegativeClaimsOptions;" in snippet
    assert "  prose: true," in snippet and 'none: ["came up empty", "said \\"none\\" 🚀"],' in snippet
    from_ts = data(db_path, "import", str(ts), "--name", "from-ts")
    assert from_ts["content_hash"] == src["content_hash"]
    # the documentation's own example, pasted as JSON text
    inline = data(
        db_path,
        "import",
        '{"prose": true, "phrases": {"none": ["came up empty"], "complete": ["the entire inventory is here"]}}',
        "--name",
        "ops",
    )
    assert inline["version"] == 2 and inline["parent_hash"] == src["content_hash"]
    run(db_path, "import", str(target), "--name", "copy", code=1)  # unchanged: no new version
    run(db_path, "import", str(tmp_path / "missing.json"), "--name", "x", code=1)


# -- suggestions from labelled recordings ------------------------------------------------------------------------------------


@pytest.fixture
def sample_db(db_path: Path) -> Path:
    """The sample recordings with missed-negative labels and one false-positive label."""
    db = open_database(db_path)
    ingest(db, [SAMPLES], db_path=str(db_path), workers=1)
    key = {name: resolve_run(db, run_id) for name, run_id in (
        ("note", "run-1796003160000-1"), ("release", "run-1796003100000-1"),
        ("ledger", "run-1796003580000-1"), ("db", "run-1796003220000-1"),
    )}  # fmt: skip
    missed(db, key["note"], "came up empty")
    missed(db, key["release"], "No pods are pending")
    missed(db, key["ledger"], "no page is needed")
    missed(db, key["note"], "Payments has no incidents")
    missed(db, key["note"], "There are no incidents anywhere")
    fp = finding_id(db, key["db"], "the alert search came up empty for the last 24h")
    store_labels.label_finding(db, fp, "fp", "ann")
    db.close()
    return db_path


def test_suggestions_from_labels(sample_db: Path) -> None:
    out = data(sample_db, "suggest", "--holdout", "0", "--limit", "100")
    assert out["used"]["missed_labels"] == 5 and out["used"]["missed_labels_held_out"] == 0
    # flagged clauses with a placed span in the answer: ledger 1, checkout-api 1, db 2, release 2 = 6;
    # the db clause "the alert search came up empty for the last 24h." is labelled fp
    assert out["used"]["flagged_clauses"] == 6 and out["used"]["fp_clauses"] == 1
    got = {
        s["phrase"]: (s["list"], s["covers"], s["touches_flagged"], s["touches_fp"], s["from_label"])
        for s in out["suggestions"]
    }
    assert got["came up empty"] == ("none", 1, 1, 1, True)  # also in the flagged fp clause
    assert got["no page is needed"] == ("none", 1, 1, 0, True)  # ledger's flagged clause holds it
    assert got["no pods are pending"] == ("none", 1, 0, 0, True)
    # shared by the two "no incidents" labels: "no incidents" touches no flagged clause ("no open
    # incidents", "no other incidents" are different words), "incidents" touches three
    assert got["no incidents"] == ("none", 2, 0, 0, False)
    assert got["incidents"] == ("none", 2, 3, 0, False)
    assert all(s["covers"] >= 1 for s in out["suggestions"])


def test_suggestions_never_see_held_out_labels(sample_db: Path) -> None:
    db = open_database(sample_db)
    note = resolve_run(db, "run-1796003160000-1")
    others = [resolve_run(db, r) for r in ("run-1796003100000-1", "run-1796003580000-1")]
    db.close()
    seed = next(
        f"s{i}"
        for i in range(1000)
        if in_holdout(note, 0.5, f"s{i}") and not any(in_holdout(k, 0.5, f"s{i}") for k in others)
    )
    out = data(sample_db, "suggest", "--holdout", "0.5", "--seed", seed, "--limit", "100")
    assert out["used"]["missed_labels_held_out"] == 3 and out["used"]["missed_labels_used"] == 2
    phrases = {s["phrase"] for s in out["suggestions"]}
    assert "no pods are pending" in phrases and "came up empty" not in phrases and "incidents" not in phrases
    # existing phrases of a pack are not suggested again
    run(sample_db, "new", "ops", "--none", "No pods are PENDING")
    assert "no pods are pending" not in {
        s["phrase"] for s in data(sample_db, "suggest", "ops", "--holdout", "0")["suggestions"]
    }


# -- replay, by hand ----------------------------------------------------------------------------------------------------------


@pytest.fixture
def hand_path(db_path: Path, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    db = open_database(db_path)
    keys = build_hand_corpus(db, tmp_path / "recordings")
    db.close()
    run(db_path, "new", "ops", "--none", "nothing found", "--none", "no incidents")  # ops@1: the baseline
    run(db_path, "remove", "ops", "no incidents")  # ops@2
    run(db_path, "add", "ops", "came up empty")  # ops@3
    run(db_path, "add", "ops", "the full list", "--list", "complete")  # ops@4: the candidate
    return db_path, keys


def test_replay_figures_by_hand(hand_path: tuple[Path, dict[str, str]]) -> None:
    db_path, keys = hand_path
    out = data(hand_path[0], "replay", "ops", "--against", "ops@1", "--holdout", "0")
    assert out["candidate"]["ref"] == "ops@4" and out["baseline"]["ref"] == "ops@1" and out["answers"] == 6
    # Baseline ops@1 {nothing found, no incidents} hits: r2 "There are no incidents.", r3 "…Nothing found…".
    # Candidate ops@4 {nothing found, came up empty | the full list} hits: r1 "The search came up empty.",
    # r2 "Billing came up empty.", r3, r4 "That is the full list of services.".
    # r5's "came up empty" is inside a fenced code block and r6's is split by a line break: neither matches.
    assert out["newly_flagged"] == 3
    assert {c["text"] for c in out["newly_flagged_examples"]} == {
        "The search came up empty.", "Billing came up empty.", "That is the full list of services.",
    }  # fmt: skip
    assert out["newly_flagged_unrecorded"] == 1  # only r1's clause has no recorded finding
    assert out["no_longer_flagged"] == 1
    assert [(c["text"], c["phrases"]) for c in out["no_longer_flagged_examples"]] == [
        ("There are no incidents.", ["no incidents"])
    ]
    # Per candidate phrase (hits / confirmed by tp or missed label / on an fp-labelled clause):
    #   nothing found: r3 (tp) -> 1/1/0;  came up empty: r1 (missed), r2 (fp) -> 2/1/1;  the full list: r4 (fp) -> 1/0/1
    assert {p["phrase"]: (p["list"], p["hits"], p["confirmed"], p["fp"]) for p in out["phrases"]} == {
        "nothing found": ("none", 1, 1, 0),
        "came up empty": ("none", 2, 1, 1),
        "the full list": ("complete", 1, 0, 1),
    }
    every = out["figures"]["all"]
    assert every["labelled_answers"] == 6
    # Every run recorded a dispatched tool call, so no no-read note replaces the claims.
    # candidate: claims r1, r2b, r3, r4, all labelled: r1 (confirmed), r2b (fp), r3 (confirmed), r4 (fp) ->
    # precision 2/4; misses r1, r5, r6: only r1's clause is claimed -> recovers 1/3; r5's "came up empty"
    # in its fenced block gives one in-code-block note
    assert every["candidate"] == {
        "claims": 4, "labelled_hits": 4, "confirmed_hits": 2, "fp_hits": 2, "precision": 0.5,
        "misses": 3, "misses_covered": 1, "misses_in_noted_answers": 0, "recall": 0.3333,
        "notes": {"in-code-block": 1},
    }  # fmt: skip
    # baseline: r2a (tp), r3 (tp) -> precision 2/2; recovers 0/3; no baseline phrase sits in code
    assert every["baseline"] == {
        "claims": 2, "labelled_hits": 2, "confirmed_hits": 2, "fp_hits": 0, "precision": 1.0,
        "misses": 3, "misses_covered": 0, "misses_in_noted_answers": 0, "recall": 0.0, "notes": {},
    }  # fmt: skip
    assert out["notes"] == {"candidate": {"in-code-block": 1}, "baseline": {}}
    assert out["excluded"] == {"total": 0, "why": {}, "examples": []} and out["answers_read"] == 6
    assert every["fp_added"] == 2  # r2b and r4: fp clauses only the candidate hits
    assert out["figures"]["train"] == every and out["figures"]["holdout"]["labelled_answers"] == 0
    assert out["labels"]["finding_labels"] == 4 and out["labels"]["missed_labels"] == 3
    assert out["caveat"].startswith("The framework's own English grammar is richer")
    # the caveat list names the rules this replay applies and what it cannot do; it leaves none out now
    kinds = {c["rule"]: c["kind"] for c in out["caveats"]}
    assert kinds["literal-phrases"] == kinds["code-skipped"] == "reproduces"
    assert kinds["no-read"] == kinds["filtered-clauses"] == kinds["language-heuristic"] == "reproduces"
    assert kinds["coverage-block-stripped"] == kinds["claim-budget"] == kinds["input-budget"] == "reproduces"
    assert "not-modelled" not in kinds.values()
    assert kinds["grammar"] == kinds["anchoring"] == kinds["entity-resolution"] == "cannot"
    assert out["trial"] == {"id": 1, "trials": 1, "variants": 1, "variant": 1}


def test_holdout_figures_and_trials(hand_path: tuple[Path, dict[str, str]]) -> None:
    db_path, keys = hand_path
    out = data(db_path, "replay", "ops", "--holdout", "0.5")
    assert out["baseline"]["ref"] == "ops@3"  # default baseline: the parent
    figures = out["figures"]
    for side in ("candidate", "baseline"):
        for field in ("labelled_hits", "confirmed_hits", "fp_hits", "misses", "misses_covered"):
            assert (
                figures["train"][side][field] + figures["holdout"][side][field] == figures["all"][side][field]
            )
    held = sum(in_holdout(k, 0.5, DEFAULT_SEED) for k in keys.values())
    assert figures["holdout"]["labelled_answers"] == held and figures["train"]["labelled_answers"] == 6 - held
    # every replay is a trial against this label set; a variant is a distinct candidate
    assert out["trial"]["variant"] == 1 and out["trial"]["trials"] == 1
    assert data(db_path, "replay", "ops", "--holdout", "0.5")["trial"] == {
        "id": 2,
        "trials": 2,
        "variants": 1,
        "variant": 1,
    }
    assert data(db_path, "replay", "ops@3", "--against-empty")["trial"] == {
        "id": 3,
        "trials": 3,
        "variants": 2,
        "variant": 2,
    }
    text = run(db_path, "replay", "ops").output
    assert "variant 1 tried against these labels (2 variant(s), 4 replay(s) so far" in text
    assert "covers only the literal phrase" in text and "precision" in text
    # new labels: a new label set, the count starts again
    db = open_database(db_path)
    missed(db, keys["run-r4"], "services")
    db.close()
    assert data(db_path, "replay", "ops")["trial"]["variants"] == 1
    result = run(db_path, "replay", "ops", "--against", "ops@1", "--against-empty", code=2)
    assert "not both" in result.output
    run(db_path, "replay", "nope", code=1)


def test_export_refuses_a_reserved_or_invalid_const_name(db_path: Path, tmp_path: Path) -> None:
    run(db_path, "new", "ops", "--none", "came up empty")
    target = tmp_path / "phrases.ts"
    for name in ("class", "await", "my-pack"):
        result = run(db_path, "export", "ops", "--ts", "--const", name, "-o", str(target), code=2)
        assert "--const" in result.output and not target.exists()


def test_typescript_pack_import_is_linear_in_its_size() -> None:
    import time

    from reviewer.review.phrase_pack import PackFormatError, PhrasePack

    def snippet(keys: int) -> str:
        body = "".join(f"  key{i}: true, // note {i}\n" for i in range(keys))
        return "export const phrases = {\n  none: ['no incidents'],\n  complete: [],\n" + body + "};\n"

    def seconds(source: str) -> float:
        started = time.perf_counter()
        with pytest.raises(PackFormatError, match=r"key0: unknown key"):  # read to the end, then refused
            PhrasePack.from_typescript(source)
        return time.perf_counter() - started

    small, big = snippet(3_000), snippet(48_000)  # about 0.1 MB and 1.6 MB
    assert len(big) > 1_500_000
    ratio = seconds(big) / seconds(small)
    # 16x the text: about 16x the time when linear, about 256x when quadratic (it took 64 s at 1.6 MB)
    assert ratio < 64, f"{ratio:.0f}x the time for 16x the text"
