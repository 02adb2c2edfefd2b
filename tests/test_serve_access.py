"""`reviewer serve` lets in only its own page with its own token: raw HTTP and WebSocket clients (aiohttp)
with a wrong Origin, a wrong Host, no token or a wrong one are refused before any app process starts, and
sockets over --max-sessions are refused with a clear page."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import psutil
import pytest

from reviewer.serve.guard import Guard, served_names
from tests.conftest import REPO
from tests.serve_util import Served, serving

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("serve"), ["--max-sessions", "1", "--reviewer", "raw"]) as s:
        yield s


def _origin(s: Served) -> dict[str, str]:
    return {"Origin": s.base}


async def _ws_status(url: str, headers: dict[str, str]) -> int:
    """The HTTP status the WebSocket handshake got (101 when it was accepted)."""
    async with aiohttp.ClientSession() as session:
        try:
            async with session.ws_connect(url, headers=headers, timeout=aiohttp.ClientWSTimeout(ws_close=10)):
                return 101
        except aiohttp.WSServerHandshakeError as refused:
            return refused.status


def _app_processes(s: Served) -> list[psutil.Process]:
    return psutil.Process(s.proc.pid).children(recursive=True)


async def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    async with (
        aiohttp.ClientSession() as session,
        session.get(url, headers=headers, allow_redirects=False) as r,
    ):
        return r.status, await r.text()


def test_the_printed_url_carries_the_token(served: Served) -> None:
    assert served.token and len(served.token) >= 40
    assert served.url == f"http://127.0.0.1:{served.port}/?token={served.token}"


async def test_the_page_needs_the_token(served: Served) -> None:
    status, body = await _get(served.base + "/")
    assert status == 403 and "needs its token" in body
    status, _ = await _get(served.base + "/?token=not-the-token")
    assert status == 403
    status, _ = await _get(served.url)  # the printed URL: the token goes into a cookie, out of the address
    assert status == 302
    # downloads too (the app's exports): refused without the token, looked up (none by this key) with it
    assert (await _get(served.base + "/download/some-key"))[0] == 403
    cookie = {"Cookie": f"footprint-reviewer-token-{served.port}={served.token}"}
    assert (await _get(served.base + "/download/some-key", cookie))[0] == 404


async def test_a_socket_without_the_token_is_refused(served: Served) -> None:
    ws = f"ws://127.0.0.1:{served.port}/ws"
    assert await _ws_status(ws, _origin(served)) == 403
    assert await _ws_status(ws + "?token=wrong", _origin(served)) == 403
    assert (
        await _ws_status(ws, {**_origin(served), "Cookie": f"footprint-reviewer-token-{served.port}=wrong"})
        == 403
    )


async def test_a_socket_from_another_origin_is_refused(served: Served) -> None:
    ws = f"ws://127.0.0.1:{served.port}/ws?token={served.token}"
    assert await _ws_status(ws, {"Origin": "http://evil.example"}) == 403
    assert await _ws_status(ws, {"Origin": f"http://127.0.0.1:{served.port + 1}"}) == 403
    assert await _ws_status(ws, {"Origin": "null"}) == 403
    assert await _ws_status(ws, {}) == 403  # every browser sends an Origin on a WebSocket: none is refused
    assert _app_processes(served) == []  # refused before any app process started


async def test_a_wrong_host_is_refused_dns_rebinding(served: Served) -> None:
    """A page on evil.example whose name was rebound to 127.0.0.1 sends Host: evil.example."""
    ws = f"ws://127.0.0.1:{served.port}/ws?token={served.token}"
    rebound = {"Host": f"evil.example:{served.port}", "Origin": f"http://evil.example:{served.port}"}
    assert await _ws_status(ws, rebound) == 421
    assert _app_processes(served) == []
    status, _ = await _get(served.url, {"Host": f"evil.example:{served.port}"})
    assert status == 421


async def test_static_files_have_no_directory_listing(served: Served) -> None:
    for path in ("/static/", "/static/js/", "/static/fonts/"):
        status, body = await _get(served.base + path)
        assert status in (403, 404) and "Index of" not in body
    status, _ = await _get(served.base + "/static/js/textual.js")
    assert status == 200  # the page's own assets need no token


async def test_sessions_over_the_cap_are_refused_with_a_clear_page(served: Served) -> None:
    """--max-sessions 1: a second socket is refused (and the page says why) while the first holds its app;
    once the first closes, a new one is let in."""
    ws = f"ws://127.0.0.1:{served.port}/ws?token={served.token}"
    page = served.base + f"/?token={served.token}"
    cookie = {"Cookie": f"footprint-reviewer-token-{served.port}={served.token}"}
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(ws, headers=_origin(served)) as first:
            await asyncio.wait_for(first.receive(), timeout=60)  # its app process has started and is drawing
            started = len(_app_processes(served))
            assert started >= 1
            assert await _ws_status(ws, _origin(served)) == 503
            assert len(_app_processes(served)) == started  # the refused socket started nothing
            status, body = await _get(served.base + "/", cookie)
            assert status == 503 and "every session is in use" in body and "at most 1" in body
        # the first socket closed: its app stops and the slot is free again (checked for up to 60 s)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 60
        while (await _get(served.base + "/", cookie))[0] != 200:
            assert loop.time() < deadline, "the session slot was never released"
            await asyncio.sleep(0.2)
        assert (await _get(page))[0] == 302


def test_no_token_warns_and_lets_the_page_in(tmp_path: Path) -> None:
    with serving(tmp_path, ["--no-token"], ingest=False) as s:
        assert s.token is None and s.url == f"http://127.0.0.1:{s.port}/"
        status, body = asyncio.run(_get(s.base + "/"))
        assert status == 200 and "textual-terminal" in body
        # the Host and Origin checks still hold without a token
        assert (
            asyncio.run(_ws_status(f"ws://127.0.0.1:{s.port}/ws", {"Origin": "http://evil.example"})) == 403
        )
    assert any("WARNING: --no-token" in line for line in s.output)


def test_a_token_given_with_token_is_the_one_required(tmp_path: Path) -> None:
    chosen = "a-token-the-operator-chose-0123456789"
    with serving(tmp_path, ["--token", chosen], ingest=False) as s:
        assert s.token == chosen and s.url == f"http://127.0.0.1:{s.port}/?token={chosen}"
        assert asyncio.run(_get(s.base + "/"))[0] == 403
        assert asyncio.run(_get(s.base + "/?token=another"))[0] == 403
        assert asyncio.run(_get(s.url))[0] == 302
        ws = f"ws://127.0.0.1:{s.port}/ws"
        assert asyncio.run(_ws_status(ws + "?token=another", _origin(s))) == 403


def test_the_guard_names_only_the_served_address() -> None:
    guard = Guard(port=8000, names=tuple(served_names("127.0.0.1")), token="t")
    assert guard.host_ok("127.0.0.1:8000") and guard.host_ok("localhost:8000") and guard.host_ok("[::1]:8000")
    assert (
        not guard.host_ok("127.0.0.1:8001")
        and not guard.host_ok("evil.example:8000")
        and not guard.host_ok(None)
    )
    assert guard.origin_ok("http://localhost:8000", required=True)
    assert not guard.origin_ok("http://localhost:8000.evil.example", required=True)
    assert not guard.origin_ok(None, required=True) and guard.origin_ok(None, required=False)
    assert guard.token_ok(None, "t") and not guard.token_ok("T", None, "") and not guard.token_ok()


def test_a_taken_port_is_named_and_no_address_is_printed(tmp_path: Path) -> None:
    """A port something else holds: `reviewer serve` says which address it cannot listen on, with no
    traceback and no address to open (it printed one, then a traceback)."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "reviewer", "serve", "--db", str(tmp_path / "s.db"), "--port", str(port)],
            env={**os.environ, "PYTHONPATH": str(REPO)},
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode != 0
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr and "in use" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert "http://" not in done.stdout + done.stderr
