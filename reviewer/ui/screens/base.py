"""What every screen shares: worker failures go to the app's one handler."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.screen import Screen
from textual.worker import Worker

if TYPE_CHECKING:
    from reviewer.service import ReviewService


class BaseScreen(Screen[Any]):
    @property
    def service(self) -> ReviewService:
        return self.app.service  # type: ignore[attr-defined]

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.app.report_worker(event)  # type: ignore[attr-defined]
