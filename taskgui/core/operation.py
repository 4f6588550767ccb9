"""The operations a person can ask of the schedule, by name.

The same names travel in a request from one process to the one that runs the schedule
(the CLI or a second window to a daemon), so they are part of the stored request
format: add new ones, never rename one.
"""

from __future__ import annotations

from enum import StrEnum


class Op(StrEnum):
    """Operations one process can ask the process running the schedule to perform."""

    ADDED = "added"  # the task row was inserted by the requester; schedule it
    UPDATE = "update"  # payload: the new definition
    CANCEL = "cancel"
    PAUSE = "pause"
    RESUME = "resume"
    RUN_NOW = "run_now"
    RETRY_NOW = "retry_now"
    DELETE = "delete"
