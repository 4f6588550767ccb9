"""The collapsible "Conditions & spread" section of the task dialog.

When a due run may start: only on AC power, only online (optionally not on a metered
connection), only after the user has been idle a while; how long it may wait for them;
and a spread that starts each run a little after its time. Like "Advanced", it stays
folded for the common task and opens for one that uses it.

A condition this machine cannot check (no UPower and no /sys/class/power_supply, no idle
monitor, ...) is said so next to its box: such a task would wait and say why, which a
person should know before saving it, not after.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QWidget

from taskgui.core.conditions import Condition, RunConditions, SystemConditions
from taskgui.core.duration import format_duration
from taskgui.core.errors import InvalidTaskError
from taskgui.core.spread import Spread
from taskgui.core.task import TaskSpec
from taskgui.runtime.guard import never_raises
from taskgui.ui.task_dialog.fields import (
    DurationEdit,
    MessageLabel,
    add_row,
    checked,
    field_cell,
    named,
    new_form,
)
from taskgui.ui.task_dialog.foldout import Foldout

_CANNOT_CHECK = {
    Condition.AC_POWER: "power",
    Condition.NETWORK: "network",
    Condition.UNMETERED: "metered connection",
    Condition.IDLE: "idle time",
}


@dataclass(frozen=True, slots=True)
class RunRules:
    """What the section contributes to a task."""

    conditions: RunConditions
    spread: Spread | None


class RunRulesEditor(Foldout):
    """Run conditions and spread. Signals: changed() (Foldout's): any field was edited."""

    def __init__(
        self, system: SystemConditions | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__("rules_toggle", "Conditions and spread", "Conditions && spread", parent)
        self._system = system

        self.ac_power = named(
            QCheckBox("Only on AC power"),
            "ac_power",
            "Only on AC power",
            "A run due while on battery waits until the computer is plugged in",
        )
        self.network = named(
            QCheckBox("Only when online"),
            "network",
            "Only when online",
            "A run due while offline waits until the network is back",
        )
        self.unmetered = named(
            QCheckBox("Not on a metered connection"),
            "unmetered",
            "Not on a metered connection",
            "Also wait while the connection is metered (a phone's hotspot, say)",
        )
        self.idle = named(
            QCheckBox("Only when idle for"),
            "idle",
            "Only when idle",
            "Wait until nobody has touched the keyboard or mouse for this long",
        )
        self.idle_for = named(DurationEdit(example="10m"), "idle_for", "Idle time")
        self.idle_for.setText("10m")
        self.idle_error = MessageLabel(field=self.idle_for)
        self.stop_when_unmet = named(
            QCheckBox("Stop the run if a condition ends"),
            "stop_when_unmet",
            "Stop the run if a condition ends",
            "A run in progress is stopped when a condition stops holding (unplugged, "
            "offline, you came back) and runs again when they hold, no attempt spent",
        )
        self.give_up = named(
            DurationEdit(optional=True),
            "give_up_after",
            "Give up waiting after",
            "A run that waited this long for its conditions is recorded as missed",
        )
        self.give_up.setPlaceholderText("at the next run")
        self.give_up_error = MessageLabel(field=self.give_up)
        self.spread = named(
            DurationEdit(optional=True, example="10m"),
            "spread",
            "Spread",
            "Start each run up to this much after its time, so many tasks due at once "
            "do not all start in the same second",
        )
        self.spread_fixed = named(
            QCheckBox("Same offset every time"),
            "spread_fixed",
            "Same offset every time",
            "A fixed offset per task (like cron's H) instead of a new one for each run",
        )
        self.spread_error = MessageLabel(field=self.spread)
        self.spread_note = MessageLabel(lines=2, warning=True)
        self.spread_note.setObjectName("spread_note")
        self._task_id = 0
        self.cannot_check = MessageLabel(lines=2, warning=True)
        self.cannot_check.setObjectName("cannot_check")

        self._lay_out()

        for box in (
            self.ac_power,
            self.network,
            self.unmetered,
            self.idle,
            self.stop_when_unmet,
            self.spread_fixed,
        ):
            box.toggled.connect(self._on_field_changed)
        for line in (self.idle_for, self.give_up, self.spread):
            line.textChanged.connect(self._on_field_changed)
        self._follow_boxes()

    def _lay_out(self) -> None:
        # Few letters are left for mnemonics in this dialog (each must be unique): the
        # boxes go without, and Tab reaches every one of them in order.
        self.content.setObjectName("run_rules")
        form = new_form(self.content)
        form.addRow("", self.ac_power)
        form.addRow("", self.network)
        form.addRow("", self.unmetered)
        idle_row = QHBoxLayout()
        idle_row.setContentsMargins(0, 0, 0, 0)
        idle_row.addWidget(self.idle)
        idle_row.addWidget(self.idle_for, 1)
        form.addRow("", field_cell(idle_row, self.idle_error))
        form.addRow("", self.stop_when_unmet)
        form.addRow("", self.cannot_check)
        add_row(form, "&Give up after", self.give_up, field_cell(self.give_up, self.give_up_error))
        spread_row = QHBoxLayout()
        spread_row.setContentsMargins(0, 0, 0, 0)
        spread_row.addWidget(self.spread, 1)
        spread_row.addWidget(self.spread_fixed)
        add_row(
            form,
            "Spread over",
            self.spread,
            field_cell(spread_row, self.spread_error, self.spread_note),
        )

    def focus_order(self) -> list[QWidget]:
        return [
            self.toggle,
            self.ac_power,
            self.network,
            self.unmetered,
            self.idle,
            self.idle_for,
            self.stop_when_unmet,
            self.give_up,
            self.spread,
            self.spread_fixed,
        ]

    def set_values(self, spec: TaskSpec) -> None:
        """Show a task's conditions and spread; expand the section if it has any."""
        conditions = spec.conditions
        self.ac_power.setChecked(conditions.ac_power)
        self.network.setChecked(conditions.network or conditions.unmetered)
        self.unmetered.setChecked(conditions.unmetered)
        self.idle.setChecked(conditions.idle_for is not None)
        if conditions.idle_for is not None:
            self.idle_for.set_duration(conditions.idle_for)
        self.stop_when_unmet.setChecked(conditions.stop_when_unmet)
        self.give_up.set_duration(conditions.give_up_after)
        self.spread.set_duration(spec.spread.width if spec.spread else None)
        self.spread_fixed.setChecked(bool(spec.spread and spec.spread.fixed))
        self._task_id = spec.id
        self._follow_boxes()
        self.set_expanded(bool(conditions) or spec.spread is not None)

    def values(self) -> RunRules | None:
        """The section's values, messages shown under the fields; None when invalid."""
        idle = (
            checked(self.idle_error, lambda: (self._idle_for(),))
            if self.idle.isChecked()
            else (None,)
        )
        give_up = checked(self.give_up_error, lambda: (self.give_up.duration(),))
        spread = checked(self.spread_error, self._spread)
        self.show_attention(None in (idle, give_up, spread))
        if idle is None or give_up is None or spread is None:
            return None
        try:
            conditions = RunConditions(
                ac_power=self.ac_power.isChecked(),
                network=self.network.isChecked(),
                unmetered=self.unmetered.isChecked(),
                idle_for=idle[0],
                stop_when_unmet=self.stop_when_unmet.isChecked() and self._any_condition(),
                give_up_after=give_up[0] if self._any_condition() else None,
            )
        except InvalidTaskError as error:
            self.give_up_error.show_message(str(error))
            return None
        return RunRules(conditions=conditions, spread=spread[0])

    def _idle_for(self) -> timedelta:
        value = self.idle_for.duration()
        assert value is not None  # not optional
        RunConditions(idle_for=value)  # the range check, with core's wording
        return value

    def _spread(self) -> tuple[Spread | None]:
        width = self.spread.duration()
        return (None,) if width is None else (Spread(width, fixed=self.spread_fixed.isChecked()),)

    def _any_condition(self) -> bool:
        return any(
            box.isChecked() for box in (self.ac_power, self.network, self.unmetered, self.idle)
        )

    def _follow_boxes(self) -> None:
        """Keep the dependent fields enabled only when they mean something, and say
        which chosen condition this machine cannot check."""
        self.idle_for.setEnabled(self.idle.isChecked())
        self.give_up.setEnabled(self._any_condition())
        self.stop_when_unmet.setEnabled(self._any_condition())
        self.spread_fixed.setEnabled(bool(self.spread.text().strip()))
        if self.unmetered.isChecked() and not self.network.isChecked():
            self.network.setChecked(True)  # not metered means online too
        self.cannot_check.show_message(self._cannot_check_text())
        self.spread_note.show_message(self._spread_text())

    def _spread_text(self) -> str | None:
        """When a spread run starts, as far as it is known before it is drawn."""
        try:
            spread = self._spread()[0]
        except InvalidTaskError:
            return None
        if spread is None:
            return None
        if not spread.fixed:
            return f"Each run starts at a random moment up to {format_duration(spread.width)} late"
        if not self._task_id:
            return "A fixed delay per task, chosen from its id when it is saved"
        offset = spread.offset(self._task_id, lambda: 0.0)
        return f"Each run starts {format_duration(offset)} after its time"

    def _cannot_check_text(self) -> str | None:
        system = self._system
        if system is None:
            return None
        wanted = {
            Condition.AC_POWER: self.ac_power.isChecked(),
            Condition.NETWORK: self.network.isChecked(),
            Condition.UNMETERED: self.unmetered.isChecked(),
            Condition.IDLE: self.idle.isChecked(),
        }
        missing = [
            _CANNOT_CHECK[condition]
            for condition, on in wanted.items()
            if on and not system.reads(condition)
        ]
        if not missing:
            return None
        return f"Cannot be checked here: {', '.join(missing)}. The task would wait, saying so"

    @never_raises
    def _on_field_changed(self, *_args: object) -> None:
        self._follow_boxes()
        self.changed.emit()
