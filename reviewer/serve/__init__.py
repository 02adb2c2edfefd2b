"""`reviewer serve`: the app in a browser through textual-serve, behind a per-start secret, an Origin and Host
check and a cap on app processes (textual-serve has no access control of its own)."""

from reviewer.serve.run import serve

__all__ = ["serve"]
