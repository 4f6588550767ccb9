"""The "Schedule" section of the task dialog: when a task first runs and how it repeats.

A person thinks in local wall time ("tomorrow at nine", "every weekday at 09:00 here"),
core wants an aware UTC first run and a ``Recurrence``. This editor is where the two
meet: the date-time field and the quick choices are local time from the injected clock,
a cron schedule defaults to this machine's zone, and the preview shows the next runs in
local time so a person can check the schedule means what they meant.

Until a person picks a start, "When" is *now* and moves with the clock (``follows_clock``):
a new task starts when it is created, at its first occurrence from then on, never at a
slot that passed while the dialog was open. A start picked on purpose is kept, even a
past one (it then says it has passed, as soon as it has, without an edit). The preview
lists only runs still to come, for a new, an edited and a duplicated task alike. A
timer refreshes all of this every second while the editor is shown.
"""

from __future__ import annotations

import functools
from datetime import datetime, timedelta
from typing import NamedTuple
from zoneinfo import available_timezones

from PySide6.QtCore import QDateTime, Qt, QTime, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QDateTimeEdit,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from taskgui.core.clock import Clock
from taskgui.core.recurrence import Cron, Every, EveryMode, Once, Recurrence, load_zone
from taskgui.runtime.guard import never_raises
from taskgui.system.local_zone import local_zone_name
from taskgui.ui.task_dialog.fields import (
    MessageLabel,
    add_row,
    checked,
    combo_box,
    field_cell,
    floor_to_second,
    from_qdatetime,
    named,
    new_form,
    to_qdatetime,
)
from taskgui.ui.task_dialog.fixed_lines import FixedLinesLabel
from taskgui.ui.task_dialog.schedule_preview import PREVIEW_LINES, preview_text
from taskgui.ui.task_dialog.schedule_start import derived_start, next_to_come

TICK_MS = 1_000
# A first run this much in the past counts as "has passed": "Now" is a moment old by the
# time a person presses Create, and that is not worth a warning.
PAST_TOLERANCE = timedelta(minutes=1)
DATETIME_FORMAT = "yyyy-MM-dd  HH:mm:ss"
_UNITS = (("seconds", 1), ("minutes", 60), ("hours", 3_600), ("days", 86_400))


class QuickChoice:
    """The quick "When" buttons; also their object names, which tests look up."""

    NOW = "when_now"
    IN_5_MIN = "when_5min"
    IN_1_HOUR = "when_1hour"
    TOMORROW_9 = "when_tomorrow"


class RepeatKind:
    """Data of the Repeat combo items (plain strings keep the combo data simple)."""

    ONCE = "once"
    EVERY = "every"
    CRON = "cron"


class Schedule(NamedTuple):
    first_run_at: datetime
    recurrence: Recurrence


@functools.cache
def zone_names() -> tuple[str, ...]:
    """Every IANA zone, sorted; read once because it walks the zoneinfo folders."""
    return tuple(sorted(available_timezones()))


class ScheduleEditor(QGroupBox):
    """When a task first runs (local time) and how it repeats (none, every N, cron).

    ``schedule()`` validates the fields, shows messages under them and refreshes the
    preview; the dialog calls it whenever anything changed. ``tick()`` lets time pass
    (the timer's slot, public for tests with a FakeClock).

    Signals:
        changed(): any field of the schedule was edited, or time moved the schedule.
    """

    changed = Signal()

    def __init__(self, clock: Clock, parent: QWidget | None = None) -> None:
        super().__init__("Schedule", parent)
        self._clock = clock
        self._loaded_first_run: datetime | None = None
        self._loaded_recurrence: Recurrence | None = None
        # The past-time warning is for a time a person chose; an edited task's original
        # first run is naturally in the past, so edit mode turns it off until changed.
        self.warn_about_loaded_time = True
        self.past_warning = "this time has passed; it runs as soon as it is created"
        # "When" is now, moving with the clock, until a person picks a start.
        self.follows_clock = True
        self._moving_time = False  # "When" is being set by the editor, not a person
        form = new_form(self)
        self._form = form
        add_row(form, "W&hen", *self._build_when())
        add_row(form, "&Repeat", self._build_repeat())
        self._every_cell = self._build_every()
        add_row(form, "Every", self.every_count, self._every_cell)
        self._cron_cell, self._zone_cell = self._build_cron()
        add_row(form, "&Cron expression", self.cron_expr, self._cron_cell)
        add_row(form, "&Time zone", self.zone, self._zone_cell)
        self.preview = named(FixedLinesLabel(PREVIEW_LINES), "schedule_preview", "Schedule preview")
        self.preview.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow("Preview", self.preview)
        self._ticker = QTimer(self)
        self._ticker.setInterval(TICK_MS)
        self._ticker.setTimerType(Qt.TimerType.CoarseTimer)
        self._ticker.timeout.connect(self._on_ticker_timeout)

        self.when.dateTimeChanged.connect(self._on_when_date_time_changed)
        self.repeat.currentIndexChanged.connect(self._on_repeat_current_index_changed)
        self.every_count.valueChanged.connect(self._on_field_changed)
        self.every_unit.currentIndexChanged.connect(self._on_field_changed)
        self.every_mode.currentIndexChanged.connect(self._on_field_changed)
        self.cron_expr.textChanged.connect(self._on_field_changed)
        self.zone.editTextChanged.connect(self._on_field_changed)
        self._move_when(floor_to_second(clock.now()))
        self._show_rows()

    def _build_when(self) -> tuple[QDateTimeEdit, QWidget]:
        self.when = named(
            QDateTimeEdit(),
            "when",
            "When",
            "Local time of the first run; a repeating task starts from here "
            "(a cron task at its first match at or after it)",
        )
        self.when.setCalendarPopup(True)
        self.when.setDisplayFormat(DATETIME_FORMAT)
        self.when_warning = MessageLabel(warning=True, field=self.when)
        self.when_warning.setObjectName("when_warning")
        quick = QHBoxLayout()
        quick.setSpacing(4)
        self.quick_buttons: list[QPushButton] = []
        for text, choice, tip in (
            ("Now", QuickChoice.NOW, "Run as soon as the task is created"),
            ("In 5 min", QuickChoice.IN_5_MIN, "Five minutes from now"),
            ("In 1 hour", QuickChoice.IN_1_HOUR, "One hour from now"),
            ("Tomorrow 09:00", QuickChoice.TOMORROW_9, "Tomorrow at 09:00 local time"),
        ):
            button = named(QPushButton(text), choice, tip, tip)
            button.setAutoDefault(False)  # Enter means Create, even after a click here
            button.clicked.connect(functools.partial(self._on_quick_button_clicked, choice))
            quick.addWidget(button)
            self.quick_buttons.append(button)
        quick.addStretch(1)
        return self.when, field_cell(self.when, quick, self.when_warning)

    def _build_repeat(self) -> QComboBox:
        self.repeat = combo_box(
            "repeat",
            "Repeat",
            (
                ("Does not repeat", RepeatKind.ONCE, ""),
                (
                    "At a fixed interval",
                    RepeatKind.EVERY,
                    "Every N seconds, minutes, hours or days",
                ),
                ("On a cron schedule", RepeatKind.CRON, "At the times a cron expression matches"),
            ),
        )
        return self.repeat

    def _build_every(self) -> QWidget:
        self.every_count = named(QSpinBox(), "every_count", "Repeat interval")
        self.every_count.setRange(1, 999_999)
        self.every_count.setValue(5)
        self.every_unit = combo_box(
            "every_unit", "Interval unit", [(text, size, "") for text, size in _UNITS]
        )
        self.every_unit.setCurrentIndex(1)
        self.every_mode = combo_box(
            "every_mode",
            "Repeat mode",
            (
                (
                    "on a fixed rate",
                    EveryMode.FIXED_RATE.value,
                    "Keeps a steady cadence from the first run, however long runs take",
                ),
                (
                    "after each run finishes",
                    EveryMode.FIXED_DELAY.value,
                    "Waits the interval after the previous run ends; runs never overlap",
                ),
            ),
        )
        self.every_error = MessageLabel(field=self.every_count)
        row = QHBoxLayout()
        row.addWidget(self.every_count)
        row.addWidget(self.every_unit)
        row.addWidget(self.every_mode, 1)
        return field_cell(row, self.every_error)

    def _build_cron(self) -> tuple[QWidget, QWidget]:
        self.cron_expr = named(
            QLineEdit(),
            "cron_expr",
            "Cron expression",
            "minute hour day-of-month month weekday; also @hourly, @daily, @weekly",
        )
        self.cron_expr.setPlaceholderText("minute hour day month weekday, e.g. 0 9 * * 1-5")
        self.cron_expr.setText("0 9 * * 1-5")
        self.cron_error = MessageLabel(field=self.cron_expr)
        self.cron_error.setObjectName("cron_error")
        self.zone = named(
            QComboBox(), "cron_zone", "Time zone", "The cron times are wall-clock times here"
        )
        self.zone.setEditable(True)
        self.zone.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.zone.addItems(list(zone_names()))
        completer = self.zone.completer()
        if completer is not None:  # type a part of a name, e.g. "berl"
            completer.setFilterMode(Qt.MatchFlag.MatchContains)
            completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        self.zone.setEditText(local_zone_name())
        self.zone_error = MessageLabel(field=self.zone)
        self.zone_error.setObjectName("zone_error")
        return field_cell(self.cron_expr, self.cron_error), field_cell(self.zone, self.zone_error)

    def focus_order(self) -> list[QWidget]:
        """The editor's focusable widgets in visual order, for the dialog's tab chain."""
        return [
            self.when,
            *self.quick_buttons,
            self.repeat,
            self.every_count,
            self.every_unit,
            self.every_mode,
            self.cron_expr,
            self.zone,
        ]

    # ------------------------------------------------------------ loading

    def set_schedule(
        self, first_run_at: datetime, recurrence: Recurrence, *, follow_if_past: bool = False
    ) -> None:
        """Show a task's schedule; reading it back unchanged gives the same values.

        With ``follow_if_past`` (a copy of a task), a start that has passed was nobody's
        choice for the new task: "When" is then now, moving with the clock.
        """
        self._loaded_first_run = first_run_at
        self._loaded_recurrence = recurrence
        self.follows_clock = follow_if_past and first_run_at < self._clock.now()
        if self.follows_clock:
            self._loaded_first_run = None
            self._move_when(floor_to_second(self._clock.now()))
        else:
            self._move_when(first_run_at)
        if isinstance(recurrence, Every):
            total = recurrence.interval.total_seconds()
            seconds = max(1, round(total))
            index = 0
            for position, (_, size) in enumerate(_UNITS):
                if seconds % size == 0:
                    index = position
            self.every_count.setValue(seconds // _UNITS[index][1])
            self.every_unit.setCurrentIndex(index)
            self.every_mode.setCurrentIndex(self.every_mode.findData(recurrence.mode.value))
            self.repeat.setCurrentIndex(self.repeat.findData(RepeatKind.EVERY))
        elif isinstance(recurrence, Cron):
            self.cron_expr.setText(recurrence.expr)
            self.zone.setEditText(recurrence.tz)
            self.repeat.setCurrentIndex(self.repeat.findData(RepeatKind.CRON))
        else:
            self.repeat.setCurrentIndex(self.repeat.findData(RepeatKind.ONCE))
        self._show_rows()

    # ------------------------------------------------------------ reading

    def start_time(self) -> datetime:
        """The "When" field as aware UTC (now, while it follows the clock).

        A loaded time keeps its sub-second part while the field still shows it (the
        field has whole seconds), so editing a task without touching "When" keeps it.
        """
        if self.follows_clock:
            return floor_to_second(self._clock.now())
        shown = from_qdatetime(self.when.dateTime())
        loaded = self._loaded_first_run
        if loaded is not None and shown == floor_to_second(loaded):
            return loaded
        return shown

    def schedule(self) -> Schedule | None:
        """Build the schedule from the fields; show what is wrong; None when invalid."""
        now = floor_to_second(self._clock.now())  # as "When" shows it
        start = self.start_time()
        kind = self.repeat.currentData()
        recurrence: Recurrence | None
        if kind == RepeatKind.EVERY:
            recurrence = checked(self.every_error, self._every)
        elif kind == RepeatKind.CRON:
            recurrence = self._cron()
        else:
            recurrence = Once()
        if recurrence is None:
            self.when_warning.show_message(None)
            self.preview.clear()
            return None
        first, loaded, old = start, self._loaded_first_run, self._loaded_recurrence
        untouched = start is loaded and recurrence == old  # keeps its first run, even no match
        if not untouched and start is loaded and derived_start(old, start, now):
            # A cron task's stored first run is its first match, which no one picked
            # ("until you pick a start, a new task starts when you create it"): with
            # another schedule it would be the new one's start, so a weekly job made
            # "every 20 minutes" waited for Sunday (a trial). It starts from now, and
            # "When" says so (a start picked on purpose can be picked again there).
            self._loaded_first_run = None
            self.follows_clock = True
            start = first = now
            self._move_when(start)
        if not untouched and isinstance(recurrence, Cron):
            try:
                first = recurrence.first_at_or_after(start)
            except (ValueError, OverflowError):  # no match before the calendar ends
                self.cron_error.show_message("the schedule has no run after this start time")
                self.preview.clear()
                return None
        self._update_past_warning(start, first)
        # Show when it really runs: the engine starts a cron task at its first match,
        # and a schedule whose start passed goes on from its next run to come.
        try:
            self._update_preview(next_to_come(first, recurrence, now), recurrence)
        except (ValueError, OverflowError):
            self.preview.clear()
        return Schedule(first, recurrence)

    def _every(self) -> Every:
        seconds = self.every_count.value() * int(self.every_unit.currentData())
        return Every(timedelta(seconds=seconds), EveryMode(self.every_mode.currentData()))

    def _cron(self) -> Cron | None:
        # The zone is judged first and on its own, so its message lands under it.
        zone = self.zone.currentText().strip()
        if checked(self.zone_error, lambda: load_zone(zone)) is None:
            self.cron_error.show_message(None)
            return None
        return checked(self.cron_error, lambda: Cron(self.cron_expr.text(), zone))

    def _update_past_warning(self, start: datetime, first: datetime) -> None:
        unchanged = start is self._loaded_first_run
        passed = first < self._clock.now() - PAST_TOLERANCE
        show = passed and (self.warn_about_loaded_time or not unchanged)
        self.when_warning.show_message(self.past_warning if show else None)

    def _update_preview(self, first: datetime | None, recurrence: Recurrence) -> None:
        if not recurrence.is_recurring or first is None:
            self.preview.clear()
            return
        self.preview.setText(preview_text(first, recurrence))

    # ------------------------------------------------------------ slots

    def _show_rows(self) -> None:
        kind = self.repeat.currentData()
        self._form.setRowVisible(self._every_cell, kind == RepeatKind.EVERY)
        self._form.setRowVisible(self._cron_cell, kind == RepeatKind.CRON)
        self._form.setRowVisible(self._zone_cell, kind == RepeatKind.CRON)
        self._form.setRowVisible(self.preview, kind != RepeatKind.ONCE)

    @never_raises
    def _on_repeat_current_index_changed(self, _index: int) -> None:
        self._show_rows()
        self.changed.emit()

    @never_raises
    def _on_field_changed(self, *_args: object) -> None:
        self.changed.emit()

    def tick(self) -> None:
        """Let a second pass: "When" follows the clock (unless a person is in it),
        and the preview and the past-time warning are brought up to date."""
        if self.follows_clock and not self.when.hasFocus():
            self._move_when(floor_to_second(self._clock.now()))
        self.changed.emit()

    @never_raises
    def _on_ticker_timeout(self) -> None:
        self.tick()

    def showEvent(self, event: object) -> None:  # noqa: N802
        self._ticker.start()
        super().showEvent(event)  # type: ignore[arg-type]

    def hideEvent(self, event: object) -> None:  # noqa: N802
        self._ticker.stop()
        super().hideEvent(event)  # type: ignore[arg-type]

    def _move_when(self, moment: datetime) -> None:
        """Set "When" as the editor, not as a person choosing a start."""
        self._moving_time = True
        try:
            self.when.setDateTime(to_qdatetime(moment))
        finally:
            self._moving_time = False

    @never_raises
    def _on_when_date_time_changed(self, *_args: object) -> None:
        if not self._moving_time:
            self.follows_clock = False  # a person picked a start
        self.changed.emit()

    @never_raises
    def _on_quick_button_clicked(self, choice: str, _checked: bool = False) -> None:
        now = to_qdatetime(self._clock.now())
        target: QDateTime
        if choice == QuickChoice.IN_5_MIN:
            target = now.addSecs(5 * 60)
        elif choice == QuickChoice.IN_1_HOUR:
            target = now.addSecs(60 * 60)
        elif choice == QuickChoice.TOMORROW_9:
            target = QDateTime(now.date().addDays(1), QTime(9, 0))
        else:
            target = now
        self._move_when(from_qdatetime(target))
        self.follows_clock = choice == QuickChoice.NOW
        self.changed.emit()
