"""One answer observed end to end: the predictions' shape and which rule wins, worked by hand."""

from __future__ import annotations

from reviewer.review.matching import compile_pack
from reviewer.review.observer.no_read import DispatchedRead
from reviewer.review.observer.predict import Prediction, observe_answer
from reviewer.review.phrase_pack import PhrasePack

PACK = compile_pack(PhrasePack.create("p", ["no incidents", "came up empty", "none", "no action"]))
READ = [DispatchedRead(turn=0, tool_name="list_incidents")]


def at(text: str, clause: str) -> tuple[int, int]:
    start = text.index(clause)
    return start, start + len(clause)


def test_one_claim_per_clause_when_the_turn_read_something() -> None:
    text = "Payments has no incidents. There are no incidents anywhere."
    got = observe_answer([("answer", text)], PACK, reads=READ)
    assert got == [
        Prediction(
            "negative-claim", "answer", *at(text, "Payments has no incidents."), phrases=("no incidents",)
        ),
        Prediction(
            "negative-claim",
            "answer",
            *at(text, "There are no incidents anywhere."),
            phrases=("no incidents",),
        ),
    ]


def test_the_seeds_example_without_a_read_produces_one_warning() -> None:
    got = observe_answer([("answer", "Payments has no incidents. There are no incidents anywhere.")], PACK)
    assert got == [Prediction("negative-claim-note", "answer", code="no-read")]


def test_an_earlier_turns_read_does_not_count_and_a_failed_read_does() -> None:
    text = "There are no incidents."
    assert observe_answer([("answer", text)], PACK, turn=1, reads=READ)[0].code == "no-read"
    failed = [DispatchedRead(turn=1, ok=False)]
    assert observe_answer([("answer", text)], PACK, turn=1, reads=failed)[0].kind == "negative-claim"


def test_filtered_clauses_produce_nothing_not_even_no_read() -> None:
    assert observe_answer([("answer", "None. No action is needed. Tests: 0 failed.")], PACK) == []
    # added words remain eligible
    got = observe_answer([("answer", "None. No action is needed yet.")], PACK)
    assert [p.code for p in got] == ["no-read"]


def test_code_and_other_languages_give_notes_not_claims() -> None:
    text = "Output:\n```\nno incidents\n```\nKeine Vorfälle: es gibt none in der Liste. Run `grep none`."
    got = observe_answer([("answer", text)], PACK)
    assert [(p.kind, p.code, text[p.start or 0 : p.end or 0]) for p in got] == [
        ("negative-claim-note", "in-code-block", "```\nno incidents\n```"),
        ("negative-claim-note", "language-unsupported", "Keine Vorfälle: es gibt none in der Liste."),
        ("negative-claim-note", "in-code-block", "Run `grep none`."),
    ]  # no claim was detected, so no no-read note either


def test_typed_answer_fields_keep_their_paths() -> None:
    fields = [("summary", "All good."), ("negatives[0].about", "The search came up empty.")]
    got = observe_answer(fields, PACK, reads=READ)
    assert got == [Prediction("negative-claim", "negatives[0].about", 0, 25, phrases=("came up empty",))]


def test_over_32_units_one_too_many_claims_note_replaces_the_findings() -> None:
    exactly = " ".join(["There are no incidents."] * 32)
    assert len(observe_answer([("answer", exactly)], PACK, reads=READ)) == 32
    over = exactly + " The search came up empty."
    assert observe_answer([("answer", over)], PACK, reads=READ) == [
        Prediction("negative-claim-note", "answer", code="too-many-claims")
    ]
    # unjudged units count too: 32 claims + 1 code unit
    mixed = exactly + "\n```\nno incidents\n```"
    assert [p.code for p in observe_answer([("answer", mixed)], PACK, reads=READ)] == ["too-many-claims"]


def test_over_the_input_budget_one_input_limit_note() -> None:
    big = "There are no incidents. " + "x" * 65_536
    assert observe_answer([("answer", big)], PACK, reads=READ) == [
        Prediction("negative-claim-note", "answer", code="input-limit")
    ]
    many = [(f"items[{i}]", "none found") for i in range(257)]
    assert [p.code for p in observe_answer(many, PACK, reads=READ)] == ["input-limit"]
