"""The CLI's plain tables: a rich table that fits the terminal's width when stdout is a terminal, plain TSV
(a header line, then one tab-separated line per row) when it is piped or redirected.

Every cell is shown inert (`reviewer.review.inert`) and handed to rich as `Text`, never as markup; a TSV cell
has no tab or newline left in it, so each row stays one line.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from reviewer.review.inert import inert


@dataclass(frozen=True)
class Column:
    """A table column. `ident`: an identifier (a run key, a finding id) folded whole, never cut with …;
    `number`: right-aligned."""

    name: str
    ident: bool = False
    number: bool = False
    max_width: int | None = None
    min_width: int | None = None


def console() -> Console:
    """The console plain output goes to: stdout, its width the terminal's (or $COLUMNS), no markup read."""
    return Console(file=sys.stdout, highlight=False, markup=False, emoji=False, soft_wrap=False)


def is_terminal() -> bool:
    return console().is_terminal


def cell_text(value: Any) -> str:
    """A cell's text, inert and on one line: None is empty, a flag yes/no, a list its items comma-separated."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(cell_text(v) for v in value)
    return inert(str(value), keep_newlines=False).replace("\t", " ")


def print_table(
    columns: Sequence[Column | str], rows: Iterable[Sequence[Any]], *, title: str | None = None
) -> None:
    """`rows` under `columns`: a rich table on a terminal (the title above it), TSV otherwise (no title)."""
    cols = [c if isinstance(c, Column) else Column(c) for c in columns]
    out = console()
    if not out.is_terminal:
        lines = ["\t".join(c.name for c in cols)]
        lines += ["\t".join(cell_text(v) for v in row) for row in rows]
        sys.stdout.write("\n".join(lines) + "\n")
        return
    table = Table(
        box=box.SIMPLE_HEAD,
        title=title,
        title_justify="left",
        padding=0,
        pad_edge=False,
        show_edge=False,
        expand=False,
    )
    for c in cols:
        justify: Literal["left", "right"] = "right" if c.number else "left"
        table.add_column(
            c.name,
            justify=justify,
            overflow="fold",
            no_wrap=c.ident or c.number,
            max_width=c.max_width,
            min_width=c.min_width,
        )
    for row in rows:
        table.add_row(*(Text(cell_text(v)) for v in row))
    out.print(table)


def print_pairs(pairs: Iterable[tuple[str, Any]], *, title: str | None = None) -> None:
    """Name/value lines as a two-column table (TSV `name<TAB>value` when piped)."""
    print_table([Column("field"), Column("value")], [(k, v) for k, v in pairs], title=title)
