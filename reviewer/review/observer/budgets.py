"""The observation budgets: at most 65,536 UTF-16 code units across at most 256 string values, field
paths of at most 4,096 code units (over any: one `input-limit` note), and at most 32 detected claims and
unjudged units combined (over it: one `too-many-claims` note). Either note replaces the partial findings.

Not modelled: the framework's shared work budget for pattern preparation and evidence/name matching,
which has no published size.
"""

from __future__ import annotations

from collections.abc import Sequence

from store.spans import utf16_len

MAX_INPUT_UTF16 = 65_536
MAX_STRING_VALUES = 256
MAX_FIELD_PATH_UTF16 = 4_096
MAX_CLAIMS_AND_UNITS = 32


def input_over_limit(fields: Sequence[tuple[str, str]]) -> bool:
    """Whether the (path, text) values break the input budget: too many values, too many code units
    in total, or a path that is too long."""
    if len(fields) > MAX_STRING_VALUES:
        return True
    if any(utf16_len(path) > MAX_FIELD_PATH_UTF16 for path, _ in fields):
        return True
    return sum(utf16_len(text) for _, text in fields) > MAX_INPUT_UTF16


def too_many_claims(claims_and_unjudged: int) -> bool:
    """Whether the detected claims plus unjudged units exceed the combined budget of 32."""
    return claims_and_unjudged > MAX_CLAIMS_AND_UNITS
