"""Who may use a served app: the request's Host and Origin must name the served address, and it must carry
the secret token. Pure rules (no web framework), so each is tested on its own and the server only asks."""

from __future__ import annotations

import hmac
import ipaddress
import secrets
import socket
from dataclasses import dataclass, field

#: the cookie that carries the token after the first visit (per port: cookies are not isolated by port)
COOKIE_PREFIX = "footprint-reviewer-token-"
WILDCARDS = ("0.0.0.0", "::", "")


def new_token() -> str:
    """A per-start secret, as Jupyter makes one: 256 bits, URL-safe."""
    return secrets.token_urlsafe(32)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _authority(name: str, port: int) -> str:
    name = name.lower()
    if ":" in name and not name.startswith("["):
        name = f"[{name}]"  # an IPv6 literal, as a browser writes it in Host and Origin
    return f"{name}:{port}"


def served_names(host: str, extra: tuple[str, ...] = ()) -> list[str]:
    """The names a browser may use for the bound address (first = the one printed in the URL)."""
    names: list[str] = []
    if host in WILDCARDS:
        names += [socket.gethostname(), socket.getfqdn()]
    elif not is_loopback(host):
        names.append(host)
    if host in WILDCARDS or is_loopback(host):
        names += ([host] if is_loopback(host) else []) + ["127.0.0.1", "localhost", "::1"]
    names += list(extra)
    unique: list[str] = []
    for name in names:
        if name and name.lower() not in unique:
            unique.append(name.lower())
    return unique


@dataclass(frozen=True)
class Guard:
    """The served address and the token (None: `--no-token`)."""

    port: int
    names: tuple[str, ...]
    token: str | None
    hosts: frozenset[str] = field(init=False)
    origins: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        hosts = {_authority(n, self.port) for n in self.names}
        if self.port == 80:
            hosts |= {_authority(n, self.port).rsplit(":", 1)[0] for n in self.names}
        object.__setattr__(self, "hosts", frozenset(hosts))
        object.__setattr__(self, "origins", frozenset(f"{s}://{h}" for h in hosts for s in ("http", "https")))

    @property
    def cookie_name(self) -> str:
        return f"{COOKIE_PREFIX}{self.port}"

    def host_ok(self, host: str | None) -> bool:
        """The Host header names the served address (a DNS-rebinding page sends its own name)."""
        return bool(host) and host.lower() in self.hosts  # type: ignore[union-attr]

    def origin_ok(self, origin: str | None, *, required: bool) -> bool:
        """The Origin header (sent by every browser on a WebSocket) is the served address itself."""
        if origin is None:
            return not required
        return origin.lower().rstrip("/") in self.origins

    def token_ok(self, *candidates: str | None) -> bool:
        """Any of the places a token may come in (query, cookie, Authorization header) holds the secret."""
        if self.token is None:
            return True
        expected = self.token.encode()
        return any(c is not None and hmac.compare_digest(c.encode(), expected) for c in candidates)

    def url(self, path: str = "/") -> str:
        """The address to open, with the token (what the server prints, as Jupyter does)."""
        base = f"http://{_authority(self.names[0], self.port)}{path}"
        return f"{base}?token={self.token}" if self.token else base
