"""Every screen of the app on a PostgreSQL database reads as it does on SQLite: the same corpus and labels
ingested into both, the same screens drawn from each (run, stats, quarantine), the packs screen's pack,
replay, false-positive walk (`f`) and export, the label export, and `reviewer watch` on an s3:// and a
gs:// bucket feeding an open app.

The read-only tests share one pair of databases per module (SQLite and PostgreSQL, built the same way)."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console
from rich.text import Text
from textual.widgets import DataTable, Input, Static

from reviewer.cli.main import cli
from reviewer.service import Settings, pack_ops
from reviewer.ui.app import ReviewerApp, make_app
from reviewer.ui.exporting import ExportPathBar
from reviewer.ui.screens.packs import PacksScreen
from reviewer.ui.screens.quarantine import QuarantineScreen
from reviewer.ui.screens.queue import QueueScreen
from reviewer.ui.screens.run import RunScreen
from reviewer.ui.screens.stats import StatsScreen
from reviewer.ui.widgets.detail import DetailPanel
from store import labels
from store import packs as store_packs
from store.db.connection import open_database
from store.db.ingest import ingest
from tests.artifact_fixtures import Scope, recording_meta, recording_text
from tests.bucket_servers import Bucket, gcs_bucket, s3_bucket
from tests.conftest import FIXTURE_RECORDINGS, SAMPLES, fresh_postgres_database
from tests.test_packs_store import build_hand_corpus_and_r7
from tests.test_watch import Watcher
from tests.ui.conftest import FIXED_NOW, SIZE, runs_screen_ready, wait_until

#: runs a reviewer opens, and the timeline rows selected on each (kind, n-th of that kind): what the run
#: screen draws of them must be the same cells, styles included, from either backend
RUN_VISITS: dict[str, tuple[str, tuple[tuple[str, int], ...]]] = {
    "run-1796003280000-1": (
        "typed-negatives-withheld: a flagged clause in an answer that was withheld",
        (("finding", 1),),
    ),
    "run-1796001963675-1": (
        "semantics-table-and-chart: a table render hint, coverage gaps",
        (("tool_call", 0), ("finding", 0)),
    ),
    "run-1796001996843-1": ("window-eviction-dangling-reference: evicted ground", (("eviction", 0),)),
}
#: the name both apps show in their header (each database has its own name; the rest must match)
SHOWN_NAME = "review"


def _label_the_same_way(db: Any) -> None:
    """Labels that give the stats screen every column: agreement, disagreement, unsure, several kinds."""
    fids = [r[0] for r in db.execute("SELECT id FROM findings WHERE kind != 'withheld-answer' ORDER BY id")]
    plan = (("tp", "tp"), ("fp", "tp"), ("fp", "fp"), ("unsure", None), ("tp", "fp"), (None, "tp"))
    for fid, (ann, bob) in zip(fids, plan * 3, strict=False):
        for who, verdict in (("ann", ann), ("bob", bob)):
            if verdict is not None:
                labels.label_finding(db, fid, verdict, who)


#: the recordings the read-only tests need (the runs visited, findings of several kinds to label) and the
#: sample folder of broken files (quarantined): a small corpus, ingested twice per module
CORPUS = (
    *(
        FIXTURE_RECORDINGS / f"{name}.json"
        for name in (
            "semantics-table-and-chart",
            "window-eviction-dangling-reference",
            "unsupported-claim-findings",
            "evidence-gate-rails-refused",
        )
    ),
    *(SAMPLES / f"{name}.json" for name in ("typed-negatives-withheld", "negative-claims-prose")),
    SAMPLES / "broken",
)


def _build(target: str) -> str:
    db = open_database(target)
    try:
        report = ingest(db, list(CORPUS), db_path=target)
        assert report.stored == 6 and len(report.quarantined) == 8, report
        _label_the_same_way(db)
    finally:
        db.close()
    return target


@pytest.fixture(scope="module")
def both_dbs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """{"sqlite": path, "postgresql": url}: the same recordings ingested and labelled into each (read only)."""
    lite = str(tmp_path_factory.mktemp("pg-screens") / "review.db")
    with fresh_postgres_database() as url:
        yield {"sqlite": _build(lite), "postgresql": _build(url)}


def _app(db: str, **kwargs: Any) -> ReviewerApp:
    app = make_app(Settings.resolve(db_path=db, reviewer="ann"), keymap={}, now=FIXED_NOW, **kwargs)
    app.sub_title = SHOWN_NAME
    return app


Screen = list[list[tuple[str, str]]]


def _screen(app: ReviewerApp) -> Screen:
    """Every cell of the screen as drawn: each line's segments with their styles (highlights count)."""
    return [[(seg.text, str(seg.style)) for seg in strip] for strip in app.screen._compositor.render_strips()]


async def _settled_screen(pilot: Any) -> Screen:
    """The screen once two looks a moment apart agree: a detail panel mounts its widgets over a few frames,
    and a look taken between them would differ from the other backend's by timing alone."""
    shots = [_screen(pilot.app)]

    def unchanged() -> bool:
        shots.append(_screen(pilot.app))
        return shots[-1] == shots[-2]

    await wait_until(pilot, unchanged)
    return shots[-1]


def _line(line: list[tuple[str, str]]) -> str:
    return "".join(text for text, _ in line)


def _text(screen: Screen) -> str:
    return "\n".join(_line(line) for line in screen)


async def _open_run(pilot: Any, ident: str) -> RunScreen:
    """Open run `ident` (as the palette's "jump to run" does) and wait until it is drawn with its detail."""
    app = pilot.app
    app.open_run(ident)
    await wait_until(
        pilot,
        lambda: (
            isinstance(app.screen, RunScreen)
            and (app.screen.run or {}).get("run_id") == ident
            and bool(app.screen.timeline.rows)
            and app.screen.query_one(DetailPanel).showing is not None
        ),
    )
    await pilot.pause()
    return app.screen


async def _select(pilot: Any, screen: RunScreen, index: int) -> None:
    """Put the timeline cursor on row `index` and wait until its detail is drawn whole (a finding's with its
    evidence, a tool call's with its result)."""
    row = screen.timeline.rows[index]
    key = {
        "finding": lambda r: f"finding:{r['id']}",
        "tool_call": lambda r: f"call:{r['call_id']}",
        "eviction": lambda r: f"eviction:{r.get('id')}",
    }[row["kind"]](row)
    screen.timeline.move_to(index)
    panel = screen.query_one(DetailPanel)
    await wait_until(
        pilot, lambda: panel.showing == key and (row["kind"] != "finding" or row["id"] in screen.evidence)
    )
    await pilot.pause()


async def _run_screens(pilot: Any) -> dict[str, Any]:
    """Per run: the screen as opened, then with each of its visits' rows selected; and what the assertions
    read off the widgets (the answer's highlighted spans, the rows of a tool result's table)."""
    seen: dict[str, Any] = {}
    for ident, (_why, visits) in RUN_VISITS.items():
        screen = await _open_run(pilot, ident)  # it takes the last run screen's place
        seen[ident] = [await _settled_screen(pilot)]
        answer = screen.answer.answer_text
        seen[f"{ident} highlights"] = sorted({answer.plain[s.start : s.end] for s in answer.spans})
        kinds = [r["kind"] for r in screen.timeline.rows]
        for kind, nth in visits:
            await _select(pilot, screen, [i for i, k in enumerate(kinds) if k == kind][nth])
            seen[ident].append(await _settled_screen(pilot))
            for table in screen.query_one(DetailPanel).query(DataTable):
                seen[f"{ident} table"] = [
                    [c.plain for c in table.get_row_at(i)] for i in range(table.row_count)
                ]
    await pilot.press("escape")
    await runs_screen_ready(pilot)
    return seen


def _plain(widget: Static) -> str:
    """A Static's content as a reviewer reads it (tables laid out at the screen's width)."""
    console = Console(width=SIZE[0], record=True, file=io.StringIO())
    console.print(widget.content)
    return console.export_text()


def _table(table: DataTable[Any]) -> list[list[str]]:
    return [
        [cell.plain if isinstance(cell, Text) else str(cell) for cell in table.get_row_at(i)]
        for i in range(table.row_count)
    ]


async def _stats(pilot: Any) -> dict[str, Any]:
    app = pilot.app
    app.action_open_stats()
    await wait_until(pilot, lambda: isinstance(app.screen, StatsScreen) and app.screen.stats is not None)
    await pilot.pause()
    drawn = {"stats": app.screen.stats, "shown": _plain(app.screen.query_one("#stats", Static))}
    await pilot.press("escape")
    await runs_screen_ready(pilot)
    return drawn


async def _quarantine(pilot: Any) -> dict[str, Any]:
    """The runs screen's count of quarantined inputs, then K: the quarantine screen's summary and rows."""
    app = pilot.app
    runs = await runs_screen_ready(pilot)
    await wait_until(pilot, lambda: runs.quarantined is not None)
    count = str(runs.query_one("#runs-quarantined", Static).render())
    await pilot.press("K")
    await wait_until(pilot, lambda: isinstance(app.screen, QuarantineScreen) and app.screen.total is not None)
    await pilot.pause()
    drawn = {
        "count": count,
        "rows": _table(app.screen.query_one(DataTable)),
        "status": _plain(app.screen.query_one("#quarantine-status", Static)),
    }
    await pilot.press("escape")
    await runs_screen_ready(pilot)
    return drawn


async def _export_labels(pilot: Any, target: Path) -> str:
    """ctrl+e in a terminal app: the labels as JSON, to the path typed in the bar; the file's text."""
    app = pilot.app
    await pilot.press("ctrl+e")
    await wait_until(pilot, lambda: bool(app.screen.query(ExportPathBar)))
    app.screen.query_one(ExportPathBar).query_one(Input).value = str(target)
    await pilot.press("enter")
    await wait_until(
        pilot, lambda: any(str(n.message).endswith(f"exported to {target}") for n in app._notifications)
    )
    return target.read_text(encoding="utf-8")


async def _visit_every_screen(db: str, folder: Path) -> dict[str, Any]:
    """One reviewer's session over `db`: the run screens, the stats, the quarantine, the label export."""
    app = _app(db)
    async with app.run_test(size=SIZE) as pilot:
        await runs_screen_ready(pilot)
        return {
            "runs": await _run_screens(pilot),
            "stats": await _stats(pilot),
            "quarantine": await _quarantine(pilot),
            "export": await _export_labels(pilot, folder / "labels.json"),
        }


@pytest.fixture(scope="module")
def drawn(both_dbs: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """What each backend's app drew, visited once per module (an app session costs seconds on 2 cores)."""
    return {
        backend: asyncio.run(_visit_every_screen(db, tmp_path_factory.mktemp(f"exports-{backend}")))
        for backend, db in both_dbs.items()
    }


def test_the_run_screens_of_runs_with_findings_read_the_same_on_postgresql(
    drawn: dict[str, dict[str, Any]],
) -> None:
    lite, pg = drawn["sqlite"]["runs"], drawn["postgresql"]["runs"]
    for ident, (why, _visits) in RUN_VISITS.items():
        for n, (a, b) in enumerate(zip(lite[ident], pg[ident], strict=True)):
            diff = [
                (y, _line(la), _line(lb)) for y, (la, lb) in enumerate(zip(a, b, strict=True)) if la != lb
            ]
            assert not diff, f"{ident} ({why}), screen {n}: {diff[:6]}"
    assert pg == lite
    # what the equal screens show: the features each run was chosen for (not two blank or failed screens)
    withheld = pg["run-1796003280000-1"]
    assert "no open incidents for payments" in pg["run-1796003280000-1 highlights"], "the flagged clause"
    assert "WITHHELD — not delivered" in _text(withheld[0])
    assert "negative-claim (entity-unresolved) in summary" in _text(withheld[1])
    assert "DOES THE EVIDENCE LICENSE THE WORDING?" in _text(withheld[1]), "its evidence, read and drawn"
    table_call, gap = pg["run-1796001963675-1"][1:]
    rows = pg["run-1796001963675-1 table"]
    assert [r[0] for r in rows] == ["vol-002", "vol-001", "vol-003"], "in the order the render hint sorts"
    assert "filter: replica-target volumes excluded" in _text(table_call)
    assert "not checked" in _text(gap) and "snapshot capacity" in _text(gap)
    assert "evicted" in _text(pg["run-1796001996843-1"][1])


def test_the_stats_screen_shows_the_same_figures_on_postgresql(drawn: dict[str, dict[str, Any]]) -> None:
    lite, pg = drawn["sqlite"]["stats"], drawn["postgresql"]["stats"]
    assert pg["stats"] == lite["stats"]
    assert pg["shown"] == lite["shown"]
    pair = pg["stats"]["agreement"][0]
    assert pair["reviewers"] == ["ann", "bob"] and pair["shared"] > 3 and pair["kappa"] is not None
    assert f"{pair['kappa']:.2f}" in pg["shown"] and "ann × bob" in pg["shown"]
    assert pg["stats"]["disagreements"] and "coverage-gap" in pg["shown"] and "unsure" in pg["shown"]


def test_the_quarantine_screen_lists_each_bad_file_with_its_reason_on_postgresql(
    drawn: dict[str, dict[str, Any]], both_dbs: dict[str, str]
) -> None:
    lite, pg = drawn["sqlite"]["quarantine"], drawn["postgresql"]["quarantine"]
    assert pg["count"] == lite["count"] == "8 quarantined — press K"
    assert "8 inputs could not be ingested" in pg["status"] and pg["status"] == lite["status"]
    listed = json.loads(
        CliRunner().invoke(cli, ["quarantine", "--json", "--db", both_dbs["postgresql"]]).stdout
    )
    rows = pg["rows"]
    assert [(r[0], r[1], r[3]) for r in rows] == [(q["path"], q["code"], str(q["times"])) for q in listed]
    # file, code, reason and times as on SQLite (`last seen` is the time each database ingested them)
    assert [r[:4] for r in rows] == [r[:4] for r in lite["rows"]]
    empty = next(r for r in rows if r[0].endswith("empty.json"))
    assert empty[2] == "the file is empty"


def _without_write_times(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A label row but for what each database stamped as it wrote it (its uid and time)."""
    return [{k: v for k, v in r.items() if k not in ("uid", "created_at")} for r in rows]


def test_the_label_export_from_a_postgresql_database(
    drawn: dict[str, dict[str, Any]], both_dbs: dict[str, str]
) -> None:
    rows = json.loads(drawn["postgresql"]["export"])
    cli_rows = CliRunner().invoke(cli, ["labels", "--json", "--db", both_dbs["postgresql"]]).stdout
    assert rows == json.loads(cli_rows), "the app exports what `reviewer labels --json` prints"
    lite = json.loads(drawn["sqlite"]["export"])
    assert len(rows) > 20 and _without_write_times(rows) == _without_write_times(lite)
    pg_csv, lite_csv = (
        list(csv.DictReader(io.StringIO(CliRunner().invoke(cli, ["labels", "--csv", "--db", db]).stdout)))
        for db in (both_dbs["postgresql"], both_dbs["sqlite"])
    )
    assert len(pg_csv) == len(rows) and _without_write_times(pg_csv) == _without_write_times(lite_csv)


# -- the packs screen: a pack made by name, a suggestion accepted, its replay, its export -------------------


def _hand_corpus(target: str, folder: Path) -> str:
    db = open_database(target)
    try:
        build_hand_corpus_and_r7(db, folder)
    finally:
        db.close()
    return target


#: the answers of the fp-labelled findings of `build_hand_corpus_and_r7`, in run key order
HAND_CORPUS_FPS = ("There are no incidents. Billing came up empty.", "Our search came up empty.")


async def _walk_false_positives(pilot: Any, packs: PacksScreen) -> list[dict[str, Any]]:
    """f on the packs screen's first ledger phrase, then f in the run screen to each further stop of the
    walk; each stop as shown (run, finding, answer, the walk's subtitle). Escape back to the packs screen."""
    app = pilot.app
    packs.query_one("#ledger", DataTable).move_cursor(row=0)
    await pilot.press("f")
    await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and bool(app.screen.walk))
    run: RunScreen = app.screen  # type: ignore[assignment]
    stops: list[dict[str, Any]] = []
    for at in range(len(run.walk)):
        if at:
            await pilot.press("f")
        await wait_until(
            pilot,
            lambda at=at: (
                run.walk_at == at
                and run.current_finding == run.walk[at][1]
                and (run.run or {}).get("run_key") == run.walk[at][0]
                and run.query_one(DetailPanel).showing == f"finding:{run.current_finding}"
            ),
        )
        stops.append(
            {
                "run_key": run.run_key,
                "finding_id": run.current_finding,
                "answer": run.answer.answer_text.plain,
                "subtitle": str(run.query_one("#answer-scroll").border_subtitle),
            }
        )
    await pilot.press("escape")
    await wait_until(pilot, lambda: app.screen is packs)
    return stops


async def _curate_a_pack(db: str, out: Path) -> dict[str, Any]:
    """On the packs screen: n makes pack 'triage', a accepts the first suggestion into it (a version 2 and
    its replay against version 1), f steps through its phrase's false positives in the run screen, e
    exports it to the path typed in the bar. What the screens showed."""
    app = _app(db)
    async with app.run_test(size=SIZE) as pilot:
        await runs_screen_ready(pilot)
        await pilot.press("p")
        await wait_until(
            pilot, lambda: isinstance(app.screen, PacksScreen) and bool(app.screen.suggestion_rows)
        )
        screen: PacksScreen = app.screen  # type: ignore[assignment]
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.focused, Input))
        await pilot.press(*"triage", "enter")
        await wait_until(pilot, lambda: screen.stored is not None and screen.stored.name == "triage")
        suggested = list(screen.suggestion_rows)
        await pilot.press("a")
        await wait_until(
            pilot,
            lambda: (
                screen.report is not None
                and screen.report["candidate"]["ref"] == "triage@2"
                and bool(screen.ledger_rows)
            ),
        )
        await pilot.pause()
        shown = {
            "suggested": suggested,
            "report": json.loads(json.dumps(screen.report)),
            "report_text": _plain(screen.query_one("#replay-report", Static)),
            "ledger": json.loads(json.dumps(screen.ledger_rows)),
            "walk": await _walk_false_positives(pilot, screen),
        }
        await pilot.press("e")
        await wait_until(pilot, lambda: bool(app.screen.query(ExportPathBar)))
        app.screen.query_one(ExportPathBar).query_one(Input).value = str(out)
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: out.exists() and any("exported" in str(n.message) for n in app._notifications)
        )
    shown["export"] = out.read_text(encoding="utf-8")
    return shown


def _the_same_on_the_command_line(db: str, phrase: str, list_name: str) -> dict[str, Any]:
    """What the packs screen did, done on `db` with `reviewer pack`: the suggestions, replay and export."""

    def run(*args: str) -> str:
        done = CliRunner().invoke(cli, ["pack", *args, "--db", db])
        assert done.exit_code == 0, done.output
        return done.stdout

    suggested = json.loads(run("suggest", "--json"))["suggestions"]
    run("new", "triage", "--reviewer", "ann")
    run("add", "triage", phrase, "--list", list_name, "--reviewer", "ann")
    opened = open_database(db)
    try:
        ledger = pack_ops.ledger(opened, "triage@2")["phrases"]  # the screen's ledger has no command
    finally:
        opened.close()
    return {
        "suggested": suggested,
        "report": json.loads(run("replay", "triage", "--examples", "10", "--json")),
        "ledger": json.loads(json.dumps(ledger)),
        "export": run("export", "triage"),
    }


def _measured(report: dict[str, Any]) -> dict[str, Any]:
    """The replay's figures, without what depends on when and how fast it ran, or on label uids."""
    return {k: v for k, v in report.items() if k not in ("seconds", "answers_per_second", "trial", "labels")}


async def test_the_packs_screen_makes_replays_and_exports_a_pack_on_postgresql(tmp_path: Path) -> None:
    with fresh_postgres_database() as url:
        shown = await _curate_a_pack(_hand_corpus(url, tmp_path / "recordings"), tmp_path / "triage.json")
        accepted = shown["suggested"][0]
        db = open_database(url, migrate=False)
        try:
            stored = store_packs.latest_pack(db, "triage")
        finally:
            db.close()
    assert stored is not None and stored.version == 2 and stored.created_by == "ann"
    assert accepted["phrase"] in stored.none + stored.complete
    report = shown["report"]
    assert report["answers"] == 7 and report["baseline"]["ref"] == "triage@1"
    figures = report["figures"]["all"]["candidate"]
    assert figures["labelled_hits"] > 0 and figures["misses"] > 0  # precision and recall over labels
    text = shown["report_text"]
    assert "precision" in text and "recovers" in text and "7 answers replayed" in text
    assert accepted["phrase"] in shown["export"]
    # the same steps on SQLite give the same suggestions, figures and exported pack
    lite = _the_same_on_the_command_line(
        _hand_corpus(str(tmp_path / "review.db"), tmp_path / "lite"), accepted["phrase"], accepted["list"]
    )
    assert shown["suggested"] == lite["suggested"]
    assert shown["ledger"] == lite["ledger"] and shown["ledger"][0]["phrase"] == accepted["phrase"]
    # f walked the phrase's false positives: the answers the ledger lists on SQLite, in its order, and back
    on_sqlite = [(fp["run_key"], fp["finding_id"]) for fp in lite["ledger"][0]["false_positives_at"]]
    assert [(stop["run_key"], stop["finding_id"]) for stop in shown["walk"]] == on_sqlite
    assert [(stop["answer"], stop["subtitle"]) for stop in shown["walk"]] == [
        (answer, f"{accepted['phrase']}: false positive {n} of 2 (f: next)")
        for n, answer in enumerate(HAND_CORPUS_FPS, 1)
    ]
    assert _measured(report) == _measured(lite["report"])
    assert shown["export"] == lite["export"]


# -- `reviewer watch` on a bucket into a PostgreSQL database, with the app open on it ----------------------

PREFIX = "fleet/artifacts"
ANON = Scope(conversation_id="run-1796001919298-1")
#: put into the bucket before the watch starts, then after (a run with a finding), then with the queue open
BEFORE, AFTER, WITH_QUEUE_OPEN = (
    "plain-tool-run.json",
    "evidence-gate-assist-flagged.json",
    "unsupported-claim-findings.json",
)


@pytest.fixture(params=["s3", "gs"])
def bucket(request: pytest.FixtureRequest) -> Bucket:
    """A bucket on the S3 server, or on the Cloud Storage emulator (objects written as gcsArtifacts does)."""
    if request.param == "s3":
        return s3_bucket(request.getfixturevalue("s3_endpoint"), "fleet-pg")
    return gcs_bucket(request.getfixturevalue("gcs_endpoint"), "fleet-pg-gs")


def _put(bucket: Bucket, name: str, run_id: str) -> None:
    text = recording_text(name)
    bucket.put_artifact(PREFIX, ANON, recording_meta(text, run_id=run_id, digest=True), text)


@pytest.mark.slow
async def test_reviewer_watch_on_a_bucket_feeds_an_app_open_on_the_postgresql_database(
    bucket: Bucket, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`reviewer watch s3://...` or `gs://...` (a subprocess) into the database an open app shows."""
    monkeypatch.setattr(ReviewerApp, "LIVE_POLL_S", 0.2)  # the waits below allow a minute all the same
    _put(bucket, BEFORE, "run-1")
    with fresh_postgres_database() as url:
        open_database(url).close()  # the schema, before the watcher and the app race to make it
        watcher = Watcher(bucket.url(PREFIX), "--db", url, "--interval", "0.2")
        try:
            assert watcher.line("the first listing", lambda x: x.get("batch") == 1)["stored"] == 1
            app = _app(url)
            async with app.run_test(size=SIZE) as pilot:
                runs = await runs_screen_ready(pilot)
                await wait_until(pilot, lambda: runs.total == 1)

                await asyncio.to_thread(_put, bucket, AFTER, "run-2")
                await wait_until(pilot, lambda: runs.new_runs == 1)
                await wait_until(
                    pilot,
                    lambda: (
                        "1 new run — press r to show" in str(runs.query_one("#runs-status", Static).render())
                    ),
                )
                await pilot.press("r")
                await wait_until(pilot, lambda: runs.total == 2 and runs.run_list.row_count == 2)

                await app.action_open_queue()
                await wait_until(
                    pilot, lambda: isinstance(app.screen, QueueScreen) and app.screen.showing is not None
                )
                queue: QueueScreen = app.screen  # type: ignore[assignment]
                before = queue.total
                assert before == 1  # the flagged run's one finding
                await asyncio.to_thread(_put, bucket, WITH_QUEUE_OPEN, "run-3")
                await wait_until(pilot, lambda: queue.total == before + 3)  # its three unsupported claims
                await wait_until(pilot, lambda: queue.finding_list.row_count == queue.total)
                assert f"showing {queue.total:,}" in str(queue.query_one("#queue-status", Static).render())
            code, err = watcher.stop()
            assert code == 0 and "Traceback" not in err, err
        finally:
            watcher.kill()
    summary = watcher.line("the summary", lambda x: "stopped" in x)
    assert summary["stored"] == 3 and summary["quarantined"] == 0
    assert [x["seen"] for x in watcher.drain() if "batch" in x] == [1, 1, 1], "each listing read what was new"
