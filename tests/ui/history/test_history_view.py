"""The history dialog on runs built here: what each column says, read as a person would."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from pytestqt.qtbot import QtBot

from taskgui.core.clock import FakeClock
from taskgui.core.states import RunOutcome, SlotKind
from taskgui.core.status import RunRecord, TaskSnapshot, TaskStatus
from taskgui.store.sqlite.repository import SqliteRepository
from taskgui.ui.history.history_view import HistoryDialog
from taskgui.ui.history.output_view import OutputView
from taskgui.ui.history.run_table import RunColumn
from taskgui.ui.table.formatting import local_time_text
from tests.helpers.factories import T0, at, fixed_retry, make_spec
from tests.helpers.store import Driver

NOW = datetime(2026, 1, 3, 12, 0, tzinfo=UTC)


def record(run_id: int, started: datetime, **fields: object) -> RunRecord:
    values: dict[str, object] = {
        "id": run_id,
        "task_id": 1,
        "attempt": 1,
        "kind": SlotKind.OCCURRENCE,
        "scheduled_at": started,
        "started_at": started,
        "finished_at": started + timedelta(seconds=5),
        "outcome": RunOutcome.FAILED,
    }
    values.update(fields)
    return RunRecord(**values)  # type: ignore[arg-type]


def cell(dialog: HistoryDialog, row: int, column: RunColumn, role: int = 0) -> object:
    return dialog.runs.data(dialog.runs.index(row, column), role)


def test_dates_carry_their_year_when_not_this_year_and_signals_are_named(qtbot: QtBot) -> None:
    clock = FakeClock(NOW)
    runs = [
        record(2, NOW - timedelta(hours=1), exit_code=-15, error="killed by signal SIGTERM"),
        record(1, datetime(2025, 12, 30, 9, 0, tzinfo=UTC), exit_code=2),
    ]
    task = TaskSnapshot(make_spec(1, name="<b>bold</b> name"), TaskStatus())
    dialog = HistoryDialog(task, lambda: runs, now=clock.now)
    qtbot.addWidget(dialog)
    this_year = str(cell(dialog, 0, RunColumn.STARTED))
    last_year = str(cell(dialog, 1, RunColumn.STARTED))
    assert "2026" not in this_year
    assert "2025" in last_year
    assert cell(dialog, 0, RunColumn.EXIT_CODE) == "SIGTERM"
    assert "signal 15" in str(cell(dialog, 0, RunColumn.EXIT_CODE, 3))  # the tooltip
    assert cell(dialog, 1, RunColumn.EXIT_CODE) == "2"


def test_an_open_run_reads_as_running_or_as_waiting_for_a_node(qtbot: QtBot) -> None:
    going = record(2, NOW, finished_at=None, outcome=None, node="a")
    # A shared schedule's run that no node has claimed yet: no start, so not running.
    unclaimed = record(1, NOW, started_at=None, finished_at=None, outcome=None)
    task = TaskSnapshot(make_spec(1), TaskStatus())
    dialog = HistoryDialog(task, lambda: [going, unclaimed], now=FakeClock(NOW).now)
    qtbot.addWidget(dialog)
    assert [cell(dialog, 0, column) for column in (RunColumn.OUTCOME, RunColumn.DURATION)] == [
        "Running",
        "running…",
    ]
    assert [
        cell(dialog, 1, column)
        for column in (RunColumn.STARTED, RunColumn.OUTCOME, RunColumn.DURATION)
    ] == ["—", "Waiting for a node", "—"]


def test_tooltips_show_task_text_as_plain_text(qtbot: QtBot) -> None:
    runs = [record(1, NOW, error='<img src="/etc/passwd"> & more')]
    task = TaskSnapshot(make_spec(1), TaskStatus())
    dialog = HistoryDialog(task, lambda: runs, now=FakeClock(NOW).now)
    qtbot.addWidget(dialog)
    tip = str(cell(dialog, 0, RunColumn.ERROR, 3))
    assert "<img" not in tip and "&lt;img" in tip


def test_live_output_keeps_the_end_in_view_until_the_person_scrolls_away(qtbot: QtBot) -> None:
    view = OutputView()
    qtbot.addWidget(view)
    view.resize(400, 200)
    view.show()
    qtbot.waitExposed(view)
    lines = "".join(f"line {n}\n" for n in range(200))
    view.set_output(lines)
    view.scroll_to_end()
    bar = view.text.verticalScrollBar()
    more = lines + "".join(f"more {n}\n" for n in range(100))
    view.follow(more)
    assert bar.value() == bar.maximum() > 0  # followed the end
    cursor = view.text.textCursor()  # the person selects a word to copy...
    cursor.setPosition(0)
    cursor.setPosition(4, cursor.MoveMode.KeepAnchor)
    view.text.setTextCursor(cursor)
    bar.setValue(10)  # ...and scrolls up to read
    view.follow(more + "and more\n")
    assert bar.value() == 10  # stays where it was read
    assert view.text.textCursor().selectedText() == "line"  # and the selection stays
    bar.setValue(bar.maximum())  # back at the end: following again
    view.follow(more + "and more\n" + "the end\n")
    assert bar.value() == bar.maximum()


def test_live_output_with_crlf_line_ends_is_followed_too(qtbot: QtBot) -> None:
    """A trial: output ending its lines with CRLF stopped following (the view read its
    own text back without the "\r", so more output never began with it and the whole
    text was set anew at each update, the end lost)."""
    view = OutputView()
    qtbot.addWidget(view)
    view.resize(400, 200)
    view.show()
    qtbot.waitExposed(view)
    lines = "".join(f"crlf {n}\r\n" for n in range(100))
    view.set_output(lines)
    view.scroll_to_end()
    bar = view.text.verticalScrollBar()
    document = view.text.document()
    first_line = document.firstBlock()
    more = lines + "".join(f"crlf {n}\r\n" for n in range(100, 160))
    view.follow(more)
    assert bar.value() == bar.maximum() > 0  # followed the end
    assert "crlf 159" in view.text.toPlainText()
    assert document.firstBlock() == first_line  # appended to, not set anew


def test_a_retry_shows_as_scheduled_when_it_was_due(tmp_path: Path, qtbot: QtBot) -> None:
    repository = SqliteRepository(tmp_path / "history.sqlite3")
    driver = Driver(repository)
    task_id = driver.add_one(make_spec(0, retry=fixed_retry(3, delay=30)))
    [first] = driver.due(T0)
    driver.finish(first, RunOutcome.FAILED, at(5))  # the retry is decided at 00:05 ...
    [second] = driver.due(at(35))  # ... and is due, and runs, at 00:35
    driver.finish(second, RunOutcome.SUCCEEDED, at(36))

    dialog = HistoryDialog(driver.engine.snapshot(task_id), lambda: repository.runs(task_id))
    qtbot.addWidget(dialog)
    dialog.refresh()

    model = dialog.runs
    retry = model.run_at(0)
    assert retry is not None and retry.kind is SlotKind.RETRY
    scheduled = model.data(model.index(0, RunColumn.SCHEDULED))
    assert scheduled == local_time_text(at(35)) == model.data(model.index(0, RunColumn.STARTED))
    assert scheduled != local_time_text(at(5))
    repository.close()


def test_the_output_shows_its_controls_and_overrides_and_keeps_its_lines(qtbot: QtBot) -> None:
    """``\\u202e`` in a run's output reversed the rest of its line in the pane and ESC
    sequences were invisible; they are written as the window writes names, while the
    output's tabs and line breaks stay as printed."""
    printed = "col\tcol\nfile evil\u202eexe.txt\n\x1b[31mred\x1b[0m\n"
    task = TaskSnapshot(make_spec(1), TaskStatus())
    dialog = HistoryDialog(task, lambda: [record(1, NOW, output=printed)])
    qtbot.addWidget(dialog)
    pane = dialog.output.text
    expected = "col\tcol\nfile evil\\u202eexe.txt\n\\x1b[31mred\\x1b[0m\n"
    assert pane.toPlainText() == expected
    assert pane.document().blockCount() == 4  # three lines and the empty one after

    cursor = pane.textCursor()  # a selection in what is shown...
    cursor.setPosition(0)
    cursor.setPosition(3, cursor.MoveMode.KeepAnchor)
    pane.setTextCursor(cursor)
    dialog.output.follow(printed + "more \u202eabc\n")
    assert pane.toPlainText() == expected + "more \\u202eabc\n"
    assert pane.textCursor().selectedText() == "col"  # ...stays: the output was added to
