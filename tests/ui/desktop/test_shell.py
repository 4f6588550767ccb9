"""The desktop shell over a real scheduler: notifications, closing, quitting, the tray.

Offscreen there is no tray, so notifications take the in-window banner path, which is
what these tests read. Where a tray matters, ``tray_available=True`` is injected: the
shell then builds its tray (menu, badge) and never shows the icon, since the platform
has no tray to show it in.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from taskgui.core.clock import SystemClock
from taskgui.core.notify_rules import parse_rule
from taskgui.core.retry import Backoff, RetryPolicy
from taskgui.core.states import TaskState
from taskgui.core.task import Command, TaskSpec
from taskgui.runtime.service import SchedulerService
from taskgui.store.sqlite.repository import SqliteRepository
from taskgui.ui.desktop.autostart import Autostart
from taskgui.ui.desktop.close_choice import CloseChoice
from taskgui.ui.desktop.settings import Settings
from taskgui.ui.desktop.settings_dialog import SettingsDialog
from taskgui.ui.desktop.shell import DesktopShell, running_question
from taskgui.ui.history.history_view import HistoryDialog
from taskgui.ui.notify.notifier import NoticeKind
from taskgui.ui.window.actions import Verb
from taskgui.ui.window.main_window import MainWindow

CLOCK = SystemClock()

# Bringing the window to the front calls raise(), which the offscreen platform cannot do.
pytestmark = pytest.mark.qt_log_ignore("This plugin does not support raise")


def spec(name: str, line: str, attempts: int = 1, **fields: Any) -> TaskSpec:
    retry = (
        RetryPolicy(
            backoff=Backoff.FIXED,
            max_attempts=attempts,
            base_delay=timedelta(milliseconds=50),
            max_delay=timedelta(milliseconds=50),
        )
        if attempts > 1
        else RetryPolicy.no_retry()
    )
    values: dict[str, Any] = {
        "name": name,
        "command": Command(line=line),
        "first_run_at": CLOCK.now(),
        "retry": retry,
    }
    values.update(fields)
    return TaskSpec(**values)


class Asker:
    """Stands in for the quit question; remembers what was asked."""

    def __init__(self) -> None:
        self.answer = True
        self.asked: list[str] = []

    def __call__(self, parent: QWidget, title: str, text: str) -> bool:
        self.asked.append(text)
        return self.answer


class Chooser:
    """Stands in for "Close taskgui?": answers as told, remembers who was running."""

    def __init__(self) -> None:
        self.answer = (CloseChoice.QUIT, False)
        self.asked: list[list[str]] = []

    def __call__(self, parent: QWidget, running: Sequence[str]) -> tuple[CloseChoice, bool]:
        self.asked.append(list(running))
        return self.answer


class Desktop:
    """A scheduler, its window and the shell around them, with the app's exits stubbed."""

    def __init__(self, tmp_path: Path, qtbot: QtBot) -> None:
        self.tmp_path = tmp_path
        self.qtbot = qtbot
        self.repository = SqliteRepository(tmp_path / "shell.sqlite3")
        self.service = SchedulerService(self.repository, CLOCK, workers=2, kill_grace=0.3)
        self.service.start()
        self.settings = Settings.at(str(tmp_path / "settings.ini"))
        self.autostart = Autostart(tmp_path / "autostart" / "taskgui.desktop", ("taskgui",))
        self.ask = Asker()
        self.choose = Chooser()
        self.quits: list[bool] = []
        self.shells: list[DesktopShell] = []

    def open(self, *, tray_available: bool = False) -> DesktopShell:
        window = MainWindow(self.service, CLOCK, location=str(self.tmp_path))
        self.qtbot.addWidget(window)
        shell = DesktopShell(
            window,
            self.settings,
            self.autostart,
            tray_available=tray_available,
            ask=self.ask,
            choose_close=self.choose,
            quit_app=lambda: self.quits.append(True),
        )
        self.shells.append(shell)
        shell.start()
        self.qtbot.waitExposed(window)
        return shell

    def close(self) -> None:
        for shell in self.shells:
            shell.window.close_for_quit()
            shell.close()
        with self.qtbot.waitSignal(self.service.stopped, timeout=10_000):
            self.service.shutdown(grace=0.0)
        self.service.pool.wait_for_done(5_000)
        self.repository.close()


@pytest.fixture
def desktop(tmp_path: Path, qtbot: QtBot) -> Iterator[Desktop]:
    env = Desktop(tmp_path, qtbot)
    yield env
    env.close()


def wait_state(qtbot: QtBot, shell: DesktopShell, task_id: int, state: TaskState) -> None:
    def reached() -> None:
        assert shell.service.task(task_id).state is state

    qtbot.waitUntil(reached, timeout=10_000)


def history_dialogs() -> list[HistoryDialog]:
    return [
        w for w in QApplication.topLevelWidgets() if isinstance(w, HistoryDialog) and w.isVisible()
    ]


# ------------------------------------------------------------------ notifications


def test_a_task_that_exhausts_its_retries_raises_a_notice(desktop: Desktop, qtbot: QtBot) -> None:
    shell = desktop.open()
    with qtbot.waitSignal(desktop.service.task_exhausted, timeout=10_000):
        task = desktop.service.add_task(spec("Flaky", "echo nope >&2; exit 3", attempts=2))
    banner = shell.window.banner
    assert banner.isVisible()
    assert banner.title_label.text() == "“Flaky” failed"
    assert banner.message_label.text() == "Gave up after 2 attempts: Exit status 3."
    # Each failure is quiet by default: only the final one was raised.
    assert [(n.kind, n.task_id) for n in shell.notifier.raised] == [(NoticeKind.EXHAUSTED, task.id)]


def test_each_failure_raises_a_notice_when_enabled(desktop: Desktop, qtbot: QtBot) -> None:
    desktop.settings.notify_failures = True
    shell = desktop.open()
    with qtbot.waitSignal(desktop.service.task_exhausted, timeout=10_000):
        task = desktop.service.add_task(spec("Flaky", "exit 4", attempts=3))
    kinds = [(n.kind, n.task_id) for n in shell.notifier.raised]
    assert kinds == [
        (NoticeKind.RETRYING, task.id),
        (NoticeKind.RETRYING, task.id),
        (NoticeKind.EXHAUSTED, task.id),
    ]
    first = shell.notifier.raised[0]
    assert first.title == "“Flaky” failed, will retry"
    assert first.message.startswith("Exit status 4. Attempt 2 of 3 in ")


def test_retry_now_takes_back_the_gave_up_banner_while_the_task_runs_again(
    desktop: Desktop, qtbot: QtBot
) -> None:
    shell = desktop.open()
    marker = desktop.tmp_path / "failed-once"
    line = f"test -e {marker} && sleep 30 || {{ touch {marker}; exit 1; }}"
    with qtbot.waitSignal(desktop.service.task_exhausted, timeout=10_000):
        task = desktop.service.add_task(spec("Second time lucky", line))
    window = shell.window
    assert window.banner.isVisible()
    window.select_task(task.id)
    window.actions_[Verb.RETRY].trigger()
    wait_state(qtbot, shell, task.id, TaskState.RUNNING)
    qtbot.waitUntil(lambda: not window.banner.isVisible(), timeout=2_000)


def test_a_retry_notice_is_not_taken_back_when_its_retry_starts(
    desktop: Desktop, qtbot: QtBot
) -> None:
    desktop.settings.notify_failures = True
    shell = desktop.open()
    marker = desktop.tmp_path / "failed-once"
    line = f"test -e {marker} && sleep 30 || {{ touch {marker}; exit 1; }}"
    with qtbot.waitSignal(desktop.service.retry_scheduled, timeout=10_000):
        task = desktop.service.add_task(spec("Flaky", line, attempts=2))
    wait_state(qtbot, shell, task.id, TaskState.RUNNING)
    assert shell.window.banner.isVisible()  # "failed, will retry" is still what happened


def test_no_notice_when_notifications_are_off(desktop: Desktop, qtbot: QtBot) -> None:
    desktop.settings.notify_exhausted = False
    shell = desktop.open()
    with qtbot.waitSignal(desktop.service.task_exhausted, timeout=10_000):
        desktop.service.add_task(spec("Broken", "exit 1"))
    assert shell.notifier.raised == []
    assert not shell.window.banner.isVisible()


def test_clicking_the_notice_selects_the_task_and_opens_its_history(
    desktop: Desktop, qtbot: QtBot
) -> None:
    shell = desktop.open()
    desktop.service.add_task(spec("Other", "true", first_run_at=CLOCK.now() + timedelta(hours=1)))
    with qtbot.waitSignal(desktop.service.task_exhausted, timeout=10_000):
        task = desktop.service.add_task(spec("Broken", "exit 2"))
    window = shell.window
    window.search.setText("Other")  # the failed task is filtered out: it must be revealed
    qtbot.mouseClick(window.banner.history_button, Qt.MouseButton.LeftButton)
    assert [t.id for t in window.selected_tasks()] == [task.id]
    qtbot.waitUntil(lambda: len(history_dialogs()) == 1)
    dialog = history_dialogs()[0]
    assert "Broken" in dialog.windowTitle()
    dialog.close()


# ---------------------------------------------------------------- close and quit


def test_closing_keeps_the_scheduler_running_where_there_is_a_tray(
    desktop: Desktop, qtbot: QtBot
) -> None:
    shell = desktop.open(tray_available=True)
    assert shell.tray is not None
    hints: list[str] = []
    shell.tray.show_message = lambda title, text: hints.append(title)  # type: ignore[method-assign]
    shell.window.close()
    assert not shell.window.isVisible()
    assert desktop.quits == []
    assert hints == ["taskgui is still running"]
    assert shell.tray.toggle_action.text() == "Show Window"
    # The schedule goes on while the window is hidden.
    with qtbot.waitSignal(desktop.service.run_finished, timeout=10_000):
        task = desktop.service.add_task(spec("In the background", "true"))
    wait_state(qtbot, shell, task.id, TaskState.SUCCEEDED)
    # The hint is said once, and remembered across restarts.
    shell.tray.toggle_window_requested.emit()
    assert shell.window.isVisible()
    shell.window.close()
    assert hints == ["taskgui is still running"]
    assert Settings.at(str(desktop.tmp_path / "settings.ini")).close_hint_shown


def test_closing_without_a_tray_says_it_stops_the_schedule_and_lets_the_person_choose(
    desktop: Desktop, qtbot: QtBot
) -> None:
    shell = desktop.open(tray_available=False)
    task = desktop.service.add_task(spec("Long", "sleep 30"))
    wait_state(qtbot, shell, task.id, TaskState.RUNNING)
    desktop.choose.answer = (CloseChoice.CANCEL, False)
    shell.window.close()
    assert desktop.choose.asked == [["Long"]]  # it says what runs
    assert desktop.quits == [] and shell.window.isVisible()  # stayed
    desktop.choose.answer = (CloseChoice.QUIT, False)
    shell.window.close()
    assert desktop.quits == [True]
    assert not shell.handover_requested
    assert desktop.ask.asked == []  # asked once, not twice
    assert not shell.window.isVisible()


def test_keep_running_in_background_asks_for_a_handover_and_can_be_remembered(
    desktop: Desktop,
) -> None:
    shell = desktop.open(tray_available=False)
    desktop.choose.answer = (CloseChoice.BACKGROUND, True)
    shell.window.close()
    assert desktop.quits == [True] and shell.handover_requested
    assert Settings.at(str(desktop.tmp_path / "settings.ini")).close_without_tray == "background"
    again = desktop.open(tray_available=False)  # the next start: no question this time
    again.window.close()
    assert len(desktop.choose.asked) == 1
    assert again.handover_requested and desktop.quits == [True, True]


def test_a_window_following_another_process_just_closes(
    tmp_path: Path, qtbot: QtBot, desktop: Desktop
) -> None:
    shell = desktop.open(tray_available=False)
    shell.runs_here = False  # as for a window that follows taskgui daemon
    shell.window.close()
    assert desktop.choose.asked == [] and desktop.quits == [True]
    assert not shell.handover_requested


def test_quit_asks_first_while_tasks_run(desktop: Desktop, qtbot: QtBot) -> None:
    shell = desktop.open(tray_available=True)
    task = desktop.service.add_task(spec("Long", "sleep 30"))
    wait_state(qtbot, shell, task.id, TaskState.RUNNING)
    desktop.ask.answer = False
    shell.window.window_actions["quit"].trigger()
    assert desktop.ask.asked == [
        "“Long” is running. Quit and stop it? It will be retried at the next start."
    ]
    assert desktop.quits == []
    assert shell.window.isVisible()
    desktop.ask.answer = True
    assert shell.tray is not None
    shell.tray.quit_requested.emit()
    assert desktop.quits == [True]
    assert not shell.window.isVisible()


def test_the_quit_question_names_the_running_tasks() -> None:
    assert running_question(["a", "b"]) == (
        "2 tasks are running (“a”, “b”). Quit and stop them? They will be retried at the "
        "next start."
    )
    assert "“a”, “b”, “c” and 2 more" in running_question(["a", "b", "c", "d", "e"])


def test_a_second_start_raises_the_hidden_window(desktop: Desktop) -> None:
    shell = desktop.open(tray_available=True)
    shell.hide_to_tray()
    assert not shell.window.isVisible()
    shell.handle_message("show")
    assert shell.window.isVisible()


def test_start_minimized_shows_only_the_tray(desktop: Desktop, qtbot: QtBot) -> None:
    desktop.settings.start_minimized = True
    window = MainWindow(desktop.service, CLOCK)
    qtbot.addWidget(window)
    shell = DesktopShell(
        window, desktop.settings, desktop.autostart, tray_available=True, quit_app=lambda: None
    )
    desktop.shells.append(shell)
    shell.start()
    assert not window.isVisible()
    without_tray = MainWindow(desktop.service, CLOCK)
    qtbot.addWidget(without_tray)
    other = DesktopShell(
        without_tray,
        desktop.settings,
        desktop.autostart,
        tray_available=False,
        choose_close=desktop.choose,
        quit_app=print,
    )
    desktop.shells.append(other)
    other.start()
    assert without_tray.isVisible()  # no tray: there would be no way to open it


# ------------------------------------------------------------------------- tray


def test_the_tray_pauses_and_resumes_everything_and_shows_failures(
    desktop: Desktop, qtbot: QtBot
) -> None:
    shell = desktop.open(tray_available=True)
    tray = shell.tray
    assert tray is not None
    later = CLOCK.now() + timedelta(hours=1)
    first = desktop.service.add_task(spec("One", "true", first_run_at=later))
    second = desktop.service.add_task(spec("Two", "true", first_run_at=later))
    tray.menu.aboutToShow.emit()
    assert tray.pause_all_action.isEnabled()
    assert not tray.resume_all_action.isEnabled()
    tray.pause_all_action.trigger()
    for task in (first, second):
        wait_state(qtbot, shell, task.id, TaskState.PAUSED)
    tray.menu.aboutToShow.emit()
    assert tray.resume_all_action.isEnabled()
    tray.resume_all_action.trigger()
    for task in (first, second):
        wait_state(qtbot, shell, task.id, TaskState.PENDING)
    assert tray.failed == 0
    with qtbot.waitSignal(desktop.service.task_exhausted, timeout=10_000):
        desktop.service.add_task(spec("Broken", "exit 1"))
    qtbot.waitUntil(lambda: tray.failed == 1)
    assert tray.icon.toolTip() == "taskgui — 1 task failed"
    texts = [a.text() for a in tray.menu.actions() if not a.isSeparator()]
    assert texts == [
        "Show Window" if not shell.window.isVisible() else "Hide Window",
        "New Task…",
        "Pause All Tasks",
        "Resume All Tasks",
        "Settings…",
        "Quit taskgui",
    ]


# --------------------------------------------------------------------- settings


def test_settings_change_the_worker_count_and_are_kept(desktop: Desktop, qtbot: QtBot) -> None:
    shell = desktop.open()
    shell.window.window_actions["settings"].trigger()
    dialog = shell.settings_dialog
    assert isinstance(dialog, SettingsDialog)
    dialog.workers.setValue(3)
    dialog.notifications.rule.set_rule(parse_rule("after:4"))
    dialog.start_at_login.setChecked(True)
    qtbot.mouseClick(
        dialog.buttons.button(dialog.buttons.StandardButton.Ok), Qt.MouseButton.LeftButton
    )
    assert desktop.service.workers == 3
    assert shell.window.workers_label.text() == "Workers: 0 of 3 busy"
    again = Settings.at(str(desktop.tmp_path / "settings.ini"))
    assert (again.workers, again.notify.default_rule) == (3, parse_rule("after:4"))
    assert desktop.autostart.path.is_file()
    assert shell.settings_dialog is None
