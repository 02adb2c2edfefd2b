"""Start `reviewer serve` on a free loopback port for a test and stop it after: the URL (with its token) is
read from what the server prints, as a person would copy it."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import FIXTURE_RECORDINGS, REPO

RECORDING = FIXTURE_RECORDINGS / "evidence-gate-rails-refused.json"
URL = re.compile(r"http://\S+")


@dataclass
class Served:
    url: str  # as printed, token included
    port: int
    db: Path
    proc: subprocess.Popen[str]
    output: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def token(self) -> str | None:
        found = re.search(r"[?&]token=([^&\s]+)", self.url)
        return found.group(1) if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ingest_one(db: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "reviewer", "ingest", str(RECORDING), "--db", str(db)],
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        timeout=120,
    )


@contextmanager
def serving(tmp_path: Path, extra: list[str], *, ingest: bool = True) -> Iterator[Served]:
    db = tmp_path / "served.db"
    if ingest:
        ingest_one(db)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "reviewer", "serve", "--db", str(db), "--port", str(port), *extra],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    served = Served(url="", port=port, db=db, proc=proc)
    printed = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            served.output.append(line)
            found = URL.search(line)
            if found and not served.url:
                served.url = found.group(0)
                printed.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert printed.wait(60), f"the server printed no URL: {''.join(served.output)}"
        # a person (or a script) may open the address the moment it is printed
        assert listening(port), "the server printed its URL before its port listened"
        yield served
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def listening(port: int) -> bool:
    """Whether something accepts connections on the loopback `port`."""
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0
