"""A run's processes: its process group, and those that left the group but carry its mark.

A command runs in a session and process group of its own, so SIGTERM and SIGKILL to
the group reach everything it started: unless something started a session of its own
(``setsid``, a daemon's double fork), which takes it out of the group, out of reach of
the group's signals, and out of sight once its parent has exited (it is re-parented
to init). So every run also puts a mark of its own in the command's environment
(``TASKGUI_RUN_MARK``, random), which every process it starts inherits. Stopping a
run signals the group *and* every process that carries the mark, and waiting for a
stopped run waits for both.

The scheduler gives each run the mark ``run_mark`` derives from its record, so the
next start after a crash finds the interrupted run's processes again (see
``orphans``). What this cannot reach (see the README, "Delivery guarantee"): a process
that cleared or replaced its environment (``env -i``) after leaving the group. A
cgroup per run (a systemd transient scope) would know the whole tree whatever its
environment; it needs a systemd user session, which not every machine has.

Looks in ``/proc``; without it, only the group is signalled and waited for.

Also here, the other helpers that look at processes: ``open_pidfd`` (a descriptor the
runner waits on for a command's exit) and ``describe_owner`` (who holds the lock).
"""

from __future__ import annotations

import contextlib
import os
import signal
from datetime import datetime
from pathlib import Path

from taskgui.core.digest import blake2b

RUN_MARK = "TASKGUI_RUN_MARK"
PROC = "/proc"


def new_mark() -> str:
    """A value for ``RUN_MARK`` that no other run, and no other program, carries.

    ``secrets.token_hex(16)`` is this very call, but ``secrets`` imports ``hmac`` and so
    OpenSSL (3.7 MB resident; see ``core.digest``)."""
    return os.urandom(16).hex()


def run_mark(
    database: str | None, task_id: int, kind: str, scheduled_at: datetime, attempt: int
) -> str:
    """The ``RUN_MARK`` of one run, derived from what its record on disk holds.

    The scheduler puts it in the run's environment; after a crash the next start
    derives it again from the interrupted run's record and finds every process of that
    run by it: also one that left the group (``setsid``), and also when the crash came
    before the run's pid was committed. ``database`` (its resolved path) keeps runs of
    two schedules with the same task ids apart.
    """
    key = f"{database or ''}\0{task_id}\0{kind}\0{scheduled_at.isoformat()}\0{attempt}"
    return blake2b(key.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


class ProcessTree:
    """The processes of one run: group ``pgid`` and whatever carries ``mark``."""

    def __init__(self, pgid: int | None, mark: str) -> None:
        self.pgid = pgid  # None: no group known (found by its mark only)
        self._needle = f"{RUN_MARK}={mark}".encode()

    def signal(self, sig: signal.Signals) -> None:
        """Signal the group and every marked process outside it; gone ones are fine."""
        if self.pgid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pgid, sig)
        for pid in self._escaped():
            _signal_marked(pid, self._needle, sig)

    def running(self) -> bool:
        """True while a process of the group, or a marked one, runs (zombies aside).

        ``killpg(pgid, 0)`` alone also counts zombies: an orphan's zombie waits for
        init to reap it, which some inits (containers) do only every second or so.
        """
        in_group = False
        if self.pgid is not None:
            try:
                os.killpg(self.pgid, 0)
            except ProcessLookupError:
                pass
            except PermissionError:
                return True
            else:
                in_group = True
        try:
            entries = os.scandir(PROC)
        except OSError:
            return in_group  # without /proc, the group is all that can be seen
        with entries:
            for entry in entries:
                if not entry.name.isdigit():
                    continue
                stat = _stat(entry.name)
                if stat is None or stat[0] in (b"Z", b"X"):
                    continue
                if stat[1] == self.pgid or self._needle in _environ(entry.name):
                    return True
        return False

    def _escaped(self) -> list[int]:
        """Running processes outside the group that carry the mark."""
        try:
            entries = os.scandir(PROC)
        except OSError:
            return []
        escaped = []
        with entries:
            for entry in entries:
                if not entry.name.isdigit():
                    continue
                stat = _stat(entry.name)
                if stat is None or stat[0] in (b"Z", b"X") or stat[1] == self.pgid:
                    continue
                if self._needle in _environ(entry.name):
                    escaped.append(int(entry.name))
        return escaped


def _stat(pid: str) -> tuple[bytes, int] | None:
    """(state, process group) of a process; None once it is gone."""
    try:
        with open(f"{PROC}/{pid}/stat", "rb") as file:
            stat = file.read()
    except OSError:
        return None
    # "pid (comm) state ppid pgrp ...": comm may contain anything, so split after ")".
    fields = stat.rpartition(b")")[2].split(None, 3)
    if len(fields) < 3:
        return None
    return fields[0], int(fields[2])


def _environ(pid: str) -> bytes:
    """The environment a process started with; empty if it is gone or not ours."""
    try:
        with open(f"{PROC}/{pid}/environ", "rb") as file:
            return file.read()
    except OSError:
        return b""


def _signal_marked(pid: int, needle: bytes, sig: signal.Signals) -> None:
    """Signal ``pid`` only if it is still the process that carries the mark.

    With a pidfd the check and the signal are about one process even if ``pid`` is
    reused in between: the descriptor names the process, not the number.
    """
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    try:
        if needle not in _environ(str(pid)):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if pidfd is not None:
                signal.pidfd_send_signal(pidfd, sig)
            else:
                os.kill(pid, sig)
    finally:
        if pidfd is not None:
            os.close(pidfd)


def open_pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when ``pid`` exits, where the kernel has one."""
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is None:
        return None
    try:
        fd: int = pidfd_open(pid)
    except OSError:  # kernel < 5.3, or blocked by a seccomp filter
        return None
    return fd


def describe_owner(pid: int | None, proc: Path = Path(PROC)) -> str:
    """``taskgui daemon (pid 1234)`` or ``process 1234``: who holds the lock."""
    if not pid:
        return "another process"
    try:
        arguments = (proc / str(pid) / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return f"process {pid}"
    words = [os.path.basename(a.decode("utf-8", "replace")) for a in arguments if a]
    if "daemon" in words and any("taskgui" in word for word in words):
        return f"taskgui daemon (pid {pid})"
    if any("taskgui" in word for word in words):
        return f"another taskgui (pid {pid})"
    return f"process {pid}"
