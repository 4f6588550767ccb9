"""The collapsible "Advanced" section of the task dialog.

Most tasks never need a timeout, a concurrency key or an overlap policy, so these sit
behind a disclosure button: the dialog stays short for the common case, and a task
that does use them opens with the section expanded so nothing set is out of sight.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QLineEdit,
    QWidget,
)

from taskgui.core.engine.engine import DEFAULT_RUN_ALL_LIMIT
from taskgui.core.notify_rules import NotifyRule
from taskgui.core.states import MisfirePolicy, OverlapPolicy
from taskgui.core.task import MAX_ENV_BYTES, Command, TaskSpec
from taskgui.core.wake import WakePolicy, parse_wake_policy
from taskgui.runtime.guard import never_raises
from taskgui.ui.notify.rule_picker import RulePicker
from taskgui.ui.task_dialog.bounded_text import BoundedTextEdit
from taskgui.ui.task_dialog.fields import (
    DurationEdit,
    MessageLabel,
    add_row,
    checked,
    combo_box,
    env_text,
    field_cell,
    named,
    new_form,
    parse_env_lines,
)
from taskgui.ui.task_dialog.foldout import Foldout

_PROBE_COMMAND = Command(line="true")
_PROBE_TIME = datetime(2000, 1, 1, tzinfo=UTC)
_DEFAULTS = TaskSpec(name="defaults", command=_PROBE_COMMAND, first_run_at=_PROBE_TIME)
_OVERLAP_ITEMS = (
    (
        "skip",
        OverlapPolicy.SKIP.value,
        "If the previous run is still going, skip this run (a 'run all' catch-up still "
        "runs every missed one, one after another)",
    ),
    ("queue", OverlapPolicy.QUEUE.value, "Start this run as soon as the previous run finishes"),
    ("parallel", OverlapPolicy.PARALLEL.value, "Start this run alongside the previous one"),
)
# A run is missed when its time passes while nothing can start it: the computer slept
# or was off, taskgui was not running, the clock jumped, or the task was paused. Each
# choice says what happens once taskgui is back, or the task is resumed.
_MISFIRE_ITEMS = (
    (
        "run once",
        MisfirePolicy.RUN_ONCE.value,
        "After sleep, downtime or a pause: one catch-up run for everything missed",
    ),
    (
        "skip",
        MisfirePolicy.SKIP.value,
        "After sleep, downtime or a pause: run nothing late; wait for the next scheduled "
        "time (the missed runs are recorded)",
    ),
    (
        "run all",
        MisfirePolicy.RUN_ALL.value,
        "After sleep, downtime or a pause: run every missed occurrence, one after another, "
        f"up to {DEFAULT_RUN_ALL_LIMIT}",
    ),
)
# After a sleep with many runs due at once (core/wake.py); "" follows Settings.
_WAKE_ITEMS = (
    ("as in Settings", "", "The wake-up policy chosen in Settings"),
    ("spread over 10 minutes", "spread:10m", "Start the catch-ups one after another"),
    ("run at once", "now", "Start every catch-up right away"),
    ("ask me", "ask", "Hold the catch-ups and ask in the window"),
)
_MISFIRE_TIP = (
    "What happens to runs missed while the computer slept or was off, taskgui was not "
    "running, or the task was paused: on waking, at the next start or on Resume"
)


def _wake_combo() -> QComboBox:
    combo = combo_box("on_wake", "After a sleep", _WAKE_ITEMS)
    combo.setToolTip("When the computer wakes with many runs due at once")
    return combo


def text_box(
    object_name: str, accessible_name: str, lines: int, placeholder: str, *, max_length: int
) -> BoundedTextEdit:
    """A few-line plain text field in a fixed-width font; Tab moves on, as in a form.

    A paste of more than ``max_length`` characters is refused (see ``bounded_text``)."""
    box = named(BoundedTextEdit(max_length, accessible_name.lower()), object_name, accessible_name)
    box.setTabChangesFocus(True)
    box.setPlaceholderText(placeholder)
    box.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    margins = box.contentsMargins()
    height = box.fontMetrics().lineSpacing() * lines + 2 * box.document().documentMargin()
    box.setFixedHeight(int(height) + margins.top() + margins.bottom() + 2)
    return box


@dataclass(frozen=True, slots=True)
class AdvancedValues:
    """What the section contributes to a task; ``env`` as ``Command`` stores it."""

    timeout: timedelta | None
    concurrency_key: str | None
    overlap: OverlapPolicy
    misfire: MisfirePolicy
    env: tuple[tuple[str, str], ...]
    use_shell: bool
    paused: bool
    notify: NotifyRule | None = None
    on_wake: WakePolicy | None = None


class AdvancedEditor(Foldout):
    """Timeout, concurrency key, overlap and misfire policy, environment, shell, paused.

    Signals:
        changed(): any field in the section was edited.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("advanced_toggle", "Advanced settings", "Ad&vanced", parent)

        self.timeout = named(
            DurationEdit(optional=True), "timeout", "Timeout", "Stop a run after this long"
        )
        self.timeout_error = MessageLabel(field=self.timeout)
        self.concurrency_key = named(
            QLineEdit(),
            "concurrency_key",
            "Concurrency key",
            "Tasks that share a key never run at the same time",
        )
        self.concurrency_key.setPlaceholderText("none")
        self.overlap = combo_box("overlap", "Overlap policy", _OVERLAP_ITEMS)
        self.overlap.setToolTip("What happens when a run is due while the previous one runs")
        self.misfire = combo_box("misfire", "Misfire policy", _MISFIRE_ITEMS)
        self.misfire.setToolTip(_MISFIRE_TIP)
        self.env = text_box(
            "env",
            "Environment variables",
            3,
            "NAME=value, one per line",
            max_length=MAX_ENV_BYTES,
        )
        self.env_error = MessageLabel(field=self.env)
        self.env.refused.connect(self.env_error.show_message)
        self.use_shell = named(
            QCheckBox("R&un through the shell"),
            "use_shell",
            "Run through the shell",
            "Off: split the command into a program and its arguments, no shell",
        )
        self.use_shell.setChecked(True)
        self.paused = named(
            QCheckBox("Start pause&d"),
            "paused",
            "Start paused",
            "Keep its place in the schedule, but start no runs until resumed",
        )

        # When to tell the person about its runs; "As in Settings" keeps no rule.
        self.notify = named(
            RulePicker(allow_default=True), "notify", "Notify", "When to tell you about its runs"
        )

        self.on_wake = _wake_combo()

        # A frame like the Retries group beside it, so the columns line up.
        self.content.setObjectName("advanced")
        form = new_form(self.content)
        add_row(form, "T&imeout", self.timeout, field_cell(self.timeout, self.timeout_error))
        add_row(form, "Concurrenc&y key", self.concurrency_key)
        add_row(form, "Over&lap", self.overlap)
        add_row(form, "Mi&sfire", self.misfire)
        add_row(form, "&Environment", self.env, field_cell(self.env, self.env_error))
        add_row(form, "N&otify", self.notify.choice, self.notify)
        add_row(form, "&Queue after a sleep", self.on_wake)
        form.addRow("", self.use_shell)
        form.addRow("", self.paused)

        for line in (self.timeout, self.concurrency_key):
            line.textChanged.connect(self._on_field_changed)
        self.env.textChanged.connect(self._on_field_changed)
        self.overlap.currentIndexChanged.connect(self._on_field_changed)
        self.misfire.currentIndexChanged.connect(self._on_field_changed)
        self.use_shell.toggled.connect(self._on_field_changed)
        self.paused.toggled.connect(self._on_field_changed)
        self.notify.choice.currentIndexChanged.connect(self._on_field_changed)
        self.notify.count.valueChanged.connect(self._on_field_changed)
        self.on_wake.currentIndexChanged.connect(self._on_field_changed)

    def focus_order(self) -> list[QWidget]:
        """The focusable widgets in visual order, for the dialog's tab chain."""
        return [
            self.toggle,
            self.timeout,
            self.concurrency_key,
            self.overlap,
            self.misfire,
            self.env,
            self.notify.choice,  # its count follows it when shown (Qt's own order)
            self.on_wake,
            self.use_shell,
            self.paused,
        ]

    def set_values(self, spec: TaskSpec) -> None:
        """Show a task's advanced settings; expand the section if any is not default."""
        self.timeout.set_duration(spec.timeout)
        self.concurrency_key.setText(spec.concurrency_key or "")
        self.overlap.setCurrentIndex(self.overlap.findData(spec.overlap.value))
        self.misfire.setCurrentIndex(self.misfire.findData(spec.misfire.value))
        self.env.setPlainText(env_text(spec.command.env))
        self.use_shell.setChecked(spec.command.use_shell)
        if spec.command.shell_path:  # a crontab's SHELL=, kept while the box stays on
            shell = spec.command.shell_path.replace("&", "&&")  # not a mnemonic
            self.use_shell.setText(f"R&un through the shell ({shell})")
        self.paused.setChecked(spec.paused)
        self.notify.set_rule(spec.notify)
        wake = spec.on_wake.text if spec.on_wake else ""
        if self.on_wake.findData(wake) < 0:  # a policy set elsewhere: shown as it is
            self.on_wake.addItem(spec.on_wake.describe() if spec.on_wake else wake, wake)
        self.on_wake.setCurrentIndex(self.on_wake.findData(wake))
        self.set_expanded(
            spec.timeout is not None
            or spec.concurrency_key is not None
            or spec.overlap is not _DEFAULTS.overlap
            or spec.misfire is not _DEFAULTS.misfire
            or bool(spec.command.env)
            or spec.command.use_shell is not _DEFAULTS.command.use_shell
            or spec.command.shell_path is not None
            or spec.paused
            or spec.notify is not None
            or spec.on_wake is not None
        )

    def values(self) -> AdvancedValues | None:
        """The section's values, messages shown under the fields; None when invalid."""
        timeout = checked(
            self.timeout_error,
            lambda: (
                TaskSpec(
                    name="probe",
                    command=_PROBE_COMMAND,
                    first_run_at=_PROBE_TIME,
                    timeout=self.timeout.duration(),
                ).timeout,
            ),
        )
        env = checked(
            self.env_error,
            lambda: Command(line="true", env=parse_env_lines(self.env.toPlainText())).env,
        )
        self.show_attention(timeout is None or env is None)
        if timeout is None or env is None:
            return None
        return AdvancedValues(
            timeout=timeout[0],
            concurrency_key=self.concurrency_key.text().strip() or None,
            overlap=OverlapPolicy(self.overlap.currentData()),
            misfire=MisfirePolicy(self.misfire.currentData()),
            env=env,
            use_shell=self.use_shell.isChecked(),
            paused=self.paused.isChecked(),
            notify=self.notify.rule(),
            on_wake=parse_wake_policy(wake) if (wake := self.on_wake.currentData()) else None,
        )

    @never_raises
    def _on_field_changed(self, *_args: object) -> None:
        self.changed.emit()
