"""The client of a schedule: what a front end may ask, wherever the schedule runs.

A front end (the window, the tray, the CLI) reads and changes a schedule through a
``ScheduleClient`` whether this process runs it (the scheduler service) or another
one does (a window following ``taskgui daemon``; the CLI filing a request). It never
asks which: ``runs_here`` says what it may need to tell a person ("the schedule goes
on in the daemon"), nothing more. Qt-free, so the CLI can use it too; the views' live
signals are added by ``taskgui.runtime.schedule_client.LiveScheduleClient``.

Every change raises a ``TaskguiError`` a person can act on when it is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId, TaskSpec


class ScheduleClient(Protocol):
    """Reads and changes one schedule; see the module docstring."""

    @property
    def runs_here(self) -> bool:
        """Whether this process runs the schedule (else another process does, or
        nobody does just now)."""
        ...

    def task(self, task_id: TaskId) -> TaskSnapshot:
        """One task as the schedule has it; TaskNotFoundError when there is none."""
        ...

    def add_task(self, spec: TaskSpec) -> TaskSpec:
        """Store and schedule a new task; return it with its id."""
        ...

    def add_tasks(self, specs: Sequence[TaskSpec]) -> list[TaskSpec]:
        """Store and schedule new tasks in one transaction (all or none)."""
        ...

    def update_task(self, spec: TaskSpec) -> None: ...

    def cancel(self, task_id: TaskId) -> None: ...

    def pause(self, task_id: TaskId) -> None: ...

    def resume(self, task_id: TaskId) -> None: ...

    def run_now(self, task_id: TaskId) -> None: ...

    def retry_now(self, task_id: TaskId) -> None: ...

    def delete(self, task_id: TaskId) -> None: ...
