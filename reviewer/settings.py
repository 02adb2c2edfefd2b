"""Who is reviewing: --reviewer, else $REVIEWER_NAME, else the system user."""

from __future__ import annotations

import getpass
import os


def resolve_reviewer(explicit: str | None = None) -> str:
    if explicit and explicit.strip():
        return explicit.strip()
    env = os.environ.get("REVIEWER_NAME", "").strip()
    if env:
        return env
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "reviewer"
