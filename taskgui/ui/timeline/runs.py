"""The finished runs of the lanes in view, read once and kept until a run ends.

The timeline asks only for the tasks it draws (a few dozen), so a schedule of 10,000
tasks costs what the visible ones cost. A finished run forgets its task's entry, and
the next paint reads it again (one indexed query of the run history).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable

from taskgui.core.errors import TaskguiError
from taskgui.core.status import RunRecord
from taskgui.core.task import TaskId

log = logging.getLogger(__name__)

RUNS_PER_LANE = 50
MAX_CACHED = 2_000

History = Callable[[TaskId, int], list[RunRecord]]


class RunCache:
    def __init__(self, history: History) -> None:
        self._history = history
        self._runs: OrderedDict[TaskId, list[RunRecord]] = OrderedDict()
        self.reads = 0

    def set_history(self, history: History) -> None:
        self._history = history
        self._runs.clear()

    def runs_of(self, task_id: TaskId) -> list[RunRecord]:
        runs = self._runs.get(task_id)
        if runs is not None:
            self._runs.move_to_end(task_id)
            return runs
        try:
            runs = self._history(task_id, RUNS_PER_LANE)
        except TaskguiError as error:  # deleted meanwhile, or the store is away
            log.debug("no history for task %s: %s", task_id, error)
            runs = []
        self.reads += 1
        self._runs[task_id] = runs
        while len(self._runs) > MAX_CACHED:
            self._runs.popitem(last=False)
        return runs

    def forget(self, task_id: TaskId) -> None:
        self._runs.pop(task_id, None)
