"""A label export's text (JSON or CSV): the one format `reviewer labels` and the app's ctrl+e both deliver."""

from __future__ import annotations

import csv
import io
from typing import Any

import orjson

from reviewer.review.inert import json_inert
from store.labels import LABEL_FIELDS

#: Columns of a label export, in order (the JSON objects carry the same keys).
LABEL_EXPORT_FIELDS = LABEL_FIELDS + (
    "finding_kind",
    "finding_message",
    "finding_span_text",
    "finding_codes",
    "finding_pack_version",
    "delivered",
    "delivered_as",
)


#: A cell starting with one of these is read as a formula by spreadsheets (OWASP "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A text cell a spreadsheet will not run: one starting like a formula gets a leading `'` (as OWASP
    recommends; the csv module quotes the cell and doubles any quote in it). Numbers are left as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def json_cell(value: Any) -> Any:
    """A list or object (`finding_codes`) as its JSON text in a CSV cell, so a script reads it back as JSON."""
    if isinstance(value, list | dict):
        return orjson.dumps(value).decode()
    return value


def labels_text(rows: list[dict[str, Any]], fmt: str) -> str:
    """An export of label rows (`ReviewService.export_labels`, `store.labels.export_labels`) as JSON or CSV: the CLI's and the app's format."""
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(LABEL_EXPORT_FIELDS), extrasaction="ignore")
        writer.writeheader()
        writer.writerows({k: csv_cell(json_cell(v)) for k, v in row.items()} for row in rows)
        return buf.getvalue()
    return json_inert(orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode()) + "\n"
