"""TaskFilterProxy: its order against a plain Python sort, its signals, its selections.

The reference order is computed here from the snapshots alone (the keys written out
again, independently of the model's code): sorted by (key, task id), reversed for
descending. Signals are checked by mirroring the proxy's rows from what it emits, and
persistent indexes by holding one on every row across each update.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
import shiboken6
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtCore import (
    QAbstractItemModel,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    QStringListModel,
    Qt,
)
from PySide6.QtWidgets import QApplication, QTableView
from pytestqt.modeltest import ModelTester

from taskgui.core.clock import FakeClock
from taskgui.core.recurrence import Cron, Every
from taskgui.core.states import RunOutcome, SlotKind, TaskState
from taskgui.core.status import RunResult, RunTicket, TaskSnapshot, TaskStatus
from taskgui.ui.table import shown_rows
from taskgui.ui.table.formatting import EMPTY, attempts_text, schedule_text
from taskgui.ui.table.task_filter import StateFilter, TaskFilterProxy
from taskgui.ui.table.task_model import Column, LastRun, TaskTableModel
from tests.helpers.factories import T0, at, make_spec

ASC = Qt.SortOrder.AscendingOrder
DESC = Qt.SortOrder.DescendingOrder
DISPLAY = int(Qt.ItemDataRole.DisplayRole.value)
# "What needs attention first", as the table promises; written out again on purpose.
ATTENTION = [
    TaskState.RUNNING,
    TaskState.RETRYING,
    TaskState.PENDING,
    TaskState.PAUSED,
    TaskState.EXHAUSTED,
    TaskState.MISSED,
    TaskState.CANCELLED,
    TaskState.SUCCEEDED,
]
NAMES = ["alpha", "Beta", "beta", "gamma", "Delta", "delta", "task"]
RECURRENCES = [None, Every(timedelta(minutes=5)), Every(timedelta(hours=2)), Cron("0 3 * * *")]


def snap(task_id: int, state: TaskState = TaskState.PENDING, **fields: Any) -> TaskSnapshot:
    spec_fields = {k: fields.pop(k) for k in ("name", "priority", "recurrence") if k in fields}
    if spec_fields.get("recurrence", 0) is None:
        del spec_fields["recurrence"]
    status_fields = {"next_run_at": at(60), **fields}
    return TaskSnapshot(make_spec(task_id, **spec_fields), TaskStatus(state=state, **status_fields))


def random_snap(task_id: int, rng: random.Random) -> TaskSnapshot:
    """A task whose every sort key is drawn from a few values, so keys tie often."""
    last = rng.choice([None, at(-600), at(-60)])
    return snap(
        task_id,
        rng.choice(ATTENTION),
        name=f"{rng.choice(NAMES)} {rng.randrange(3)}",
        priority=rng.randrange(-2, 3),
        recurrence=rng.choice(RECURRENCES),
        next_run_at=rng.choice([None, at(5), at(60), at(3600)]),
        attempt=rng.randrange(3),
        last_outcome=None if last is None else RunOutcome.SUCCEEDED,
        last_run_at=last,
        nodes=rng.choice([(), ("a",), ("B",), ("a", "c")]),
    )


def reference_key(model: TaskTableModel, task_id: int, column: int) -> Any:
    snapshot = model.snapshot_of(task_id)
    assert snapshot is not None
    spec, status = snapshot.spec, snapshot.status
    if column == Column.NAME:
        return spec.name.casefold()
    if column == Column.STATE:
        return ATTENTION.index(status.state)
    if column == Column.PRIORITY:
        return spec.priority
    if column == Column.NEXT_RUN:
        return (1, 0.0) if status.next_run_at is None else (0, status.next_run_at.timestamp())
    if column == Column.SCHEDULE:
        return schedule_text(spec).casefold()
    if column == Column.LAST_RESULT:
        last = model.last_run_of(task_id)
        finished = None if last is None else last.finished_at
        return (0, 0.0) if finished is None else (1, finished.timestamp())
    if column == Column.NODE:
        return ", ".join(status.nodes).casefold()
    assert column == Column.ATTEMPTS
    # By the count the cell shows; an empty cell (a count that says nothing) as none.
    shown_text = attempts_text(snapshot)
    return 0 if shown_text == EMPTY else int(shown_text.split(" / ")[0])


def shown_by_filter(model: TaskTableModel, proxy: TaskFilterProxy, task_id: int) -> bool:
    snapshot = model.snapshot_of(task_id)
    assert snapshot is not None
    if snapshot.status.state not in proxy.state_filter.states:
        return False
    haystack = f"{snapshot.spec.name}\n{snapshot.spec.command.line}".casefold()
    return proxy.search_text in haystack


def expected_order(model: TaskTableModel, proxy: TaskFilterProxy) -> list[int]:
    """What the proxy should show: the model's rows, filtered, sorted by Python."""
    shown = [t for t in model.task_ids() if shown_by_filter(model, proxy, t)]
    column = proxy.sortColumn()
    if column < 0:
        return shown  # the source order
    ordered = sorted(shown, key=lambda t: (reference_key(model, t, column), t))
    return ordered[::-1] if proxy.sortOrder() == DESC else ordered


def shown(proxy: TaskFilterProxy) -> list[int]:
    ids = [proxy.task_id_at(row) for row in range(proxy.rowCount())]
    assert None not in ids
    return [t for t in ids if t is not None]


def check_mapping(model: TaskTableModel, proxy: TaskFilterProxy) -> None:
    """mapToSource and mapFromSource agree with the rows and with each other."""
    for row in range(proxy.rowCount()):
        source = proxy.mapToSource(proxy.index(row, Column.STATE))
        assert source.column() == Column.STATE
        assert model.id_at(source.row()) == proxy.task_id_at(row)
        assert proxy.mapFromSource(source) == proxy.index(row, Column.STATE)
        assert proxy.data(proxy.index(row, Column.NAME)) == model.data(
            model.index(source.row(), Column.NAME)
        )
    hidden = set(model.task_ids()) - set(shown(proxy))
    for task_id in hidden:
        source_row = model.row_of(task_id)
        assert source_row is not None
        assert not proxy.mapFromSource(model.index(source_row, 0)).isValid()


class Mirror:
    """The proxy's rows as its signals describe them, to compare with its real rows."""

    def __init__(self, proxy: TaskFilterProxy) -> None:
        self.proxy = proxy
        self.rows = shown(proxy)
        self.events: list[str] = []
        proxy.rowsInserted.connect(self._on_rows_inserted)
        proxy.rowsRemoved.connect(self._on_rows_removed)
        proxy.rowsMoved.connect(self._on_rows_moved)
        proxy.layoutChanged.connect(lambda *_: self._reread("layout"))
        proxy.modelReset.connect(lambda: self._reread("reset"))
        proxy.dataChanged.connect(lambda *_: self.events.append("data"))

    def _on_rows_inserted(self, _parent: QModelIndex, first: int, last: int) -> None:
        self.events.append("inserted")
        new = shown(self.proxy)[first : last + 1]
        self.rows[first:first] = new
        # Listeners may map the new rows at once.
        assert [self.proxy.row_of(task_id) for task_id in new] == list(range(first, last + 1))

    def _on_rows_removed(self, _parent: QModelIndex, first: int, last: int) -> None:
        self.events.append("removed")
        del self.rows[first : last + 1]

    def _on_rows_moved(
        self, _parent: QModelIndex, start: int, end: int, _dest: QModelIndex, row: int
    ) -> None:
        self.events.append("moved")
        moving = self.rows[start : end + 1]
        before = self.rows[:row]
        after = self.rows[row:]
        if row > end:
            before = [t for t in before if t not in moving]
        else:
            after = [t for t in after if t not in moving]
        self.rows = before + moving + after

    def _reread(self, event: str) -> None:
        self.events.append(event)
        self.rows = shown(self.proxy)


class Held:
    """A persistent index on every row: each must stay on its task or go invalid."""

    def __init__(self, proxy: TaskFilterProxy) -> None:
        self.proxy = proxy
        self.held = [
            (QPersistentModelIndex(proxy.index(row, row % len(Column))), proxy.task_id_at(row))
            for row in range(proxy.rowCount())
        ]

    def check(self) -> None:
        for index, task_id in self.held:
            assert task_id is not None
            if index.isValid():
                assert self.proxy.task_id_at(index.row()) == task_id
            else:
                assert self.proxy.row_of(task_id) is None, f"lost the index of task {task_id}"


def finished_run(task_id: int) -> tuple[RunTicket, RunOutcome, RunResult]:
    ticket = RunTicket(
        run_id=1,
        task_id=task_id,
        attempt=1,
        kind=SlotKind.OCCURRENCE,
        scheduled_at=T0,
        dispatched_at=T0,
    )
    return ticket, RunOutcome.FAILED, RunResult(exit_code=1, error="exit status 1")


def load_random(model: TaskTableModel, count: int = 40, seed: int = 7) -> None:
    rng = random.Random(seed)
    ids = rng.sample(range(1, 1000), count)  # ids not in arrival order
    last_runs = {ids[0]: LastRun(outcome=RunOutcome.FAILED, finished_at=at(-30))}
    model.reset_tasks([random_snap(task_id, rng) for task_id in ids], last_runs)


# --------------------------------------------------------------------- sorting


@pytest.mark.parametrize("order", [ASC, DESC], ids=["ascending", "descending"])
@pytest.mark.parametrize("column", list(Column), ids=[c.name.lower() for c in Column])
def test_each_column_sorts_as_python_sorts_the_snapshots(
    model: TaskTableModel, proxy: TaskFilterProxy, column: Column, order: Qt.SortOrder
) -> None:
    load_random(model)
    proxy.sort(column, order)
    assert shown(proxy) == expected_order(model, proxy)
    assert (proxy.sortColumn(), proxy.sortOrder()) == (column, order)
    check_mapping(model, proxy)


def test_descending_is_exactly_ascending_reversed(
    model: TaskTableModel, proxy: TaskFilterProxy
) -> None:
    load_random(model)
    proxy.sort(Column.PRIORITY, ASC)
    ascending = shown(proxy)
    proxy.sort(Column.PRIORITY, DESC)
    assert shown(proxy) == ascending[::-1]
    assert len(set(ascending)) == 40


def test_unsorted_shows_the_source_order(model: TaskTableModel, proxy: TaskFilterProxy) -> None:
    load_random(model)
    proxy.sort(Column.NAME, DESC)
    proxy.sort(-1, DESC)  # -1: no column, whatever the order
    assert shown(proxy) == list(model.task_ids())
    model.on_task_added(snap(5000, name="aaa"))
    model.on_task_removed(model.task_ids()[3])
    model.flush_pending()
    model.on_task_added(snap(4000, name="aaa"))  # a later row with a lower id
    model.flush_pending()
    assert model.task_ids()[-2:] == (5000, 4000)
    assert shown(proxy) == list(model.task_ids())
    assert [proxy.mapToSource(proxy.index(r, 0)).row() for r in range(proxy.rowCount())] == list(
        range(model.rowCount())
    )


def test_the_header_drives_the_sort(model: TaskTableModel, proxy: TaskFilterProxy) -> None:
    load_random(model)
    view = QTableView()
    view.setModel(proxy)
    view.setSortingEnabled(True)
    view.horizontalHeader().setSortIndicator(Column.NEXT_RUN, DESC)  # a click does this
    assert (proxy.sortColumn(), proxy.sortOrder()) == (Column.NEXT_RUN, DESC)
    assert shown(proxy) == expected_order(model, proxy)
    view.sortByColumn(Column.ATTEMPTS, ASC)
    assert shown(proxy) == expected_order(model, proxy)
    assert view.horizontalHeader().sortIndicatorSection() == Column.ATTEMPTS


# -------------------------------------------------------------- live updates

_OPS = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["add", "change", "remove", "finish"]), st.integers(1, 14)),
        st.tuples(st.just("flush"), st.just(0)),
        st.tuples(st.just("filter"), st.sampled_from(list(StateFilter))),
        st.tuples(st.just("search"), st.sampled_from(["", "a", "beta", "delta 1", "zzz"])),
        st.tuples(st.just("sort"), st.tuples(st.integers(-1, len(Column) - 1), st.booleans())),
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(ops=_OPS, seed=st.integers(0, 1000), max_runs=st.sampled_from([0, 2, 256]))
def test_the_order_signals_and_persistent_indexes_follow_every_update(
    qapp: QApplication, ops: list[tuple[str, Any]], seed: int, max_runs: int
) -> None:
    """Adds, changes that move rows, removes, filters and sorts, in any order.

    ``max_runs`` 0 and 2 push filter changes and batches down the relayout path.
    """
    rng = random.Random(seed)
    model = TaskTableModel(FakeClock(T0))
    model.reset_tasks([random_snap(task_id, rng) for task_id in (3, 1, 2, 20, 21)], {})
    proxy = TaskFilterProxy()
    proxy.setSourceModel(model)
    proxy.sort(Column.NEXT_RUN, ASC)
    mirror = Mirror(proxy)
    saved = shown_rows.MAX_RUNS
    shown_rows.MAX_RUNS = max_runs
    try:
        for op, arg in ops:
            held = Held(proxy)
            if op == "add":
                model.on_task_added(random_snap(arg, rng))
            elif op == "change":
                model.on_task_changed(random_snap(arg, rng))
            elif op == "remove":
                model.on_task_removed(arg)
            elif op == "finish":
                model.on_run_finished(*finished_run(arg))
            elif op == "flush":
                model.flush_pending()
            elif op == "filter":
                proxy.set_state_filter(arg)
            elif op == "search":
                proxy.set_search_text(arg)
            else:
                proxy.sort(arg[0], DESC if arg[1] else ASC)
            assert mirror.rows == shown(proxy), f"signals do not describe {op} {arg}"
            held.check()
            assert "reset" not in mirror.events
            if model.queued_updates == 0:  # else the proxy rightly shows the rows as announced
                assert shown(proxy) == expected_order(model, proxy)
        model.flush_pending()
        assert shown(proxy) == expected_order(model, proxy)
        check_mapping(model, proxy)
    finally:
        shown_rows.MAX_RUNS = saved


def test_a_row_whose_key_changes_moves_with_one_signal(
    model: TaskTableModel, proxy: TaskFilterProxy
) -> None:
    model.reset_tasks([snap(t, next_run_at=at(t * 60)) for t in (1, 2, 3, 4, 5)], {})
    proxy.sort(Column.NEXT_RUN, ASC)
    signals: list[tuple[Any, ...]] = []
    proxy.rowsMoved.connect(lambda _p, s, e, _d, r: signals.append(("moved", s, e, r)))
    proxy.layoutChanged.connect(lambda *_: signals.append(("layout",)))
    proxy.modelReset.connect(lambda: signals.append(("reset",)))
    proxy.dataChanged.connect(lambda tl, br, _r: signals.append(("data", tl.row(), br.row())))
    model.on_task_changed(snap(2, next_run_at=at(4.5 * 60)))  # ran; now due after task 4
    model.flush_pending()
    assert signals == [("moved", 1, 1, 4), ("data", 3, 3)]
    assert shown(proxy) == [1, 3, 4, 2, 5]
    signals.clear()
    model.on_task_changed(snap(3, TaskState.RUNNING, running=1, next_run_at=at(180)))
    model.flush_pending()
    assert signals == [("data", 1, 1)]  # same key: no move


def test_an_add_is_inserted_at_its_sorted_place(
    model: TaskTableModel, proxy: TaskFilterProxy
) -> None:
    model.reset_tasks([snap(t, priority=t * 10) for t in (1, 2, 3)], {})
    proxy.sort(Column.PRIORITY, DESC)
    inserted: list[tuple[int, int]] = []
    proxy.rowsInserted.connect(lambda _p, first, last: inserted.append((first, last)))
    for task_id, priority in ((7, 25), (8, 25), (9, 99)):
        model.on_task_added(snap(task_id, priority=priority))
    model.flush_pending()
    assert shown(proxy) == [9, 3, 8, 7, 2, 1]  # a tie: the higher id first, descending
    assert inserted == [(1, 2), (0, 0)]  # one run per place, lowest key first


def test_a_removed_task_leaves_its_sorted_row(
    model: TaskTableModel, proxy: TaskFilterProxy
) -> None:
    model.reset_tasks([snap(t, name=n) for t, n in ((1, "c"), (2, "a"), (3, "b"))], {})
    proxy.sort(Column.NAME, ASC)
    removed: list[tuple[int, int]] = []
    proxy.rowsRemoved.connect(lambda _p, first, last: removed.append((first, last)))
    model.on_task_removed(3)
    assert removed == [(1, 1)]
    assert shown(proxy) == [2, 1]


def test_countdowns_are_forwarded_without_resorting(
    model: TaskTableModel, proxy: TaskFilterProxy
) -> None:
    model.reset_tasks([snap(t, next_run_at=at(600 - t)) for t in range(1, 7)], {})
    proxy.sort(Column.NEXT_RUN, ASC)  # the reverse of the source order
    changed: list[tuple[int, int, int, list[int]]] = []
    proxy.dataChanged.connect(
        lambda tl, br, roles: changed.append((tl.row(), br.row(), tl.column(), list(roles)))
    )
    moved: list[int] = []
    proxy.rowsMoved.connect(lambda *_: moved.append(1))
    proxy.layoutChanged.connect(lambda *_: moved.append(2))
    model.refresh_countdowns(0, 1)  # source rows 0 and 1: the last two shown
    assert changed == [(4, 5, Column.NEXT_RUN, [DISPLAY])]
    assert moved == []


def test_a_header_click_is_one_layout_change(model: TaskTableModel, proxy: TaskFilterProxy) -> None:
    load_random(model)
    events: list[str] = []
    for name in ("layoutChanged", "modelReset", "rowsInserted", "rowsRemoved", "rowsMoved"):
        getattr(proxy, name).connect(lambda *_, name=name: events.append(name))
    proxy.sort(Column.SCHEDULE, ASC)
    proxy.sort(Column.SCHEDULE, DESC)
    proxy.sort(Column.SCHEDULE, DESC)  # unchanged: nothing to do
    assert events == ["layoutChanged", "layoutChanged"]


def alternating(count: int) -> list[TaskSnapshot]:
    """Running and pending tasks taking turns, by next run."""
    return [
        snap(t, TaskState.RUNNING, running=1, next_run_at=at(t))
        if t % 2
        else snap(t, next_run_at=at(t))
        for t in range(1, count + 1)
    ]


def record(proxy: TaskFilterProxy) -> list[str]:
    events: list[str] = []
    for name in ("layoutChanged", "modelReset", "rowsInserted", "rowsRemoved", "rowsMoved"):
        getattr(proxy, name).connect(lambda *_, name=name: events.append(name))
    return events


def test_a_filter_change_with_few_gaps_removes_and_inserts_rows(
    model: TaskTableModel, proxy: TaskFilterProxy
) -> None:
    model.reset_tasks(alternating(40), {})
    proxy.sort(Column.STATE, ASC)  # the running tasks first, together
    events = record(proxy)
    held = Held(proxy)
    proxy.set_state_filter(StateFilter.RUNNING)
    assert events == ["rowsRemoved"]
    held.check()
    proxy.set_state_filter(StateFilter.ALL)
    assert events == ["rowsRemoved", "rowsInserted"]
    assert shown(proxy) == expected_order(model, proxy)


def test_a_filter_change_with_many_gaps_is_one_layout_change(
    model: TaskTableModel, proxy: TaskFilterProxy
) -> None:
    model.reset_tasks(alternating(2 * shown_rows.MAX_RUNS + 10), {})
    proxy.sort(Column.NEXT_RUN, ASC)  # running and pending take turns
    events = record(proxy)
    held = Held(proxy)
    proxy.set_state_filter(StateFilter.RUNNING)
    assert events == ["layoutChanged"]
    held.check()
    assert shown(proxy) == expected_order(model, proxy)
    held = Held(proxy)
    proxy.set_state_filter(StateFilter.ALL)
    assert events == ["layoutChanged", "layoutChanged"]
    held.check()
    assert shown(proxy) == expected_order(model, proxy)


def test_many_rows_moving_at_once_are_one_layout_change(
    model: TaskTableModel, proxy: TaskFilterProxy
) -> None:
    count = shown_rows.MAX_RUNS + 10
    model.reset_tasks([snap(t, next_run_at=at(t)) for t in range(1, count + 1)], {})
    proxy.sort(Column.NEXT_RUN, ASC)
    events = record(proxy)
    held = Held(proxy)
    for t in range(1, count + 1):  # neighbouring source rows: one dataChanged
        model.on_task_changed(snap(t, next_run_at=at(-t)))
    model.flush_pending()
    assert events == ["layoutChanged"]
    held.check()
    assert shown(proxy) == list(range(count, 0, -1))


# ------------------------------------------------------------------ selection


def selected_ids(view: QTableView, proxy: TaskFilterProxy) -> set[int | None]:
    return {proxy.task_id_at(index.row()) for index in view.selectionModel().selectedRows()}


def test_the_selection_survives_a_resort_a_move_and_a_filter(
    model: TaskTableModel, proxy: TaskFilterProxy
) -> None:
    model.reset_tasks(
        [snap(t, name=f"n{9 - t}", priority=t, next_run_at=at(t * 60)) for t in range(1, 9)], {}
    )
    proxy.sort(Column.NEXT_RUN, ASC)
    view = QTableView()
    view.setModel(proxy)
    selection = view.selectionModel()
    flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
    for task_id in (2, 5):
        row = proxy.row_of(task_id)
        assert row is not None
        selection.select(proxy.index(row, 0), flags)
    current = proxy.row_of(5)
    assert current is not None
    selection.setCurrentIndex(
        proxy.index(current, Column.NAME), QItemSelectionModel.SelectionFlag.NoUpdate
    )

    proxy.sort(Column.NAME, ASC)  # reverses the rows
    assert selected_ids(view, proxy) == {2, 5}
    assert proxy.task_id_at(selection.currentIndex().row()) == 5
    assert selection.currentIndex().column() == Column.NAME

    model.on_task_changed(snap(5, name="a first", priority=5, next_run_at=at(300)))
    model.flush_pending()
    assert proxy.row_of(5) == 0  # it moved to the top
    assert selected_ids(view, proxy) == {2, 5}
    assert proxy.task_id_at(selection.currentIndex().row()) == 5

    proxy.set_search_text("n7")  # only task 2 ("n7") is left
    assert selected_ids(view, proxy) == {2}
    proxy.set_search_text("")
    assert 2 in selected_ids(view, proxy)


# ------------------------------------------------------------------ model tester


def test_the_sorted_proxy_passes_the_model_tester(
    qtmodeltester: ModelTester, model: TaskTableModel, proxy: TaskFilterProxy
) -> None:
    load_random(model, count=30)
    proxy.sort(Column.NEXT_RUN, DESC)
    qtmodeltester.check(proxy, force_py=True)
    rng = random.Random(3)
    for task_id in rng.sample(model.task_ids(), 10):
        model.on_task_changed(random_snap(task_id, rng))  # most of them move
    for task_id in (2000, 2001, 2002):
        model.on_task_added(random_snap(task_id, rng))
    model.flush_pending()
    model.on_task_removed(model.task_ids()[5])
    model.on_run_finished(*finished_run(model.task_ids()[0]))
    model.flush_pending()
    proxy.sort(Column.NAME, ASC)
    proxy.sort(Column.NAME, DESC)
    proxy.set_state_filter(StateFilter.FAILED)
    proxy.set_search_text("beta")
    proxy.set_state_filter(StateFilter.ALL)
    proxy.set_search_text("")
    model.refresh_countdowns(0, 10, ages=True)
    load_random(model, count=12, seed=9)  # a reset
    assert shown(proxy) == expected_order(model, proxy)


def test_a_proxy_without_tasks_is_empty(qapp: QApplication) -> None:
    proxy = TaskFilterProxy()
    assert (proxy.rowCount(), proxy.columnCount()) == (0, 0)
    assert not proxy.hasChildren()
    assert proxy.data(proxy.index(0, 0)) is None
    assert not proxy.mapToSource(proxy.index(0, 0)).isValid()
    assert proxy.headerData(0, Qt.Orientation.Horizontal) is None
    proxy.sort(Column.NAME)
    assert proxy.task_id_at(0) is None


def test_the_proxy_takes_a_task_model_only(qapp: QApplication) -> None:
    proxy = TaskFilterProxy()
    other: QAbstractItemModel = QStringListModel(["a"])
    with pytest.raises(TypeError):
        proxy.setSourceModel(other)


def test_switching_source_models_follows_the_new_one(qapp: QApplication) -> None:
    first, second = TaskTableModel(FakeClock(T0)), TaskTableModel(FakeClock(T0))
    first.reset_tasks([snap(1), snap(2)], {})
    second.reset_tasks([snap(3)], {})
    proxy = TaskFilterProxy()
    proxy.setSourceModel(first)
    proxy.setSourceModel(second)
    assert shown(proxy) == [3]
    first.on_task_removed(1)  # the old model is no longer followed
    second.on_task_added(snap(4))
    second.flush_pending()
    assert shown(proxy) == [3, 4]


def test_a_deleted_source_leaves_an_empty_proxy(qapp: QApplication) -> None:
    model = TaskTableModel(FakeClock(T0))
    model.reset_tasks([snap(1), snap(2)], {})
    proxy = TaskFilterProxy()
    proxy.setSourceModel(model)
    resets: list[bool] = []
    proxy.modelReset.connect(lambda: resets.append(True))
    shiboken6.delete(model)
    assert resets == [True]
    assert (proxy.rowCount(), proxy.columnCount()) == (0, 0)
    assert proxy.data(proxy.index(0, 0)) is None
    proxy.setSourceModel(TaskTableModel(FakeClock(T0)))  # nothing left to disconnect


def test_headers_and_cells_come_from_the_tasks(
    model: TaskTableModel, proxy: TaskFilterProxy
) -> None:
    model.reset_tasks([snap(1, name="b"), snap(2, name="a")], {})
    proxy.sort(Column.NAME, ASC)
    assert proxy.headerData(Column.NEXT_RUN, Qt.Orientation.Horizontal) == "Next run"
    assert proxy.headerData(0, Qt.Orientation.Vertical) == 2  # source row 1, as Qt numbers it
    assert proxy.headerData(5, Qt.Orientation.Vertical) is None
    assert proxy.data(proxy.index(0, Column.NAME)) == "a"
    assert proxy.data(proxy.index(0, Column.NAME), Qt.ItemDataRole.ToolTipRole) == "true"
    assert proxy.flags(proxy.index(0, 0)) & Qt.ItemFlag.ItemIsSelectable
    assert proxy.flags(QModelIndex()) == Qt.ItemFlag.NoItemFlags
    assert proxy.sibling(1, 2, proxy.index(0, 0)) == proxy.index(1, 2)
    assert proxy.parent(proxy.index(0, 0)) == QModelIndex()
    assert proxy.index(0, 0, proxy.index(0, 0)) == QModelIndex()  # a flat table


def test_a_failing_slot_is_logged_not_raised(
    model: TaskTableModel, proxy: TaskFilterProxy, caplog: Any, monkeypatch: Any
) -> None:
    model.reset_tasks([snap(1), snap(2)], {})
    proxy.sort(Column.NAME, ASC)

    def broken(*_args: Any) -> Any:
        raise RuntimeError("broken")

    broken_keys: Callable[..., Any] = broken
    monkeypatch.setattr(model, "sort_keys", broken_keys)
    with caplog.at_level("ERROR"):
        model.on_task_added(snap(3))
        model.flush_pending()
        proxy.sort(Column.PRIORITY, ASC)
    assert "following inserted rows failed" in caplog.text
    assert "sorting by column" in caplog.text


def test_a_failure_while_following_a_reset_still_ends_the_reset(
    model: TaskTableModel, proxy: TaskFilterProxy, caplog: Any, monkeypatch: Any
) -> None:
    model.reset_tasks([snap(1)], {})

    def broken(*_args: Any) -> Any:
        raise RuntimeError("broken")

    monkeypatch.setattr(proxy, "_count_found", broken)
    with caplog.at_level("ERROR"):
        model.reset_tasks([snap(1), snap(2)], {})
    assert "following a reset failed" in caplog.text
    monkeypatch.undo()
    model.reset_tasks([snap(1), snap(2), snap(3)], {})  # begin and end stayed paired
    assert proxy.rowCount() == 3
