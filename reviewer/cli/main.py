"""The `reviewer` command: ingest recordings, print JSON views for scripts, open the review app."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
import orjson

from reviewer.cli.common import (
    TextCheckingGroup,
    db_option,
    db_path_or_default,
    echo,
    emit,
    json_option,
    open_db,
    print_json,
    print_json_as,
    safe,
)
from reviewer.cli.tables import Column, print_table
from reviewer.review.claim_licensing import licensing_fields
from reviewer.review.licensing import APPLIES_TO
from reviewer.service.label_export import labels_text
from reviewer.service.settings import Settings
from reviewer.service.store_ops import (
    IngestReport,
    get_run,
    ingest,
    licensing_runs,
    list_findings,
    list_quarantine,
    list_runs,
    locate,
    resolve_run,
)
from reviewer.service.vocabulary import (
    JUDGEMENTS,
    MISSED_LISTS,
    OUTCOMES,
    NotFound,
    StoreError,
    call_status,
)

_VERDICT_ALIASES = {"withholding-justified": "justified", "withholding-wrong": "wrong"}
VERDICT_CHOICES = JUDGEMENTS + tuple(_VERDICT_ALIASES)


@click.group(cls=TextCheckingGroup, invoke_without_command=True)
@click.version_option(package_name="footprint-reviewer")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Review agentfootprint run recordings.

    With no command, opens the review app on the default database.
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(open_cmd, paths=(), db_path=None, reviewer=None, ask_reviewer=False)


@cli.command("ingest")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=str))
@db_option
@click.option(
    "--workers", type=int, default=None, help="Parser processes (default: one per core for big batches)."
)
@click.option(
    "--endpoint-url",
    default=None,
    metavar="URL",
    help="Object-store endpoint for s3:// and gs:// inputs (default: AWS_ENDPOINT_URL or "
    "STORAGE_EMULATOR_HOST, else the vendor's own).",
)
@json_option
def ingest_cmd(
    paths: tuple[str, ...], db_path: Path | None, workers: int | None, endpoint_url: str | None, as_json: bool
) -> None:
    """Ingest recordings: files, folders, bug-report zips, artifact stores, s3:// and gs:// buckets.

    Exits 0 when everything ingested, 1 when something was quarantined.

    Example: reviewer ingest sample_recordings --db review.db

    Example: reviewer ingest s3://fleet-artifacts/artifacts --db review.db
    """
    db = open_db(db_path)
    try:
        report = run_ingest(
            db,
            list(paths),
            db_path_or_default(db_path),
            workers=workers,
            quiet=as_json,
            endpoint_url=endpoint_url,
        )
    except StoreError as exc:  # disk full, read-only database: one clear line, what was stored is kept
        raise click.ClickException(str(exc)) from exc
    if as_json:
        print_json_as("ingest", report_json(report))
    else:
        _print_summary(report)
    sys.exit(1 if report.quarantined else 0)


def run_ingest(
    db: Any,
    paths: list[str],
    db_path: Path,
    *,
    workers: int | None = None,
    quiet: bool = False,
    endpoint_url: str | None = None,
) -> IngestReport:
    """Ingest with a rich progress bar when stderr is a terminal (bucket URLs stay strings: a Path would
    fold `s3://` into `s3:/`)."""
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    if quiet or not console.is_terminal:
        return ingest(db, paths, db_path=str(db_path), workers=workers, endpoint_url=endpoint_url)
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TextColumn("{task.fields[files]}"),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task("ingesting", total=None, files="")

        def on_progress(done: int, total: int, done_bytes: int, total_bytes: int) -> None:
            bar.update(task, completed=done_bytes, total=total_bytes, files=f"{done}/{total} files")

        return ingest(
            db, paths, db_path=str(db_path), workers=workers, progress=on_progress, endpoint_url=endpoint_url
        )


def report_json(report: IngestReport) -> dict[str, Any]:
    """What `ingest --json` prints for a report (and each `watch --json` batch line carries)."""
    return {
        "seen": report.seen,
        "stored": report.stored,
        "unchanged": report.unchanged,
        "runs": report.runs,
        "merged_runs": report.merged_runs,
        "events": report.events,
        "bytes": report.bytes,
        "seconds": round(report.seconds, 3),
        "quarantined": [{"path": p, "code": c, "reason": r} for p, c, r in report.quarantined],
    }


def _print_summary(report: IngestReport) -> None:
    mb = report.bytes / 1e6
    rate = f", {mb / report.seconds:.1f} MB/s" if report.seconds > 0 and mb else ""
    merged = f", {report.merged_runs} already stored from another file" if report.merged_runs else ""
    echo(
        f"{report.seen} input(s): {report.stored} stored ({report.runs} runs{merged}, {report.events:,} events, "
        f"{mb:.1f} MB{rate}), {report.unchanged} unchanged, {len(report.quarantined)} quarantined "
        f"in {report.seconds:.2f}s"
    )
    for _path, code, reason in report.quarantined:
        echo(f"  quarantined [{code}] {safe(reason)}", err=True)


@cli.command("runs")
@db_option
@json_option
@click.option("--outcome", type=click.Choice(OUTCOMES), default=None, help="Only runs with this outcome.")
@click.option("--has-findings", is_flag=True, help="Only runs with at least one finding.")
@click.option("--kind", default=None, help="Only runs with a finding of this kind.")
@click.option("--agent", default=None, help="Only runs of this agent id.")
@click.option("--search", default=None, help="Full-text search over prompts, answers, results and messages.")
@click.option("--limit", type=int, default=None, help="At most this many runs.")
def runs_cmd(
    db_path: Path | None,
    as_json: bool,
    outcome: str | None,
    has_findings: bool,
    kind: str | None,
    agent: str | None,
    search: str | None,
    limit: int | None,
) -> None:
    """List runs, newest first.

    Example: reviewer runs --json --outcome refused
    """
    db = open_db(db_path)
    rows = list_runs(
        db, outcome=outcome, has_findings=has_findings, kind=kind, agent=agent, search=search, limit=limit
    )
    if as_json:
        print_json_as("runs", rows)
        return
    print_table(
        [
            Column("started (UTC)", min_width=10),
            Column("agent", max_width=40, min_width=8),
            Column("outcome", min_width=9),
            Column("calls", number=True),
            Column("finds", number=True),
            Column("gaps", number=True),
            Column("run", ident=True),
        ],
        (
            (
                (r["started_at"] or "?")[:19].replace("T", " "),
                r["agent_id"] or "?",
                r["outcome"],
                r["tool_calls"],
                r["findings"],
                r["coverage_gaps"],
                r["run_key"],
            )
            for r in rows
        ),
        title=f"{len(rows)} run(s), newest first",
    )


@cli.command("show")
@click.argument("run")
@db_option
@json_option
def show_cmd(run: str, db_path: Path | None, as_json: bool) -> None:
    """Everything about one run (by run id or run key).

    Example: reviewer show run-1796001919298-1 --json
    """
    db = open_db(db_path)
    try:
        data = get_run(db, run)
    except NotFound as exc:
        raise click.ClickException(safe(str(exc))) from exc
    if as_json:
        print_json_as("show", data)
        return
    echo(f"run {safe(data['run_id'])} ({safe(data['agent_id'])}) outcome={data['outcome']}")
    echo(f"received: {safe(data.get('delivery_headline') or 'unknown (run reviewer reextract)')}")
    echo(f"prompt: {safe(data['prompt']) if data['prompt'] is not None else _no_prompt(data)}")
    echo(f"answer: {safe(data['answer']) if data['answer'] is not None else '(no answer recorded)'}")
    for source in data.get("sources") or []:
        echo(f"source: {safe(source)}")
    versions = data.get("versions") or []
    if len(versions) > 1:
        n = next((i for i, v in enumerate(versions, 1) if v["run_key"] == data["run_key"]), len(versions))
        listed = ", ".join(f"{v['run_key']} ({v['labels']} label(s))" for v in versions)
        echo(f"version {n} of {len(versions)} of this run: {listed}")
    if data["tool_calls"]:
        echo()
        print_table(
            [
                Column("call", ident=True),
                Column("tool"),
                Column("status"),
                Column("ms", number=True),
                Column("coverage"),
            ],
            (
                (
                    c["call_id"],
                    c["tool_name"],
                    call_status(c["status"], c["completed"]) + (" (failed)" if c["error"] else ""),
                    c["duration_ms"],
                    coverage_summary(data["coverage"], c["call_id"]),
                )
                for c in data["tool_calls"]
            ),
            title="tool calls",
        )
    if data["findings"]:
        echo()
        print_table(
            [Column("finding", ident=True), Column("kind"), Column("message")],
            ((f["id"], f["kind"], f["message"] or f["span_text"] or "") for f in data["findings"]),
            title="findings",
        )


def _no_prompt(run: dict[str, Any]) -> str:
    """What the run screen says when a run has no prompt."""
    if run.get("starts_mid_run") or run.get("dropped_events"):
        return "(no prompt in this recording: it starts mid-run, after the turn's start was dropped)"
    return "(no prompt recorded)"


def coverage_summary(rows: list[dict[str, Any]], call_id: str) -> str:
    """What a call declared it checked and did not cover, as the run screen's caveats say it."""
    parts: dict[str, list[str]] = {"checked": [], "not covered": []}
    for row in rows:
        if row.get("call_id") != call_id:
            continue
        item = str(row.get("what") or "?") + (f" ({row['why']})" if row.get("why") else "")
        parts["checked" if row.get("list") == "checked" else "not covered"].append(item)
    return (
        "; ".join(f"{name}: {', '.join(items)}" for name, items in parts.items() if items) or "none declared"
    )


@cli.command("findings")
@db_option
@json_option
@click.option(
    "--kind", default=None, help="Only findings of this kind (e.g. negative-claim, dangling-reference)."
)
@click.option("--run", "run", default=None, help="Only findings of this run (id or key).")
@click.option("--unlabelled", is_flag=True, help="Only findings nobody has labelled yet.")
def findings_cmd(
    db_path: Path | None, as_json: bool, kind: str | None, run: str | None, unlabelled: bool
) -> None:
    """List findings, by run and position in the run.

    Example: reviewer findings --json --kind negative-claim --unlabelled
    """
    db = open_db(db_path)
    try:
        rows = list_findings(db, kind=kind, run=run, unlabelled=unlabelled)
    except NotFound as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        runs_read = licensing_runs(db, [f["run_key"] for f in rows if f["kind"] in APPLIES_TO])
        for f in rows:
            f.update(licensing_fields(f, runs_read.get(f["run_key"], {})))
        print_json_as("findings", rows)
        return
    for f in rows:
        echo(f"{f['id']} {f['kind']:22} {safe(f['run_id'])} {safe(f['message'] or '')[:120]}")


@cli.command("quarantine")
@db_option
@json_option
def quarantine_cmd(db_path: Path | None, as_json: bool) -> None:
    """Inputs that could not be ingested, with the reason.

    Example: reviewer quarantine --json
    """
    db = open_db(db_path)
    rows = list_quarantine(db)
    if as_json:
        print_json_as("quarantine", rows)
        return
    print_table(
        [Column("code"), Column("times", number=True), Column("last seen"), Column("reason")],
        ((q["code"], q["times"], q["last_seen"], q["reason"]) for q in rows),
        title=f"{len(rows)} input(s) not ingested",
    )


reviewer_option = click.option(
    "--reviewer", default=None, help="Reviewer name (default: $REVIEWER_NAME, else the system user)."
)


@cli.command("label")
@click.argument("finding_id", required=False)
@click.option("--verdict", type=click.Choice(VERDICT_CHOICES), default=None, help="The judgement.")
@click.option(
    "--missed", "missed_run", default=None, metavar="RUN_ID", help="Label a missed negative in this run."
)
@click.option("--text", default=None, help="With --missed: the words of the answer that carry the negative.")
@click.option("--list", "list_name", type=click.Choice(MISSED_LISTS), default="none", help="With --missed.")
@click.option("--note", default=None, help="An optional note kept with the label.")
@click.option("--undo", is_flag=True, help="Undo your latest label (on FINDING_ID if given) by appending.")
@reviewer_option
@db_option
@json_option
def label_cmd(
    finding_id: str | None,
    verdict: str | None,
    missed_run: str | None,
    text: str | None,
    list_name: str,
    note: str | None,
    undo: bool,
    reviewer: str | None,
    db_path: Path | None,
    as_json: bool,
) -> None:
    """Label a finding, a withheld answer or a missed negative (append-only).

    Examples: reviewer label f-1a2b --verdict fp --note "bounded search"
              reviewer label --missed run-123 --text "came up empty" --list none
    """
    from reviewer.service.settings import resolve_reviewer
    from reviewer.service.store_ops import labels

    db = open_db(db_path)
    who = resolve_reviewer(reviewer)
    try:
        if undo:
            row = labels.undo_last(db, who, finding_id)
            if row is None:
                raise click.ClickException(f"nothing to undo for {who}")
        elif missed_run:
            if not text:
                raise click.UsageError("--missed needs --text with the words that carry the negative")
            key = resolve_run(db, missed_run)
            start, end = labels.find_text(db, key, text)
            row = labels.label_missed(db, key, start, end, list_name, who, note)
        else:
            if not finding_id or not verdict:
                raise click.UsageError("give FINDING_ID and --verdict (or --missed RUN_ID --text ...)")
            row = labels.label_finding(db, finding_id, _VERDICT_ALIASES.get(verdict, verdict), who, note)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        print_json_as("label", row)
    else:
        echo(f"{row['verdict']} on {row['target_id']} by {safe(row['reviewer'])}")


@cli.command("labels")
@db_option
@click.option("--json", "as_json", is_flag=True, help="Every label as a JSON array (the default).")
@click.option("--csv", "as_csv", is_flag=True, help="Every label as CSV.")
@click.option(
    "--import",
    "import_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Load labels written by `reviewer labels --json` (labels already present are skipped).",
)
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None, help="Write to this file.")
@click.option("--force", is_flag=True, help="Overwrite --output if it exists.")
def labels_cmd(
    db_path: Path | None,
    as_json: bool,
    as_csv: bool,
    import_file: Path | None,
    output: Path | None,
    force: bool,
) -> None:
    """Export every label with its finding, run, reviewer and time; or import an export.

    Example: reviewer labels --json -o labels.json
    """
    from reviewer.service.store_ops import labels

    db = open_db(db_path)
    if import_file is not None:
        try:
            rows = orjson.loads(import_file.read_bytes())
        except orjson.JSONDecodeError as exc:
            raise click.ClickException(f"{import_file}: not JSON ({exc})") from exc
        if not isinstance(rows, list):
            raise click.ClickException(f"{import_file}: expected a JSON array of labels")
        try:
            done = labels.import_label_rows(db, rows)
        except StoreError as exc:
            raise click.ClickException(f"{import_file}: {exc}") from exc
        echo(f"{done.added} label(s) imported, {done.skipped} already present")
        if done.unmatched:
            echo(
                f"{done.unmatched} label(s) name a finding (or answer words) not in this database: kept apart, "
                "they count in no statistic or suggestion until that recording is ingested",
                err=True,
            )
        return
    rows = print_ready_labels(labels.export_labels(db))
    text = labels_text(rows, "csv" if as_csv else "json")
    emit(text, output, force)


@cli.command("stats")
@db_option
@json_option
def stats_cmd(db_path: Path | None, as_json: bool) -> None:
    """Counts per finding kind and label state, and agreement between reviewers (Cohen's kappa).

    Example: reviewer stats --json
    """
    from reviewer.review.stats import label_stats
    from reviewer.service.store_ops import labels

    db = open_db(db_path)
    stats = label_stats(labels.label_states(db))
    if as_json:
        print_json_as("stats", stats)
        return
    states = sorted({k for counts in stats["kinds"].values() for k in counts} - {"total"})
    print_table(
        [Column("kind"), Column("total", number=True), *(Column(s, number=True) for s in states)],
        [
            *(
                (kind, counts.get("total", 0), *(counts.get(s, 0) for s in states))
                for kind, counts in stats["kinds"].items()
            ),
            ("all", stats["totals"].get("total", 0), *(stats["totals"].get(s, 0) for s in states)),
        ],
        title="findings by kind and label state",
    )
    if stats["agreement"]:
        echo()
        print_table(
            [
                Column("reviewer"),
                Column("reviewer"),
                Column("shared", number=True),
                Column("kappa", number=True),
            ],
            (
                (
                    pair["reviewers"][0],
                    pair["reviewers"][1],
                    pair["shared"],
                    "n/a" if pair["kappa"] is None else f"{pair['kappa']:.3f}",
                )
                for pair in stats["agreement"]
            ),
            title="agreement between reviewers (Cohen's kappa)",
        )


def print_ready_labels(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Label export rows serialized through their model (`reviewer schema labels`)."""
    from reviewer.cli.schemas import serialized

    return list(serialized("labels", rows))


@cli.command("schema")
@click.argument("name", required=False)
def schema_cmd(name: str | None) -> None:
    """The JSON Schema of a --json output (NAME), or of every one as an object keyed by name.

    The schemas are generated from the models the commands serialize their JSON through.

    Example: reviewer schema runs
    """
    from reviewer.cli.schemas import SCHEMAS, json_schema

    if name is None:
        print_json({n: json_schema(n) for n in SCHEMAS})
        return
    if name not in SCHEMAS:
        raise click.UsageError(f"no output named {name!r}; known: {', '.join(SCHEMAS)}")
    print_json(json_schema(name))


@cli.command("reextract")
@db_option
@click.option("--all", "everything", is_flag=True, help="Rebuild every recording, not only outdated ones.")
def reextract_cmd(db_path: Path | None, everything: bool) -> None:
    """Rebuild extracted rows from the stored originals (after an upgrade); labels are kept.

    Example: reviewer reextract --all
    """
    from reviewer.service.store_ops import reextract

    db = open_db(db_path)
    done, failures = reextract(db, everything=everything)
    echo(f"{done} recording(s) re-extracted, {len(failures)} failed")
    for source, reason in failures:
        echo(f"  {safe(source)}: {safe(reason)}", err=True)
    sys.exit(1 if failures else 0)


@cli.command("serve")
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (loopback by default).")
@click.option("--port", type=int, default=8000, show_default=True, help="Port to listen on.")
@click.option(
    "--reviewer",
    default=None,
    help="Reviewer name used by every tab (default: each tab must say who is reviewing).",
)
@click.option(
    "--token",
    envvar="REVIEWER_SERVE_TOKEN",
    default=None,
    help="The secret the page and socket require (default: a new one each start, printed in the URL).",
)
@click.option(
    "--no-token", is_flag=True, help="Require no token (prints a warning: anyone who can connect gets in)."
)
@click.option(
    "--max-sessions",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    help="App processes (browser tabs) at once; more get a 'sessions in use' page.",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    help="Another name the page may be reached by (a reverse proxy's); repeatable.",
)
def serve_cmd(
    db_path: Path | None,
    host: str,
    port: int,
    reviewer: str | None,
    token: str | None,
    no_token: bool,
    max_sessions: int,
    allow_hosts: tuple[str, ...],
) -> None:
    """Serve the app in a browser (one app process per tab, one shared WAL database), behind a secret token.

    Example: reviewer serve --db review.db --port 8000
    """
    from reviewer.serve import serve

    if no_token and token:
        raise click.UsageError("--token and --no-token contradict each other")
    target = locate(db_path_or_default(db_path))
    open_db(Path(target)).close()  # create and migrate once, before any tab starts
    serve(
        target,
        host=host,
        port=port,
        reviewer=reviewer,
        token=token,
        no_token=no_token,
        max_sessions=max_sessions,
        allow_hosts=allow_hosts,
    )


@cli.command("open")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@db_option
@click.option(
    "--reviewer", default=None, help="Reviewer name (default: $REVIEWER_NAME, else the system user)."
)
@click.option("--ask-reviewer", is_flag=True, help="Ask who is reviewing when the app starts.")
@click.option("--theme", default=None, help="Textual theme name (default: $REVIEWER_THEME, else Textual's).")
def open_cmd(
    paths: tuple[str, ...],
    db_path: Path | None,
    reviewer: str | None = None,
    ask_reviewer: bool = False,
    theme: str | None = None,
) -> None:
    """Open the review app (ingesting PATHS first, with progress).

    Example: reviewer open sample_recordings
    """
    db = open_db(db_path)
    if paths:
        report = run_ingest(db, list(paths), db_path_or_default(db_path))
        _print_summary(report)
    db.close()
    settings = Settings.resolve(db_path=db_path, reviewer=reviewer, theme=theme, served_tab=ask_reviewer)
    _launch_app(settings, ask_reviewer)


def _launch_app(settings: Settings, ask_reviewer: bool = False) -> None:
    from reviewer.ui.app import make_app

    make_app(settings, ask_reviewer=ask_reviewer).run()


from reviewer.cli.pack_commands import pack  # noqa: E402  (the `reviewer pack ...` group)

cli.add_command(pack)

from reviewer.cli.watch import watch_cmd  # noqa: E402  (`reviewer watch ...`)

cli.add_command(watch_cmd)


def main() -> None:
    cli()


if __name__ == "__main__":  # `python -m reviewer.cli.main` runs the CLI as `reviewer` does
    main()
