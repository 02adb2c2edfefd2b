"""textual-serve's aiohttp server with the guard in front: every request's Host checked, the page, the socket
and downloads behind the token and the Origin check, a cap on app processes, no directory listings."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp_jinja2
import jinja2
from aiohttp import web
from textual_serve.server import Server

from reviewer.serve import pages
from reviewer.serve.guard import Guard

log = logging.getLogger("footprint-reviewer.serve")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

#: served without the token: the page's own assets (fonts, script, stylesheet), which hold nothing private
PUBLIC_PREFIX = "/static/"
#: our page (textual-serve's, with its fonts from this server) and our assets, beside textual-serve's
HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
STATIC_PREFIX = "/static/reviewer"
#: the characters the page draws with an emoji font (the system's, else the bundled Symbola subset)
EMOJI_RANGE = (
    "U+203C, U+2049, U+2122, U+2139, U+2194-2199, U+21A9-21AA, U+231A-231B, U+2328, U+23CF, U+23E9-23FA, "
    "U+24C2, U+25AA-25AB, U+25B6, U+25C0, U+25FB-25FE, U+2600-27BF, U+2934-2935, U+2B05-2B07, U+2B1B-2B1C, "
    "U+2B50, U+2B55, U+3030, U+303D, U+3297, U+3299, U+1F000-1FAFF"
)
HEADERS = {
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


def _html(text: str, status: int) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/html", headers=HEADERS)


class ServeError(Exception):
    """The server could not start (its port is taken, say)."""


class GuardedServer(Server):
    """One app process per accepted socket, at most `max_sessions` at once."""

    def __init__(
        self,
        command: str,
        *,
        guard: Guard,
        max_sessions: int,
        host: str,
        port: int,
        announce: Callable[[], None] = lambda: None,
    ) -> None:
        super().__init__(command, host=host, port=port, title="footprint-reviewer")
        self.guard = guard
        self.max_sessions = max_sessions
        #: sockets that hold (or are starting) an app process
        self.sessions = 0
        #: says where to go: called once the port listens
        self.announce = announce

    def serve(self, debug: bool = False) -> None:
        """Run until Ctrl+C, announcing the address only once the port listens (aiohttp calls `print` after
        its sites start): textual-serve's `serve` announces nothing, and ours, printed before the server
        started, was a moment early for a script that connects at once, and printed even when the port was
        taken. Raises ServeError when the port cannot be bound."""
        self.debug = debug
        self.initialize_logging()
        loop = asyncio.new_event_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):  # Windows' default loop has none
                loop.add_signal_handler(sig, self.request_exit)
        try:
            web.run_app(
                self._make_app(),
                host=self.host,
                port=self.port,
                handle_signals=False,
                loop=loop,
                print=lambda *_: self.announce(),
            )
        except OSError as exc:
            raise ServeError(f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}") from exc

    # -- the application and the checks every request passes --------------------------------------------------

    async def _make_app(self) -> web.Application:
        app = web.Application(middlewares=[self._check])
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(TEMPLATES))
        app.add_routes(
            [
                web.get("/", self.handle_index, name="index"),
                web.get("/ws", self.handle_websocket, name="websocket"),
                web.get("/download/{key}", self.handle_download, name="download"),
                web.static(STATIC_PREFIX, STATIC, show_index=False, name="reviewer-static"),
                web.static("/static", self.statics_path, show_index=False, name="static"),
            ]
        )
        app.on_startup.append(self.on_startup)
        app.on_shutdown.append(self.on_shutdown)
        return app

    @web.middleware
    async def _check(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        guard = self.guard
        if not guard.host_ok(request.headers.get("Host")):
            log.warning("refused %s: Host %r is not this server", request.path, request.headers.get("Host"))
            return web.Response(text="wrong Host: this server answers only to its own address\n", status=421)
        is_socket = request.path == "/ws"
        if not guard.origin_ok(request.headers.get("Origin"), required=is_socket):
            log.warning("refused %s: Origin %r", request.path, request.headers.get("Origin"))
            return web.Response(text="wrong Origin: only this server's own page may connect\n", status=403)
        if not request.path.startswith(PUBLIC_PREFIX) and not guard.token_ok(*self._tokens(request)):
            log.warning("refused %s: no valid token", request.path)
            if is_socket:
                return web.Response(text="token required\n", status=403)
            return _html(pages.token_needed(), 403)
        response = await handler(request)
        if not is_socket:
            for key, value in HEADERS.items():
                if key != "Cache-Control" or not request.path.startswith(PUBLIC_PREFIX):
                    response.headers.setdefault(key, value)  # (the page's assets may be cached)
        return response

    def _tokens(self, request: web.Request) -> tuple[str | None, ...]:
        header = request.headers.get("Authorization", "")
        scheme, _, value = header.partition(" ")
        return (
            request.query.get("token"),
            request.cookies.get(self.guard.cookie_name),
            value.strip() if scheme.lower() in ("token", "bearer") else None,
        )

    # -- the page and the socket ------------------------------------------------------------------------------

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        """The page, with the socket and assets addressed by the (checked) Host the browser used. A token in
        the address is moved into a cookie and out of the address bar (and history)."""
        if "token" in request.query and self.guard.token:
            rest = [(k, v) for k, v in request.query.items() if k != "token"]
            response = web.Response(status=302, headers={"Location": str(request.rel_url.with_query(rest))})
            response.set_cookie(
                self.guard.cookie_name, self.guard.token, httponly=True, samesite="Lax", path="/"
            )
            return response
        if self.sessions >= self.max_sessions:
            return _html(pages.full(self.max_sessions), 503)
        host = request.host
        try:
            font_size = int(request.query.get("fontsize", "16"))
        except ValueError:
            font_size = 16
        context: dict[str, Any] = {
            "font_size": max(6, min(font_size, 48)),
            "app_websocket_url": f"ws://{host}/ws",
            "config": {"static": {"url": f"http://{host}/static/"}},
            "reviewer_static": f"http://{host}{STATIC_PREFIX}/",
            "emoji_range": EMOJI_RANGE,
            "application": {"name": self.title},
        }
        return aiohttp_jinja2.render_template("app_index.html", request, context)

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:  # type: ignore[override]
        """Start an app process for this socket, unless `max_sessions` are already running."""
        if self.sessions >= self.max_sessions:
            log.warning("refused a session: %d of %d in use", self.sessions, self.max_sessions)
            return web.Response(
                text=f"every session is in use ({self.max_sessions})\n",
                status=503,
                headers={"Retry-After": "30"},
            )
        self.sessions += 1
        try:
            return await super().handle_websocket(request)
        finally:
            self.sessions -= 1

    async def on_startup(self, app: web.Application) -> None:
        """textual-serve prints its own banner and URL here; ours is printed by `serve` (with the token)."""
