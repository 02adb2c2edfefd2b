"""Start the guarded server: resolve the token, print where to go (and the warnings), run until Ctrl+C."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import click

from reviewer.serve.guard import Guard, is_loopback, new_token, served_names
from reviewer.serve.server import GuardedServer, ServeError
from reviewer.service.store_ops import shown

#: `--token` may come from here instead of the command line (where other accounts can read it in `ps`)
TOKEN_ENV = "REVIEWER_SERVE_TOKEN"


def serve(
    db_path: str | Path,
    *,
    host: str,
    port: int,
    reviewer: str | None,
    token: str | None,
    no_token: bool,
    max_sessions: int,
    allow_hosts: tuple[str, ...] = (),
) -> None:
    """Serve the app on `db_path` (already created and migrated). `token` None makes a fresh one."""
    os.environ.pop(TOKEN_ENV, None)  # every app process inherits this environment: the secret stays here
    secret = None if no_token else ((token or "").strip() or new_token())
    guard = Guard(port=port, names=tuple(served_names(host, allow_hosts)), token=secret)
    command = [sys.executable, "-m", "reviewer", "open", "--db", str(db_path)]
    # every tab is its own app process: a named server labels as that name; otherwise each tab must say who
    command += ["--reviewer", reviewer] if reviewer else ["--ask-reviewer"]
    if no_token:
        click.echo(
            "WARNING: --no-token: anyone who can reach this port (any account on this machine, and any other "
            "machine if it is not bound to loopback) can read and label everything in the database.",
            err=True,
        )
    if not is_loopback(host):
        click.echo(
            f"WARNING: binding to {host}: the token travels in clear over plain HTTP. Prefer loopback, or put "
            "the server behind a TLS reverse proxy (and name its address with --allow-host).",
            err=True,
        )

    def announce() -> None:
        click.echo(
            f"Serving {shown(db_path)} (at most {max_sessions} session(s) at once; Ctrl+C to stop). Open:"
        )
        click.echo(f"    {guard.url()}", color=False)
        sys.stdout.flush()

    try:
        GuardedServer(
            " ".join(shlex.quote(c) for c in command),
            guard=guard,
            max_sessions=max_sessions,
            host=host,
            port=port,
            announce=announce,
        ).serve()
    except ServeError as exc:
        raise click.ClickException(str(exc)) from exc
