"""SIGKILL at random moments leaves a consistent database; concurrent ingests and labellers lose nothing."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from store.db.connection import open_database
from store.db.ingest import ingest
from tests.conftest import REPO
from tests.corpus_util import make_copies

pytestmark = pytest.mark.slow

INGEST = (
    "import sys; from store.db.connection import open_database; from store.db.ingest import ingest; "
    "db = open_database(sys.argv[1]); r = ingest(db, [sys.argv[2]], db_path=sys.argv[1], workers=int(sys.argv[3])); "
    "print('done', r.stored, r.unchanged, len(r.quarantined), flush=True)"
)

LABELLER = """
import sys
from store.db.connection import open_database
from store import labels
db = open_database(sys.argv[1])
ids = [r[0] for r in db.execute("SELECT id FROM findings WHERE kind != 'withheld-answer' ORDER BY id")]
who, count = sys.argv[2], int(sys.argv[3])
for n in range(count):
    row = labels.label_finding(db, ids[n % len(ids)], ("tp", "fp", "unsure")[n % 3], who, note=f"n={n}")
    print(row["uid"], flush=True)   # printed only after the write returned (committed)
"""


#: the same ingest, saying when it has started (imports and opening the database can take seconds under load,
#: and a kill before that would test nothing)
INGEST_SAYING_READY = INGEST.replace("r = ingest(", "print('ready', flush=True); r = ingest(")
assert INGEST_SAYING_READY != INGEST


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def _consistent(db_path: Path) -> None:
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    # no half-ingested recording: every recording has its runs, original and rows; every run its recording
    assert (
        conn.execute(
            "SELECT count(*) FROM recordings r WHERE r.runs != (SELECT count(*) FROM runs u WHERE u.recording_id = r.id) "
            "OR r.runs != (SELECT count(*) FROM run_sources s JOIN runs u ON u.key = s.run_key "
            "WHERE s.recording_id = r.id) "
            "OR NOT EXISTS (SELECT 1 FROM originals o WHERE o.recording_id = r.id)"
        ).fetchone()[0]
        == 0
    )
    assert (
        conn.execute(
            "SELECT count(*) FROM runs u WHERE NOT EXISTS (SELECT 1 FROM recordings r WHERE r.id = u.recording_id) "
            "OR u.tool_calls != (SELECT count(*) FROM tool_calls t WHERE t.run_key = u.key)"
        ).fetchone()[0]
        == 0
    )
    conn.close()


def test_sigkill_during_ingest_then_resume(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    make_copies(corpus, 90)
    db_path = tmp_path / "crash.db"
    open_database(db_path).close()
    rng = random.Random(1234)
    for attempt in range(4):
        proc = subprocess.Popen(
            [sys.executable, "-c", INGEST_SAYING_READY, str(db_path), str(corpus), str(attempt % 2 + 1)],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        time.sleep(rng.uniform(0.05, 1.0))  # the moment of the kill, somewhere in the ingest (not a wait)
        if proc.poll() is None:
            proc.send_signal(
                signal.SIGKILL
            )  # children (workers) die with their pipe; the writer is the parent
        proc.wait(timeout=30)
        _consistent(db_path)
    db = open_database(db_path)
    report = ingest(db, [corpus], db_path=str(db_path), workers=1)
    assert report.quarantined == []
    assert db.execute("SELECT count(*) FROM recordings").fetchone()[0] == 90
    db.close()
    _consistent(db_path)


def test_sigkill_during_labelling_keeps_every_returned_label(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    make_copies(corpus, 6)
    db_path = tmp_path / "labels.db"
    db = open_database(db_path)
    ingest(db, [corpus], db_path=str(db_path))
    db.close()
    proc = subprocess.Popen(
        [sys.executable, "-c", LABELLER, str(db_path), "ann", "100000"],
        env=_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    returned: list[str] = []
    # kill once a random number of labels have returned (a time window gave too few on a loaded machine)
    wanted = random.Random(99).randint(25, 60)
    deadline = time.monotonic() + 120
    while len(returned) < wanted and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line:
            returned.append(line.strip())
        elif proc.poll() is not None:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    returned.extend(line.strip() for line in proc.stdout.read().splitlines() if line.strip())
    assert len(returned) > 20
    _consistent(db_path)
    conn = sqlite3.connect(db_path)
    stored = {r[0] for r in conn.execute("SELECT uid FROM labels")}
    assert set(returned) <= stored
    assert conn.execute("SELECT count(*), count(DISTINCT uid) FROM labels").fetchone()[0] == len(stored)


def test_two_ingests_and_two_labellers_at_once(tmp_path: Path) -> None:
    seed_corpus = tmp_path / "seed"
    make_copies(seed_corpus, 4, prefix="seed")
    a, b = tmp_path / "a", tmp_path / "b"
    make_copies(a, 30, prefix="a")
    make_copies(b, 30, prefix="b")
    db_path = tmp_path / "shared.db"
    db = open_database(db_path)
    ingest(db, [seed_corpus], db_path=str(db_path))
    db.close()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", INGEST, str(db_path), str(a), "1"],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ),
        subprocess.Popen(
            [sys.executable, "-c", INGEST, str(db_path), str(b), "1"],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ),
        subprocess.Popen(
            [sys.executable, "-c", LABELLER, str(db_path), "ann", "150"],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ),
        subprocess.Popen(
            [sys.executable, "-c", LABELLER, str(db_path), "bob", "150"],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ),
    ]
    outputs = [p.communicate(timeout=240) for p in procs]
    for proc, (_out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        assert "locked" not in err.lower()
    assert outputs[0][0].startswith("done 30 0 0") and outputs[1][0].startswith("done 30 0 0")
    uids = outputs[2][0].split() + outputs[3][0].split()
    assert len(uids) == 300
    conn = sqlite3.connect(db_path)
    assert conn.execute("SELECT count(*), count(DISTINCT uid) FROM labels").fetchone() == (300, 300)
    assert {r[0] for r in conn.execute("SELECT uid FROM labels")} == set(uids)
    assert conn.execute("SELECT count(*) FROM recordings").fetchone()[0] == 64
    conn.close()
    _consistent(db_path)
