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


class UnreadableTaskError(TaskguiError):
    """A stored task could not be read back when it was first needed.

    The store has already set the row aside (quarantined, never deleted); the engine
    drops the task so the rest of the schedule runs on.
    """

    def __init__(self, task_id: int, reason: str) -> None:
        super().__init__(
            f"task {task_id} could not be read from the database and was set aside: {reason}"
        )
        self.task_id = task_id
        self.reason = reason
