"""A label row read from an export: validated field by field before anything is written (a trust boundary).

An export may come from another reviewer's machine or be edited by hand: wrong types, a verdict that does
not fit its target (a "justified" on a negative claim), a time that is not a time are refused with the row and
the field named, never written and never a traceback.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from store.errors import StoreError
from store.vocab import CLEARED, MISSED_LISTS, MISSED_NEGATIVE, VERDICTS, WITHHELD_ANSWER, verdicts_for

#: Bounds on what one imported row may hold (as the app's own inputs are bounded).
MAX_ID, MAX_NAME, MAX_NOTE, MAX_TEXT = 300, 200, 2_000, 100_000


class LabelImportError(StoreError):
    """An imported label row that cannot be taken: the message names the row and the field."""


class ImportedLabel(BaseModel):
    """One row of `reviewer labels --json` (the export's extra finding_* columns are ignored)."""

    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)

    uid: str = Field(min_length=1, max_length=MAX_ID)
    target_id: str = Field(min_length=1, max_length=MAX_ID)
    target_kind: str = Field(min_length=1, max_length=MAX_NAME)
    verdict: str
    reviewer: str = Field(min_length=1, max_length=MAX_NAME)
    created_at: str = Field(min_length=1, max_length=40)
    note: str | None = Field(default=None, max_length=MAX_NOTE)
    undoes: str | None = Field(default=None, max_length=MAX_ID)
    run_key: str | None = Field(default=None, max_length=MAX_ID)
    run_id: str | None = Field(default=None, max_length=MAX_ID)
    field: str | None = Field(default=None, max_length=MAX_NAME)
    span_start: int | None = Field(default=None, ge=0, le=2**53)
    span_end: int | None = Field(default=None, ge=0, le=2**53)
    span_text: str | None = Field(default=None, max_length=MAX_TEXT)
    list: str | None = None

    @field_validator("created_at")
    @classmethod
    def _a_time(cls, value: str) -> str:
        """Any ISO 8601 time, kept in the one form labels are made in (UTC, milliseconds, `Z`): "current" is
        ordered by this text, so 12:00+02:00 must not sort after 11:00Z."""
        try:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
            if when.tzinfo is None:
                when = when.replace(tzinfo=UTC)  # a time without a zone is read as UTC
            return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        except (ValueError, OverflowError) as exc:  # overflow: 0001-01-01T00:00+02:00 has no UTC time
            raise ValueError(f"not an ISO 8601 time ({value[:40]!r})") from exc

    @model_validator(mode="after")
    def _verdict_fits_target(self) -> ImportedLabel:
        if self.verdict not in (*VERDICTS, CLEARED):
            raise ValueError(f"verdict: unknown verdict {self.verdict!r}")
        kind = self.target_kind if self.target_kind in (MISSED_NEGATIVE, WITHHELD_ANSWER) else None
        if self.verdict != CLEARED and self.verdict not in verdicts_for(kind or self.target_kind):
            raise ValueError(f"verdict: {self.verdict!r} is not a verdict for a {self.target_kind} target")
        if self.target_kind == MISSED_NEGATIVE:
            missing = [
                k
                for k in ("run_key", "span_start", "span_end", "span_text", "list")
                if getattr(self, k) is None
            ]
            if missing:
                raise ValueError(f"{', '.join(missing)}: required on a missed-negative label")
            if self.list not in MISSED_LISTS:
                raise ValueError(f"list: must be one of {', '.join(MISSED_LISTS)}, not {self.list!r}")
            assert self.span_start is not None and self.span_end is not None
            if self.span_end <= self.span_start:
                raise ValueError("span_end: must be after span_start")
        return self


def validated(rows: list[Any]) -> list[ImportedLabel]:
    """Every row checked before any is written; the first bad one raises LabelImportError naming it."""
    out = []
    for n, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise LabelImportError(f"label #{n}: not an object ({type(row).__name__})")
        try:
            out.append(ImportedLabel.model_validate(row))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or _field_of(first["msg"])
            uid = row.get("uid") if isinstance(row.get("uid"), str) else None
            raise LabelImportError(
                f"label #{n}{f' (uid {uid[:40]})' if uid else ''}, field {where}: {_message(first['msg'])}"
            ) from exc
    return out


def _field_of(message: str) -> str:
    """A model-level check names its field first ("verdict: ...")."""
    text = message.removeprefix("Value error, ")
    return text.split(":", 1)[0] if ":" in text else "?"


def _message(message: str) -> str:
    text = message.removeprefix("Value error, ")
    head, sep, rest = text.partition(": ")
    return rest if sep and " " not in head.replace(", ", ",") else text
