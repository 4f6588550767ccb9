"""The "Retries" section of the task dialog, with a live preview of the waits.

Backoff parameters are hard to picture ("exponential from 10s, capped at 1h, 5
attempts"), so the section spells out the delays the policy would wait, using the
same ``RetryPolicy.preview`` the engine's numbers come from.
"""

from __future__ import annotations

from datetime import timedelta

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QGroupBox,
    QSpinBox,
    QWidget,
)

from taskgui.core.duration import format_duration
from taskgui.core.retry import (
    DEFAULT_BASE_DELAY,
    DEFAULT_MAX_DELAY,
    MAX_ATTEMPTS_LIMIT,
    Backoff,
    RetryPolicy,
)
from taskgui.runtime.guard import never_raises
from taskgui.ui.task_dialog.fields import (
    DurationEdit,
    MessageLabel,
    add_row,
    checked,
    combo_box,
    field_cell,
    named,
    new_form,
)
from taskgui.ui.task_dialog.fixed_lines import FixedLinesLabel

PREVIEW_LIMIT = 8

_BACKOFF_ITEMS = (
    ("exponential", Backoff.EXPONENTIAL.value, "Each wait doubles, up to the maximum delay"),
    ("fixed", Backoff.FIXED.value, "Every retry waits the first delay"),
    ("none", Backoff.NONE.value, "Never retry: the first failure is final"),
)


def preview_text(policy: RetryPolicy) -> str:
    """``Retries after: 10s, 20s, 40s`` — the waits before each retry, without jitter."""
    delays = policy.preview(PREVIEW_LIMIT)
    if not delays:
        return "No retries: the first failure is final."
    # No-break spaces keep "1m 20s" on one line when the preview wraps.
    waits = (format_duration(delay).replace(" ", "\N{NO-BREAK SPACE}") for delay in delays)
    text = "Retries after: " + ", ".join(waits)
    retries = policy.max_attempts - 1
    if retries > len(delays):
        text += f", … ({retries} retries in all)"
    if policy.jitter:
        text += " — each up to half shorter, at random"
    return text


class RetryEditor(QGroupBox):
    """Max attempts, first and maximum delay, backoff and jitter of a task.

    The delay fields are disabled while the policy cannot retry (one attempt, or backoff
    "none"); their text is then kept as it is but not held against the form.

    Signals:
        changed(): any retry field was edited.
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Retries", parent)
        # Not shown (the dialog offers the usual doubling); kept so that editing a task
        # with another factor does not silently change it.
        self._factor = RetryPolicy().factor

        self.attempts = named(
            QSpinBox(),
            "max_attempts",
            "Max attempts",
            "Runs per occurrence, the first one included; 1 = no retry",
        )
        self.attempts.setRange(1, MAX_ATTEMPTS_LIMIT)
        self.first_delay = named(
            DurationEdit(example="10s"), "first_delay", "First retry delay", "The first wait"
        )
        self.first_delay_error = MessageLabel(field=self.first_delay)
        self.first_delay_error.setObjectName("first_delay_error")
        self.max_delay = named(
            DurationEdit(example="1h"),
            "max_delay",
            "Maximum retry delay",
            "No wait grows beyond this",
        )
        self.max_delay_error = MessageLabel(field=self.max_delay)
        self.max_delay_error.setObjectName("max_delay_error")
        self.backoff = combo_box("backoff", "Backoff", _BACKOFF_ITEMS)
        self.jitter = named(
            QCheckBox("Add random &jitter"),
            "jitter",
            "Add random jitter",
            "Shorten each wait by up to half, at random, so tasks that failed together "
            "do not all retry at the same moment",
        )
        self.preview = named(FixedLinesLabel(2, wrap=True), "retry_preview", "Retry preview")

        form = new_form(self)
        add_row(form, "Max &attempts", self.attempts)
        add_row(
            form,
            "&First delay",
            self.first_delay,
            field_cell(self.first_delay, self.first_delay_error),
        )
        add_row(
            form, "Ma&x delay", self.max_delay, field_cell(self.max_delay, self.max_delay_error)
        )
        add_row(form, "Bac&koff", self.backoff)
        form.addRow("", self.jitter)
        form.addRow("", self.preview)

        self.set_policy(RetryPolicy())
        self.attempts.valueChanged.connect(self._on_field_changed)
        self.first_delay.textChanged.connect(self._on_field_changed)
        self.max_delay.textChanged.connect(self._on_field_changed)
        self.backoff.currentIndexChanged.connect(self._on_field_changed)
        self.jitter.toggled.connect(self._on_field_changed)

    def focus_order(self) -> list[QWidget]:
        """The focusable widgets in visual order, for the dialog's tab chain."""
        return [self.attempts, self.first_delay, self.max_delay, self.backoff, self.jitter]

    def set_policy(self, policy: RetryPolicy) -> None:
        """Show ``policy``; reading it back unchanged gives an equal policy."""
        self._factor = policy.factor
        self.attempts.setValue(policy.max_attempts)
        self.first_delay.set_duration(policy.base_delay)
        self.max_delay.set_duration(policy.max_delay)
        self.backoff.setCurrentIndex(self.backoff.findData(policy.backoff.value))
        self.jitter.setChecked(policy.jitter)
        self._update_enabled()

    def _can_retry(self) -> bool:
        return self.backoff.currentData() != Backoff.NONE.value and self.attempts.value() > 1

    def _update_enabled(self) -> None:
        active = self._can_retry()
        for widget in (self.first_delay, self.max_delay, self.jitter):
            widget.setEnabled(active)

    def policy(self) -> RetryPolicy | None:
        """The policy the fields describe, messages shown under them; None when invalid."""
        self._update_enabled()
        if self._can_retry():
            policy = self._checked_policy()
        else:
            self.first_delay_error.show_message(None)
            self.max_delay_error.show_message(None)
            policy = self._quiet_policy()
        self.preview.setText(preview_text(policy) if policy is not None else "")
        return policy

    def _checked_policy(self) -> RetryPolicy | None:
        base = checked(self.first_delay_error, self.first_delay.duration)
        cap = checked(self.max_delay_error, self.max_delay.duration)
        if base is None or cap is None:
            return None
        # Judge the first delay on its own, so its message lands under its own field.
        if checked(self.first_delay_error, lambda: self._build(base, max(base, cap))) is None:
            return None
        return checked(self.max_delay_error, lambda: self._build(base, cap))

    def _quiet_policy(self) -> RetryPolicy:
        """The policy of disabled delay fields: their values if valid, else defaults."""
        try:
            base, cap = self.first_delay.duration(), self.max_delay.duration()
            if base is not None and cap is not None:
                return self._build(base, cap)
        except ValueError:  # InvalidTaskError included
            pass
        return self._build(DEFAULT_BASE_DELAY, DEFAULT_MAX_DELAY)

    def _build(self, base: timedelta, cap: timedelta) -> RetryPolicy:
        return RetryPolicy(
            backoff=Backoff(self.backoff.currentData()),
            max_attempts=self.attempts.value(),
            base_delay=base,
            max_delay=cap,
            factor=self._factor,
            jitter=self.jitter.isChecked(),
        )

    @never_raises
    def _on_field_changed(self, *_args: object) -> None:
        self.changed.emit()
