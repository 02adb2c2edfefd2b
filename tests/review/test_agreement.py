"""Cohen's kappa against hand-computed tables and the degenerate cases."""

from __future__ import annotations

import pytest

from reviewer.review.agreement import cohens_kappa


def test_classic_two_by_two_table() -> None:
    # 50 items: both yes 20, A yes / B no 5, A no / B yes 10, both no 15.
    # po = 35/50 = 0.7; pA(yes) = 25/50, pB(yes) = 30/50; pe = .5*.6 + .5*.4 = 0.5; kappa = (.7-.5)/.5 = 0.4
    cells = [("yes", "yes")] * 20 + [("yes", "no")] * 5 + [("no", "yes")] * 10 + [("no", "no")] * 15
    a = {i: x for i, (x, _) in enumerate(cells)}
    b = {i: y for i, (_, y) in enumerate(cells)}
    result = cohens_kappa(a, b)
    assert result.shared == 50 and result.agreed == 35
    assert result.raw == pytest.approx(0.7)
    assert result.kappa == pytest.approx(0.4)
    assert result.disagreements == tuple(range(20, 35))


def test_three_categories_only_shared_items() -> None:
    # Shared f1..f4: tp/tp, fp/fp, unsure/fp, tp/fp -> po = 2/4
    # A: tp 2, fp 1, unsure 1; B: tp 1, fp 3 -> pe = (2*1 + 1*3 + 1*0) / 16 = 5/16
    # kappa = (8/16 - 5/16) / (11/16) = 3/11
    a = {"f1": "tp", "f2": "fp", "f3": "unsure", "f4": "tp", "only-a": "tp"}
    b = {"f1": "tp", "f2": "fp", "f3": "fp", "f4": "fp", "only-b": "fp"}
    result = cohens_kappa(a, b)
    assert result.shared == 4 and result.raw == 0.5
    assert result.kappa == pytest.approx(3 / 11)
    assert result.disagreements == ("f3", "f4")


def test_perfect_agreement_on_one_category_is_one() -> None:
    result = cohens_kappa({"x": "tp", "y": "tp"}, {"x": "tp", "y": "tp", "z": "fp"})
    assert result.kappa == 1.0 and result.raw == 1.0 and result.disagreements == ()


def test_no_shared_items_is_none() -> None:
    result = cohens_kappa({"x": "tp"}, {"y": "tp"})
    assert result.shared == 0 and result.kappa is None and result.raw is None


def test_chance_level_agreement_is_zero() -> None:
    # A says tp everywhere, B splits: po = 2/4, pe = 1 * 2/4 -> kappa 0
    result = cohens_kappa(dict.fromkeys("abcd", "tp"), {"a": "tp", "b": "tp", "c": "fp", "d": "fp"})
    assert result.kappa == pytest.approx(0.0)
