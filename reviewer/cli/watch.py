"""`reviewer watch`: ingest new recordings as they appear in a folder or a bucket, until stopped."""

from __future__ import annotations

import signal
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

import click
import orjson

from reviewer.cli.common import db_option, db_path_or_default, echo, json_option, open_db, safe
from reviewer.service.store_ops import (
    IngestReport,
    WatchTotals,
    is_bucket_url,
    watch_bucket,
    watch_folder,
)
from reviewer.service.vocabulary import StoreError


def _line(value: dict[str, Any]) -> None:
    """One JSON object per line (a stream a script reads line by line), through the same inert-JSON path as
    every other `--json` output (`reviewer.review.inert.json_inert`)."""
    from reviewer.review.inert import json_inert

    click.echo(json_inert(orjson.dumps(value).decode()))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@click.command("watch")
@click.argument("source")
@db_option
@click.option(
    "--interval",
    type=click.FloatRange(min=0.1),
    default=10.0,
    show_default=True,
    help="Seconds between two listings of a bucket.",
)
@click.option(
    "--settle",
    type=click.FloatRange(min=0.0),
    default=1.0,
    show_default=True,
    help="Seconds a changed file must keep its size and time before it is read (one still being written "
    "waits).",
)
@click.option("--once", is_flag=True, help="Read what is there now (one sweep or listing), then stop.")
@click.option(
    "--endpoint-url",
    default=None,
    metavar="URL",
    help="Object-store endpoint for s3:// and gs:// (default: AWS_ENDPOINT_URL or STORAGE_EMULATOR_HOST).",
)
@json_option
def watch_cmd(
    source: str,
    db_path: Path | None,
    interval: float,
    settle: float,
    once: bool,
    endpoint_url: str | None,
    as_json: bool,
) -> None:
    """Ingest new recordings as they appear: a folder (fileArtifacts too) through file events, an s3:// or
    gs:// bucket by listing it every --interval seconds, newest first. One line per batch; Ctrl-C or
    SIGTERM stops it with a summary (exit 0).

    Example: reviewer watch ./artifacts --db review.db

    Example: reviewer watch s3://fleet-artifacts/artifacts --interval 30 --json
    """
    from reviewer.cli.main import report_json

    bucket = is_bucket_url(source)
    if not bucket and not Path(source).is_dir():
        raise click.BadParameter(f"{source}: not a folder or an s3:// / gs:// URL", param_hint="SOURCE")
    db = open_db(db_path)
    target = str(db_path_or_default(db_path))
    stop = threading.Event()
    batches = 0

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stop.set()

    previous: dict[signal.Signals, Any] = {}
    if threading.current_thread() is threading.main_thread():  # only there can a handler be set
        previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}

    def on_batch(report: IngestReport) -> None:
        nonlocal batches
        batches += 1
        if as_json:
            _line({"batch": batches, "at": _now(), **report_json(report)})
            return
        echo(
            f"{_now()} batch {batches}: {report.seen} input(s): {report.stored} stored ({report.runs} runs, "
            f"{report.events:,} events), {report.unchanged} unchanged, {len(report.quarantined)} quarantined"
        )
        for _path, code, reason in report.quarantined:
            echo(f"  quarantined [{code}] {safe(reason)}", err=True)

    def on_error(message: str) -> None:
        if as_json:
            _line({"error": message, "at": _now()})
        else:
            echo(f"{_now()} {safe(message)} (listing again in {interval:g}s)", err=True)

    if not as_json:
        if once:
            how = "one listing" if bucket else "one sweep"
        else:
            how = (
                f"listing every {interval:g}s; Ctrl-C stops"
                if bucket
                else "following file events; Ctrl-C stops"
            )
        echo(f"watching {safe(source)} ({how})", err=True)
    try:
        if bucket:
            totals = watch_bucket(
                db,
                source,
                stop=stop,
                on_batch=on_batch,
                on_error=on_error,
                db_path=target,
                endpoint_url=endpoint_url,
                interval=interval,
                once=once,
            )
        else:
            totals = watch_folder(
                db, source, stop=stop, on_batch=on_batch, db_path=target, settle=settle, once=once
            )
    except StoreError as exc:  # disk full, read-only database: one clear line, what was stored is kept
        raise click.ClickException(str(exc)) from exc
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        db.close()
    _summary(totals, as_json)
    sys.exit(0)


def _summary(totals: WatchTotals, as_json: bool) -> None:
    if as_json:
        _line(
            {
                "stopped": _now(),
                "batches": totals.batches,
                "seen": totals.seen,
                "stored": totals.stored,
                "unchanged": totals.unchanged,
                "runs": totals.runs,
                "events": totals.events,
                "quarantined": totals.quarantined,
                "listing_errors": len(totals.problems),
            }
        )
        return
    echo(
        f"stopped: {totals.batches} batch(es), {totals.seen} input(s): {totals.stored} stored "
        f"({totals.runs} runs), {totals.unchanged} unchanged, {totals.quarantined} quarantined"
        + (f", {len(totals.problems)} failed listing(s)" if totals.problems else "")
    )
