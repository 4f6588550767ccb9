"""What a change asked on the command line means before anyone performs it: when a
pause for a while ends, and when a pause or resume would change nothing. Shared by
the file and the shared (PostgreSQL) schedule's ``pause``, ``resume`` and friends."""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta

from taskgui.core.clock import Clock
from taskgui.core.errors import InvalidStateError, InvalidTaskError
from taskgui.core.operation import Op
from taskgui.core.states import TaskState
from taskgui.core.status import TaskSnapshot


def unchanged_note(op: Op, snapshot: TaskSnapshot) -> str | None:
    """What to say instead when pause, resume or cancel would change nothing.

    Both then succeed and say so truthfully, rather than claim a change (as resume
    did) or fail (a script that pauses a task wants it paused, and it is). A task
    that has finished (cancelled, succeeded, gave up, missed) is refused by both,
    exit status 1: it will not run again, paused or not.
    """
    if op is Op.PAUSE and snapshot.spec.paused:
        return "is already paused"
    if op is Op.CANCEL and snapshot.state is TaskState.CANCELLED:
        return "is already cancelled"  # it said "task 12 cancelled" again (a trial)
    if op is Op.RESUME and not snapshot.spec.paused:
        if snapshot.state.is_terminal:
            raise InvalidStateError(
                f"task {snapshot.spec.name!r} {snapshot.state.ended_as}; there is nothing to resume"
            )
        return "is not paused; nothing to resume"
    return None


def pause_end(args: argparse.Namespace, clock: Clock) -> datetime | None:
    """When a ``pause --for`` / ``--until`` ends (None: paused until resumed)."""
    if getattr(args, "until", None) is not None:
        until: datetime = args.until
        if until <= clock.now():
            raise InvalidTaskError("--until is in the past; give a time to come")
        return until
    if getattr(args, "for_", None) is None:
        return None
    delay: timedelta = args.for_
    if delay <= timedelta(0):  # a pause that is over as it begins: as a past --until
        raise InvalidTaskError("--for must be longer than 0s; give how long, like 30m or 2h")
    try:
        return clock.now() + delay
    except OverflowError:
        raise InvalidTaskError(f"--for {args.for_} is too far in the future") from None
