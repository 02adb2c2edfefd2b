"""What every screen shares: worker failures go to the app's one handler."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.screen import Screen
from textual.widgets import Select
from textual.worker import Worker

if TYPE_CHECKING:
    from reviewer.service import ReviewService


class BaseScreen(Screen[Any]):
    @property
    def service(self) -> ReviewService:
        return self.app.service  # type: ignore[attr-defined]

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.app.report_worker(event)  # type: ignore[attr-defined]

    def sync_selects(self, selects: dict[str, str], values: dict[str, Any]) -> None:
        """Show `values` in the filter Selects (name -> widget id) without firing their Changed events."""
        for name, widget_id in selects.items():
            select: Select[str] = self.query_one(f"#{widget_id}", Select)
            value = values.get(name)
            with select.prevent(Select.Changed):
                if value is None:
                    select.clear()
                elif value in {v for _, v in select._options}:  # noqa: SLF001 - no public accessor
                    select.value = value
