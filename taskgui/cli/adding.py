"""``taskgui add``: what is checked and said before a task is stored.

Written once for the file and the shared (PostgreSQL) schedule, so both say when a
one-off's time has passed and both refuse an upstream that does not exist, in the
same words and exit status; only where the task is then stored differs (``commands``
through the schedule's client, ``shared_schedule`` straight into the database).
"""

from __future__ import annotations

import argparse
from datetime import datetime

from taskgui.cli import dependencies as cli_after
from taskgui.cli.add_arguments import spec_from_args
from taskgui.cli.context import note
from taskgui.core.task import TaskSpec
from taskgui.store.protocols import TaskRepository


def spec_to_add(args: argparse.Namespace, now: datetime) -> TaskSpec:
    """The task the flags describe (InvalidTaskError when they do not add up), judged
    before anything is written: on a file before the database is opened, so a refused
    add makes none; on a shared schedule before the store is asked."""
    spec = spec_from_args(args, now)
    if spec.first_run_at < now and not spec.recurrence.is_recurring:
        note("that time has passed; the task is due now (its misfire policy applies)")
    return spec


def check_upstreams(spec: TaskSpec, repository: TaskRepository) -> None:
    """InvalidTaskError (exit status 2) naming an upstream that does not exist; the
    stored tasks are read only for a task that runs after others."""
    if spec.after:
        cli_after.check_upstreams(spec, repository.list_tasks())
