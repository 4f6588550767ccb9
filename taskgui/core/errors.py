"""One error hierarchy for the whole application.

Every error taskgui raises on purpose derives from :class:`TaskguiError`, so a front
end (the CLI, a Qt slot) can catch that one type and show its message to a person.
The messages are written for that person: they say what is wrong and what to do.
"""

from __future__ import annotations


class TaskguiError(Exception):
    """Root of every error taskgui raises deliberately."""


class InvalidTaskError(TaskguiError, ValueError):
    """A task definition or an operation on a task is not valid as given."""


class TaskNotFoundError(TaskguiError, LookupError):
    """No task with the given id exists (any more)."""

    def __init__(self, task_id: int) -> None:
        super().__init__(f"no task with id {task_id}")
        self.task_id = task_id


class InvalidStateError(TaskguiError):
    """The operation does not fit the task's current state (e.g. retry a running task)."""
