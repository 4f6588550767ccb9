"""The task dialog, driven the way a person drives it: typing, clicking, Tab and Enter.

Times come from a FakeClock, so the quick "When" choices and the past-time warning are
exact. Expected local times are computed with the machine's own zone, so the tests
hold in any time zone.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from time import monotonic
from zoneinfo import ZoneInfo

import pytest
from PySide6.QtCore import QDateTime, QPoint, QRect, Qt
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QWidget,
)
from pytestqt.qtbot import QtBot

from taskgui.core.clock import FakeClock
from taskgui.core.duration import duration_text, parse_duration
from taskgui.core.recurrence import Cron, Every, EveryMode, Once
from taskgui.core.retry import MAX_ATTEMPTS_LIMIT, Backoff, RetryPolicy
from taskgui.core.states import MisfirePolicy, OverlapPolicy
from taskgui.core.task import Command, TaskSpec
from taskgui.ui.task_dialog.dialog import TaskDialog
from taskgui.ui.task_dialog.fields import (
    MessageLabel,
    from_qdatetime,
    parse_env_lines,
)
from taskgui.ui.task_dialog.mode import DialogMode
from taskgui.ui.task_dialog.schedule_editor import QuickChoice
from taskgui.ui.task_dialog.schedule_preview import run_time_text

# The offscreen platform says this whenever a shown window's size limits change, which
# every window with a layout does; it is about the test platform, not about the dialog.
pytestmark = pytest.mark.qt_log_ignore(r"This plugin does not support propagateSizeHints\(\)")

NOW = datetime(2026, 1, 1, 12, 0, 0, 250_000, tzinfo=UTC)  # a Thursday
NOW_S = NOW.replace(microsecond=0)


class Pickers:
    """Stand-ins for the file dialogs: record the calls, answer with a set path."""

    def __init__(self) -> None:
        self.program = ""
        self.folder = ""
        self.calls: list[tuple[str, str]] = []

    def pick_program(self, parent: QWidget, start: str) -> str:
        self.calls.append(("program", start))
        return self.program

    def pick_folder(self, parent: QWidget, start: str) -> str:
        self.calls.append(("folder", start))
        return self.folder


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(NOW)


@pytest.fixture
def pickers() -> Pickers:
    return Pickers()


def open_dialog(
    qtbot: QtBot,
    clock: FakeClock,
    pickers: Pickers | None = None,
    *,
    spec: TaskSpec | None = None,
    mode: DialogMode = DialogMode.CREATE,
) -> TaskDialog:
    pickers = pickers or Pickers()
    dialog = TaskDialog(
        clock,
        spec=spec,
        mode=mode,
        pick_program=pickers.pick_program,
        pick_folder=pickers.pick_folder,
    )
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog


# Typed wrappers: pytest-qt's key and mouse helpers carry no annotations.
def press(
    qtbot: QtBot,
    widget: QWidget,
    key: Qt.Key,
    modifier: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier,
) -> None:
    qtbot.keyClick(widget, key, modifier)


def type_text(qtbot: QtBot, widget: QWidget, text: str) -> None:
    qtbot.keyClicks(widget, text)


def click(qtbot: QtBot, widget: QWidget) -> None:
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton)


def retype(qtbot: QtBot, widget: QWidget, text: str) -> None:
    """Select everything in a field and type over it, as a person would."""
    press(qtbot, widget, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    press(qtbot, widget, Qt.Key.Key_Delete)
    if text:
        type_text(qtbot, widget, text)


def fill_minimum(qtbot: QtBot, dialog: TaskDialog) -> None:
    retype(qtbot, dialog.name, "Backup")
    retype(qtbot, dialog.command, "rsync -a src dst")


def quick(dialog: TaskDialog, choice: str) -> QWidget:
    button = dialog.findChild(QWidget, choice)
    assert button is not None, choice
    return button


def local_tomorrow_at_nine(now: datetime) -> datetime:
    local = now.astimezone()
    naive = datetime.combine(local.date() + timedelta(days=1), time(9, 0))
    return naive.astimezone().astimezone(UTC)  # a naive datetime is read as local time


def accept(qtbot: QtBot, dialog: TaskDialog) -> TaskSpec:
    assert dialog.ok_button.isEnabled(), dialog.problems()
    click(qtbot, dialog.ok_button)
    assert dialog.result() == QDialog.DialogCode.Accepted
    spec = dialog.result_spec()
    assert spec is not None
    return spec


# ---------------------------------------------------------------- opening


def test_a_new_dialog_is_titled_focused_on_the_name_and_not_yet_valid(
    qtbot: QtBot, clock: FakeClock
) -> None:
    dialog = open_dialog(qtbot, clock)
    assert dialog.windowTitle() == "New Task"
    assert dialog.ok_button.text() == "Create"
    assert dialog.focusWidget() is dialog.name
    assert not dialog.ok_button.isEnabled()
    assert dialog.result_spec() is None
    assert dialog.minimumWidth() >= 700


def test_every_field_has_a_label_with_a_mnemonic_and_an_accessible_name(
    qtbot: QtBot, clock: FakeClock
) -> None:
    dialog = open_dialog(qtbot, clock)
    buddies = {
        label.buddy(): label.text() for label in dialog.findChildren(QLabel) if label.buddy()
    }
    fields = [
        dialog.name,
        dialog.command,
        dialog.cwd,
        dialog.priority,
        dialog.schedule.when,
        dialog.schedule.repeat,
        dialog.schedule.cron_expr,
        dialog.schedule.zone,
        dialog.retry.attempts,
        dialog.retry.first_delay,
        dialog.retry.max_delay,
        dialog.retry.backoff,
        dialog.advanced.timeout,
        dialog.advanced.concurrency_key,
        dialog.advanced.overlap,
        dialog.advanced.misfire,
        dialog.advanced.env,
        dialog.rules.give_up,
    ]
    for field in fields:
        assert "&" in buddies.get(field, ""), field.objectName()
        assert field.accessibleName(), field.objectName()
    mnemonics = [text[text.index("&") + 1].lower() for text in buddies.values() if "&" in text]
    assert len(mnemonics) == len(set(mnemonics)), sorted(mnemonics)


@pytest.mark.parametrize("expanded", [False, True], ids=["simple", "cron-and-advanced"])
def test_tab_follows_the_visual_order(qtbot: QtBot, clock: FakeClock, expanded: bool) -> None:
    dialog = open_dialog(qtbot, clock)
    fill_minimum(qtbot, dialog)
    if expanded:
        dialog.schedule.repeat.setCurrentIndex(2)
        dialog.advanced.set_expanded(True)
        dialog.rules.set_expanded(True)
        dialog.rules.idle.setChecked(True)  # its duration field takes a Tab then
        dialog.rules.spread.setText("5m")  # and so does the fixed-offset box
        dialog.run_after.toggle.setChecked(True)
    dialog.activateWindow()
    dialog.name.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is dialog.name)
    visited: list[QWidget] = []
    for _ in range(80):
        widget = QApplication.focusWidget()
        assert widget is not None
        if visited and widget is dialog.name:
            break
        if not visited or visited[-1] is not widget:  # each date section takes a Tab
            visited.append(widget)
        press(qtbot, widget, Qt.Key.Key_Tab)
    schedule, retry, advanced = dialog.schedule, dialog.retry, dialog.advanced
    cron = [schedule.cron_expr, schedule.zone] if expanded else []
    more = advanced.focus_order()[1:] if expanded else []
    rules = dialog.rules.focus_order()
    rules_shown = rules if expanded else rules[:1]
    after = dialog.run_after.focus_order()  # Add and Remove stay disabled: nothing to pick
    after_shown = [widget for widget in after if widget.isEnabled()] if expanded else after[:1]
    assert visited == [
        dialog.name,
        dialog.command,
        dialog.command_browse,
        dialog.cwd,
        dialog.cwd_browse,
        dialog.priority,
        schedule.when,
        *schedule.quick_buttons,
        schedule.repeat,
        *cron,
        retry.attempts,
        retry.first_delay,
        retry.max_delay,
        retry.backoff,
        retry.jitter,
        advanced.toggle,
        *more,
        *rules_shown,
        *after_shown,
        dialog.ok_button,
        dialog.buttons.button(QDialogButtonBox.StandardButton.Cancel),
    ]


# ---------------------------------------------------------------- creating


def test_create_a_task_with_keyboard_and_mouse(qtbot: QtBot, clock: FakeClock) -> None:
    dialog = open_dialog(qtbot, clock)
    type_text(qtbot, dialog.name, "  Nightly backup ")
    type_text(qtbot, dialog.command, "rsync -a ~/docs /mnt/backup")
    click(qtbot, quick(dialog, QuickChoice.IN_5_MIN))
    press(qtbot, dialog.schedule.repeat, Qt.Key.Key_Down)  # "At a fixed interval"
    retype(qtbot, dialog.schedule.every_count, "5")
    retype(qtbot, dialog.priority, "7")
    retype(qtbot, dialog.retry.attempts, "4")
    retype(qtbot, dialog.retry.first_delay, "30s")
    retype(qtbot, dialog.retry.max_delay, "2m")
    assert dialog.retry.preview.text() == "Retries after: 30s, 1m, 2m"
    click(qtbot, dialog.advanced.toggle)
    assert dialog.advanced.content.isVisible()
    type_text(qtbot, dialog.advanced.timeout, "1h30m")
    type_text(qtbot, dialog.advanced.concurrency_key, "db")
    press(qtbot, dialog.advanced.overlap, Qt.Key.Key_Down)  # queue
    press(qtbot, dialog.advanced.misfire, Qt.Key.Key_End)  # run all
    type_text(qtbot, dialog.advanced.env, "LANG=C.UTF-8")
    press(qtbot, dialog.advanced.env, Qt.Key.Key_Return)
    type_text(qtbot, dialog.advanced.env, "GREETING=hello world")

    spec = accept(qtbot, dialog)

    assert spec == TaskSpec(
        name="Nightly backup",
        command=Command(
            line="rsync -a ~/docs /mnt/backup",
            env=(("LANG", "C.UTF-8"), ("GREETING", "hello world")),
        ),
        first_run_at=NOW_S + timedelta(minutes=5),
        recurrence=Every(timedelta(minutes=5), EveryMode.FIXED_RATE),
        priority=7,
        retry=RetryPolicy(
            max_attempts=4, base_delay=timedelta(seconds=30), max_delay=timedelta(minutes=2)
        ),
        timeout=timedelta(hours=1, minutes=30),
        concurrency_key="db",
        overlap=OverlapPolicy.QUEUE,
        misfire=MisfirePolicy.RUN_ALL,
    )
    assert spec.id == 0


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        (QuickChoice.NOW, NOW_S),
        (QuickChoice.IN_5_MIN, NOW_S + timedelta(minutes=5)),
        (QuickChoice.IN_1_HOUR, NOW_S + timedelta(hours=1)),
        (QuickChoice.TOMORROW_9, local_tomorrow_at_nine(NOW)),
    ],
)
def test_quick_when_buttons_count_from_the_clock(
    qtbot: QtBot, choice: str, expected: datetime
) -> None:
    clock = FakeClock(NOW)
    dialog = open_dialog(qtbot, clock)
    dialog.schedule.when.setDateTime(QDateTime(2030, 1, 1, 0, 0, 0))  # far from any answer
    fill_minimum(qtbot, dialog)
    click(qtbot, quick(dialog, choice))
    assert not dialog.schedule.when_warning.message()  # "Now" is not "has passed"
    assert accept(qtbot, dialog).first_run_at == expected


@pytest.mark.parametrize(
    ("count", "unit_steps", "mode_steps", "expected"),
    [
        ("90", 0, 1, Every(timedelta(minutes=90), EveryMode.FIXED_DELAY)),
        ("2", 2, 0, Every(timedelta(days=2))),
        ("45", -1, 0, Every(timedelta(seconds=45))),
    ],
)
def test_every_reads_count_unit_and_mode(
    qtbot: QtBot,
    clock: FakeClock,
    *,
    count: str,
    unit_steps: int,
    mode_steps: int,
    expected: Every,
) -> None:
    dialog = open_dialog(qtbot, clock)
    fill_minimum(qtbot, dialog)
    dialog.schedule.repeat.setCurrentIndex(1)
    retype(qtbot, dialog.schedule.every_count, count)
    key = Qt.Key.Key_Down if unit_steps > 0 else Qt.Key.Key_Up
    for _ in range(abs(unit_steps)):
        press(qtbot, dialog.schedule.every_unit, key)
    for _ in range(mode_steps):
        press(qtbot, dialog.schedule.every_mode, Qt.Key.Key_Down)
    assert accept(qtbot, dialog).recurrence == expected


def test_cron_shows_its_meaning_and_next_five_runs_in_local_time(
    qtbot: QtBot, clock: FakeClock
) -> None:
    dialog = open_dialog(qtbot, clock)
    fill_minimum(qtbot, dialog)
    press(qtbot, dialog.schedule.repeat, Qt.Key.Key_End)  # "On a cron schedule"
    assert dialog.schedule.cron_expr.isVisible()
    retype(qtbot, dialog.schedule.cron_expr, "0 9 * * 1-5")
    dialog.schedule.zone.setEditText("UTC")
    # Thursday 12:00 UTC: the first weekday 09:00 after it is Friday.
    runs = [datetime(2026, 1, day, 9, 0, tzinfo=UTC) for day in (2, 5, 6, 7, 8)]  # Fri, Mon..Thu
    lines = dialog.schedule.preview.text().splitlines()
    assert lines[0] == "At 09:00, Monday through Friday (UTC)"
    assert lines[1] == "Next runs (local time):"
    assert [line.strip() for line in lines[2:]] == [run_time_text(run) for run in runs]

    spec = accept(qtbot, dialog)
    assert spec.recurrence == Cron("0 9 * * 1-5", "UTC")
    assert spec.first_run_at == runs[0]


def test_the_cron_zone_defaults_to_the_local_zone(qtbot: QtBot, clock: FakeClock) -> None:
    dialog = open_dialog(qtbot, clock)
    zone = ZoneInfo(dialog.schedule.zone.currentText())  # an IANA name, not an offset
    for moment in (NOW, NOW + timedelta(days=182)):  # winter and summer time
        assert moment.astimezone(zone).utcoffset() == moment.astimezone().utcoffset()
    assert dialog.schedule.zone.findText(dialog.schedule.zone.currentText()) >= 0


def test_a_cron_run_time_moves_only_when_the_schedule_is_changed(
    qtbot: QtBot, clock: FakeClock
) -> None:
    # 12:34 is not a match of '0 9 * * *'; the task came from elsewhere that way.
    odd = replace(_complex_spec(), first_run_at=datetime(2025, 6, 30, 12, 34, tzinfo=UTC))
    dialog = open_dialog(qtbot, clock, spec=odd, mode=DialogMode.EDIT)
    retype(qtbot, dialog.name, "renamed")
    assert accept(qtbot, dialog).first_run_at == odd.first_run_at

    dialog = open_dialog(qtbot, clock, spec=odd, mode=DialogMode.EDIT)
    retype(qtbot, dialog.schedule.cron_expr, "0 10 * * 1")
    # From the same start, Monday 30 June 08:34 EDT: 10:00 EDT that day.
    assert accept(qtbot, dialog).first_run_at == datetime(2025, 6, 30, 14, 0, tzinfo=UTC)


def test_browse_inserts_the_chosen_program_quoted_and_sets_the_folder(
    qtbot: QtBot, clock: FakeClock, pickers: Pickers, tmp_path: pytest.TempPathFactory
) -> None:
    dialog = open_dialog(qtbot, clock, pickers)
    pickers.program = "/opt/my tools/run.sh"
    pickers.folder = str(tmp_path)
    click(qtbot, dialog.command_browse)
    type_text(qtbot, dialog.command, " --verbose")
    click(qtbot, dialog.cwd_browse)
    assert dialog.command.toPlainText() == "'/opt/my tools/run.sh' --verbose"
    assert dialog.cwd.text() == str(tmp_path)
    assert [kind for kind, _ in pickers.calls] == ["program", "folder"]

    pickers.program = pickers.folder = ""  # the person cancelled the picker
    click(qtbot, dialog.command_browse)
    click(qtbot, dialog.cwd_browse)
    assert dialog.command.toPlainText() == "'/opt/my tools/run.sh' --verbose"
    assert dialog.cwd.text() == str(tmp_path)
    retype(qtbot, dialog.name, "tool")
    assert accept(qtbot, dialog).command.cwd == str(tmp_path)


# ---------------------------------------------------------------- validation


def _set_cron(qtbot: QtBot, dialog: TaskDialog, expr: str, zone: str = "UTC") -> None:
    dialog.schedule.repeat.setCurrentIndex(2)
    dialog.schedule.zone.setEditText(zone)
    retype(qtbot, dialog.schedule.cron_expr, expr)


Edit = Callable[[QtBot, TaskDialog], object]


def _set_delays(qtbot: QtBot, dialog: TaskDialog, first: str, cap: str) -> None:
    retype(qtbot, dialog.retry.first_delay, first)
    retype(qtbot, dialog.retry.max_delay, cap)


def _type_advanced(qtbot: QtBot, dialog: TaskDialog, field: str, text: str) -> None:
    click(qtbot, dialog.advanced.toggle)
    type_text(qtbot, getattr(dialog.advanced, field), text)


INVALID_CASES = [
    pytest.param(
        lambda q, d: retype(q, d.name, "   "),
        lambda q, d: retype(q, d.name, "Backup"),
        "name_error",
        "the task needs a name",
        id="empty-name",
    ),
    pytest.param(
        lambda q, d: retype(q, d.command, ""),
        lambda q, d: retype(q, d.command, "true"),
        "command_error",
        "the command is empty; enter the command line to run",
        id="empty-command",
    ),
    pytest.param(
        lambda q, d: retype(q, d.retry.first_delay, "5x"),
        lambda q, d: retype(q, d.retry.first_delay, "5s"),
        "retry.first_delay_error",
        "cannot read '5x' as a duration; write it like 30s, 5m, 1h30m or 2d",
        id="bad-retry-delay",
    ),
    pytest.param(
        lambda q, d: _set_delays(q, d, "1h", "10m"),
        lambda q, d: retype(q, d.retry.max_delay, "2h"),
        "retry.max_delay_error",
        "the maximum retry delay must be at least the first retry delay",
        id="max-below-first-delay",
    ),
    pytest.param(
        lambda q, d: _set_cron(q, d, "61 * * * *"),
        lambda q, d: retype(q, d.schedule.cron_expr, "59 * * * *"),
        "schedule.cron_error",
        "minute 61 is not in 0-59",
        id="bad-cron",
    ),
    pytest.param(
        lambda q, d: _set_cron(q, d, "0 22-2 * * *"),
        lambda q, d: retype(q, d.schedule.cron_expr, "0 22-23,0-2 * * *"),
        "schedule.cron_error",
        "the hour field '22-2': the range 22-2 runs backwards, and cron never runs it; "
        "to wrap around, write two ranges: '22-23,0-2'",
        id="wrapped-cron",
    ),
    pytest.param(
        lambda q, d: _set_cron(q, d, "R 9 * * *"),
        lambda q, d: retype(q, d.schedule.cron_expr, "17 9 * * *"),
        "schedule.cron_error",
        "'R' (a random or hashed minute in some schedulers) is not cron",
        id="croniter-extension",
    ),
    pytest.param(
        lambda q, d: _set_cron(q, d, "0 9 * * *", zone="Mars/Olympus_Mons"),
        lambda q, d: d.schedule.zone.setEditText("Europe/Berlin"),
        "schedule.zone_error",
        "unknown time zone 'Mars/Olympus_Mons'",
        id="bad-zone",
    ),
    pytest.param(
        lambda q, d: _type_advanced(q, d, "env", "JUSTANAME"),
        lambda q, d: type_text(q, d.advanced.env, "=1"),
        "advanced.env_error",
        "line 1: 'JUSTANAME' needs the form NAME=value",
        id="env-line-without-equals",
    ),
    pytest.param(
        lambda q, d: _type_advanced(q, d, "env", "1X=2"),
        lambda q, d: retype(q, d.advanced.env, "X1=2"),
        "advanced.env_error",
        "environment variable name '1X' is not valid",
        id="env-bad-name",
    ),
    pytest.param(
        lambda q, d: _type_advanced(q, d, "timeout", "0s"),
        lambda q, d: retype(q, d.advanced.timeout, ""),
        "advanced.timeout_error",
        "the timeout must be longer than zero (or none)",
        id="zero-timeout",
    ),
    pytest.param(
        lambda q, d: type_text(q, d.cwd, "relative/dir"),
        lambda q, d: retype(q, d.cwd, "/"),
        "cwd_error",
        "the working directory must be a full path",
        id="relative-cwd",
    ),
]


def _label(dialog: TaskDialog, path: str) -> MessageLabel:
    target: object = dialog
    for part in path.split("."):
        target = getattr(target, part)
    assert isinstance(target, MessageLabel)
    return target


@pytest.mark.parametrize(("break_it", "fix_it", "label", "message"), INVALID_CASES)
def test_invalid_input_disables_ok_with_a_message_until_fixed(
    qtbot: QtBot,
    clock: FakeClock,
    *,
    break_it: Edit,
    fix_it: Edit,
    label: str,
    message: str,
) -> None:
    dialog = open_dialog(qtbot, clock)
    fill_minimum(qtbot, dialog)
    assert dialog.ok_button.isEnabled(), dialog.problems()

    break_it(qtbot, dialog)
    error = _label(dialog, label)
    assert message in error.message()
    assert error.isVisible()
    assert not dialog.ok_button.isEnabled()
    assert message in dialog.ok_button.toolTip()
    press(qtbot, dialog.name, Qt.Key.Key_Return)  # Enter does not slip past
    dialog.accept()  # nor does a programmatic accept
    assert dialog.isVisible() and dialog.result_spec() is None

    fix_it(qtbot, dialog)
    assert error.message() == ""
    assert not error.isVisible()
    assert dialog.ok_button.isEnabled(), dialog.problems()


def test_a_collapsed_advanced_section_says_it_needs_attention(
    qtbot: QtBot, clock: FakeClock
) -> None:
    dialog = open_dialog(qtbot, clock)
    fill_minimum(qtbot, dialog)
    click(qtbot, dialog.advanced.toggle)
    type_text(qtbot, dialog.advanced.timeout, "soon")
    click(qtbot, dialog.advanced.toggle)
    assert not dialog.advanced.content.isVisible()
    assert "needs attention" in dialog.advanced.toggle.text()
    click(qtbot, dialog.advanced.toggle)
    retype(qtbot, dialog.advanced.timeout, "10m")
    click(qtbot, dialog.advanced.toggle)
    assert "needs attention" not in dialog.advanced.toggle.text()


def test_a_past_time_warns_but_stays_valid(qtbot: QtBot, clock: FakeClock) -> None:
    dialog = open_dialog(qtbot, clock)
    fill_minimum(qtbot, dialog)
    warning = dialog.schedule.when_warning
    assert warning.message() == ""
    dialog.schedule.when.setDateTime(QDateTime.fromSecsSinceEpoch(int(NOW.timestamp()) - 3600))
    assert warning.message() == ("this time has passed; it runs as soon as it is created")
    assert warning.isVisible()
    assert dialog.ok_button.isEnabled()
    assert accept(qtbot, dialog).first_run_at == NOW_S - timedelta(hours=1)


def test_the_warning_clears_when_the_time_is_in_the_future_again(
    qtbot: QtBot, clock: FakeClock
) -> None:
    dialog = open_dialog(qtbot, clock)
    dialog.schedule.when.setDateTime(QDateTime.fromSecsSinceEpoch(int(NOW.timestamp()) - 600))
    assert dialog.schedule.when_warning.message()
    click(qtbot, quick(dialog, QuickChoice.IN_1_HOUR))
    assert dialog.schedule.when_warning.message() == ""


@pytest.mark.parametrize(
    ("attempts", "backoff_steps", "expected", "delays_enabled"),
    [
        ("1", 0, "No retries: the first failure is final.", False),
        ("3", 2, "No retries: the first failure is final.", False),
        ("4", 1, "Retries after: 10s, 10s, 10s", True),
        (
            "12",
            0,
            "Retries after: 10s, 20s, 40s, 1m 20s, 2m 40s, 5m 20s, 10m 40s, 21m 20s, "
            "… (11 retries in all)",
            True,
        ),
    ],
)
def test_the_retry_preview_spells_out_the_waits(
    qtbot: QtBot,
    clock: FakeClock,
    *,
    attempts: str,
    backoff_steps: int,
    expected: str,
    delays_enabled: bool,
) -> None:
    dialog = open_dialog(qtbot, clock)
    retype(qtbot, dialog.retry.attempts, attempts)
    for _ in range(backoff_steps):
        press(qtbot, dialog.retry.backoff, Qt.Key.Key_Down)
    assert dialog.retry.preview.text().replace("\N{NO-BREAK SPACE}", " ") == expected
    assert dialog.retry.first_delay.isEnabled() is delays_enabled


def test_disabled_retry_delays_are_not_held_against_the_form(
    qtbot: QtBot, clock: FakeClock
) -> None:
    dialog = open_dialog(qtbot, clock)
    fill_minimum(qtbot, dialog)
    retype(qtbot, dialog.retry.first_delay, "nonsense")
    assert not dialog.ok_button.isEnabled()
    retype(qtbot, dialog.retry.attempts, "1")
    assert dialog.retry.first_delay_error.message() == ""
    assert accept(qtbot, dialog).retry.max_attempts == 1


# ---------------------------------------------------------------- keys


def test_enter_creates_the_task_when_valid(qtbot: QtBot, clock: FakeClock) -> None:
    dialog = open_dialog(qtbot, clock)
    fill_minimum(qtbot, dialog)
    with qtbot.waitSignal(dialog.accepted, timeout=1000):
        press(qtbot, dialog.name, Qt.Key.Key_Return)
    spec = dialog.result_spec()
    assert spec is not None and spec.name == "Backup"


def test_escape_cancels(qtbot: QtBot, clock: FakeClock) -> None:
    """After asking, as something was typed (see test_unsaved_changes.py)."""
    dialog = open_dialog(qtbot, clock)
    asked: list[str] = []

    def discard(_parent: QWidget, _title: str, text: str) -> bool:
        asked.append(text)
        return True

    dialog._changes._ask = discard
    fill_minimum(qtbot, dialog)
    with qtbot.waitSignal(dialog.rejected, timeout=1000):
        press(qtbot, dialog.name, Qt.Key.Key_Escape)
    assert dialog.result_spec() is None
    assert asked == ["Discard this new task?"]


# ---------------------------------------------------------------- edit, duplicate


def _complex_spec() -> TaskSpec:
    """Values the dialog must carry through: hidden ones, odd ones, microseconds."""
    return TaskSpec(
        id=42,
        name="Report",
        command=Command(
            line="python3 report.py\n--all", use_shell=False, cwd="/tmp", env=(("A", " x=y "),)
        ),
        first_run_at=datetime(2025, 6, 30, 13, 0, tzinfo=UTC),  # Monday 09:00 EDT
        recurrence=Cron("0 9 * * 1", "America/New_York"),
        priority=5000,  # beyond the spin box's usual range
        retry=RetryPolicy(
            backoff=Backoff.FIXED,
            max_attempts=7,
            base_delay=timedelta(seconds=1, microseconds=500_000),
            max_delay=timedelta(days=1, hours=2, minutes=3, seconds=4),
            factor=3.0,
            jitter=True,
        ),
        timeout=timedelta(milliseconds=1500),
        concurrency_key="reports",
        overlap=OverlapPolicy.PARALLEL,
        misfire=MisfirePolicy.SKIP,
        misfire_grace=timedelta(minutes=5),
        paused=True,
    )


ROUND_TRIP_SPECS = [
    pytest.param(_complex_spec(), id="cron-and-everything"),
    pytest.param(
        TaskSpec(
            id=7,
            name="tick",
            command=Command(line="date"),
            first_run_at=NOW + timedelta(minutes=1, microseconds=3),
            recurrence=Every(timedelta(minutes=90), EveryMode.FIXED_DELAY),
            retry=RetryPolicy.no_retry(),
        ),
        id="every-with-microseconds",
    ),
    pytest.param(
        TaskSpec(
            id=8,
            name="once",
            command=Command(line="true"),
            first_run_at=NOW,
            recurrence=Once(),
            retry=RetryPolicy(max_attempts=1),
        ),
        id="once",
    ),
]


@pytest.mark.parametrize("spec", ROUND_TRIP_SPECS)
def test_edit_without_changes_gives_back_the_same_task(
    qtbot: QtBot, clock: FakeClock, spec: TaskSpec
) -> None:
    dialog = open_dialog(qtbot, clock, spec=spec, mode=DialogMode.EDIT)
    assert dialog.windowTitle() == f"Edit Task — {spec.name}"
    assert dialog.ok_button.text() == "Save"
    assert dialog.schedule.when_warning.message() == ""  # its own first run, long past
    assert accept(qtbot, dialog) == spec


def test_a_task_made_by_the_dialog_round_trips_exactly(qtbot: QtBot, clock: FakeClock) -> None:
    first = open_dialog(qtbot, clock)
    fill_minimum(qtbot, first)
    _set_cron(qtbot, first, "*/15 8-17 * * 1-5", zone="Europe/Berlin")
    retype(qtbot, first.retry.max_delay, "1h30m")
    first.advanced.set_expanded(True)
    type_text(qtbot, first.advanced.env, "B=2")
    press(qtbot, first.advanced.env, Qt.Key.Key_Return)
    type_text(qtbot, first.advanced.env, "A=1")
    created = replace(accept(qtbot, first), id=3)  # as the repository would store it

    second = open_dialog(qtbot, clock, spec=created, mode=DialogMode.EDIT)
    assert second.advanced.is_expanded()  # it has environment variables
    assert accept(qtbot, second) == created


def test_edit_keeps_the_id_and_applies_changes(qtbot: QtBot, clock: FakeClock) -> None:
    spec = _complex_spec()
    dialog = open_dialog(qtbot, clock, spec=spec, mode=DialogMode.EDIT)
    retype(qtbot, dialog.name, "Weekly report")
    result = accept(qtbot, dialog)
    assert result == replace(spec, name="Weekly report")
    assert result.id == 42


def test_a_new_schedule_for_a_cron_task_starts_now_not_at_its_old_first_match(
    qtbot: QtBot, clock: FakeClock
) -> None:
    """A trial: a weekly cron task (its stored first run is Sunday's match, which no one
    picked) edited to every 20 minutes waited for Sunday. It starts from now; "When"
    says so, and moves with the clock as a new task's does."""
    weekly = Cron("0 12 * * 7")
    sunday = weekly.first_at_or_after(NOW)
    assert sunday.weekday() == 6 and sunday > NOW
    spec = TaskSpec(
        id=7, name="weekly", command=Command(line="true"), first_run_at=sunday, recurrence=weekly
    )
    dialog = open_dialog(qtbot, clock, spec=spec, mode=DialogMode.EDIT)
    _set_cron(qtbot, dialog, "*/20 * * * *")
    assert dialog.schedule.follows_clock
    assert from_qdatetime(dialog.schedule.when.dateTime()) == NOW_S
    result = accept(qtbot, dialog)
    assert result.first_run_at == NOW_S  # 12:00:00 is a match: it runs now, not Sunday


def test_a_cron_task_whose_first_run_passed_keeps_it_with_a_new_schedule(
    qtbot: QtBot, clock: FakeClock
) -> None:
    """Its start is history (the preview goes on from now anyway): unchanged."""
    weekly = Cron("0 12 * * 7")
    before = weekly.first_at_or_after(NOW - timedelta(days=30))
    spec = TaskSpec(
        id=7, name="weekly", command=Command(line="true"), first_run_at=before, recurrence=weekly
    )
    dialog = open_dialog(qtbot, clock, spec=spec, mode=DialogMode.EDIT)
    _set_cron(qtbot, dialog, "*/20 * * * *")
    assert not dialog.schedule.follows_clock
    assert accept(qtbot, dialog).first_run_at == before


def test_editing_the_time_to_the_past_warns_about_saving(qtbot: QtBot, clock: FakeClock) -> None:
    spec = ROUND_TRIP_SPECS[2].values[0]
    assert isinstance(spec, TaskSpec)
    dialog = open_dialog(qtbot, clock, spec=spec, mode=DialogMode.EDIT)
    dialog.schedule.when.setDateTime(QDateTime.fromSecsSinceEpoch(int(NOW.timestamp()) - 7200))
    assert dialog.schedule.when_warning.message() == (
        "this time has passed; it runs as soon as it is saved"
    )


def test_duplicate_prefills_a_copy_without_the_id(qtbot: QtBot, clock: FakeClock) -> None:
    spec = _complex_spec()
    dialog = open_dialog(qtbot, clock, spec=spec, mode=DialogMode.DUPLICATE)
    assert dialog.windowTitle() == "Duplicate Task"
    assert dialog.ok_button.text() == "Create"
    assert dialog.name.text() == "Report (copy)"
    result = accept(qtbot, dialog)
    # Its start passed long ago: the copy starts from its next run to come, Monday
    # 09:00 in New York, not at a past slot that would make it run at once.
    monday_nine = datetime(2026, 1, 5, 14, 0, tzinfo=UTC)
    assert result == replace(spec, id=0, name="Report (copy)", first_run_at=monday_nine)


def test_edit_and_duplicate_need_a_task(clock: FakeClock) -> None:
    with pytest.raises(ValueError, match="needs the task"):
        TaskDialog(clock, mode=DialogMode.EDIT)


# ---------------------------------------------------------------- robustness, helpers


def test_an_exception_in_a_slot_is_logged_not_raised(
    qtbot: QtBot, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    def broken_picker(parent: QWidget, start: str) -> str:
        raise RuntimeError("picker exploded")

    dialog = TaskDialog(clock, pick_program=broken_picker)
    qtbot.addWidget(dialog)
    dialog.show()
    with caplog.at_level(logging.ERROR):
        click(qtbot, dialog.command_browse)  # pytest-qt fails the test if it escapes
    assert "picker exploded" in caplog.text
    type_text(qtbot, dialog.name, "still works")
    assert dialog.name.text() == "still works"


@pytest.mark.parametrize(
    "delta",
    [
        timedelta(seconds=30),
        timedelta(hours=1, minutes=30),
        timedelta(days=2, seconds=1),
        timedelta(seconds=1, microseconds=500_000),
        timedelta(microseconds=1),
        timedelta(days=400, microseconds=123_456),
    ],
)
def test_duration_text_reads_back_exactly(delta: timedelta) -> None:
    assert parse_duration(duration_text(delta)) == delta


def test_env_lines_skip_blanks_and_comments_and_keep_values_exactly() -> None:
    assert parse_env_lines("# comment\n\nA= spaced \nB=x=y\n") == (("A", " spaced "), ("B", "x=y"))


def test_edit_keeps_the_shell_a_crontab_chose_until_the_shell_is_turned_off(
    qtbot: QtBot, clock: FakeClock
) -> None:
    bash = Command(line="source ~/.profile && backup", shell_path="/bin/bash")
    spec = replace(_complex_spec(), command=bash)
    dialog = open_dialog(qtbot, clock, spec=spec, mode=DialogMode.EDIT)
    assert dialog.advanced.is_expanded()
    assert dialog.advanced.use_shell.text() == "R&un through the shell (/bin/bash)"
    assert accept(qtbot, dialog) == spec

    again = open_dialog(qtbot, clock, spec=spec, mode=DialogMode.EDIT)
    again.advanced.use_shell.setChecked(False)
    assert accept(qtbot, again).command == Command(line=bash.line, use_shell=False)


# ------------------------------------------------------------ time passing


def _set_every(qtbot: QtBot, dialog: TaskDialog, count: str) -> None:
    dialog.schedule.repeat.setCurrentIndex(1)
    retype(qtbot, dialog.schedule.every_count, count)


def _preview_runs(dialog: TaskDialog) -> list[str]:
    return [line.strip() for line in dialog.schedule.preview.text().splitlines()[2:]]


@pytest.mark.parametrize(
    ("set_schedule", "expected_first"),
    [
        pytest.param(
            lambda q, d: _set_cron(q, d, "0 * * * *", zone="UTC"),
            datetime(2026, 1, 1, 13, 0, tzinfo=UTC),  # 12:00 had passed at Create
            id="cron",
        ),
        pytest.param(
            lambda q, d: _set_every(q, d, "15"),
            NOW_S + timedelta(minutes=10),  # the moment of Create: a fresh start
            id="every",
        ),
    ],
)
def test_a_new_recurring_task_never_starts_at_a_slot_that_passed_before_create(
    qtbot: QtBot,
    clock: FakeClock,
    set_schedule: Edit,
    expected_first: datetime,
) -> None:
    dialog = open_dialog(qtbot, clock)
    fill_minimum(qtbot, dialog)
    set_schedule(qtbot, dialog)
    clock.advance(timedelta(minutes=10))  # the person reads the form for a while
    dialog.schedule.tick()
    assert dialog.schedule.when_warning.message() == ""
    upcoming = _preview_runs(dialog)
    assert upcoming[0] == run_time_text(expected_first)
    assert accept(qtbot, dialog).first_run_at == expected_first


def test_when_follows_the_clock_until_a_start_is_picked(qtbot: QtBot, clock: FakeClock) -> None:
    dialog = open_dialog(qtbot, clock)
    when = dialog.schedule.when
    clock.advance(timedelta(seconds=90))
    dialog.schedule.tick()
    assert from_qdatetime(when.dateTime()) == NOW_S + timedelta(seconds=90)
    click(qtbot, quick(dialog, QuickChoice.IN_1_HOUR))
    clock.advance(timedelta(seconds=90))
    dialog.schedule.tick()
    assert from_qdatetime(when.dateTime()) == NOW_S + timedelta(seconds=90, hours=1)
    click(qtbot, quick(dialog, QuickChoice.NOW))  # "Now" follows the clock again
    clock.advance(timedelta(seconds=30))
    dialog.schedule.tick()
    assert from_qdatetime(when.dateTime()) == NOW_S + timedelta(seconds=210)


def test_a_picked_time_that_passes_while_the_dialog_is_open_says_so_by_itself(
    qtbot: QtBot, clock: FakeClock
) -> None:
    dialog = open_dialog(qtbot, clock)
    fill_minimum(qtbot, dialog)
    click(qtbot, quick(dialog, QuickChoice.IN_5_MIN))
    clock.advance(timedelta(minutes=7))  # nobody touches the form
    assert dialog.schedule.when_warning.message() == ""
    dialog.schedule.tick()
    assert dialog.schedule.when_warning.message() == (
        "this time has passed; it runs as soon as it is created"
    )
    assert dialog.schedule.when_warning.isVisible()
    assert accept(qtbot, dialog).first_run_at == NOW_S + timedelta(minutes=5)  # as picked


@pytest.mark.parametrize("mode", [DialogMode.EDIT, DialogMode.DUPLICATE])
def test_previews_of_an_edited_or_copied_task_list_only_runs_to_come(
    qtbot: QtBot, clock: FakeClock, mode: DialogMode
) -> None:
    started = NOW_S - timedelta(days=3, minutes=7)  # a 15-minute grid, three days old
    spec = TaskSpec(
        id=5,
        name="poll",
        command=Command(line="true"),
        first_run_at=started,
        recurrence=Every(timedelta(minutes=15)),
    )
    dialog = open_dialog(qtbot, clock, spec=spec, mode=mode)
    step = timedelta(minutes=15)

    def expected(first: datetime) -> list[str]:
        return [run_time_text(first + step * k) for k in range(5)]

    if mode is DialogMode.EDIT:  # the task's own grid, from its next point on
        assert _preview_runs(dialog) == expected(NOW_S + timedelta(minutes=8))
    else:  # a copy starts afresh now: its source's start was nobody's pick
        assert _preview_runs(dialog) == expected(NOW_S)
    clock.advance(timedelta(minutes=20))
    dialog.schedule.tick()
    if mode is DialogMode.EDIT:
        assert _preview_runs(dialog) == expected(NOW_S + timedelta(minutes=23))
    else:
        assert _preview_runs(dialog) == expected(NOW_S + timedelta(minutes=20))


# ------------------------------------------------------------ a form that holds still


def _geometries(dialog: TaskDialog) -> dict[str, tuple[int, int, int, int]]:
    """Where every field and button is, in the dialog's coordinates."""
    found: dict[str, tuple[int, int, int, int]] = {}
    for widget in dialog.findChildren(QWidget):
        if widget.objectName() and widget.isVisible() and not isinstance(widget, MessageLabel):
            corner = widget.mapTo(dialog, widget.rect().topLeft())
            found[widget.objectName()] = (corner.x(), corner.y(), widget.width(), widget.height())
    return found


def test_messages_appearing_never_move_the_fields(qtbot: QtBot, clock: FakeClock) -> None:
    dialog = open_dialog(qtbot, clock)
    fill_minimum(qtbot, dialog)
    _set_cron(qtbot, dialog, "0 9 * * 1-5", zone="UTC")
    qtbot.wait(10)
    before = _geometries(dialog)
    size = dialog.size()
    assert {"name", "command", "cwd", "cron_expr", "ok_button", "first_delay"} <= before.keys()
    breakages: list[Callable[[], object]] = [
        lambda: retype(qtbot, dialog.name, ""),
        lambda: retype(qtbot, dialog.cwd, "relative/dir"),
        lambda: retype(qtbot, dialog.cwd, "/no/such/folder/for/taskgui"),  # the warning
        lambda: retype(qtbot, dialog.schedule.cron_expr, "61 * * * * and a very long tail"),
        lambda: retype(qtbot, dialog.retry.first_delay, "soon"),
        lambda: retype(qtbot, dialog.command, ""),
    ]
    for breakage in breakages:
        breakage()
        qtbot.wait(10)
        assert _geometries(dialog) == before
        assert dialog.size() == size
    # Too long for the narrow retry column: cut there, said in full at the bottom.
    retype(qtbot, dialog.schedule.cron_expr, "0 9 * * 1-5")
    retype(qtbot, dialog.retry.first_delay, "soonish")
    assert dialog.retry.first_delay_error.is_cut()
    assert dialog.cut_message.text() == (
        "First retry delay: cannot read 'soonish' as a duration; write it like 30s, 5m, 1h30m or 2d"
    )
    assert dialog.retry.first_delay_error.toolTip()  # and in its tooltip
    assert _geometries(dialog) == before
    retype(qtbot, dialog.cwd, "/no/such/folder/for/taskgui")
    qtbot.waitUntil(dialog.cwd_warning.isVisible)  # looked at on a thread of its own
    assert not dialog.cwd_error.isVisible()
    warning = dialog.cwd_warning.geometry().translated(dialog.cwd_warning.mapTo(dialog, QPoint()))
    command = dialog.command.geometry().translated(dialog.command.mapTo(dialog, QPoint()))
    assert not warning.intersects(command)
    assert dialog.cwd_warning.text() == "this folder does not exist; runs fail until it does"


def test_a_working_directory_that_is_a_file_is_not_called_missing(
    qtbot: QtBot, clock: FakeClock, tmp_path: Path
) -> None:
    """A file is not "a folder that does not exist" (a trial: /etc/passwd was)."""
    (tmp_path / "notes.txt").write_text("x")
    dialog = open_dialog(qtbot, clock)
    type_text(qtbot, dialog.name, "x")  # the dialog judges once a person has had a go
    dialog.cwd.setText(str(tmp_path / "notes.txt"))  # as a paste or the folder picker puts it
    qtbot.waitUntil(
        lambda: (
            dialog.cwd_warning.text()
            == "this is a file, not a folder; runs fail until it is a folder"
        )
    )
    dialog.cwd.setText(str(tmp_path / "missing"))
    qtbot.waitUntil(
        lambda: dialog.cwd_warning.text() == "this folder does not exist; runs fail until it does"
    )
    dialog.cwd.setText(str(tmp_path))
    qtbot.waitUntil(lambda: not dialog.cwd_warning.isVisible())


def test_a_folder_that_does_not_answer_never_holds_up_the_dialog(
    qtbot: QtBot, clock: FakeClock
) -> None:
    """A stat of a hung network mount blocks as long as the mount: it is made on a
    thread of its own, and the dialog goes on (it checks its fields every second)."""
    answer = threading.Event()
    asked: list[str] = []

    def hung(folder: str) -> str | None:
        asked.append(folder)
        answer.wait(10)
        return "this folder does not exist; runs fail until it does"

    dialog = TaskDialog(clock, look_at_folder=hung)
    qtbot.addWidget(dialog)
    dialog.show()
    type_text(qtbot, dialog.name, "x")
    started = monotonic()
    dialog.cwd.setText("/net/gone")
    for _ in range(3):
        dialog.schedule.tick()  # the second's refresh asks again: no second look
    assert monotonic() - started < 1.0  # the look is still blocked
    assert asked == ["/net/gone"]
    assert not dialog.cwd_warning.isVisible()
    answer.set()
    qtbot.waitUntil(dialog.cwd_warning.isVisible)
    assert dialog.cwd_warning.text() == "this folder does not exist; runs fail until it does"


def test_no_error_is_shown_before_the_person_has_had_a_go(qtbot: QtBot, clock: FakeClock) -> None:
    dialog = open_dialog(qtbot, clock)
    shown = [label for label in dialog.findChildren(MessageLabel) if label.isVisible()]
    assert shown == []
    assert not dialog.ok_button.isEnabled()
    assert dialog.ok_button.toolTip() == "First fix: the task needs a name"
    type_text(qtbot, dialog.name, "x")
    retype(qtbot, dialog.name, "")
    assert dialog.name_error.isVisible()
    assert not dialog.command_error.isVisible()  # nobody has been in the command yet
    press(qtbot, dialog.name, Qt.Key.Key_Return)  # trying to create shows every problem
    assert dialog.command_error.isVisible()
    assert dialog.command_error.message().startswith("the command is empty")


def test_every_placeholder_fits_its_field(qtbot: QtBot, clock: FakeClock) -> None:
    dialog = open_dialog(qtbot, clock)
    dialog.advanced.set_expanded(True)
    dialog.resize(dialog.minimumSizeHint())
    qtbot.wait(10)
    for line in dialog.findChildren(QLineEdit):
        text = line.placeholderText()
        if text and line.isVisible():
            room = line.width() - 2 * line.textMargins().left() - 12  # frame and clear button
            assert line.fontMetrics().horizontalAdvance(text) <= room, text


def test_max_attempts_reaches_the_limit_core_and_the_cli_share(
    qtbot: QtBot, clock: FakeClock
) -> None:
    dialog = open_dialog(qtbot, clock)
    assert dialog.retry.attempts.maximum() == MAX_ATTEMPTS_LIMIT == 1_000
    fill_minimum(qtbot, dialog)
    retype(qtbot, dialog.retry.attempts, "1000")
    assert accept(qtbot, dialog).retry.max_attempts == MAX_ATTEMPTS_LIMIT


def _area(widget: QWidget, dialog: QWidget) -> QRect:
    return widget.geometry().translated(widget.mapTo(dialog, QPoint()) - widget.pos())


def test_a_warning_says_while_the_name_or_command_holds_invisible_characters(
    qtbot: QtBot, clock: FakeClock
) -> None:
    """The fields hold the raw text (an override is active there, a zero-width space
    unseen); a warning under each says so as the person types, and goes with them."""
    dialog = open_dialog(qtbot, clock)
    # Typed, then as a paste or an input method puts text (QTest types ASCII only).
    type_text(qtbot, dialog.name, "evil")
    dialog.name.insert("\u202eexe.txt")
    assert dialog.name.text() == "evil\u202eexe.txt"  # the editor holds it as typed
    assert dialog.name_warning.isVisible() and not dialog.name_error.isVisible()
    assert dialog.name_warning.textFormat() is Qt.TextFormat.PlainText
    assert dialog.name_warning.text() == (
        "this name holds invisible direction characters (shown in the list as \\u202e)"
    )
    assert dialog.name.accessibleDescription() == dialog.name_warning.text()
    assert not _area(dialog.name_warning, dialog).intersects(_area(dialog.command, dialog))

    type_text(qtbot, dialog.command, "echo back")
    dialog.command.insertPlainText("\u200bup\n\techo \x1b[2J")
    assert dialog.command_warning.isVisible()
    assert dialog.command_warning.text() == (
        "this command holds invisible or control characters (shown in the list as "
        "\\u200b, \\x1b)"  # the line break and the tab are seen in the editor
    )
    retype(qtbot, dialog.name, "evil.txt")
    assert not dialog.name_warning.isVisible()
    assert dialog.name.accessibleDescription() == ""
    retype(qtbot, dialog.command, "echo hi")
    dialog.command.insertPlainText("\n\techo there")
    assert not dialog.command_warning.isVisible()
    assert dialog.ok_button.isEnabled()  # a warning, not an error: it never stops Create
    # A joiner where it shapes letters (Persian "mi-khaham") is drawn as itself in the
    # list: it is not named, and with nothing else hidden there is no warning.
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"
    retype(qtbot, dialog.name, "x")
    dialog.name.setText(persian)
    assert not dialog.name_warning.isVisible()
    dialog.name.setText(persian + "\u202e")
    assert dialog.name_warning.text() == (
        "this name holds invisible direction characters (shown in the list as \\u202e)"
    )
    dialog.name.setText("back\u200dup")  # a joiner between Latin letters joins nothing
    assert dialog.name_warning.text() == (
        "this name holds invisible or control characters (shown in the list as \\u200d)"
    )
