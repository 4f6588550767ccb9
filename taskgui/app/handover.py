"""Handing the schedule to ``taskgui daemon`` when the window goes and no tray keeps it.

The window chose "Keep Running in Background" (``ui.close_choice``). Once this process
has recorded every run and let go of the scheduler lock, it starts ``taskgui daemon``
for the same database, detached (its own session, no terminal, its output to the log
file like any daemon's), and waits until the daemon holds the lock: only then has the
schedule really been handed over. If the daemon does not come up, the person is told,
with where the log is, rather than left with a schedule nobody runs.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from taskgui.core.clock import SystemClock
from taskgui.store.sqlite.lock import holder_pid, lock_path_for

log = logging.getLogger(__name__)

_CLOCK = SystemClock()

TAKEOVER_WAIT = 15.0  # seconds for the daemon to start and take the lock
POLL = 0.05


@dataclass(frozen=True, slots=True)
class Handover:
    """How handing over went: ``pid`` of the daemon when it holds the lock, else why not."""

    pid: int | None
    problem: str = ""

    @property
    def done(self) -> bool:
        return self.pid is not None


def daemon_command(launch: Sequence[str], database: Path, workers: int) -> list[str]:
    """``taskgui --db PATH daemon --workers N``, started the way this app was."""
    return [*launch, "--db", str(database), "daemon", "--workers", str(workers)]


def hand_over(
    launch: Sequence[str],
    database: Path,
    workers: int,
    *,
    wait: float = TAKEOVER_WAIT,
    sleep: Callable[[float], None] = time.sleep,
    monotonic: Callable[[], float] = _CLOCK.monotonic,
) -> Handover:
    """Start the daemon detached and wait until it runs the schedule of ``database``.

    Call it after this process released the lock. ``launch`` is how to start taskgui
    (``ui.autostart.launch_command()``: the script, or ``python -m taskgui``).
    """
    command = daemon_command(launch, database.resolve(), workers)
    try:
        pid = _spawn_detached(command)
    except OSError as error:
        return Handover(None, f"could not start {command[0]}: {error.strerror or error}")
    deadline = monotonic() + wait
    lock_file = lock_path_for(database)
    while monotonic() < deadline:
        if holder_pid(lock_file) == pid:
            log.info("taskgui daemon (pid %d) runs %s now", pid, database)
            return Handover(pid)
        code = _exit_status(pid)
        if code is not None:
            return Handover(None, f"taskgui daemon exited at once (status {code})")
        sleep(POLL)
    return Handover(None, f"taskgui daemon (pid {pid}) did not take the schedule in time")


def _spawn_detached(command: Sequence[str]) -> int:
    """Start ``command`` in a session of its own, reading and writing nothing of ours.

    ``posix_spawn`` rather than ``subprocess``: the daemon is meant to outlive this
    process, and a ``Popen`` left running complains when it is collected.
    """
    devnull = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
    return os.posix_spawnp(
        command[0], list(command), dict(os.environ), file_actions=devnull, setsid=True
    )


def _exit_status(pid: int) -> int | None:
    """The child's exit status if it has ended (it is reaped then), else None."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return -1
    return os.waitstatus_to_exitcode(status) if done else None
