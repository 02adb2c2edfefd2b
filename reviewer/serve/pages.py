"""The few pages the server answers with itself instead of the app: refused, and full."""

from __future__ import annotations

from html import escape

_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>footprint-reviewer: {title}</title>
<style>body {{ background: #0c181f; color: #e8eef2; font: 16px/1.5 monospace; margin: 4em auto; max-width: 46em; }}
h1 {{ font-size: 1.2em; }}</style></head>
<body><h1>{title}</h1><p>{body}</p></body></html>
"""


def page(title: str, body: str) -> str:
    """A plain page; both texts are escaped (nothing a request carries is ever echoed as HTML)."""
    return _PAGE.format(title=escape(title), body=escape(body))


def token_needed() -> str:
    return page(
        "this server needs its token",
        "Open the address printed when `reviewer serve` started (it ends in ?token=...), "
        "or ask whoever runs the server for it.",
    )


def full(limit: int) -> str:
    return page(
        "every session is in use",
        f"This server runs at most {limit} app session(s) at once and all are in use. Close another tab "
        "of this server, or try again later (the server can be started with a higher --max-sessions).",
    )
