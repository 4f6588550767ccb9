"""The task table model and its filter proxy: structure, signals, counts, sorting, filters.

Snapshots are built directly (``TaskSnapshot(spec, TaskStatus(...))``) so each test
says exactly the state it needs; times come from a FakeClock. Adds and changes reach
views on the next event-loop turn (the model coalesces bursts), so tests either wait
for the signal or call ``flush_pending()``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QIcon
from PySide6.QtWidgets import QApplication
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from taskgui.core.clock import FakeClock
from taskgui.core.engine.engine import Engine
from taskgui.core.recurrence import Every
from taskgui.core.states import RunOutcome, SlotKind, TaskState, WaitReason
from taskgui.core.status import RunResult, RunTicket, TaskSnapshot, TaskStatus
from taskgui.core.task import Command
from taskgui.ui.plain_text import plain_tooltip
from taskgui.ui.table.task_filter import StateFilter, TaskFilterProxy, count_for
from taskgui.ui.table.task_model import Column, LastRun, Role, TaskTableModel
from tests.helpers.factories import T0, at, fixed_retry, make_spec

ALL_COLUMNS = len(Column) - 1


def snap(task_id: int, state: TaskState = TaskState.PENDING, **fields: Any) -> TaskSnapshot:
    spec_fields = {
        k: fields.pop(k) for k in ("name", "priority", "command", "retry") if k in fields
    }
    status_fields = {"next_run_at": at(60), **fields}
    return TaskSnapshot(make_spec(task_id, **spec_fields), TaskStatus(state=state, **status_fields))


def varied() -> list[TaskSnapshot]:
    return [
        snap(1, name="backup home", priority=5, command=Command(line="rsync -a ~ /mnt/Backup")),
        snap(2, TaskState.RUNNING, running=1, running_since=at(-42)),
        snap(3, TaskState.RETRYING, retry=fixed_retry(5), attempt=1, slot_attempt=2),
        snap(4, TaskState.PAUSED, priority=-3),
        snap(5, TaskState.SUCCEEDED, next_run_at=None, attempt=1),
        snap(6, TaskState.EXHAUSTED, next_run_at=None, retry=fixed_retry(3), attempt=3),
        snap(7, TaskState.CANCELLED, next_run_at=None),
        snap(8, TaskState.MISSED, next_run_at=None),
        snap(9, waiting=WaitReason.WORKER, next_run_at=at(-1)),
    ]


def loaded(model: TaskTableModel, snapshots: list[TaskSnapshot] | None = None) -> TaskTableModel:
    last_runs = {6: LastRun(outcome=RunOutcome.FAILED, exit_code=3, finished_at=at(-300))}
    model.reset_tasks(snapshots if snapshots is not None else varied(), last_runs)
    return model


def text(model: Any, row: int, column: Column) -> str:
    return str(model.data(model.index(row, column)))


def recount(model: TaskTableModel) -> Counter[TaskState]:
    found: Counter[TaskState] = Counter()
    for row in range(model.rowCount()):
        snapshot = model.snapshot_at(row)
        assert snapshot is not None
        found[snapshot.status.state] += 1
    return found


# ------------------------------------------------------------------ model tester


def test_the_model_passes_the_model_tester(
    qtmodeltester: ModelTester, model: TaskTableModel
) -> None:
    qtmodeltester.check(loaded(model), force_py=True)
    # The tester stays connected: it also checks every change below.
    model.on_task_added(snap(10))
    model.on_task_changed(snap(1, TaskState.RUNNING, running=1))
    model.on_task_removed(3)
    model.flush_pending()
    model.on_task_removed(10)


def test_the_proxy_passes_the_model_tester(
    qtmodeltester: ModelTester, model: TaskTableModel, proxy: TaskFilterProxy
) -> None:
    loaded(model)
    proxy.sort(Column.NEXT_RUN)
    qtmodeltester.check(proxy, force_py=True)
    proxy.set_state_filter(StateFilter.FAILED)
    model.on_task_changed(snap(1, TaskState.RETRYING, slot_attempt=2))
    model.flush_pending()
    proxy.set_search_text("backup")
    proxy.set_state_filter(StateFilter.ALL)


def test_an_empty_model_passes_the_model_tester(
    qtmodeltester: ModelTester, model: TaskTableModel
) -> None:
    qtmodeltester.check(model, force_py=True)


# ------------------------------------------------------------------ structure


def test_an_added_task_becomes_the_last_row_on_the_next_turn(
    qtbot: QtBot, model: TaskTableModel
) -> None:
    loaded(model)
    model.on_task_added(snap(42, name="new one"))
    assert model.rowCount() == 9  # not yet: adds are coalesced
    assert model.row_of(42) is None
    assert model.snapshot_of(42) is not None
    with qtbot.waitSignal(model.rowsInserted, timeout=2000) as blocker:
        pass
    assert blocker.args is not None
    assert blocker.args[1:] == [9, 9]
    assert model.row_of(42) == 9
    assert text(model, 9, Column.NAME) == "new one"


def test_a_burst_of_adds_is_inserted_in_batches(
    qtbot: QtBot, qapp: QApplication, clock: FakeClock
) -> None:
    model = TaskTableModel(clock, max_batch=3)
    inserted: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda _parent, first, last: inserted.append((first, last)))
    for task_id in range(1, 8):
        model.on_task_added(snap(task_id))
    qtbot.waitUntil(lambda: model.rowCount() == 7, timeout=2000)
    assert inserted == [(0, 2), (3, 5), (6, 6)]
    assert model.task_ids() == (1, 2, 3, 4, 5, 6, 7)


def test_a_change_refreshes_its_whole_row(qtbot: QtBot, model: TaskTableModel) -> None:
    loaded(model)
    with qtbot.waitSignal(model.dataChanged, timeout=2000) as blocker:
        model.on_task_changed(snap(4, TaskState.PENDING, priority=7))
    assert blocker.args is not None
    top_left, bottom_right = blocker.args[0], blocker.args[1]
    assert (top_left.row(), top_left.column()) == (3, 0)
    assert (bottom_right.row(), bottom_right.column()) == (3, ALL_COLUMNS)
    assert text(model, 3, Column.PRIORITY) == "7"
    assert text(model, 3, Column.STATE) == "Pending"


def test_changes_of_neighbouring_rows_are_announced_together(model: TaskTableModel) -> None:
    loaded(model)
    changed: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda tl, br, _roles: changed.append((tl.row(), br.row())))
    for task_id in (2, 3, 4, 8):
        model.on_task_changed(snap(task_id, priority=1))
    model.flush_pending()
    assert changed == [(1, 3), (7, 7)]


def test_a_change_of_an_unknown_task_adds_it(qtbot: QtBot, model: TaskTableModel) -> None:
    loaded(model)
    with qtbot.waitSignal(model.rowsInserted, timeout=2000):
        model.on_task_changed(snap(77))
    assert model.row_of(77) == 9


def test_a_change_before_the_insert_shows_in_the_inserted_row(model: TaskTableModel) -> None:
    changed: list[object] = []
    model.dataChanged.connect(lambda *args: changed.append(args))
    model.on_task_added(snap(1, priority=1))
    model.on_task_changed(snap(1, TaskState.RUNNING, priority=2, running=1))
    model.flush_pending()
    assert changed == []
    assert text(model, 0, Column.PRIORITY) == "2"
    assert model.counts()[TaskState.RUNNING] == 1
    assert model.counts()[TaskState.PENDING] == 0


def test_a_removed_task_takes_its_row_and_later_rows_move_up(
    qtbot: QtBot, model: TaskTableModel
) -> None:
    loaded(model)
    with qtbot.waitSignal(model.rowsRemoved, timeout=1000) as blocker:
        model.on_task_removed(3)
    assert blocker.args is not None
    assert blocker.args[1:] == [2, 2]
    assert model.rowCount() == 8
    assert model.row_of(3) is None
    for row, task_id in enumerate(model.task_ids()):
        assert model.row_of(task_id) == row
    model.on_task_removed(3)  # unknown now: ignored
    assert model.rowCount() == 8


def test_a_task_removed_before_its_insert_never_appears(model: TaskTableModel) -> None:
    signals: list[str] = []
    model.rowsInserted.connect(lambda *_: signals.append("inserted"))
    model.rowsRemoved.connect(lambda *_: signals.append("removed"))
    model.on_task_added(snap(1))
    model.on_task_removed(1)
    model.flush_pending()
    assert signals == []
    assert model.rowCount() == 0
    assert model.snapshot_of(1) is None


def test_only_reset_tasks_resets_the_model(model: TaskTableModel) -> None:
    resets: list[bool] = []
    model.modelReset.connect(lambda: resets.append(True))
    loaded(model)
    assert resets == [True]
    model.on_task_added(snap(20))
    model.on_task_changed(snap(1, TaskState.RUNNING, running=1))
    model.on_task_removed(2)
    model.on_run_finished(*finished_run(1))
    model.flush_pending()
    model.refresh_countdowns(0, 5)
    assert resets == [True]


def test_the_model_can_start_from_the_real_engine(model: TaskTableModel) -> None:
    engine = Engine()
    for task_id in (1, 2, 3):
        engine.add(make_spec(task_id, first_run_at=at(task_id * 60)))
    model.reset_tasks(list(engine.snapshots()), {})
    assert model.task_ids() == (1, 2, 3)
    assert text(model, 0, Column.NEXT_RUN) == "in 1m 00s"
    assert text(model, 2, Column.NEXT_RUN) == "in 3m 00s"


# ------------------------------------------------------------------------ counts


def test_counts_follow_adds_changes_and_removes(qtbot: QtBot, model: TaskTableModel) -> None:
    loaded(model)
    emitted: list[bool] = []
    model.counts_changed.connect(lambda: emitted.append(True))
    assert model.counts()[TaskState.PENDING] == 2
    model.on_task_changed(snap(1, TaskState.RUNNING, running=1))
    model.on_task_changed(snap(3, TaskState.RUNNING, running=1))
    assert model.counts()[TaskState.PENDING] == 1  # current at once
    assert model.counts()[TaskState.RUNNING] == 3
    assert emitted == []  # announced once, on the next turn
    qtbot.waitUntil(lambda: emitted == [True], timeout=2000)
    model.on_task_changed(snap(1, TaskState.RUNNING, running=1, priority=3))
    model.flush_pending()
    assert emitted == [True]  # same state: nothing to tell
    model.on_task_removed(2)
    assert model.counts()[TaskState.RUNNING] == 2
    model.flush_pending()
    assert emitted == [True, True]
    assert count_for(StateFilter.FAILED, model) == 2
    assert count_for(StateFilter.PENDING, model) == 1
    assert count_for(StateFilter.PAUSED, model) == 1
    assert count_for(StateFilter.ALL, model) == 8
    model.on_task_added(snap(30, TaskState.SUCCEEDED))
    assert count_for(StateFilter.DONE, model) == 1  # counted once it is a row
    model.flush_pending()
    assert count_for(StateFilter.DONE, model) == 2
    assert emitted == [True, True, True]


_STATES = st.sampled_from(list(TaskState))
_OPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "change", "remove", "flush"]),
        st.integers(min_value=1, max_value=12),
        _STATES,
    ),
    max_size=60,
)


@settings(max_examples=60, deadline=None)
@given(ops=_OPS)
def test_counts_always_equal_a_recount(qapp: QApplication, ops: list[Any]) -> None:
    model = TaskTableModel(FakeClock(T0))
    model.reset_tasks([snap(100, TaskState.PAUSED), snap(101, TaskState.RUNNING)], {})
    for op, task_id, state in ops:
        if op == "add":
            model.on_task_added(snap(task_id, state))
        elif op == "change":
            model.on_task_changed(snap(task_id, state))
        elif op == "remove":
            model.on_task_removed(task_id)
        else:
            model.flush_pending()
        counts = model.counts()
        assert {s: n for s, n in counts.items() if n} == dict(recount(model))
        assert sum(counts.values()) == model.rowCount()
        for row, known in enumerate(model.task_ids()):
            assert model.row_of(known) == row
    model.flush_pending()
    assert {s: n for s, n in model.counts().items() if n} == dict(recount(model))


# --------------------------------------------------------------------- countdown


def test_refresh_countdowns_announces_only_the_requested_next_run_cells(
    model: TaskTableModel,
) -> None:
    loaded(model)
    changed: list[tuple[int, int, int, int, list[int]]] = []
    model.dataChanged.connect(
        lambda tl, br, roles: changed.append(
            (tl.row(), br.row(), tl.column(), br.column(), list(roles))
        )
    )
    model.refresh_countdowns(2, 4)
    display = int(Qt.ItemDataRole.DisplayRole.value)
    assert changed == [(2, 4, Column.NEXT_RUN, Column.NEXT_RUN, [display])]
    changed.clear()
    model.refresh_countdowns(7, 50)  # clamped to the table
    model.refresh_countdowns(20, 30)  # nothing there
    model.refresh_countdowns(5, 4)  # empty
    assert changed == [(7, 8, Column.NEXT_RUN, Column.NEXT_RUN, [display])]
    changed.clear()
    model.refresh_countdowns(0, 1, ages=True)
    assert [(c[2], c[3]) for c in changed] == [
        (Column.NEXT_RUN, Column.NEXT_RUN),
        (Column.LAST_RESULT, Column.LAST_RESULT),
    ]


def test_a_retrying_task_counts_down_to_its_next_attempt(
    clock: FakeClock, model: TaskTableModel
) -> None:
    retrying = snap(
        1,
        TaskState.RETRYING,
        retry=fixed_retry(max_attempts=5),
        attempt=1,
        slot_attempt=2,
        next_run_at=at(8),
    )
    model.reset_tasks([retrying], {})
    assert text(model, 0, Column.NEXT_RUN) == "retry 2/5 in 0:08"
    assert text(model, 0, Column.ATTEMPTS) == "1 / 5"
    clock.advance(3)
    assert text(model, 0, Column.NEXT_RUN) == "retry 2/5 in 0:05"


# ---------------------------------------------------------------------- cells


def finished_run(task_id: int) -> tuple[RunTicket, RunOutcome, RunResult]:
    ticket = RunTicket(
        run_id=1,
        task_id=task_id,
        attempt=1,
        kind=SlotKind.OCCURRENCE,
        scheduled_at=T0,
        dispatched_at=T0,
    )
    return ticket, RunOutcome.FAILED, RunResult(exit_code=3, error="exit status 3")


def test_a_finished_run_updates_the_last_result(
    qtbot: QtBot, clock: FakeClock, model: TaskTableModel
) -> None:
    loaded(model)
    with qtbot.waitSignal(model.dataChanged, timeout=2000):
        model.on_run_finished(*finished_run(1))
    assert text(model, 0, Column.LAST_RESULT) == "failed (exit 3) · just now"
    tooltip = model.data(model.index(0, Column.LAST_RESULT), Qt.ItemDataRole.ToolTipRole)
    assert tooltip.startswith(plain_tooltip("exit status 3\nx")[:-5])  # then the finish
    clock.advance(300)
    assert text(model, 0, Column.LAST_RESULT) == "failed (exit 3) · 5m ago"
    assert model.last_run_of(1) == LastRun(
        outcome=RunOutcome.FAILED, exit_code=3, finished_at=T0, error="exit status 3"
    )
    model.on_run_finished(*finished_run(999))  # unknown task: ignored


def test_last_result_falls_back_to_the_engine_status(model: TaskTableModel) -> None:
    model.reset_tasks([snap(1, last_outcome=RunOutcome.SUCCEEDED, last_run_at=at(-120))], {})
    assert text(model, 0, Column.LAST_RESULT) == "succeeded · 2m ago"


def test_cells_show_the_table_texts(model: TaskTableModel) -> None:
    loaded(model)
    assert [text(model, 0, c) for c in Column] == [
        "backup home",
        "Pending",
        "5",
        "in 1m 00s",
        "once",
        "—",
        "—",
        "",  # Node: no node runs it (a file's schedule has none)
    ]
    assert text(model, 1, Column.NEXT_RUN) == "running 0:42"
    assert text(model, 5, Column.LAST_RESULT) == "failed (exit 3) · 5m ago"
    assert text(model, 5, Column.ATTEMPTS) == "3 / 3"
    assert text(model, 8, Column.NEXT_RUN) == "waiting for a worker"


def test_roles_beyond_display(model: TaskTableModel) -> None:
    loaded(model)
    index = model.index(0, Column.NAME)
    assert model.data(index, Qt.ItemDataRole.ToolTipRole) == plain_tooltip("rsync -a ~ /mnt/Backup")
    assert model.data(index, Role.TASK_ID) == 1
    assert model.data(index, Role.STATE) == TaskState.PENDING
    assert model.data(index, Role.SNAPSHOT) == model.snapshot_at(0)
    icon = model.data(model.index(0, Column.STATE), Qt.ItemDataRole.DecorationRole)
    assert isinstance(icon, QIcon) and not icon.isNull()
    assert model.data(index, Qt.ItemDataRole.DecorationRole) is None
    alignment = model.data(model.index(0, Column.PRIORITY), Qt.ItemDataRole.TextAlignmentRole)
    assert int(alignment) & int(Qt.AlignmentFlag.AlignRight.value)
    assert model.data(index, Qt.ItemDataRole.TextAlignmentRole) is None
    next_run_tip = model.data(model.index(0, Column.NEXT_RUN), Qt.ItemDataRole.ToolTipRole)
    assert next_run_tip.startswith("2026-01-01 ")
    waiting_tip = model.data(model.index(8, Column.STATE), Qt.ItemDataRole.ToolTipRole)
    assert waiting_tip == plain_tooltip("waiting for a worker")


def test_tooltips_show_task_text_as_plain_text_and_the_next_runs(model: TaskTableModel) -> None:
    hostile = '<img src="/dev/zero"> <b>bold</b> & more'
    recurring = snap(2, command=Command(line=hostile), name=hostile)
    recurring = recurring._replace(
        spec=replace(recurring.spec, recurrence=Every(timedelta(minutes=5))),
        status=recurring.status._replace(slot_kind=SlotKind.OCCURRENCE),
    )
    failed = LastRun(outcome=RunOutcome.FAILED, exit_code=1, finished_at=T0, error=hostile)
    model.reset_tasks([recurring], {2: failed})
    tips = [model.data(model.index(0, column), Qt.ItemDataRole.ToolTipRole) for column in Column]
    for tip in tips:
        assert tip is None or ("<img" not in tip and "<b>" not in tip)
    assert "&lt;img src=" in tips[Column.NAME] and "&lt;img src=" in tips[Column.LAST_RESULT]
    next_runs = tips[Column.NEXT_RUN]
    assert next_runs.count("2026-01-01") == 4  # the next run, then three more


def test_foreground_dims_finished_rows_and_marks_failures_red(model: TaskTableModel) -> None:
    loaded(model)
    role = Qt.ItemDataRole.ForegroundRole

    def colour(row: int) -> QColor | None:
        value = model.data(model.index(row, Column.NAME), role)
        assert value is None or isinstance(value, QColor)
        return value

    assert colour(0) is None  # pending
    retrying, exhausted, succeeded = colour(2), colour(5), colour(4)
    assert retrying is not None and exhausted is not None and succeeded is not None
    assert retrying == exhausted
    assert retrying.red() > retrying.green()
    assert succeeded != exhausted


def test_bad_indexes_and_roles_answer_none(model: TaskTableModel) -> None:
    loaded(model)
    assert model.data(QModelIndex()) is None
    assert model.data(model.index(99, 0)) is None
    assert model.data(model.index(0, 0), 9999) is None
    assert model.data(QPersistentModelIndex(model.index(0, 0))) == "backup home"
    assert model.snapshot_at(-1) is None
    assert model.snapshot_at(99) is None
    assert model.search_text_at(99) == ""
    assert model.rowCount(model.index(0, 0)) == 0
    assert model.headerData(99, Qt.Orientation.Horizontal) is None


def test_headers_name_the_columns(model: TaskTableModel) -> None:
    titles = [model.headerData(c, Qt.Orientation.Horizontal) for c in Column]
    assert titles == [
        "Name",
        "State",
        "Priority",
        "Next run",
        "Schedule",
        "Last result",
        "Attempts",
        "Node",
    ]


# ------------------------------------------------------------------ proxy: sort


def proxy_column(proxy: TaskFilterProxy, column: Column, role: int = 0) -> list[Any]:
    return [proxy.data(proxy.index(row, column), role) for row in range(proxy.rowCount())]


def test_priorities_sort_as_numbers_not_text(model: TaskTableModel, proxy: TaskFilterProxy) -> None:
    model.reset_tasks([snap(1, priority=10), snap(2, priority=100), snap(3, priority=9)], {})
    proxy.sort(Column.PRIORITY, Qt.SortOrder.AscendingOrder)
    assert proxy_column(proxy, Column.PRIORITY) == ["9", "10", "100"]
    proxy.sort(Column.PRIORITY, Qt.SortOrder.DescendingOrder)
    assert proxy_column(proxy, Column.PRIORITY) == ["100", "10", "9"]


def test_next_run_sorts_by_time_with_no_next_run_last(
    model: TaskTableModel, proxy: TaskFilterProxy
) -> None:
    model.reset_tasks(
        [
            snap(1, next_run_at=at(3600)),
            snap(2, TaskState.SUCCEEDED, next_run_at=None),
            snap(3, next_run_at=at(5)),
            snap(4, next_run_at=at(60)),
        ],
        {},
    )
    proxy.sort(Column.NEXT_RUN)
    assert proxy_column(proxy, Column.NEXT_RUN) == ["in 5s", "in 1m 00s", "in 1h 00m", "—"]


def test_a_changed_row_moves_to_its_sorted_place(
    model: TaskTableModel, proxy: TaskFilterProxy
) -> None:
    model.reset_tasks([snap(1, priority=1), snap(2, priority=2), snap(3, priority=3)], {})
    proxy.sort(Column.PRIORITY)
    model.on_task_changed(snap(1, priority=50))
    model.flush_pending()
    assert proxy_column(proxy, Column.NAME) == ["task 2", "task 3", "task 1"]


def test_state_and_name_sort_keys(model: TaskTableModel, proxy: TaskFilterProxy) -> None:
    loaded(model)
    proxy.sort(Column.STATE)
    states = proxy_column(proxy, Column.STATE)
    assert states[0] == "Running"
    assert states[-1] == "Succeeded"
    model.reset_tasks([snap(1, name="beta"), snap(2, name="Alpha"), snap(3, name="gamma")], {})
    proxy.sort(Column.NAME)
    assert proxy_column(proxy, Column.NAME) == ["Alpha", "beta", "gamma"]
    sort_key = model.data(model.index(0, Column.LAST_RESULT), Role.SORT_KEY)
    assert sort_key == float("-inf")


# ---------------------------------------------------------------- proxy: filter


def test_state_filters_group_states(model: TaskTableModel, proxy: TaskFilterProxy) -> None:
    loaded(model)
    expected = {
        StateFilter.ALL: 9,
        StateFilter.PENDING: 2,
        StateFilter.RUNNING: 1,
        StateFilter.RETRYING: 1,  # will run again: not "failed"
        StateFilter.PAUSED: 1,  # not "pending"
        StateFilter.FAILED: 2,  # exhausted + missed
        StateFilter.DONE: 1,
        StateFilter.CANCELLED: 1,
    }
    for state_filter, rows in expected.items():
        proxy.set_state_filter(state_filter)
        assert proxy.state_filter is state_filter
        assert proxy.rowCount() == rows, state_filter
        assert count_for(state_filter, model) == rows
        assert proxy.count_of(state_filter) == rows
        assert state_filter.label and state_filter.tooltip
    assert StateFilter.FAILED.states == {TaskState.EXHAUSTED, TaskState.MISSED}
    groups = [f.states for f in StateFilter if f is not StateFilter.ALL]
    assert sum(len(states) for states in groups) == len(TaskState)  # each state once


def test_counts_follow_the_search_as_tasks_change(
    qtbot: QtBot, model: TaskTableModel, proxy: TaskFilterProxy
) -> None:
    loaded(model)
    moved: list[bool] = []
    proxy.counts_changed.connect(lambda: moved.append(True))
    proxy.set_search_text("task")  # every task but "backup home"
    assert moved == [True]
    counts = {f: proxy.count_of(f) for f in StateFilter}
    assert counts[StateFilter.ALL] == 8
    assert counts[StateFilter.PENDING] == 1  # task 9; "backup home" is not found
    assert counts[StateFilter.RETRYING] == 1
    model.on_task_changed(snap(9, TaskState.RUNNING, running=1))
    model.flush_pending()
    assert (proxy.count_of(StateFilter.PENDING), proxy.count_of(StateFilter.RUNNING)) == (0, 2)
    model.on_task_changed(snap(3, TaskState.RETRYING, name="renamed", retry=fixed_retry(5)))
    model.flush_pending()
    assert proxy.count_of(StateFilter.RETRYING) == 0  # no longer found
    model.on_task_removed(6)
    assert proxy.count_of(StateFilter.FAILED) == 1
    model.on_task_added(snap(20, TaskState.PAUSED))
    model.flush_pending()
    assert proxy.count_of(StateFilter.PAUSED) == 2
    proxy.set_search_text("task 2")  # narrower: tasks 2 and 20
    assert proxy.count_of(StateFilter.ALL) == 2
    assert proxy.count_of(StateFilter.PAUSED) == 1
    proxy.set_search_text("")
    assert proxy.count_of(StateFilter.ALL) == model.rowCount() == 9
    assert len(moved) >= 5


def test_search_matches_name_or_command_ignoring_case(
    model: TaskTableModel, proxy: TaskFilterProxy
) -> None:
    loaded(model)
    proxy.set_search_text("  BACKUP ")
    assert proxy.rowCount() == 1
    proxy.set_search_text("/mnt/backup")  # in the command line only
    assert proxy.rowCount() == 1
    proxy.set_search_text("task ")
    assert proxy.rowCount() == 8
    proxy.set_state_filter(StateFilter.RUNNING)
    assert proxy.rowCount() == 1
    proxy.set_search_text("")
    proxy.set_state_filter(StateFilter.ALL)
    assert proxy.rowCount() == 9
    assert proxy.search_text == ""


def test_the_filter_follows_changes(model: TaskTableModel, proxy: TaskFilterProxy) -> None:
    loaded(model)
    proxy.set_state_filter(StateFilter.RUNNING)
    assert proxy.rowCount() == 1
    model.on_task_changed(snap(1, TaskState.RUNNING, running=1))
    model.flush_pending()
    assert proxy.rowCount() == 2
    model.on_task_changed(snap(1, name="renamed", next_run_at=at(5)))
    model.flush_pending()
    proxy.set_state_filter(StateFilter.ALL)
    proxy.set_search_text("renamed")
    assert proxy.rowCount() == 1


def test_the_proxy_sorts_on_the_sort_key_role(
    model: TaskTableModel, proxy: TaskFilterProxy
) -> None:
    loaded(model)
    model.on_run_finished(*finished_run(2))
    model.flush_pending()
    for column in Column:
        proxy.sort(column)
        ids = [proxy.task_id_at(row) for row in range(proxy.rowCount())]
        keys = [proxy.data(proxy.index(row, column), Role.SORT_KEY) for row in range(len(ids))]
        assert list(zip(keys, ids, strict=True)) == sorted(zip(keys, ids, strict=True)), column


def test_bulk_reads_agree_with_data(model: TaskTableModel) -> None:
    loaded(model)
    model.on_task_added(snap(40, name="late"))
    model.on_task_removed(2)
    model.flush_pending()
    ids = model.task_ids()
    for column in Column:
        by_role = [model.data(model.index(row, column), Role.SORT_KEY) for row in range(len(ids))]
        assert model.sort_keys(ids, column) == by_role
        assert [model.sort_key(task_id, column) for task_id in ids] == by_role
        for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole, Role.SNAPSHOT):
            assert [model.data_of(t, column, role) for t in ids] == [
                model.data(model.index(row, column), role) for row in range(len(ids))
            ]
    # Column -1: the insertion order, which is the row order.
    unsorted = model.sort_keys(ids, -1)
    assert unsorted == sorted(unsorted) and len(set(unsorted)) == len(ids)
    assert [model.id_at(row) for row in range(len(ids))] == list(ids)
    assert model.id_at(-1) is None and model.id_at(len(ids)) is None
    assert (
        model.search_text_of(1) == model.search_text_at(0) == "backup home\0rsync -a ~ /mnt/backup"
    )
    assert model.search_text_of(999) == ""
    assert model.data_of(999, 0) is None
    assert model.data_of(1, 99) is None


def test_the_model_survives_a_clock_that_fails(model: TaskTableModel, caplog: Any) -> None:
    loaded(model)

    class BrokenClock(FakeClock):
        def now(self) -> Any:
            raise RuntimeError("no clock")

    model._clock = BrokenClock()  # a failure inside data() must not reach Qt
    with caplog.at_level("ERROR"):
        assert model.data(model.index(0, Column.NEXT_RUN)) is None
    assert "data(" in caplog.text


def test_next_run_sort_key_is_epoch_seconds(model: TaskTableModel) -> None:
    loaded(model)
    key = model.data(model.index(0, Column.NEXT_RUN), Role.SORT_KEY)
    assert key == pytest.approx((T0 + timedelta(seconds=60)).timestamp())
    assert model.data(model.index(4, Column.NEXT_RUN), Role.SORT_KEY) == float("inf")
    assert model.data(model.index(0, Column.PRIORITY), Role.SORT_KEY) == 5
    assert model.data(model.index(5, Column.ATTEMPTS), Role.SORT_KEY) == 3
    # Succeeded, its "1" not shown: it sorts with the other empty cells.
    assert text(model, 4, Column.ATTEMPTS) == "—"
    assert model.data(model.index(4, Column.ATTEMPTS), Role.SORT_KEY) == 0
