"""A typed negative's account (`turn_end.answerNegatives`) read as the framework delivers it.

The shape follows negative-claims.md section 3 and the seed document it quotes (newer than 9.62.0, so
the framework's 9.62.0 source does not carry it). An established claim is delivered as the library's
own statement with a `delivery: "record-composed"` marker, and a reviewer must see that marker beside
the sentence. The answer-level `delivery` says whether the person got only checked statements
(`as-checked`), checked statements among unverified model fields (`recorded`), nothing (`withheld`), or
the explicit fallback sentence in place of a failed complete-list claim (`state-searched`). Every value
is recorded text: kept as plain strings here, bounded, and escaped by whoever shows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ANSWER_DELIVERIES = ("as-checked", "recorded", "withheld", "state-searched")
FALLBACK_SENTENCE = "The requested complete-list claim is not established; only this absence is."
MAX_TEXT = 2000
MAX_ITEMS = 200


@dataclass(frozen=True)
class Gap:
    what: str
    why: str | None


@dataclass(frozen=True)
class Contrary:
    handle: str | None
    rows: tuple[str, ...]
    count: int | None


@dataclass(frozen=True)
class TypedClaim:
    """One cited negative: what was claimed, the verdict, and the statement delivered (if any)."""

    index: int
    kind: str | None
    about: str | None
    rests_on: tuple[str, ...]
    verdict: str | None
    statement: str | None
    delivery: str | None  # the statement's marker, e.g. "record-composed"
    version: str | None
    reason: str | None
    gaps: tuple[Gap, ...]
    contrary: tuple[Contrary, ...]

    @property
    def established(self) -> bool:
        return self.verdict == "established"

    @property
    def failed_complete_list(self) -> bool:
        """The failed complete-list verdict a state-searched fallback keeps."""
        return self.kind == "complete" and not self.established


@dataclass(frozen=True)
class SourceCount:
    tool_name: str | None
    checked: int | None


@dataclass(frozen=True)
class TypedAccount:
    """The whole account: answer-level delivery, claims, fallback, per-source counts, diagnostics."""

    delivery: str | None
    known_delivery: bool
    template_version: str | None
    claims: tuple[TypedClaim, ...]
    fallback: str | None
    sources: tuple[SourceCount, ...]
    diagnostics: tuple[str, ...]

    @property
    def delivered(self) -> tuple[TypedClaim, ...]:
        """The statements the person received, each with its marker (none when withheld)."""
        if self.delivery == "withheld":
            return ()
        return tuple(c for c in self.claims if c.established and c.statement)

    @property
    def failed(self) -> tuple[TypedClaim, ...]:
        return tuple(c for c in self.claims if not c.established)

    @property
    def kept_verdicts(self) -> tuple[TypedClaim, ...]:
        """For a state-searched fallback: the failed complete-list verdicts it keeps."""
        return tuple(c for c in self.claims if c.failed_complete_list)


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list[Any]:
    return value[:MAX_ITEMS] if isinstance(value, list) else []


def _s(value: Any) -> str | None:
    if value is None or isinstance(value, dict | list):
        return None
    text = value if isinstance(value, str) else str(value)
    return (
        text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"… [{len(text) - MAX_TEXT:,} more characters]"
    )


def _i(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _gap(value: Any) -> Gap | None:
    if isinstance(value, str):
        return Gap(_s(value) or "", None)
    d = _d(value)
    what = _s(d.get("what"))
    return Gap(what, _s(d.get("why"))) if what else None


def _claim(index: int, value: Any) -> TypedClaim:
    d = _d(value)
    return TypedClaim(
        index=index,
        kind=_s(d.get("kind")),
        about=_s(d.get("about")),
        rests_on=tuple(s for s in (_s(h) for h in _l(d.get("restsOn"))) if s),
        verdict=_s(d.get("verdict")),
        statement=_s(d.get("statement")),
        delivery=_s(d.get("delivery")),
        version=_s(d.get("version")),
        reason=_s(d.get("reason")),
        gaps=tuple(g for g in (_gap(x) for x in _l(d.get("gaps"))) if g),
        contrary=tuple(
            Contrary(
                _s(_d(c).get("handle")),
                tuple(s for s in map(_s, _l(_d(c).get("rows"))) if s),
                _i(_d(c).get("count")),
            )
            for c in _l(d.get("contrary"))
        ),
    )


def read_account(turn_end_payload: Any) -> TypedAccount | None:
    """The typed-negative account of a turn, or None when the turn carries none."""
    account = _d(_d(turn_end_payload).get("answerNegatives"))
    if not account:
        return None
    delivery = _s(account.get("delivery"))
    claims = tuple(_claim(i, c) for i, c in enumerate(_l(account.get("claims"))))
    fallback = _s(account.get("fallback"))
    if fallback is None and delivery == "state-searched":
        fallback = next((c.statement for c in claims if c.statement == FALLBACK_SENTENCE), FALLBACK_SENTENCE)
    return TypedAccount(
        delivery=delivery,
        known_delivery=delivery in ANSWER_DELIVERIES,
        template_version=_s(account.get("templateVersion")),
        claims=claims,
        fallback=fallback,
        sources=tuple(
            SourceCount(_s(_d(s).get("toolName")), _i(_d(s).get("checked")))
            for s in _l(account.get("sources"))
        ),
        diagnostics=tuple(s for s in map(_s, _l(account.get("diagnostics"))) if s),
    )
