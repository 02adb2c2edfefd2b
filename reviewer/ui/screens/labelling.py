"""Labelling with one key each, shared by the queue screen and the run screen.

`1` true positive, `2` false positive, `3` unsure (on a withheld answer: `1` withholding justified, `2`
withholding wrong); `o` a note (stored with the next label, or re-labels with the same verdict and the note);
`u` undoes by appending. Every write goes through `ReviewService` in a non-exclusive worker, so a second key
press never cancels the first write; errors surface as notifications.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.binding import Binding, BindingType

from reviewer.service.vocabulary import current_labels
from reviewer.ui.screens.base import BaseScreen
from reviewer.ui.widgets.evidence import LABEL_BINDING_KEYS, verdict_for
from reviewer.ui.widgets.inline_prompts import NoteBar
from reviewer.ui.widgets.safe import safe_text

LABEL_BINDINGS: list[BindingType] = [
    Binding("1", "label('1')", "TP / justified", id="label.tp"),
    Binding("2", "label('2')", "FP / wrong", id="label.fp"),
    Binding("3", "label('3')", "Unsure", id="label.unsure"),
    Binding("o", "note", "Note", id="label.note"),
    Binding("u", "undo_label", "Undo label", id="label.undo"),
]


class LabellingScreen(BaseScreen):
    """A screen with a current finding (`label_target`) that can be labelled from the keyboard."""

    BINDINGS: ClassVar[list[BindingType]] = list(LABEL_BINDINGS)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: finding id -> a note typed before the finding had a label of mine (stored with the next label)
        self.pending_notes: dict[str, str] = {}
        #: finding id -> its latest evidence dict (history updated after each write)
        self.evidence: dict[str, dict[str, Any]] = {}

    # -- what subclasses provide ------------------------------------------------------------------------------

    def label_target(self) -> tuple[str, str | None] | None:
        """(finding id, kind) under the cursor, or None."""
        raise NotImplementedError

    def after_label(self, finding_id: str, result: dict[str, Any], *, verdict: str | None) -> None:
        """Redraw whatever shows the finding's labels (`result`: {label, history, current})."""

    def shown_key(self, binding_id: str, default: str) -> str:
        """The key a hint should name for `binding_id`: the keymap's (first) key, else `default`."""
        keymap = getattr(self.app, "_keymap", {}) or {}
        first = str(keymap.get(binding_id) or default).split(",")[0].strip()
        return self.app.get_key_display(Binding(first, "")) if first else default

    def label_keys(self) -> dict[str, str]:
        """binding id -> the key shown for it, following the user's keymap (first key when several)."""
        return {binding_id: self.shown_key(binding_id, d) for binding_id, d in LABEL_BINDING_KEYS.items()}

    @property
    def reviewer(self) -> str:
        return str(self.app.reviewer_name)  # type: ignore[attr-defined]

    def _no_target(self) -> None:
        self.notify("put the cursor on a finding first", severity="warning", markup=False)

    def my_label(self, finding_id: str) -> dict[str, Any] | None:
        ev = self.evidence.get(finding_id)
        if ev is None:
            return None
        return current_labels(ev.get("history") or []).get(self.reviewer)

    # -- actions ----------------------------------------------------------------------------------------------

    def action_label(self, key: str) -> None:
        target = self.label_target()
        if target is None:
            self._no_target()
            return
        finding_id, kind = target
        verdict = verdict_for(key, kind)
        if verdict is None:
            return
        note = self.pending_notes.pop(finding_id, None)
        self.write_label(finding_id, verdict, note)

    def action_undo_label(self) -> None:
        target = self.label_target()
        if target is None:
            self._no_target()
            return
        self.undo_label(target[0])

    def action_note(self) -> None:
        """Ask for the note in a bar under the panels, so the finding and its evidence stay in view."""
        open_bar = self.query(NoteBar)
        if open_bar:
            open_bar.first().query_one("#note-input").focus()
            return
        target = self.label_target()
        if target is None:
            self._no_target()
            return
        finding_id, _kind = target
        mine = self.my_label(finding_id)
        current = self.pending_notes.get(finding_id) or (mine or {}).get("note") or ""
        about = Text.assemble(
            ("note on ", "dim"),
            safe_text(finding_id, limit=80, one_line=True, style="bold"),
            (f"  (your label: {mine['verdict']})" if mine else "  (stored with your next label)", "dim"),
        )

        def done(value: str | None) -> None:
            if value is None:
                return
            self.set_note(finding_id, value)

        self.mount(NoteBar(current, about=about, on_done=done))

    def set_note(self, finding_id: str, note: str) -> None:
        """Re-label with my current verdict and this note; with no label of mine yet, keep it for the next one."""
        mine = self.my_label(finding_id)
        if mine is not None:
            self.pending_notes.pop(finding_id, None)
            self.write_label(finding_id, str(mine["verdict"]), note or None)
            return
        if note:
            self.pending_notes[finding_id] = note
            self.notify("the note will be stored with your next label", markup=False)
        else:
            self.pending_notes.pop(finding_id, None)
        self.redraw_evidence(finding_id)

    def redraw_evidence(self, finding_id: str) -> None:
        """Redraw the evidence of `finding_id` if it is on screen (subclasses)."""

    # -- writes -----------------------------------------------------------------------------------------------

    @work(group="label-write", exclusive=False, exit_on_error=False)
    async def write_label(self, finding_id: str, verdict: str, note: str | None) -> None:
        try:
            result = await self.service.label_finding(finding_id, verdict, self.reviewer, note)
        except BaseException:
            if note:
                self.pending_notes.setdefault(finding_id, note)
            raise
        self._store_history(finding_id, result)
        self.after_label(finding_id, result, verdict=verdict)

    @work(group="label-write", exclusive=False, exit_on_error=False)
    async def undo_label(self, finding_id: str) -> None:
        result = await self.service.undo_label(self.reviewer, finding_id)
        if result["label"] is None:
            self.notify("nothing of yours to undo on this finding", severity="warning", markup=False)
            return
        restored = result["label"]["verdict"]
        self.notify(f"undone: your label is now {restored}", markup=False)
        self._store_history(finding_id, result)
        self.after_label(finding_id, result, verdict=None)

    def _store_history(self, finding_id: str, result: dict[str, Any]) -> None:
        ev = self.evidence.get(finding_id)
        if ev is not None:
            ev["history"] = result["history"]
            ev["current"] = result["current"]
