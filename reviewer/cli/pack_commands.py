"""`reviewer pack ...`: curate phrase packs from labels, replay them, measure them, export them.

The click group only: the operations it runs are in `reviewer.service.pack_ops`, shared with the packs screen.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from reviewer.cli.common import db_option, echo, emit, json_option, open_db, print_json_as
from reviewer.cli.tables import Column, print_table
from reviewer.review.inert import inert
from reviewer.review.pack_replay import (
    DEFAULT_HOLDOUT,
    report_lines,
)
from reviewer.review.phrase_pack import (
    PackFormatError,
    PackLimitError,
)
from reviewer.review.production import production_line
from reviewer.review.replay import DEFAULT_SEED
from reviewer.review.ts_export import ConstNameError, check_const_name
from reviewer.service.pack_ops import (
    EMPTY_REF,
    change_pack,
    create_pack,
    export_text,
    import_pack,
    pack_diff,
    production,
    record_deployed,
    run_replay,
    suggestions,
)
from reviewer.service.store_ops import packs as store_packs
from reviewer.service.vocabulary import StoredPack, StoreError

# ---------------------------------------------------------------------------------------------------------------
# The click group
# ---------------------------------------------------------------------------------------------------------------

reviewer_option = click.option(
    "--reviewer", default=None, help="Reviewer name (default: $REVIEWER_NAME, else the system user)."
)
holdout_option = click.option(
    "--holdout",
    "holdout_share",
    type=click.FloatRange(0.0, 1.0),
    default=DEFAULT_HOLDOUT,
    show_default=True,
    help="Share of labelled answers held out (never seen by suggestions; reported separately).",
)
seed_option = click.option(
    "--seed", default=DEFAULT_SEED, show_default=True, help="Seed of the stable holdout split."
)


def _who(reviewer: str | None) -> str:
    from reviewer.service.settings import resolve_reviewer

    return resolve_reviewer(reviewer)


def _guard(fn: Callable[[], Any]) -> Any:
    """Run an operation; every refusal (a broken limit, a bad file, an unknown pack) exits 1 with its message."""
    try:
        return fn()
    except (PackLimitError, PackFormatError, StoreError, ValueError) as exc:
        raise click.ClickException(inert(str(exc))) from exc  # it may quote what was typed or stored


def _show_saved(stored: StoredPack, as_json: bool) -> None:
    if as_json:
        print_json_as("pack-saved", stored.as_dict())
        return
    parent = f", parent {stored.parent_hash[:12]}" if stored.parent_hash else ""
    echo(
        f"saved {inert(stored.ref)} (content id {stored.content_hash[:12]}{parent}): "
        f"{len(stored.none)} none, {len(stored.complete)} complete"
    )


@click.group("pack")
def pack() -> None:
    """Phrase packs: the literal extension of `.negativeClaims({ prose: true, phrases })`.

    At most 32 phrases in total, each at most 128 UTF-16 code units, literal words only; a pack that
    breaks a limit is refused with the limit named (exit 1). Packs are versioned: every change saves a
    new version whose parent is the one before.
    """


@pack.command("new")
@click.argument("name")
@click.option("--none", "none", multiple=True, help="A phrase for the `none` list (repeatable).")
@click.option("--complete", "complete", multiple=True, help="A phrase for the `complete` list (repeatable).")
@click.option("--from", "from_ref", default=None, help="Start from another pack's phrases (its parent).")
@click.option("--note", default=None, help="A note kept with the version.")
@reviewer_option
@db_option
@json_option
def new_cmd(
    name: str,
    none: tuple[str, ...],
    complete: tuple[str, ...],
    from_ref: str | None,
    note: str | None,
    reviewer: str | None,
    db_path: Path | None,
    as_json: bool,
) -> None:
    """Create pack NAME (version 1).

    Example: reviewer pack new ops --none "came up empty" --complete "that is the full list"
    """
    db = open_db(db_path)
    stored = _guard(
        lambda: create_pack(db, name, none, complete, from_ref=from_ref, who=_who(reviewer), note=note)
    )
    _show_saved(stored, as_json)


@pack.command("add")
@click.argument("name")
@click.argument("phrases", nargs=-1, required=True)
@click.option(
    "--list", "list_name", type=click.Choice(["none", "complete"]), default="none", show_default=True
)
@click.option("--note", default=None, help="A note kept with the version.")
@reviewer_option
@db_option
@json_option
def add_cmd(
    name: str,
    phrases: tuple[str, ...],
    list_name: str,
    note: str | None,
    reviewer: str | None,
    db_path: Path | None,
    as_json: bool,
) -> None:
    """Add PHRASES to pack NAME (a new version).

    Example: reviewer pack add ops "nothing turned up" --list none
    """
    db = open_db(db_path)
    stored = _guard(
        lambda: change_pack(db, name, add=phrases, list_name=list_name, who=_who(reviewer), note=note)
    )
    _show_saved(stored, as_json)


@pack.command("remove")
@click.argument("name")
@click.argument("phrases", nargs=-1, required=True)
@click.option("--note", default=None, help="A note kept with the version.")
@reviewer_option
@db_option
@json_option
def remove_cmd(
    name: str,
    phrases: tuple[str, ...],
    note: str | None,
    reviewer: str | None,
    db_path: Path | None,
    as_json: bool,
) -> None:
    """Remove PHRASES (from either list) of pack NAME (a new version).

    Example: reviewer pack remove ops "came up empty"
    """
    db = open_db(db_path)
    stored = _guard(lambda: change_pack(db, name, remove=phrases, who=_who(reviewer), note=note))
    _show_saved(stored, as_json)


@pack.command("list")
@db_option
@json_option
def list_cmd(db_path: Path | None, as_json: bool) -> None:
    """Every pack with its latest version, and the phrasePackVersion strings stored findings carry.

    Example: reviewer pack list --json
    """
    db = open_db(db_path)
    rows = store_packs.list_packs(db)
    versions = store_packs.version_strings(db)
    for r in rows:
        r["deployed_as"] = [
            v["version"]
            for v in versions
            if v["deployed_from"] and str(v["deployed_from"]["pack"]).partition("@")[0] == r["name"]
        ]
    if as_json:
        print_json_as("pack-list", rows)
        return
    if not rows:
        echo("no phrase packs yet (reviewer pack new NAME)")
    else:
        print_table(
            [
                Column("pack"),
                Column("content id", ident=True),
                Column("phrases", number=True),
                Column("saved"),
                Column("by"),
            ],
            (
                (r["ref"], r["content_hash"][:12], r["phrases"], r["updated_at"], r["updated_by"])
                for r in rows
            ),
            title="phrase packs (latest versions)",
        )
    _echo_versions(versions)


def _echo_versions(versions: list[dict[str, Any]]) -> None:
    if not versions:
        click.echo("no stored finding carries a phrasePackVersion string")
        return
    echo()
    print_table(
        [
            Column("phrasePackVersion"),
            Column("findings", number=True),
            Column("labelled", number=True),
            Column("labels", number=True),
            Column("pack"),
        ],
        (
            (
                v["version"],
                v["findings"],
                v["labelled_findings"],
                v["labels"],
                f"deployed from {v['deployed_from']['pack']}"
                if v["deployed_from"]
                else "no stored pack linked",
            )
            for v in versions
        ),
        title="phrasePackVersion strings in stored findings",
    )


@pack.command("versions")
@db_option
@json_option
def versions_cmd(db_path: Path | None, as_json: bool) -> None:
    """The phrasePackVersion strings stored findings carry: findings, labels, and the pack deployed as it.

    Example: reviewer pack versions --json
    """
    versions = store_packs.version_strings(open_db(db_path))
    if as_json:
        print_json_as("pack-versions", versions)
        return
    _echo_versions(versions)


@pack.command("deployed")
@click.argument("ref")
@click.argument("version")
@click.option(
    "--replaces",
    default=None,
    help="The version string it replaced (default: the newest other one linked to a pack of this name).",
)
@click.option("--note", default=None, help="Why, where, when (kept with the link).")
@reviewer_option
@db_option
@json_option
def deployed_cmd(
    ref: str,
    version: str,
    replaces: str | None,
    note: str | None,
    reviewer: str | None,
    db_path: Path | None,
    as_json: bool,
) -> None:
    """Record that findings carrying phrasePackVersion VERSION come from stored pack REF.

    Example: reviewer pack deployed ops@3 'en-negatives@3+a1b2c3'
    """
    db = open_db(db_path)
    row = _guard(lambda: record_deployed(db, ref, version, replaces=replaces, who=_who(reviewer), note=note))
    if as_json:
        print_json_as("pack-deployed", row)
        return
    old = f" (replacing {inert(row['replaces'])})" if row["replaces"] else ""
    click.echo(f"{inert(row['pack_version'])} deployed from {inert(row['pack'])}{old}")


@pack.command("production")
@click.argument("version", required=False)
@db_option
@json_option
def production_cmd(version: str | None, db_path: Path | None, as_json: bool) -> None:
    """Precision measured on labelled findings of each deployed version string, beside the replay's
    prediction for its pack, and the same for the version it replaced.

    Example: reviewer pack production --json
    """
    rows = _guard(lambda: production(open_db(db_path), version))
    if as_json:
        print_json_as("pack-production", rows)
        return
    if not rows:
        click.echo("no version string is linked to a stored pack yet (reviewer pack deployed REF VERSION)")
    for row in rows:
        click.echo(inert(production_line(row)))


@pack.command("show")
@click.argument("ref")
@db_option
@json_option
def show_cmd(ref: str, db_path: Path | None, as_json: bool) -> None:
    """One pack version (NAME, NAME@N, NAME@ID or ID, an ID being a content-id prefix) with its history.

    Example: reviewer pack show ops@2
    """
    db = open_db(db_path)
    stored: StoredPack = _guard(lambda: store_packs.find_pack(db, ref))
    versions = store_packs.pack_versions(db, stored.name)
    if as_json:
        out = stored.as_dict()
        out["versions"] = [
            {k: v for k, v in p.as_dict().items() if k not in ("none", "complete")}
            | {"phrases": len(p.none) + len(p.complete)}
            for p in versions
        ]
        out["production"] = [r for r in production(db) if r["pack"] == stored.ref]
        print_json_as("pack-show", out)
        return
    echo(f"{inert(stored.ref)}  content id {stored.content_hash} (ours, not the framework's version hash)")
    echo(
        f"parent {stored.parent_hash or '-'}  saved {stored.created_at} by {inert(stored.created_by or '?')}"
    )
    if stored.note:
        echo(f"note: {inert(stored.note)}")
    for list_name, phrases in (("none", stored.none), ("complete", stored.complete)):
        echo(f"{list_name} ({len(phrases)}):")
        for p in phrases:
            echo(f"  {inert(p)}")
    echo(f"versions: {', '.join(f'{p.version}:{p.content_hash[:8]}' for p in versions)}")


@pack.command("diff")
@click.argument("a")
@click.argument("b", required=False)
@db_option
@json_option
def diff_cmd(a: str, b: str | None, db_path: Path | None, as_json: bool) -> None:
    """Changes from pack A to pack B (with only A: from A's parent or previous version to A).

    Example: reviewer pack diff ops@1 ops@3
    """
    db = open_db(db_path)
    data = _guard(lambda: pack_diff(db, a, b))
    if as_json:
        print_json_as("pack-diff", data)
        return
    echo(f"{inert(data['from']['ref'] or EMPTY_REF)} -> {inert(data['to']['ref'])}")
    if data["unchanged"]:
        echo("  no change")
    for sign, part in (("+", "added"), ("-", "removed")):
        for list_name in ("none", "complete"):
            for p in data[part][list_name]:
                echo(f"  {sign} {list_name}: {inert(p)}")


def _progress_printer(as_json: bool) -> tuple[Callable[[int, int], None], Callable[[], None]]:
    """A progress callback: a rich bar on a terminal, else `replayed N/M answers` lines on stderr."""
    from rich.console import Console

    console = Console(stderr=True)
    if console.is_terminal:
        from rich.progress import Progress

        bar = Progress(console=console, transient=True)
        task = bar.add_task("replaying", total=None)
        bar.start()

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return update, bar.stop

    def line(done: int, total: int) -> None:
        if not as_json:
            echo(f"replayed {done:,}/{total:,} answers", err=True)

    return line, lambda: None


@pack.command("replay")
@click.argument("ref")
@click.option(
    "--against", default=None, help="Baseline pack (default: the parent, else the previous version)."
)
@click.option("--against-empty", is_flag=True, help="Measure against the empty pack.")
@holdout_option
@seed_option
@click.option(
    "--examples", type=click.IntRange(0), default=20, show_default=True, help="Example clauses kept."
)
@db_option
@json_option
def replay_cmd(
    ref: str,
    against: str | None,
    against_empty: bool,
    holdout_share: float,
    seed: str,
    examples: int,
    db_path: Path | None,
    as_json: bool,
) -> None:
    """What-if: replay pack REF over every stored answer next to its baseline, measured against the labels.

    Every replay is recorded, so the output counts the variants tried against the same labels.

    Example: reviewer pack replay ops --json
    """
    if against and against_empty:
        raise click.UsageError("give --against or --against-empty, not both")
    db = open_db(db_path)
    update, stop = _progress_printer(as_json)
    try:
        data = _guard(
            lambda: run_replay(
                db,
                ref,
                against=against,
                against_empty=against_empty,
                holdout_share=holdout_share,
                seed=seed,
                examples=examples,
                progress=update,
                progress_every=10_000,
            )
        )
    finally:
        stop()
    if as_json:
        print_json_as("pack-replay", data)
        return
    for line in report_lines(data, examples=min(examples, 5)):
        echo(inert(line))


@pack.command("suggest")
@click.argument("ref", required=False)
@holdout_option
@seed_option
@click.option("--limit", type=click.IntRange(1), default=30, show_default=True)
@db_option
@json_option
def suggest_cmd(
    ref: str | None, holdout_share: float, seed: str, limit: int, db_path: Path | None, as_json: bool
) -> None:
    """Candidate phrases from missed-negative labels (training part only), with what each would cover
    and the already-flagged and false-positive clauses it would also touch.

    Example: reviewer pack suggest ops --json
    """
    db = open_db(db_path)
    data = _guard(lambda: suggestions(db, ref, holdout_share=holdout_share, seed=seed, limit=limit))
    if as_json:
        print_json_as("pack-suggest", data)
        return
    used = data["used"]
    echo(
        f"from {used['missed_labels_used']} missed-negative label(s) ({used['missed_labels_held_out']} held out, "
        f"never seen); costs against {used['flagged_clauses']} flagged and {used['fp_clauses']} false-positive clause(s)"
    )
    if not data["suggestions"]:
        echo("no suggestions (label missed negatives with `reviewer label --missed`)")
    for s in data["suggestions"]:
        echo(
            f"  {s['list']:8} {inert(s['phrase'])!s:40} covers {s['covers']}, touches {s['touches_flagged']} "
            f"flagged / {s['touches_fp']} fp{'' if s['from_label'] else ' (shared sub-phrase)'}"
        )


@pack.command("export")
@click.argument("ref")
@click.option("--ts", is_flag=True, help="A TypeScript snippet (`satisfies NegativeClaimsOptions`).")
@click.option(
    "--const", "const_name", default="phrases", show_default=True, help="With --ts: the const name."
)
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None, help="Write to this file.")
@click.option("--force", is_flag=True, help="Overwrite --output if it exists.")
@db_option
def export_cmd(
    ref: str, ts: bool, const_name: str, output: Path | None, force: bool, db_path: Path | None
) -> None:
    """The pack as the JSON `.negativeClaims(...)` accepts, or (--ts) as a TypeScript snippet.

    Example: reviewer pack export ops --ts -o phrases.ts
    """
    if ts:
        try:
            check_const_name(const_name)
        except ConstNameError as exc:
            raise click.UsageError(f"--const: {exc}") from None
    db = open_db(db_path)
    stored: StoredPack = _guard(lambda: store_packs.find_pack(db, ref))
    emit(export_text(stored, ts=ts, const_name=const_name), output, force)


@pack.command("import")
@click.argument("source")
@click.option("--name", required=True, help="Pack to save into (a new pack, or a new version of it).")
@click.option("--note", default=None, help="A note kept with the version.")
@reviewer_option
@db_option
@json_option
def import_cmd(
    source: str, name: str, note: str | None, reviewer: str | None, db_path: Path | None, as_json: bool
) -> None:
    """Import SOURCE: a file holding the JSON object (or our TypeScript snippet), `-` for stdin, or the
    JSON itself, e.g. '{"prose": true, "phrases": {"none": ["came up empty"], "complete": []}}'.

    Example: reviewer pack import phrases.json --name ops
    """
    if source == "-":
        text = sys.stdin.read()
    elif source.lstrip().startswith("{"):
        text = source
    else:
        path = Path(source)
        if not path.is_file():
            raise click.ClickException(
                f"{source}: no such file (give a file, '-', or the JSON object itself)"
            )
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise click.ClickException(f"{source}: cannot read it as UTF-8 text ({exc})") from exc
    db = open_db(db_path)
    stored = _guard(lambda: import_pack(db, name, text, who=_who(reviewer), note=note))
    _show_saved(stored, as_json)
