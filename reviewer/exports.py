"""Writing exports to files: never overwrite without being told to, never write anywhere but the path given."""

from __future__ import annotations

import csv
import io
import os
import tempfile
from pathlib import Path
from typing import Any

import orjson

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


class ExportError(Exception):
    """The export was not written; the message says why."""


def write_export(path: Path, text: str, *, force: bool = False) -> Path:
    """Write `text` to exactly `path`, atomically; refuse to replace an existing file unless `force`."""
    target = Path(path)
    if target.is_dir():
        raise ExportError(f"{target}: is a folder; give a file name")
    if target.is_symlink():
        raise ExportError(f"{target}: is a symbolic link; refusing to write through it")
    if target.exists() and not force:
        raise ExportError(f"{target}: already exists (use --force to overwrite)")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise ExportError(f"{parent}: no such folder")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        if not force and target.exists():
            raise ExportError(f"{target}: appeared while writing (use --force to overwrite)")
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return target


def labels_text(rows: list[dict[str, Any]], fmt: str) -> str:
    """An export of label rows (store.labels.export_labels) as JSON or CSV: the CLI's and the app's format."""
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(LABEL_EXPORT_FIELDS), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
        return buf.getvalue()
    return orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode() + "\n"
