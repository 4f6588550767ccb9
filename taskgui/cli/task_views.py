"""What ``list`` and ``show`` print, from any repository: a file's or a shared schedule's.

Written once so the two schedules answer alike (the same table, the same JSON keys,
the same wait reasons); the caller says whether anyone runs the schedule now
(``scheduled``: a process holds the file's lock, or a node leads), because without one
a due task waits for it rather than for what it last waited for.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from datetime import datetime

from taskgui.cli import dependencies as cli_after
from taskgui.cli import output as cli_format
from taskgui.cli.context import note, print_json
from taskgui.core.state_groups import states_named
from taskgui.core.states import TaskState
from taskgui.core.status import TaskSnapshot
from taskgui.store.protocols import TaskRepository


def _waiting(
    repository: TaskRepository,
    snapshots: Sequence[TaskSnapshot],
    now: datetime,
    scheduled: bool,
    task_ids: Sequence[int] | None = None,
) -> dict[int, str]:
    """What each task waits for, as the window says it (see ``cli_format.wait_reasons``);
    ``task_ids``: what is recorded of those only (None: of every task)."""
    recorded = repository.wait_reasons(task_ids)
    return cli_format.wait_reasons(snapshots, recorded, now, scheduled=scheduled)


def _listed(repository: TaskRepository, states: frozenset[TaskState] | None) -> list[TaskSnapshot]:
    """The tasks in ``states`` (None: all), in id order, each state read by its index."""
    if states is None:
        return list(repository.list_tasks())
    found = [task for state in states for task in repository.list_tasks(state)]
    return sorted(found, key=lambda task: task.spec.id) if len(states) > 1 else found


def print_list(
    args: argparse.Namespace, repository: TaskRepository, now: datetime, *, scheduled: bool
) -> None:
    states = states_named(args.state) if args.state else None
    snapshots = _listed(repository, states)
    waiting = _waiting(repository, snapshots, now, scheduled)
    names = None
    if states is not None and cli_after.UPSTREAM in waiting.values():
        names = cli_after.names_of(repository.list_tasks())  # upstreams of any state
    set_aside = [task.task_id for task in repository.quarantined()]
    if args.json:
        print_json([cli_format.task_json(s, waiting.get(s.spec.id)) for s in snapshots])
    elif not snapshots:
        print(f"no {args.state} tasks" if states else "no tasks")
    else:
        print("\n".join(cli_format.task_table(snapshots, waiting, names)))
    if set_aside:
        ids = ", ".join(str(task_id) for task_id in set_aside[:10])
        more = f" and {len(set_aside) - 10} more" if len(set_aside) > 10 else ""
        note(
            f"{len(set_aside)} task(s) set aside because they cannot be read (id {ids}"
            f"{more}): 'taskgui show ID' says why, 'taskgui delete ID' removes one"
        )


def print_show(
    args: argparse.Namespace, repository: TaskRepository, now: datetime, *, scheduled: bool
) -> None:
    """One task, and of the others only those it names: those it runs after and those
    that run after it (reading every task took 4.9 s at 100,000 of them; a trial)."""
    snapshot = repository.get(args.id)
    waiting = _waiting(repository, [snapshot], now, scheduled, [snapshot.id]).get(snapshot.id)
    tasks = repository.linked_tasks(snapshot.spec)  # names, and who runs after this one
    if args.json:
        print_json(
            {**cli_format.task_json(snapshot, waiting), **cli_after.show_json(snapshot, tasks)}
        )
    else:
        pairs = cli_after.show_pairs(snapshot, tasks)
        names = cli_after.names_of(tasks)
        lines = cli_format.task_lines(snapshot, now, waiting, pairs, names)
        print("\n".join(lines))
