"""Every widget that shows text from a task, its output or a file shows it literally.

Names, commands, folders, errors and import files are written by whoever wrote the
task or the file. Qt guesses rich text (``Qt.mightBeRichText``) in tooltips,
labels and message boxes unless told otherwise, and then ``<img src=…>`` reads a file
(``/dev/zero`` until memory runs out, a FIFO for ever) and ``<a href>`` is a link.
Each test here puts hostile text where a person would see it, in real widgets, and
checks what Qt would draw: a label or message box is in plain-text format and holds
the text unchanged; a tooltip, which has no format switch, renders (by Qt's own rule)
to exactly the original characters.

Texts Qt really renders use payloads that cannot hurt the test run if the rule is
broken (``<b>``, links, a missing image); ``<img src=/dev/zero>`` only goes where
the text is read back, not drawn.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QMessageBox,
    QStyleOptionViewItem,
    QSystemTrayIcon,
    QWidget,
)
from pytestqt.qtbot import QtBot

from taskgui.core.clock import FakeClock
from taskgui.core.events import TaskExhausted
from taskgui.core.notify_rules import Trigger
from taskgui.core.states import RunOutcome, SlotKind, TaskState, WaitReason
from taskgui.core.status import RunRecord, TaskSnapshot, TaskStatus
from taskgui.core.task import Command
from taskgui.core.transfer.plan import Candidate, ParsedImport, plan_import
from taskgui.core.transfer.report import SkippedItem
from taskgui.runtime.notify_relay import Notification
from taskgui.system.notify.message import Message
from taskgui.ui.desktop.autostart import Autostart
from taskgui.ui.desktop.settings import Settings
from taskgui.ui.desktop.settings_dialog import SettingsDialog
from taskgui.ui.history.history_view import HistoryDialog
from taskgui.ui.history.run_table import RunColumn
from taskgui.ui.notify.banner import Banner
from taskgui.ui.notify.news import notice_for
from taskgui.ui.notify.notifier import Notice, NoticeKind, TrayNotifier, notice_for_exhausted
from taskgui.ui.table.task_filter import TaskFilterProxy
from taskgui.ui.table.task_model import Column, LastRun, TaskTableModel
from taskgui.ui.task_dialog.dialog import TaskDialog
from taskgui.ui.task_dialog.mode import DialogMode
from taskgui.ui.transfer.actions import show_error, show_info
from taskgui.ui.transfer.dialogs import ReportDialog
from taskgui.ui.window.actions import Verb
from taskgui.ui.window.main_window import MainWindow
from tests.helpers.factories import T0, at, make_spec
from tests.helpers.rich_text import rendered
from tests.helpers.service import CLOCK, Harness, spec

ROOT = Path(__file__).resolve().parents[2]

# Drawn by Qt on the way: harmless if the rule breaks (a missing image, bold, a link).
SHOWN = (
    "<b>bold</b> name",
    "<a href='https://example.com/'>click me</a>",
    "<img src=no-such-image.png>",
    "&amp; &lt;b&gt; entities",
)
# Only ever read back as strings: this one would exhaust memory if rendered.
READ_ONLY = ("<img src=/dev/zero>", "<img src=file:///etc/passwd>", *SHOWN)


def assert_plain(label: QLabel, text: str) -> None:
    assert label.textFormat() is Qt.TextFormat.PlainText
    assert label.text() == text


def answer_boxes(answer: QMessageBox.StandardButton) -> list[tuple[Qt.TextFormat, str]]:
    """Answer every message box that opens (it runs modally) and note its format and text."""
    seen: list[tuple[Qt.TextFormat, str]] = []

    def attempt() -> None:
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox) and box.isVisible():
            seen.append((box.textFormat(), box.text()))
            button = box.button(answer) or box.escapeButton()
            assert button is not None
            button.click()
        QTimer.singleShot(20, attempt)

    QTimer.singleShot(0, attempt)
    return seen


# ------------------------------------------------------------- the task table


def snapshot(task_id: int, name: str, line: str, **status: object) -> TaskSnapshot:
    fields: dict[str, object] = {"state": TaskState.PENDING, "next_run_at": at(60), **status}
    return TaskSnapshot(
        make_spec(task_id, name=name, command=Command(line=line), concurrency_key=name),
        TaskStatus(**fields),  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("text", READ_ONLY)
def test_table_tooltips_show_commands_errors_and_keys_literally(
    model: TaskTableModel, text: str
) -> None:
    waiting = snapshot(2, text, "true", waiting=WaitReason.CONCURRENCY_KEY, next_run_at=at(-1))
    error = f"exit status 1: {text}"
    model.reset_tasks(
        [snapshot(1, text, text), waiting],
        {1: LastRun(outcome=RunOutcome.FAILED, exit_code=1, finished_at=T0, error=error)},
    )
    tip = Qt.ItemDataRole.ToolTipRole
    command_tip = model.data(model.index(0, Column.NAME), tip)
    assert rendered(command_tip) == text
    assert rendered(model.data(model.index(0, Column.LAST_RESULT), tip)).startswith(error + "\n")
    assert rendered(model.data(model.index(1, Column.STATE), tip)) == f"waiting: key {text} busy"


def test_the_filter_proxy_passes_the_safe_tooltip_on(
    model: TaskTableModel, proxy: TaskFilterProxy
) -> None:
    model.reset_tasks([snapshot(1, "n", "<img src=/dev/zero>")], {})
    model.flush_pending()
    tip = proxy.data(proxy.index(0, Column.NAME), Qt.ItemDataRole.ToolTipRole)
    assert rendered(tip) == "<img src=/dev/zero>"


# -------------------------------------------------------------------- history


def run_record(error: str, output: str) -> RunRecord:
    return RunRecord(
        id=1,
        task_id=1,
        attempt=1,
        kind=SlotKind.OCCURRENCE,
        scheduled_at=T0,
        started_at=T0,
        finished_at=T0 + timedelta(seconds=2),
        outcome=RunOutcome.FAILED,
        exit_code=1,
        error=error,
        output=output,
    )


@pytest.mark.parametrize("text", SHOWN)
def test_the_history_dialog_shows_the_task_and_its_runs_literally(qtbot: QtBot, text: str) -> None:
    task = snapshot(1, f"[*] {text}", f"echo '{text}'")
    dialog = HistoryDialog(task, lambda: [run_record(text, text)])
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)

    error_tip = dialog.runs.data(dialog.runs.index(0, RunColumn.ERROR), Qt.ItemDataRole.ToolTipRole)
    assert rendered(error_tip) == text
    assert dialog.output.text.toPlainText() == text
    summary = rendered(dialog.summary.text())  # rich on purpose, built from escaped parts
    assert summary.startswith(f"[*] {text} — ") and f"echo '{text}'" in summary
    handle = dialog.windowHandle()
    assert handle is not None and handle.title() == f"History — [*] {text}"


# ------------------------------------------------------------ the main window


@pytest.fixture
def window(tmp_path: Path, qtbot: QtBot) -> Iterator[MainWindow]:
    """The real window with its real confirmation box and error reports."""
    harness = Harness(tmp_path, qtbot, workers=1)
    main = MainWindow(
        harness.service,
        CLOCK,
        location="<b>/tmp/db</b>",
        schedule_owner="<a href='https://example.com/'>pid 1</a>",
    )
    qtbot.addWidget(main)
    main.show()
    yield main
    main.close()
    harness.close()


def test_the_status_bar_shows_the_owner_and_location_as_plain_text(window: MainWindow) -> None:
    assert_plain(window.location_label, "<b>/tmp/db</b>")
    assert_plain(window.owner_label, "Schedule run by <a href='https://example.com/'>pid 1</a>")


@pytest.mark.parametrize("name", SHOWN)
def test_the_delete_confirmation_shows_the_name_as_plain_text(
    window: MainWindow, qtbot: QtBot, name: str
) -> None:
    stored = window.service.add_task(spec(name, "true", first_run_at=CLOCK.now() + timedelta(1)))
    assert window.select_task(stored.id)

    seen = answer_boxes(QMessageBox.StandardButton.No)
    window.actions_[Verb.DELETE].trigger()
    qtbot.waitUntil(lambda: bool(seen), timeout=5_000)

    text_format, text = seen[0]
    assert text_format is Qt.TextFormat.PlainText
    assert f"“{name}”" in text  # ASCII: no isolate needed (see the spoofing test)
    assert window.model.row_of(stored.id) is not None  # "No" kept it


def test_an_operation_error_names_the_task_in_plain_text(window: MainWindow, qtbot: QtBot) -> None:
    name = "<a href='https://example.com/'>click me</a>"
    stored = window.service.add_task(spec(name, "true"))
    qtbot.waitUntil(lambda: window.service.task(stored.id).state is TaskState.SUCCEEDED)
    # The view is a step behind the schedule (as a window following a daemon can be):
    # it still shows the task pending, so Pause is offered and the schedule refuses it.
    window.model.on_task_changed(
        TaskSnapshot(stored, TaskStatus(state=TaskState.PENDING, next_run_at=CLOCK.now()))
    )
    window.model.flush_pending()
    assert window.select_task(stored.id)
    assert window.actions_[Verb.PAUSE].isEnabled()

    seen = answer_boxes(QMessageBox.StandardButton.Ok)
    window.actions_[Verb.PAUSE].trigger()
    qtbot.waitUntil(lambda: bool(seen), timeout=5_000)

    text_format, text = seen[0]
    assert text_format is Qt.TextFormat.PlainText
    assert text.startswith(f"{name}: ") and "nothing to pause" in text


# --------------------------------------------------------------- task dialog


def test_the_task_dialog_title_and_first_problem_are_literal(
    qtbot: QtBot, clock: FakeClock
) -> None:
    task = make_spec(7, name="[*] <b>bold</b>", first_run_at=T0 + timedelta(hours=1))
    dialog = TaskDialog(clock, spec=task, mode=DialogMode.EDIT)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    handle = dialog.windowHandle()
    assert handle is not None and handle.title() == "Edit Task — [*] <b>bold</b>"

    dialog.advanced.env.setPlainText("<b>X</b>=1")
    qtbot.waitUntil(lambda: not dialog.ok_button.isEnabled())
    tip = rendered(dialog.ok_button.toolTip())
    assert tip.startswith("First fix: ") and "'<b>X</b>'" in tip


# ---------------------------------------------------------------- import dialogs


def test_the_import_preview_shows_the_file_literally(qtbot: QtBot) -> None:
    text = "<img src=/dev/zero>"
    task = make_spec(
        0,
        name=text,
        command=Command(line=f"echo '{text}'", cwd="/tmp/<b>x</b>", env=(("A", text),)),
        first_run_at=T0 + timedelta(hours=1),
    )
    parsed = ParsedImport(
        candidates=(Candidate("task 1", text, task),),
        skipped=(SkippedItem("line 3", text, f"cannot read {text}"),),
        notes=(f"note about {text}",),
    )
    dialog = ReportDialog(
        title="Import <b>[*]x.json</b>", replan=lambda replace: plan_import(parsed, [], T0)
    )
    qtbot.addWidget(dialog)

    tips = {
        rendered(item.toolTip())
        for table in (dialog.added, dialog.skipped)
        for row in range(table.rowCount())
        for column in range(table.columnCount())
        if (item := table.item(row, column)) is not None
    }
    assert {text, f"echo '{text}'", "/tmp/<b>x</b>", f"cannot read {text}"} <= tips
    for label in (dialog.headline, dialog.notes, dialog.replaced):
        assert label.textFormat() is Qt.TextFormat.PlainText
    assert f"note about {text}" in dialog.notes.text()
    assert dialog.windowTitle() == "Import <b>[*][*]x.json</b>"


@pytest.mark.parametrize("show", [show_error, show_info])
def test_import_and_export_messages_are_plain_text(
    qtbot: QtBot, show: Callable[[QWidget, str, str], None]
) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    seen = answer_boxes(QMessageBox.StandardButton.Ok)
    show(parent, "Import", "task 2: the name <a href='https://example.com/'>x</a> is taken")
    assert seen == [
        (Qt.TextFormat.PlainText, "task 2: the name <a href='https://example.com/'>x</a> is taken")
    ]


# ------------------------------------------------------------------- settings


def test_the_settings_dialog_shows_notes_and_paths_as_plain_text(
    qtbot: QtBot, tmp_path: Path
) -> None:
    folder = tmp_path / "<b>config</b>"
    autostart = Autostart(folder / "taskgui.desktop", ("taskgui",))
    settings = Settings.for_user()
    note = "Set by <a href='https://example.com/'>the daemon</a>"
    dialog = SettingsDialog(settings, autostart, workers_note=note, workers_editable=False)
    qtbot.addWidget(dialog)
    [hint] = [label for label in dialog.findChildren(QLabel) if label.text() == note]
    assert hint.textFormat() is Qt.TextFormat.PlainText
    assert rendered(dialog.start_at_login.toolTip()) == f"Writes {autostart.path}"


# ---------------------------------------------------------------- tray balloon


class RecordingTrayIcon(QSystemTrayIcon):
    """A real tray icon that also keeps what it was asked to show."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[tuple[str, str]] = []

    def showMessage(self, title: str, message: str, *args: object) -> None:
        self.messages.append((title, message))


def test_a_tray_balloon_cannot_carry_markup(qapp: QApplication) -> None:
    icon = RecordingTrayIcon()
    notifier = TrayNotifier(icon)
    name = "<img src=/dev/zero>"
    notifier.notify(
        Notice(kind=NoticeKind.EXHAUSTED, title=f"“{name}” failed", message="a &lt; b", task_id=1)
    )
    [(title, message)] = icon.messages
    # Qt draws a balloon title with its rich-text guess; a D-Bus tray may parse both.
    assert not GuiQt.mightBeRichText(title) and not GuiQt.mightBeRichText(message)
    assert title.replace("\u2060", "") == f"“{name}” failed"
    assert message.replace("\u2060", "") == "a &lt; b"


def test_fixture_sanity_the_payloads_are_rich_text() -> None:
    """The payloads are ones Qt would take for HTML (else the tests prove nothing)."""
    assert all(GuiQt.mightBeRichText(text) for text in READ_ONLY)
    assert rendered("<b>bold</b> name") == "bold name"


# ------------------------------------------------------- the whole window, outside


def test_hovering_and_deleting_an_img_task_never_reads_the_image(tmp_path: Path) -> None:
    """The reported hang, end to end: a real window in its own process, an ``<img>`` at a
    FIFO. Opening the FIFO (to draw the image) would block the GUI thread for ever; the
    test watches for a reader, lets it go (so a broken build fails, not hangs), and
    expects none."""
    fifo = tmp_path / "image.fifo"
    os.mkfifo(fifo)
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.ui.hostile_window_probe", str(tmp_path), str(fifo)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    readers = 0
    deadline = time.monotonic() + 60
    while child.poll() is None and time.monotonic() < deadline:
        try:  # succeeds only while someone has the FIFO open for reading
            descriptor = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            time.sleep(0.02)
            continue
        readers += 1
        os.close(descriptor)  # end of file for the reader: it goes on
    if child.poll() is None:
        child.kill()
    out, err = child.communicate(timeout=30)
    assert readers == 0, f"the window opened the image {readers} time(s)"
    assert child.returncode == 0, err
    assert out.strip() == "deleted"


# ------------------------------------------------------------ direction controls

# The explicit bidi controls (UAX #9): an override reverses the letters after it.
_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def _unisolated(text: str) -> str:
    """``text`` less every FSI ... PDI pair that holds no control of its own (a name
    set into a sentence); what is left must hold no direction control at all."""
    stripped = re.sub("\u2068[^" + _CONTROLS + "]*\u2069", "", text)
    assert not any(char in _CONTROLS for char in stripped), repr(text)
    return stripped


def test_a_spoofing_name_and_command_show_their_overrides_everywhere(
    window: MainWindow, qtbot: QtBot
) -> None:
    """``evil<RLO>exe.txt`` would read "eviltxt.exe": every view shows ``\\u202e``.

    The task fails (its error holds an override too) and gives up, so the table's every
    cell and tooltip, the history window and the give-up notice are all looked at.
    """
    name = "evil\u202eexe.txt"
    line = "echo '\u202eabc' >&2; exit 3"
    stored = window.service.add_task(spec(name, line))
    exhausted = TaskState.EXHAUSTED
    qtbot.waitUntil(lambda: window.service.task(stored.id).state is exhausted, timeout=10_000)
    window.model.flush_pending()
    row = window.model.row_of(stored.id)
    assert row is not None

    cells = [
        window.model.data(window.model.index(row, column), role)
        for column in Column
        for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole)
    ]
    shown_texts = [rendered(cell) for cell in cells if isinstance(cell, str)]
    assert "evil\\u202eexe.txt" in shown_texts  # the name cell, as `taskgui list` prints it
    assert any("\\u202eabc" in text for text in shown_texts)  # the command's tooltip

    dialog = window.histories.show(window.service.task(stored.id))
    qtbot.waitUntil(lambda: dialog.runs.rowCount() == 1, timeout=5_000)
    shown_texts += [dialog.windowTitle(), rendered(dialog.summary.text())]
    shown_texts += [
        str(dialog.runs.data(dialog.runs.index(0, column), role) or "")
        for column in RunColumn
        for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole)
    ]
    notice = notice_for_exhausted(
        TaskExhausted(stored.id, name, 1, RunOutcome.FAILED), "exit status 3: \u202eabc"
    )
    shown_texts += [notice.title, notice.message]
    assert window.select_task(stored.id)
    seen = answer_boxes(QMessageBox.StandardButton.No)
    window.actions_[Verb.DELETE].trigger()
    qtbot.waitUntil(lambda: bool(seen), timeout=5_000)
    shown_texts.append(seen[0][1])
    assert "“\u2068evil\\u202eexe.txt\u2069”" in seen[0][1]  # set into the question
    for text in shown_texts:
        _unisolated(text)
    assert dialog.windowTitle() == "History — evil\\u202eexe.txt"  # a title: no isolate
    assert notice.title == "“evil\\u202eexe.txt” failed"  # a server may lack FSI's glyph
    assert window.service.task(stored.id).spec.name == name  # stored as written


def test_news_of_a_failing_or_recovered_spoofing_task_shows_its_overrides() -> None:
    """The notices built from the relay's messages (keeps failing, works again, quiet
    hours) pass the name and the error through ``shown`` as well."""
    name, error = "evil\u202eexe.txt", "exit status 3: \u202eabc"
    for trigger in (Trigger.FAILING, Trigger.RECOVERED):
        message = Message(
            trigger=trigger, task_id=1, task_name=name, at=T0, outcome="failed", error=error
        )
        notice = notice_for(Notification(message))
        assert "evil\\u202eexe.txt" in notice.title
        for text in (notice.title, notice.message):
            _unisolated(text)


def test_the_banner_lays_out_a_title_that_begins_with_a_hebrew_name_left_to_right(
    qtbot: QtBot,
) -> None:
    banner = Banner()
    qtbot.addWidget(banner)
    banner.show_message("“גיבוי נכשל” failed", "Gave up after 1 attempt: exit status 1.")
    assert banner.title_label.text() == "\u200e“גיבוי נכשל” failed"  # "failed" stays last
    assert banner.message_label.text() == "Gave up after 1 attempt: exit status 1."


# ---------------------------------------------------- controls and line breaks


def _cell_height(window: MainWindow, task_id: int, column: Column) -> int:
    """The height the table's own delegate lays the cell out in (a line per line)."""
    view = window.table
    model = view.model()
    row = next(
        row
        for row in range(model.rowCount())
        if window.model.row_of(task_id) == window.proxy.mapToSource(model.index(row, 0)).row()
    )
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    return view.itemDelegate().sizeHint(option, model.index(row, column)).height()


def test_a_name_with_a_tab_and_a_line_break_is_one_line_everywhere(
    window: MainWindow, qtbot: QtBot
) -> None:
    """The table cut "tab<TAB>here<LF>next" at the line break (a cell is one line
    high); the window writes it as ``taskgui list`` does: ``tab\\there\\nnext``."""
    name, line = "tab\there\nnext", "echo one\necho two\x1b[31m"
    later = CLOCK.now() + timedelta(days=1)
    stored = window.service.add_task(spec(name, line, first_run_at=later))
    plain = window.service.add_task(spec("plain", "true", first_run_at=later))
    window.model.flush_pending()
    row = window.model.row_of(stored.id)
    assert row is not None

    cell = window.model.index(row, Column.NAME)
    assert window.model.data(cell) == "tab\\there\\nnext"
    tip = window.model.data(cell, Qt.ItemDataRole.ToolTipRole)
    assert rendered(tip) == "echo one\\necho two\\x1b[31m"  # a command is one line too
    assert _cell_height(window, stored.id, Column.NAME) == _cell_height(
        window, plain.id, Column.NAME
    )

    dialog = window.histories.show(window.service.task(stored.id))
    assert dialog.windowTitle() == "History — tab\\there\\nnext"
    assert window.select_task(stored.id)
    seen = answer_boxes(QMessageBox.StandardButton.No)
    window.actions_[Verb.DELETE].trigger()
    qtbot.waitUntil(lambda: bool(seen), timeout=5_000)
    assert "“tab\\there\\nnext”" in seen[0][1]
    assert window.service.task(stored.id).spec.name == name  # stored as written


def test_an_error_paragraph_keeps_its_lines_and_shows_its_controls(
    model: TaskTableModel,
) -> None:
    """An error is read as a paragraph: its lines stay, an ESC in it is written ``\\x1b``."""
    error = "line one\nline two \x1b[2J"
    model.reset_tasks(
        [snapshot(1, "n", "true")],
        {1: LastRun(outcome=RunOutcome.FAILED, exit_code=1, finished_at=T0, error=error)},
    )
    tip = model.data(model.index(0, Column.LAST_RESULT), Qt.ItemDataRole.ToolTipRole)
    assert rendered(tip).startswith("line one\nline two \\x1b[2J\nfinished ")


def test_a_zero_width_space_in_a_name_is_shown_so_two_tasks_never_look_the_same(
    window: MainWindow, qtbot: QtBot
) -> None:
    """``back`` ZWSP ``up`` was drawn "backup", beside a task really named that."""
    later = CLOCK.now() + timedelta(days=1)
    real = window.service.add_task(spec("backup", "true", first_run_at=later))
    spoof = window.service.add_task(spec("back\u200bup", "true", first_run_at=later))
    window.model.flush_pending()
    names = {
        task.id: window.model.data(window.model.index(row, Column.NAME))
        for task in (real, spoof)
        if (row := window.model.row_of(task.id)) is not None
    }
    assert names == {real.id: "backup", spoof.id: "back\\u200bup"}
    dialog = window.histories.show(window.service.task(spoof.id))
    assert dialog.windowTitle() == "History — back\\u200bup"
