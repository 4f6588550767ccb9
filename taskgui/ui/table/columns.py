"""The task table's columns, each one object: title, text, sort key, tooltip,
alignment, width — as Anki's browser table defines its columns.

Adding a column is one ``TaskColumn`` in ``task_columns`` (and a member of ``Column``);
the model, the proxy's sorting and the view's header read everything from here.
Columns are built per model, because the schedule text is cached per model
(``ScheduleTexts``): describing a cron expression takes ~0.3 ms, and 100,000 tasks
share few schedules.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import IntEnum
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from taskgui.core.attempts import shown_attempt
from taskgui.core.states import TaskState
from taskgui.ui.plain_text import shown
from taskgui.ui.table.formatting import (
    EMPTY,
    STALE_MARK,
    Freeze,
    attempts_text,
    command_tooltip,
    last_result_text,
    last_result_tooltip,
    next_run_text,
    next_run_tooltip,
    schedule_text,
    state_text,
    waiting_text,
)
from taskgui.ui.table.links import TaskLinks
from taskgui.ui.table.row_entry import RowEntry

MAX_CACHED_SCHEDULES = 4_096
_INF = math.inf
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


class Column(IntEnum):
    """The table's columns, in display order."""

    NAME = 0
    STATE = 1
    PRIORITY = 2
    NEXT_RUN = 3
    SCHEDULE = 4
    LAST_RESULT = 5
    ATTEMPTS = 6
    NODE = 7  # shown only for a shared schedule (ui.window.shared_schedule)


# Sorting by state groups what needs attention first.
STATE_ORDER = {
    state: rank
    for rank, state in enumerate(
        (
            TaskState.RUNNING,
            TaskState.RETRYING,
            TaskState.PENDING,
            TaskState.PAUSED,
            TaskState.EXHAUSTED,
            TaskState.MISSED,
            TaskState.CANCELLED,
            TaskState.SUCCEEDED,
        )
    )
}
_STATE_COUNT = len(STATE_ORDER)


# Mid grey reads as "dim" on light and dark palettes alike; red marks failures.
_DIM = QColor(128, 128, 128)
_ALERT = QColor(198, 40, 40)


def state_color(state: TaskState) -> QColor | None:
    """The text colour of every cell of a row in ``state``: red for what failed and
    needs a look, grey for what is over, the palette's own for the rest."""
    if state in (TaskState.EXHAUSTED, TaskState.RETRYING):
        return _ALERT
    if state.is_terminal:
        return _DIM
    return None


def _no_tooltip(_entry: RowEntry) -> str | None:
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskColumn:
    """One column of the task table.

    ``text`` is the cell's display text at ``now``; ``sort_key`` what the proxy sorts
    on (keys of one column are all of one type and never NaN, so they compare
    totally); ``tooltip`` plain text or None; ``width`` the header section's starting
    width in pixels, None for the one column that stretches into what is left;
    ``min_chars`` the stretching column's floor, in average characters of the table's
    font (a font's measure, not pixels, so it holds at any font size or DPI): what is
    left is never less, the header scrolls sideways instead; ``decorated`` whether the
    cell shows the state's icon.
    """

    column: Column
    title: str
    text: Callable[[RowEntry, datetime], str]
    sort_key: Callable[[RowEntry], Any]
    tooltip: Callable[[RowEntry], str | None] = _no_tooltip
    alignment: Qt.AlignmentFlag | None = None
    width: int | None = None
    min_chars: int = 0
    decorated: bool = False


class ScheduleTexts:
    """Each task's schedule in words, cached per recurrence (tasks share schedules)."""

    def __init__(self, limit: int = MAX_CACHED_SCHEDULES) -> None:
        self._limit = limit
        self._texts: dict[object, str] = {}

    def text(self, entry: RowEntry) -> str:
        text = entry.schedule
        if text is None:
            recurrence = entry.snapshot.spec.recurrence
            try:
                text = self._texts.get(recurrence)
            except TypeError:  # unhashable: describe it each time
                return schedule_text(entry.snapshot.spec)
            if text is None:
                if len(self._texts) >= self._limit:
                    self._texts.clear()
                text = self._texts[recurrence] = schedule_text(entry.snapshot.spec)
            entry.schedule = text
        return text

    def tooltip(self, entry: RowEntry) -> str | None:
        text = self.text(entry)
        return text if text != EMPTY else None


def _node_tooltip(entry: RowEntry) -> str | None:
    nodes = entry.snapshot.status.nodes
    if not nodes:
        return None
    return ("Runs on node " if len(nodes) == 1 else "Runs on the nodes ") + ", ".join(nodes)


def _next_run_key(entry: RowEntry) -> float:
    at = entry.snapshot.status.next_run_at
    return at.timestamp() if at is not None else _INF


def _last_result_key(entry: RowEntry) -> float:
    last = entry.effective_last_run()
    if last is None or last.finished_at is None:
        return -_INF
    return last.finished_at.timestamp()


def task_columns(
    schedules: ScheduleTexts, links: TaskLinks | None = None, freeze: Freeze | None = None
) -> tuple[TaskColumn, ...]:
    """Every column in display order, indexed by ``Column``; ``links`` names the tasks
    a row runs after and before (none: a table of one task's own facts); ``freeze``
    stops "Next run" while the schedule cannot be read."""
    links = links if links is not None else TaskLinks(dict)
    freeze = freeze if freeze is not None else Freeze()

    def name_tooltip(entry: RowEntry) -> str:
        linked = links.tooltip(entry)  # a pass over the rows: on hover only
        command = command_tooltip(entry.snapshot)
        return command if linked is None else f"{command}\n\n{linked}"

    def state_tooltip(entry: RowEntry) -> str:
        return links.waiting(entry) if links.waits_upstream(entry) else waiting_text(entry.snapshot)

    def next_run(entry: RowEntry, now: datetime) -> str:
        if links.waits_upstream(entry):
            text = links.waiting(entry)
        else:
            text = next_run_text(entry.snapshot, now if freeze.since is None else freeze.since)
        return text if freeze.since is None or text == EMPTY else text + STALE_MARK

    columns = (
        TaskColumn(
            column=Column.NAME,
            title="Name",
            text=lambda e, _now: shown(e.snapshot.spec.name),
            sort_key=lambda e: e.snapshot.spec.name.casefold(),
            tooltip=name_tooltip,
            # Enough to tell tasks apart; with the Node column and a scroll bar, what
            # the others leave at 1,100 px was ~45 px ("Nigh…", a trial).
            min_chars=16,
        ),
        TaskColumn(
            column=Column.STATE,
            title="State",
            text=lambda e, _now: state_text(e.snapshot.status.state),
            sort_key=lambda e: STATE_ORDER.get(e.snapshot.status.state, _STATE_COUNT),
            tooltip=lambda e: (
                (links.waiting(e) if links.waits_upstream(e) else waiting_text(e.snapshot)) or None
            ),
            width=110,
            decorated=True,
        ),
        TaskColumn(
            column=Column.PRIORITY,
            title="Priority",
            text=lambda e, _now: str(e.snapshot.spec.priority),
            sort_key=lambda e: e.snapshot.spec.priority,
            alignment=_RIGHT,
            width=70,
        ),
        TaskColumn(
            column=Column.NEXT_RUN,
            title="Next run",
            text=next_run,
            sort_key=_next_run_key,
            tooltip=lambda e: next_run_tooltip(e.snapshot),
            width=190,
        ),
        TaskColumn(
            column=Column.SCHEDULE,
            title="Schedule",
            text=lambda e, _now: schedules.text(e),
            sort_key=lambda e: schedules.text(e).casefold(),
            tooltip=schedules.tooltip,
            width=230,
        ),
        TaskColumn(
            column=Column.LAST_RESULT,
            title="Last result",
            text=lambda e, now: last_result_text(e.effective_last_run(), now),
            sort_key=_last_result_key,
            tooltip=lambda e: last_result_tooltip(e.effective_last_run()),
            width=200,
        ),
        TaskColumn(
            column=Column.ATTEMPTS,
            title="Attempts",
            text=lambda e, _now: attempts_text(e.snapshot),
            # What is shown, so that the empty cells sort together (as none).
            sort_key=lambda e: shown_attempt(e.snapshot) or 0,
            alignment=_RIGHT,
            width=80,
        ),
        TaskColumn(
            column=Column.NODE,
            title="Node",
            text=lambda e, _now: ", ".join(e.snapshot.status.nodes),
            sort_key=lambda e: ", ".join(e.snapshot.status.nodes).casefold(),
            tooltip=_node_tooltip,
            width=140,
        ),
    )
    if tuple(c.column for c in columns) != tuple(Column):
        raise AssertionError("task_columns must list every Column once, in order")
    return columns
