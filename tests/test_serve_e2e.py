"""End to end in a real browser: `reviewer serve` on a free loopback port, headless Chromium (Playwright
driving Debian's /usr/bin/chromium), open a run, label a finding with the keyboard, and find the label in
the database. Without Chromium (or Playwright) the tests are skipped with that reason, except under `CI=true`,
where they fail: CI never passes without running them (`.ci/run` installs Chromium and sets CI)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serve_util import serving


def _find_chromium() -> str | None:
    """$REVIEWER_CHROMIUM when set (an empty or missing path counts as no Chromium), else Debian's."""
    wanted = os.environ.get("REVIEWER_CHROMIUM")
    if wanted is not None:
        return wanted if wanted and Path(wanted).is_file() else None
    return shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)


CHROMIUM = _find_chromium()
pytestmark = [pytest.mark.slow]


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture(autouse=True)
def _browser_available() -> None:
    """Skip (with the reason) when the browser is missing on a workstation; fail loudly when it is missing in CI."""
    missing = None
    if CHROMIUM is None:
        missing = "no Chromium installed (apt-get install chromium)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            missing = "Playwright is not installed (pip install -e '.[test]')"
    if missing is None:
        return
    if in_ci():
        pytest.fail(f"CI=true but the browser tests cannot run: {missing}", pytrace=False)
    pytest.skip(missing)


RUN_ID = (
    "run-1796002023213-3"  # evidence-gate-rails-refused: 1 run, an evidence-gate finding, a withheld answer
)

# Textual in the browser draws on a canvas; the test reads what the app sends instead, by wrapping the
# page's WebSocket before textual-serve's script creates it.
CAPTURE = """
window.__tx = [];
const Orig = window.WebSocket;
window.WebSocket = function(url, protocols) {
  const ws = protocols ? new Orig(url, protocols) : new Orig(url);
  ws.addEventListener('message', async (ev) => {
    let d = ev.data;
    if (d instanceof Blob) d = new Uint8Array(await d.arrayBuffer());
    if (d instanceof ArrayBuffer) d = new Uint8Array(d);
    if (d instanceof Uint8Array) d = new TextDecoder().decode(d);
    window.__tx.push(String(d));
  });
  return ws;
};
window.WebSocket.prototype = Orig.prototype;
"""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """`reviewer serve --reviewer e2e`: every tab labels as e2e. The URL is the one it printed (with its token)."""
    with serving(tmp_path, ["--reviewer", "e2e"]) as s:
        yield s.url, s.db


@pytest.fixture
def served_unnamed(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """`reviewer serve` with no name: each tab must say who is reviewing."""
    with serving(tmp_path, []) as s:
        yield s.url, s.db


def _wait_for(page, text: str, timeout: float = 60.0) -> str:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    seen = ""
    while time.monotonic() < deadline:
        seen = _received(page)
        if text in seen:
            return seen
        time.sleep(0.25)
    raise AssertionError(f"{text!r} never reached the browser (received {len(seen)} characters)")


def _received(page) -> str:  # type: ignore[no-untyped-def]
    return str(page.evaluate("window.__tx ? window.__tx.join('') : ''"))


def _name_the_tab(tab, name: str) -> None:  # type: ignore[no-untyped-def]
    """Type the reviewer's name into the (empty) dialog and submit it. Keys that arrive before the dialog's
    box has focus are dropped, so the name is typed until the page shows it echoed (no fixed sleep)."""
    tab.focus("textarea.xterm-helper-textarea")
    deadline = time.monotonic() + 60
    while True:
        before = len(_received(tab))
        tab.keyboard.type(name)
        echo_deadline = min(time.monotonic() + 10, deadline)
        while time.monotonic() < echo_deadline and name not in _received(tab)[before:]:
            time.sleep(0.1)
        if name in _received(tab)[before:]:
            break
        assert time.monotonic() < deadline, f"the name dialog never showed {name!r}"
        tab.keyboard.press("Control+u")  # clear whatever part did arrive, and type it again
    tab.keyboard.press("Enter")


def _launch(p):  # type: ignore[no-untyped-def]
    """Debian's Chromium, headless, with the flags a closed network needs (no background connections)."""
    return p.chromium.launch(
        executable_path=CHROMIUM,
        args=[
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ],
    )


def _labels(db: Path) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT reviewer, verdict, target_kind FROM labels ORDER BY id").fetchall()
    finally:
        conn.close()


def test_label_a_finding_in_the_browser(served: tuple[str, Path], tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    url, db = served
    shots = Path(os.environ.get("REVIEWER_SCREENSHOTS", tmp_path))
    with sync_playwright() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.add_init_script(CAPTURE)
            page.goto(url)
            _wait_for(page, RUN_ID)  # the runs screen is up and lists the run
            page.screenshot(path=str(shots / "serve-runs.png"))
            # Keys reach the app only through xterm.js's hidden textarea: until the page gives it focus, a key
            # press is dropped by the browser (the run never opened: that, not the drawing, lost the "1500").
            page.focus("textarea.xterm-helper-textarea")
            page.keyboard.press("Enter")  # open the run
            # the withheld answer, drawn in full (it names the unsupported 1500); "about" is only in the answer
            _wait_for(page, "about 1500 rx errors")
            _wait_for(page, "findings)")  # the timeline has arrived ("Timeline (N items, 2 findings)")
            page.keyboard.press("]")  # the next finding on the run's timeline
            _wait_for(page, "LABELS")  # its evidence is drawn beside it, with the label keys
            page.keyboard.press(
                "1"
            )  # label it: true positive (or "withholding justified" on a withheld answer)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not _labels(db):
                time.sleep(0.25)
            page.screenshot(path=str(shots / "serve-run.png"))
        finally:
            browser.close()
    labels = _labels(db)
    assert len(labels) == 1, labels
    reviewer, verdict, kind = labels[0]
    assert reviewer == "e2e"
    assert (kind, verdict) in {("evidence-gate", "tp"), ("withheld-answer", "justified")}


def test_two_tabs_label_at_once_and_lose_nothing(served_unnamed: tuple[str, Path]) -> None:
    """Each browser tab is its own app process on the one WAL database, with its own reviewer (each tab
    asks): labels from both land, each under its own name."""
    from playwright.sync_api import sync_playwright

    url, db = served_unnamed
    with sync_playwright() as p:
        browser = _launch(p)
        try:
            tabs = [browser.new_page(viewport={"width": 1400, "height": 900}) for _ in range(2)]
            for tab in tabs:
                tab.add_init_script(CAPTURE)
                tab.goto(url)
            for name, tab in zip(("ann", "bob"), tabs, strict=True):
                _wait_for(tab, "Who is reviewing?")
                _name_the_tab(tab, name)
            for name, tab in zip(("ann", "bob"), tabs, strict=True):
                _wait_for(tab, f"labelling as {name}")
                tab.keyboard.press("Enter")
            for tab in tabs:
                _wait_for(tab, "findings)")
            tabs[0].keyboard.press("]")  # tab one: the first finding
            tabs[1].keyboard.press("]")
            tabs[1].keyboard.press("]")  # tab two: the second finding
            for tab in tabs:
                _wait_for(tab, "LABELS")
            tabs[0].keyboard.press("3")  # both label at once
            tabs[1].keyboard.press("3")
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and len(_labels(db)) < 2:
                time.sleep(0.25)
        finally:
            browser.close()
    labels = _labels(db)
    assert sorted((reviewer, kind) for reviewer, _, kind in labels) == [
        ("ann", "evidence-gate"),
        ("bob", "withheld-answer"),
    ], labels
    assert {verdict for _, verdict, _ in labels} == {"unsure"}


OPEN_SOCKET = """(url) => new Promise((done) => {
  const ws = new WebSocket(url);
  ws.onopen = () => { ws.close(); done("open"); };
  ws.onerror = () => done("refused");
})"""


@pytest.fixture
def other_local_site() -> Iterator[str]:
    """Another web page on this machine (same host, another port: the same *site*, so the browser sends the
    served page's cookie along): what a hostile local page or a page rebound to 127.0.0.1 looks like."""
    import http.server
    import threading

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            body = b"<!DOCTYPE html><html><body>another site</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_only_the_served_page_with_its_token_gets_a_session(
    served: tuple[str, Path], other_local_site: str
) -> None:
    """In Chromium: without the token the page says so; with it the app runs; and a page of another local
    site, in the same browser (holding the token's cookie), cannot open the app's socket."""
    from playwright.sync_api import sync_playwright

    url, _db = served
    base = url.split("?", 1)[0]
    socket_url = base.replace("http://", "ws://").rstrip("/") + "/ws"
    with sync_playwright() as p:
        browser = _launch(p)
        try:
            stranger = browser.new_page()  # a browser that never saw the printed URL
            stranger.goto(base)
            assert "needs its token" in stranger.content()
            assert stranger.evaluate(OPEN_SOCKET, socket_url) == "refused"

            reviewer = browser.new_context()
            tab = reviewer.new_page()
            tab.add_init_script(CAPTURE)
            tab.goto(url)
            _wait_for(tab, RUN_ID)  # the app is up in the reviewer's tab
            assert "token=" not in tab.url  # moved out of the address bar into a cookie
            assert tab.evaluate(OPEN_SOCKET, socket_url) == "open"  # the served page itself may connect

            other = reviewer.new_page()  # same browser, same cookies, another site's page
            other.goto(other_local_site)
            assert other.evaluate(OPEN_SOCKET, socket_url) == "refused"
        finally:
            browser.close()
