"""A footer that fits its terminal: on a narrow one it turns compact and leaves out the least useful keys
(the focused list's Enter, the palette key, then from the end), always keeping `? Help`, which lists them all.

Textual's own footer scrolls sideways and so cuts the last keys off at 80 columns.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

#: binding ids left out first when the keys do not fit, in this order (then from the end)
DROP_FIRST = ("list.select", "app.commands", "app.quit", "label.undo", "run.prev-finding")
#: binding ids kept whatever the width
ALWAYS = ("app.help",)


def key_width(key_display: str, description: str, *, compact: bool) -> int:
    """Columns one footer key takes (Textual's FooterKey styles: padding and margin)."""
    if compact:
        return cell_len(key_display) + (1 + cell_len(description) if description else 0) + 1
    return cell_len(key_display) + 2 + (cell_len(description) + 1 if description else 0)


def fit_keys(
    keys: list[tuple[str | None, int]], width: int, *, drop_first: tuple[str, ...] = DROP_FIRST
) -> list[int]:
    """Indices of `keys` ((binding id, columns) in footer order) to show within `width` columns."""
    kept = list(range(len(keys)))

    def total() -> int:
        return sum(keys[i][1] for i in kept)

    order = [i for name in drop_first for i in kept if keys[i][0] == name]
    order += [i for i in reversed(kept) if i not in order and keys[i][0] not in ALWAYS]
    for i in order:
        if total() <= width:
            break
        kept.remove(i)
    return kept


class FittingFooter(Footer):
    """`Footer` that never shows more keys than fit on one line (compact when the terminal is narrow)."""

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        width = self.app.size.width
        active = self.screen.active_bindings
        shown: list[tuple[Binding, bool, str]] = []
        seen: set[str] = set()
        for _node, binding, enabled, tooltip in active.values():
            if binding.show and binding.action not in seen:
                seen.add(binding.action)
                shown.append((binding, enabled, tooltip))
        palette = active.get(self.app.COMMAND_PALETTE_BINDING) if self.show_command_palette else None
        items = [(b.id, self.app.get_key_display(b), b.description) for b, _e, _t in shown]
        if palette is not None:  # docked right, with a one-column border
            items.append(("app.commands", self.app.get_key_display(palette[1]), palette[1].description))

        def sizes(compact: bool) -> list[tuple[str | None, int]]:
            out = [(i, key_width(k, d, compact=compact)) for i, k, d in items]
            if palette is not None:
                out[-1] = (out[-1][0], out[-1][1] + 1)
            return out

        compact = sum(w for _, w in sizes(False)) > width
        self.compact = compact
        kept = set(fit_keys(sizes(compact), width))
        for index, (binding, enabled, tooltip) in enumerate(shown):
            if index in kept:
                yield FooterKey(
                    binding.key,
                    items[index][1],
                    binding.description,
                    binding.action,
                    disabled=not enabled,
                    tooltip=tooltip,
                ).data_bind(compact=Footer.compact)
        if palette is not None and len(shown) in kept:
            _node, binding, enabled, tooltip = palette
            yield FooterKey(
                binding.key,
                self.app.get_key_display(binding),
                binding.description,
                binding.action,
                classes="-command-palette",
                disabled=not enabled,
                tooltip=binding.tooltip or binding.description,
            )

    def on_resize(self, event: events.Resize) -> None:
        self.call_after_refresh(self.recompose)
