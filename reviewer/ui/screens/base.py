"""What every screen shares: worker failures go to the app's one handler."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.screen import Screen
from textual.widgets import Select
from textual.worker import Worker

from reviewer.review.inert import inert

if TYPE_CHECKING:
    from reviewer.service import ReviewService


def option(value: str, width: int = 40) -> tuple[Text, str]:
    """A recorded value as a Select option: inert text, one line, bounded."""
    return Text(inert(value[:width], keep_newlines=False)), value


class BaseScreen(Screen[Any]):
    @property
    def service(self) -> ReviewService:
        return self.app.service  # type: ignore[attr-defined]

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.app.report_worker(event)  # type: ignore[attr-defined]

    def fill_selects(
        self,
        selects: dict[str, str],
        facets: dict[str, list[str]],
        keys: dict[str, str],
        values: dict[str, Any],
    ) -> None:
        """Offer each filter Select the values found in the database (facets[keys[name]]), keeping the
        current choice when it is still offered."""
        for name, key in keys.items():
            select: Select[str] = self.query_one(f"#{selects[name]}", Select)
            offered = facets.get(key, [])
            with select.prevent(Select.Changed):
                select.set_options([option(v) for v in offered])
                current = values.get(name)
                if current is not None and current in offered:
                    select.value = current

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
