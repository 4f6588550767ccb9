"""``cancel``, ``pause``, ``resume``, ``run-now``, ``retry``, ``delete`` and ``edit`` on a
shared (PostgreSQL) schedule.

As on a file (``control.store_client``): when a node leads, the change is filed in
the request queue (its NOTIFY wakes the leader), which the leader's engine performs
and answers; when no node runs the schedule, this process leads for a moment
(``store.postgres.lead_lock``), takes the engine over from the store without
interrupting anything (``store.postgres.takeover``), makes the change with every
write fenced by that lease, and gives the lead up. Either way the one engine that
leads decides, so the change and the schedule never disagree.
"""

from __future__ import annotations

import argparse
import time
from datetime import datetime
from typing import Any

from taskgui.cli import dependencies as cli_after
from taskgui.cli import editing
from taskgui.cli.change_rules import pause_end, unchanged_note
from taskgui.cli.context import note
from taskgui.cli.output import local
from taskgui.control.store_client import StoreClient
from taskgui.core.clock import Clock
from taskgui.core.defaults import REQUEST_TIMEOUT
from taskgui.core.engine.engine import Engine
from taskgui.core.events import TaskRemoved
from taskgui.core.operation import Op
from taskgui.store.postgres.connection import redact


def shared_client(repository: Any, clock: Clock, timeout: float = REQUEST_TIMEOUT) -> StoreClient:
    """A ``ScheduleClient`` over a shared schedule: see the module docstring."""
    # Here, not at the top: every CLI command and every window imports this module,
    # and these import psycopg (about 0.25 s), which only a postgresql:// schedule needs.
    from taskgui.store.postgres.lead_lock import LeadLock  # noqa: PLC0415
    from taskgui.store.postgres.shared_runs import SharedRuns  # noqa: PLC0415
    from taskgui.store.postgres.takeover import take_over  # noqa: PLC0415

    lock = LeadLock(repository)

    def recovering(engine: Engine, now: datetime) -> None:
        runs = SharedRuns(repository.session, lock.name)
        taken = take_over(repository, runs, engine, now)
        repository.apply(taken.events, now, results=taken.results)  # fenced

    return StoreClient(
        store=repository,
        lock=lock,
        clock=clock,
        running=lambda: lock.leader() is not None,
        holder=lambda: f"node {lock.leader() or '(none just now)'}",
        place=redact(repository.dsn),
        sleep=time.sleep,
        timeout=timeout,
        recovering=recovering,
    )


def change(args: argparse.Namespace, repository: Any, clock: Clock) -> int:
    """``cmd_change`` on a shared schedule."""
    op: Op = args.op
    until = pause_end(args, clock)
    payload = None if until is None else until.isoformat()
    if op is Op.DELETE and any(q.task_id == args.id for q in repository.quarantined()):
        # Out of every engine already: remove the row here, whoever leads.
        repository.apply([TaskRemoved(args.id)], clock.now())
        print(f"task {args.id} deleted (it was set aside: it could not be read)")
        return 0
    snapshot = repository.get(args.id)  # fail fast, before any lead or request
    cli_after.confirm_change(op, snapshot, repository, force=args.force)  # as on a file
    for_a_while = op is Op.PAUSE and snapshot.spec.paused_until is not None
    unchanged = unchanged_note(op, snapshot) if until is None and not for_a_while else None
    if unchanged is not None:
        print(f"task {args.id} {unchanged}")
        return 0
    done_here = shared_client(repository, clock).change(op, args.id, payload)
    if done_here and op in (Op.RUN_NOW, Op.RETRY_NOW):
        note(
            "no node runs this shared schedule; the run starts when a node joins "
            "('taskgui --db postgresql://... daemon')"
        )
    done = args.done if until is None else f"{args.done} until {local(until)}"
    print(f"task {args.id} {done}")
    return 0


def edit(args: argparse.Namespace, repository: Any, clock: Clock) -> int:
    """``cmd_edit`` on a shared schedule: the same checks and words (``cli.editing``),
    the new definition performed by the leading node's engine (or here)."""
    spec = editing.edited_spec(args, repository)
    shared_client(repository, clock).update_task(spec)
    print(editing.edited_words(args, spec))
    return 0
