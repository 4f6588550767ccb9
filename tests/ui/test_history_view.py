"""The history dialog on runs built here: what each column says, read as a person would."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pytestqt.qtbot import QtBot

from taskgui.core.clock import FakeClock
from taskgui.core.states import RunOutcome, SlotKind
from taskgui.core.status import RunRecord, TaskSnapshot, TaskStatus
from taskgui.ui.history_view import HistoryDialog, OutputView, RunColumn
from tests.helpers.factories import make_spec

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
