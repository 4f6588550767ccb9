"""The main window over a real scheduler: real processes, a real database file.

Modal dialogs are driven the way a person would: the test waits for the dialog to
appear, types into it and clicks its buttons.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu, QToolBar, QWidget
from pytestqt.qtbot import QtBot

from taskgui import __version__
from taskgui.core.retry import RetryPolicy
from taskgui.core.states import TaskState
from taskgui.core.status import RunRecord
from taskgui.core.task import TaskSpec
from taskgui.runtime.service import SchedulerService
from taskgui.store.sqlite.repository import SqliteRepository
from taskgui.ui.history.history_view import HistoryDialog
from taskgui.ui.table.state_filter import StateFilter
from taskgui.ui.table.task_model import Column
from taskgui.ui.task_dialog.dialog import TaskDialog
from taskgui.ui.window.actions import Verb
from taskgui.ui.window.filter_bar import SEARCH_MIN_WIDTH
from taskgui.ui.window.main_window import MainWindow
from taskgui.ui.window.status_line import LOCATION_WIDTH
from tests.helpers.service import CLOCK, spec


class Confirmations:
    def __init__(self) -> None:
        self.answer = True
        self.asked: list[str] = []

    def __call__(self, parent: QWidget, title: str, text: str) -> bool:
        self.asked.append(text)
        return self.answer


@pytest.fixture
def confirm() -> Confirmations:
    return Confirmations()


@pytest.fixture
def window(tmp_path: Path, qtbot: QtBot, confirm: Confirmations) -> Iterator[MainWindow]:
    repository = SqliteRepository(tmp_path / "window.sqlite3")
    service = SchedulerService(repository, CLOCK, workers=2, kill_grace=0.3)
    service.start()
    main = MainWindow(service, CLOCK, location=str(tmp_path), confirm=confirm)
    qtbot.addWidget(main)
    main.show()
    yield main
    main.close()
    with qtbot.waitSignal(service.stopped, timeout=10_000):
        service.shutdown(grace=0.0)
    service.pool.wait_for_done(5_000)
    repository.close()


def state_of(window: MainWindow, task_id: int) -> TaskState | None:
    snapshot = window.model.snapshot_of(task_id)
    return None if snapshot is None else snapshot.state


def wait_state(qtbot: QtBot, window: MainWindow, task_id: int, state: TaskState) -> None:
    qtbot.waitUntil(lambda: state_of(window, task_id) is state, timeout=10_000)


def open_history(window: MainWindow, task_id: int) -> HistoryDialog:
    """Open a task's history the way the window does, and return the dialog shown."""
    window.show_history(task_id)
    dialogs = [w for w in QApplication.topLevelWidgets() if isinstance(w, HistoryDialog)]
    (dialog,) = [d for d in dialogs if d.isVisible()]
    return dialog


def first_run(dialog: HistoryDialog) -> RunRecord:
    run = dialog.runs.run_at(0)
    assert run is not None
    return run


def when_dialog_opens(qtbot: QtBot, act: Callable[[TaskDialog], None]) -> None:
    """Run ``act`` on the task dialog as soon as it is shown (it runs modally)."""

    def attempt() -> None:
        dialog = QApplication.activeModalWidget()
        if isinstance(dialog, TaskDialog) and dialog.isVisible():
            act(dialog)
        else:
            QTimer.singleShot(20, attempt)

    QTimer.singleShot(0, attempt)


def test_a_task_created_through_the_dialog_runs_and_its_row_follows(
    window: MainWindow, qtbot: QtBot
) -> None:
    assert window.stack.currentWidget() is window.empty

    def fill(dialog: TaskDialog) -> None:
        qtbot.keyClicks(dialog.name, "Say hello")
        qtbot.keyClicks(dialog.command, "echo hello")
        assert dialog.ok_button.isEnabled(), dialog.problems()
        qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)

    when_dialog_opens(qtbot, fill)
    window.actions_[Verb.NEW].trigger()
    qtbot.waitUntil(lambda: window.model.rowCount() == 1, timeout=5_000)
    (task_id,) = window.model.task_ids()
    wait_state(qtbot, window, task_id, TaskState.SUCCEEDED)
    assert window.stack.currentWidget() is window.table
    selected = window.selected_tasks()
    assert [task.spec.name for task in selected] == ["Say hello"]  # the new row is selected
    row = window.proxy.mapFromSource(window.model.index(window.model.row_of(task_id) or 0, 0))
    state_cell = window.proxy.index(row.row(), Column.STATE)
    assert window.proxy.data(state_cell) == "Succeeded"
    qtbot.waitUntil(
        lambda: (
            "succeeded" in str(window.proxy.data(window.proxy.index(row.row(), Column.LAST_RESULT)))
        ),
        timeout=5_000,
    )


def test_an_invalid_dialog_keeps_create_disabled(window: MainWindow, qtbot: QtBot) -> None:
    seen: list[bool] = []

    def fill(dialog: TaskDialog) -> None:
        qtbot.keyClicks(dialog.command, "true")
        seen.append(dialog.ok_button.isEnabled())
        assert any("name" in problem for problem in dialog.problems())
        dialog.reject()

    when_dialog_opens(qtbot, fill)
    window.actions_[Verb.NEW].trigger()
    assert seen == [False]
    assert window.model.rowCount() == 0


def test_the_context_menu_cancels_a_running_task(
    window: MainWindow, qtbot: QtBot, confirm: Confirmations
) -> None:
    task = window.service.add_task(spec("long", "sleep 60"))
    wait_state(qtbot, window, task.id, TaskState.RUNNING)
    assert window.select_task(task.id)
    menu = window.build_context_menu()
    labels = {action.text(): action for action in menu.actions() if action.text()}
    assert labels["Cancel"].isEnabled()
    assert not labels["Retry Now"].isEnabled()  # nothing failed
    assert not labels["Resume"].isEnabled()
    labels["Cancel"].trigger()
    assert confirm.asked == ["Cancel “long”? It is running: its command is stopped."]
    wait_state(qtbot, window, task.id, TaskState.CANCELLED)
    qtbot.waitUntil(lambda: window.service.busy_workers == 0, timeout=5_000)
    assert not window.actions_[Verb.CANCEL].isEnabled()


def press_ctrl_period(qtbot: QtBot, window: MainWindow) -> None:
    qtbot.keyClick(window.table, Qt.Key.Key_Period, Qt.KeyboardModifier.ControlModifier)
    # Let go of Ctrl too: Qt would read later clicks as Ctrl+clicks (adding to the selection).
    qtbot.keyRelease(window.table, Qt.Key.Key_Control)


def test_ctrl_period_asks_before_it_stops_a_running_command(
    window: MainWindow, qtbot: QtBot, confirm: Confirmations
) -> None:
    """An outsider's trial: one slip onto Ctrl+. killed a long run without a word."""
    running = window.service.add_task(spec("<b>backup</b>", "sleep 60"))
    waiting = window.service.add_task(
        spec("later", "true", first_run_at=CLOCK.now() + timedelta(hours=1))
    )
    wait_state(qtbot, window, running.id, TaskState.RUNNING)
    window.select_task(running.id)
    confirm.answer = False
    window.table.setFocus()
    press_ctrl_period(qtbot, window)
    assert confirm.asked == ["Cancel “<b>backup</b>”? It is running: its command is stopped."]
    QTest.qWait(200)
    assert state_of(window, running.id) is TaskState.RUNNING  # "No" left it alone

    window.select_task(waiting.id)  # a task only waiting: Retry undoes it, nothing asked
    press_ctrl_period(qtbot, window)
    wait_state(qtbot, window, waiting.id, TaskState.CANCELLED)
    assert len(confirm.asked) == 1

    confirm.answer = True
    window.select_task(running.id)
    press_ctrl_period(qtbot, window)
    wait_state(qtbot, window, running.id, TaskState.CANCELLED)


def test_actions_follow_the_state_of_every_selected_task(window: MainWindow, qtbot: QtBot) -> None:
    failed = window.service.add_task(spec("fails", "exit 3"))
    later = window.service.add_task(
        spec("later", "true", first_run_at=CLOCK.now() + timedelta(hours=1))
    )
    wait_state(qtbot, window, failed.id, TaskState.EXHAUSTED)
    window.select_task(failed.id)
    assert window.actions_[Verb.RETRY].isEnabled()
    assert not window.actions_[Verb.PAUSE].isEnabled()
    window.select_task(later.id)
    assert window.actions_[Verb.PAUSE].isEnabled() and window.actions_[Verb.CANCEL].isEnabled()
    window.actions_[Verb.PAUSE].trigger()
    wait_state(qtbot, window, later.id, TaskState.PAUSED)
    assert window.actions_[Verb.RESUME].isEnabled() and not window.actions_[Verb.PAUSE].isEnabled()
    window.table.selectAll()
    assert not window.actions_[Verb.EDIT].isEnabled()  # one task at a time
    assert not window.actions_[Verb.RETRY].isEnabled()  # not every selected task failed


def test_filters_show_counts_and_the_matching_rows(window: MainWindow, qtbot: QtBot) -> None:
    failed = window.service.add_task(spec("broken", "exit 1"))
    window.service.add_task(spec("future", "true", first_run_at=CLOCK.now() + timedelta(hours=1)))
    wait_state(qtbot, window, failed.id, TaskState.EXHAUSTED)
    qtbot.waitUntil(lambda: window.filter_buttons[StateFilter.FAILED].text() == "Failed (1)")
    assert window.filter_buttons[StateFilter.ALL].text() == "All (2)"
    assert window.filter_buttons[StateFilter.PENDING].text() == "Pending (1)"
    window.set_state_filter(StateFilter.FAILED)
    assert window.proxy.rowCount() == 1
    window.set_state_filter(StateFilter.ALL)
    qtbot.keyClicks(window.search, "fut")
    assert window.proxy.rowCount() == 1
    window.search.clear()
    assert window.proxy.rowCount() == 2


def test_retrying_and_paused_tasks_have_their_own_filters(window: MainWindow, qtbot: QtBot) -> None:
    retrying = window.service.add_task(
        spec("flaky", "exit 1", retry=RetryPolicy(max_attempts=3, base_delay=timedelta(hours=1)))
    )
    paused = window.service.add_task(
        spec("resting", "true", first_run_at=CLOCK.now() + timedelta(hours=1), paused=True)
    )
    wait_state(qtbot, window, retrying.id, TaskState.RETRYING)
    wait_state(qtbot, window, paused.id, TaskState.PAUSED)
    buttons = window.filter_buttons
    qtbot.waitUntil(lambda: buttons[StateFilter.RETRYING].text() == "Retrying (1)")
    assert buttons[StateFilter.PAUSED].text() == "Paused (1)"
    assert buttons[StateFilter.FAILED].text() == "Failed (0)"  # a retry is not a failure yet
    assert buttons[StateFilter.PENDING].text() == "Pending (0)"  # paused is not pending
    assert "next attempt" in buttons[StateFilter.RETRYING].toolTip()
    assert window.counts_label.text() == "Running: 0   Pending: 0   Retrying: 1"
    window.set_state_filter(StateFilter.PAUSED)
    assert [window.proxy.task_id_at(0)] == [paused.id] and window.proxy.rowCount() == 1


def test_a_search_counts_what_it_finds_and_says_when_it_finds_nothing(
    window: MainWindow, qtbot: QtBot
) -> None:
    later = CLOCK.now() + timedelta(hours=1)
    for name in ("backup photos", "backup mail", "rotate logs"):
        window.service.add_task(spec(name, "true", first_run_at=later))
    window.model.flush_pending()
    qtbot.keyClicks(window.search, "backup")
    assert window.filter_buttons[StateFilter.ALL].text() == "All (2)"
    assert window.filter_buttons[StateFilter.PENDING].text() == "Pending (2)"
    assert window.stack.currentWidget() is window.table
    qtbot.keyClicks(window.search, " tapes")
    assert window.filter_buttons[StateFilter.ALL].text() == "All (0)"
    assert window.stack.currentWidget() is window.no_matches
    assert window.no_matches.title.text() == "No tasks match “backup tapes”"
    window.set_state_filter(StateFilter.PAUSED)
    assert window.no_matches.title.text() == "No paused tasks match “backup tapes”"
    qtbot.mouseClick(window.no_matches.show_all, Qt.MouseButton.LeftButton)
    assert window.search.text() == ""
    assert window.proxy.state_filter is StateFilter.ALL
    assert window.stack.currentWidget() is window.table
    assert window.filter_buttons[StateFilter.ALL].text() == "All (3)"


def test_escape_clears_the_search_then_goes_back_to_the_tasks(
    window: MainWindow, qtbot: QtBot
) -> None:
    window.service.add_task(spec("one", "true", first_run_at=CLOCK.now() + timedelta(hours=1)))
    window.model.flush_pending()
    window.activateWindow()
    window.search.setFocus()
    qtbot.keyClicks(window.search, "nothing like it")
    assert window.proxy.rowCount() == 0
    qtbot.keyClick(window.search, Qt.Key.Key_Escape)
    assert window.search.text() == ""
    assert window.proxy.rowCount() == 1
    qtbot.keyClick(window.search, Qt.Key.Key_Escape)
    qtbot.waitUntil(window.table.hasFocus, timeout=1_000)


def test_the_selection_survives_updates_of_other_rows(window: MainWindow, qtbot: QtBot) -> None:
    chosen = window.service.add_task(
        spec("chosen", "true", first_run_at=CLOCK.now() + timedelta(hours=2))
    )
    for index in range(5):
        window.service.add_task(
            spec(f"other {index}", "true", first_run_at=CLOCK.now() + timedelta(hours=1))
        )
    window.model.flush_pending()
    window.select_task(chosen.id)
    busy = window.service.add_task(spec("busy", "exit 0"))
    wait_state(qtbot, window, busy.id, TaskState.SUCCEEDED)
    window.service.pause(chosen.id)
    wait_state(qtbot, window, chosen.id, TaskState.PAUSED)
    assert [task.id for task in window.selected_tasks()] == [chosen.id]


def test_delete_asks_first(window: MainWindow, qtbot: QtBot, confirm: Confirmations) -> None:
    task = window.service.add_task(
        spec("doomed", "true", first_run_at=CLOCK.now() + timedelta(hours=1))
    )
    window.model.flush_pending()
    window.select_task(task.id)
    confirm.answer = False
    window.actions_[Verb.DELETE].trigger()
    assert confirm.asked and "doomed" in confirm.asked[0]
    assert window.model.row_of(task.id) is not None
    confirm.answer = True
    window.actions_[Verb.DELETE].trigger()
    qtbot.waitUntil(lambda: window.model.row_of(task.id) is None, timeout=5_000)
    assert window.stack.currentWidget() is window.empty


def test_history_shows_runs_and_searchable_output(window: MainWindow, qtbot: QtBot) -> None:
    task = window.service.add_task(spec("talker", "echo alpha; echo beta; echo gamma"))
    wait_state(qtbot, window, task.id, TaskState.SUCCEEDED)
    dialog = open_history(window, task.id)
    assert dialog.runs.rowCount() == 1
    assert dialog.output.text.toPlainText() == "alpha\nbeta\ngamma\n"
    qtbot.keyClicks(dialog.output.search, "beta")
    assert dialog.output.text.textCursor().selectedText() == "beta"
    assert dialog.output.matches.text() == "1 match(es)"
    dialog.output.copy_all()
    clipboard = QApplication.clipboard()
    assert clipboard is not None and clipboard.text() == "alpha\nbeta\ngamma\n"
    dialog.close()


def test_history_shows_a_running_commands_output_as_it_prints(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    step, go = tmp_path / "step", tmp_path / "go"
    line = (
        f"echo alpha; while [ ! -e {step} ]; do sleep 0.01; done; echo beta; "
        f"while [ ! -e {go} ]; do sleep 0.01; done"
    )
    task = window.service.add_task(spec("talker", line))
    try:
        wait_state(qtbot, window, task.id, TaskState.RUNNING)
        dialog = open_history(window, task.id)
        output = dialog.output.text
        qtbot.waitUntil(lambda: output.toPlainText() == "alpha\n", timeout=10_000)
        assert first_run(dialog).outcome is None
        step.touch()
        qtbot.waitUntil(lambda: output.toPlainText() == "alpha\nbeta\n", timeout=10_000)
        assert first_run(dialog).outcome is None  # still going: shown live
    finally:
        go.touch()
    wait_state(qtbot, window, task.id, TaskState.SUCCEEDED)
    qtbot.waitUntil(lambda: first_run(dialog).outcome is not None, timeout=5_000)
    assert output.toPlainText() == "alpha\nbeta\n"
    dialog.close()


def test_a_running_command_that_printed_nothing_yet_says_so(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    task = window.service.add_task(spec("quiet", f"while [ ! -e {go} ]; do sleep 0.01; done"))
    try:
        wait_state(qtbot, window, task.id, TaskState.RUNNING)
        dialog = open_history(window, task.id)
        assert dialog.output.text.toPlainText() == ""
        assert dialog.output.text.placeholderText().startswith("Nothing printed yet")
    finally:
        go.touch()
    wait_state(qtbot, window, task.id, TaskState.SUCCEEDED)
    qtbot.waitUntil(lambda: first_run(dialog).outcome is not None, timeout=5_000)
    assert dialog.output.text.placeholderText() == "This run printed nothing."
    dialog.close()


@pytest.mark.parametrize("width", [760, 1180])
def test_the_empty_state_shows_its_whole_hint(window: MainWindow, qtbot: QtBot, width: int) -> None:
    window.resize(width, 560)
    qtbot.wait(20)
    assert window.stack.currentWidget() is window.empty
    hint = window.empty.hint
    assert hint.height() >= hint.heightForWidth(hint.width())  # not cut off
    assert hint.width() <= window.empty.width()


def _later(name: str) -> TaskSpec:
    return spec(name, "true", first_run_at=CLOCK.now() + timedelta(hours=1))


def test_delete_keeps_the_keyboards_place_and_names_what_it_deletes(
    window: MainWindow, qtbot: QtBot, confirm: Confirmations
) -> None:
    ids = {name: window.service.add_task(_later(name)).id for name in "abcde"}
    window.model.flush_pending()
    window.table.sortByColumn(Column.NAME, Qt.SortOrder.AscendingOrder)
    window.select_task(ids["b"])
    window.actions_[Verb.DELETE].trigger()
    assert confirm.asked[-1] == "Delete the task “b” and its history?"
    assert [task.spec.name for task in window.selected_tasks()] == ["c"]  # took b's place
    assert window.table.currentIndex().row() == 1
    window.table.selectRow(1)
    selection = window.table.selectionModel()
    selection.select(
        window.proxy.index(2, 0),
        QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows,
    )
    window.actions_[Verb.DELETE].trigger()
    assert confirm.asked[-1] == ("Delete these 2 tasks and their history?\n\n  • c\n  • d")
    assert [task.spec.name for task in window.selected_tasks()] == ["e"]
    window.actions_[Verb.DELETE].trigger()  # the last row: the one before it is next
    assert [task.spec.name for task in window.selected_tasks()] == ["a"]


def test_many_tasks_to_delete_are_named_up_to_ten(
    window: MainWindow, confirm: Confirmations
) -> None:
    for index in range(12):
        window.service.add_task(_later(f"task {index:02d}"))
    window.model.flush_pending()
    window.table.selectAll()
    confirm.answer = False
    window.actions_[Verb.DELETE].trigger()
    assert confirm.asked[-1].startswith("Delete these 12 tasks and their history?")
    assert confirm.asked[-1].endswith("  … and 2 more")
    assert window.model.rowCount() == 12


def test_about_says_the_version_and_where_the_files_are(
    tmp_path: Path, qtbot: QtBot, window: MainWindow
) -> None:
    odd = MainWindow(
        window.service, CLOCK, location="/data/<b>&co</b>.sqlite3", log_file="/logs/t.log"
    )
    qtbot.addWidget(odd)
    odd.window_actions["about"].trigger()
    about = odd.about
    assert about is not None and about.isVisible()
    text = about.text()
    assert __version__ in text
    assert "/data/&lt;b&gt;&amp;co&lt;/b&gt;.sqlite3" in text  # the path, shown as it is
    assert "/logs/t.log" in text and "#readme" in text
    menus = {menu.title(): menu for menu in odd.menuBar().findChildren(QMenu)}
    assert [action.text() for action in menus["&Help"].actions()] == ["About taskgui"]
    about.close()


def test_at_760_pixels_the_search_box_gets_a_line_of_its_own(
    window: MainWindow, qtbot: QtBot
) -> None:
    window.resize(760, 560)
    qtbot.waitUntil(lambda: window.width() == 760, timeout=2_000)
    bar = window.filter_bar
    assert bar.two_rows
    search = window.search
    assert search.width() >= SEARCH_MIN_WIDTH
    right = search.mapTo(window, search.rect().topRight()).x()
    assert right <= window.width()
    placeholder = search.fontMetrics().horizontalAdvance(search.placeholderText())
    assert placeholder < search.width()
    window.resize(1400, 600)
    qtbot.waitUntil(lambda: not bar.two_rows, timeout=2_000)


def test_pause_for_an_hour_from_the_context_menu(window: MainWindow, qtbot: QtBot) -> None:
    later = window.service.add_task(
        spec("later", "true", first_run_at=CLOCK.now() + timedelta(hours=1))
    )
    qtbot.waitUntil(lambda: window.select_task(later.id), timeout=5_000)
    menu = window.build_context_menu()
    pause_for = menu.findChild(QMenu, "pause_for")
    assert isinstance(pause_for, QMenu) and pause_for.isEnabled()
    assert "Pause &For" in [action.text() for action in menu.actions()]
    hour = next(a for a in pause_for.actions() if a.text() == "1 &Hour")
    before = CLOCK.now()
    hour.trigger()
    wait_state(qtbot, window, later.id, TaskState.PAUSED)
    until = window.service.task(later.id).spec.paused_until
    assert until is not None and timedelta(minutes=59) < until - before <= timedelta(
        hours=1, seconds=5
    )
    # A paused task offers no second pause from the menu (Resume ends it early).
    again = window.build_context_menu().findChild(QMenu, "pause_for")
    assert isinstance(again, QMenu) and not again.isEnabled()


def test_a_long_database_path_leaves_the_status_bar_room_for_messages(
    tmp_path: Path, qtbot: QtBot, confirm: Confirmations
) -> None:
    """A path as deep as a folder tree is drawn cut in the middle, within
    LOCATION_WIDTH, its start and its file name kept; the whole is in the tooltip."""
    repository = SqliteRepository(tmp_path / "window.sqlite3")
    service = SchedulerService(repository, CLOCK, workers=2, kill_grace=0.3)
    service.start()
    deep = "/home/ann/" + "/".join(f"folder-{index}" for index in range(30)) + "/taskgui.sqlite3"
    main = MainWindow(service, CLOCK, location=deep, confirm=confirm)
    qtbot.addWidget(main)
    main.resize(1000, 500)
    main.show()
    qtbot.waitExposed(main)
    label = main.location_label
    assert label.text() == deep  # the whole, for copying and for a screen reader
    assert 0 < label.width() <= LOCATION_WIDTH
    drawn = label.drawn_text()
    assert drawn.startswith("/home/ann/") and drawn.endswith("taskgui.sqlite3") and "…" in drawn
    assert deep in label.toolTip()
    bar = main.statusBar()
    permanent = min(child.geometry().left() for child in (main.counts_label, label))
    assert permanent >= bar.width() // 4  # a quarter of the bar at least for a message
    main.close()
    service.shutdown(grace=1.0)
    service.pool.wait_for_done(5_000)
    repository.close()


def test_a_status_tip_never_covers_the_counts_or_the_workers(
    window: MainWindow, qtbot: QtBot
) -> None:
    """Hovering a toolbar button shows its status tip on the bar: the labels stay
    shown, and what Qt paints of the bar where they are is the same as without it."""
    window.resize(900, 500)
    qtbot.waitExposed(window)
    bar = window.statusBar()
    labels = (window.counts_label, window.workers_label)
    qtbot.waitUntil(lambda: window.workers_label.text().startswith("Workers: "))
    before = bar.grab().toImage()
    toolbar = next(iter(window.findChildren(QToolBar)))
    action = window.actions_[Verb.NEW]
    button = toolbar.widgetForAction(action)
    assert button is not None and action.statusTip()
    action.showStatusText(button)  # what the button does when the pointer enters it
    assert bar.currentMessage() == action.statusTip()
    after = bar.grab().toImage()

    assert after != before  # the tip is drawn...
    for label in labels:
        assert label.isVisible() and label.width() > 0
        area = label.geometry()
        assert bar.rect().contains(area)
        # ...and not over the label: its pixels are as they were.
        assert after.copy(area) == before.copy(area), label.accessibleName()


def test_tab_leaves_the_task_table_for_the_next_control(window: MainWindow, qtbot: QtBot) -> None:
    """A trial: Tab moved cell by cell through the table and never reached the filters
    or the search box again (a keyboard trap)."""
    window.service.add_tasks([spec("one", "true"), spec("two", "true")])
    qtbot.waitUntil(lambda: window.proxy.rowCount() == 2)
    window.activateWindow()
    window.table.setFocus()
    qtbot.waitUntil(window.table.hasFocus)
    window.table.setCurrentIndex(window.proxy.index(0, 0))
    QTest.keyClick(window.table, Qt.Key.Key_Tab)
    qtbot.waitUntil(lambda: not window.table.hasFocus())
    assert window.table.currentIndex().column() == 0  # it did not move to the next cell
