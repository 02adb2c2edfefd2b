"""What every `reviewer` command shares: the --db and --json options, opening the database, printing
JSON, writing exports, and making recorded text inert for a terminal."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
import orjson

from reviewer.service.store_ops import check_supported, open_database
from reviewer.service.vocabulary import StoreError, UnsupportedByBackend

db_option = click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Database file (default: $REVIEWER_DB or ./reviewer.db).",
)
json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print JSON (a stable interface for scripts)."
)


class NotSupportedHere(click.ClickException):
    """A command the database's backend does not run yet: one line, exit 2."""

    exit_code = 2


def db_path_or_default(db_path: Path | None) -> Path:
    """--db, else $REVIEWER_DB, else ./reviewer.db (the `Settings` rule); a command the database's backend
    does not run yet stops here (exit 2), before anything is opened."""
    from reviewer.service.settings import resolve_db_path

    target = resolve_db_path(db_path)
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        while ctx.parent is not None and ctx.parent.parent is not None:
            ctx = ctx.parent  # up to the top-level command (`pack` for `pack list`)
        command = ctx.info_name if ctx.parent is not None and ctx.info_name else "open"
        try:
            check_supported(target, command)
        except UnsupportedByBackend as exc:
            raise NotSupportedHere(str(exc)) from exc
    return target


def open_db(db_path: Path | None) -> Any:
    """Open (and migrate) the database, turning store refusals into a clean CLI error (exit 1)."""
    try:
        return open_database(db_path_or_default(db_path))
    except StoreError as exc:
        raise click.ClickException(str(exc)) from exc


def print_json(value: Any) -> None:
    """`value` as JSON on stdout: exact data, with no raw control or invisible character for a terminal."""
    from reviewer.review.inert import json_inert

    try:
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:  # an integer past 64 bits, kept exact as recorded: the standard library writes it
        text = json.dumps(value, indent=2, ensure_ascii=False)
    sys.stdout.write(json_inert(text) + "\n")


def print_json_as(name: str, value: Any) -> None:
    """Print `value` as the JSON of output `name`, serialized through its model (`reviewer schema NAME`)."""
    from reviewer.cli.schemas import serialized

    print_json(serialized(name, value))


def emit(text: str, output: Path | None, force: bool) -> None:
    """Write to stdout, or to `output` (never overwriting without --force)."""
    if output is None:
        sys.stdout.write(text)
        return
    from reviewer.cli.exports import ExportError, write_export

    try:
        write_export(output, text, force=force)
    except ExportError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"wrote {output}", err=True)


def safe(text: Any) -> str:
    """Recorded text for a terminal: control characters and escape sequences shown inert."""
    from reviewer.review.inert import inert

    return inert(str(text))


def undecodable(text: str) -> bool:
    """Whether `text` came from bytes that are not UTF-8 (Python keeps them as lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _shown(text: str) -> str:
    return repr(text.encode("utf-8", "surrogateescape"))[1:]


class TextCheckingGroup(click.Group):
    """Arguments and $REVIEWER_NAME must be UTF-8 text: anything else is a one-line error, not a traceback.

    An argument naming a path that exists is left alone (file names on Linux are bytes, and are read as such).
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        import os

        for n, arg in enumerate(args, start=1):
            if undecodable(arg) and not os.path.lexists(arg):
                raise click.UsageError(
                    f"argument {n} is not valid UTF-8 text ({_shown(arg)}); give it as UTF-8"
                )
        name = os.environ.get("REVIEWER_NAME")
        if name is not None and undecodable(name):
            raise click.UsageError(
                f"$REVIEWER_NAME is not valid UTF-8 text ({_shown(name)}); set it as UTF-8"
            )
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        """An error message quotes what it refused (an imported row's uid, a typed id): it reaches the terminal
        through the same inert-text path as every other line."""
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:
            exc.message = safe(exc.message)
            raise


def echo(message: Any = "", *, err: bool = False, nl: bool = True) -> None:
    """Every plain line the CLI prints goes through here: recorded text in it is shown inert, whichever field
    it came from (the one inert-text path; the program's own text has no control characters to change)."""
    click.echo(safe(message), err=err, nl=nl)
