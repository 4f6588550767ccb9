"""Stopping commands that a dead scheduler left running.

Each command runs in its own process group, so killing the scheduler (SIGKILL, a
crash, a power-cut-free OOM kill) does not kill the command. Its run is recorded as
interrupted at the next start and retried; if the old process were left alone it
would run alongside its own retry. So the next scheduler stops it first.

A process id may have been reused by then. A group is only stopped when one of its
processes still carries the marker taskgui put in every command's environment
(``TASKGUI_TASK_ID`` with that run's task id).

A run whose pid was never recorded (the scheduler died in the moment between starting
the command and committing its pid, which it does at once) is not looked for by its
markers alone: a task may leave processes running on purpose (``setsid``, ``nohup``, a
detached ``tmux``), and those carry the same markers.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from taskgui.store.repository import RunRecord

log = logging.getLogger(__name__)

PROC = Path("/proc")


def _group_members(pgid: int) -> list[int]:
    members = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        # fields: state, ppid, pgrp, ...; a zombie holds nothing worth stopping.
        if len(fields) > 2 and fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


def _carries_marker(pid: int, task_id: int) -> bool:
    return f"TASKGUI_TASK_ID={task_id}".encode() in _environ(pid)


def _environ(pid: int) -> list[bytes]:
    try:
        return (PROC / str(pid) / "environ").read_bytes().split(b"\0")
    except OSError:
        return []


def is_orphan_of(run: RunRecord) -> bool:
    """True when the run's process group still exists and is provably taskgui's."""
    if run.pid is None or not PROC.is_dir():
        return False
    return any(_carries_marker(pid, run.task_id) for pid in _group_members(run.pid))


def stop_orphaned_runs(
    runs: Iterable[RunRecord],
    *,
    grace: float = 2.0,
    sleep: Callable[[float], None] = time.sleep,
) -> list[RunRecord]:
    """SIGTERM the groups of interrupted runs still alive, SIGKILL them after ``grace``.

    Returns the runs whose processes were found and stopped.
    """
    orphans = [run for run in runs if is_orphan_of(run)]
    groups = [run.pid for run in orphans if run.pid is not None]
    for run in orphans:
        log.warning(
            "stopping pid %s, left running by run %d of task %d", run.pid, run.id, run.task_id
        )
    for pgid in groups:
        _signal_group(pgid, signal.SIGTERM)
    waited = 0.0
    while groups and waited < grace and any(_group_members(pgid) for pgid in groups):
        sleep(0.05)
        waited += 0.05
    for pgid in groups:
        if _group_members(pgid):
            _signal_group(pgid, signal.SIGKILL)
    return orphans


def _signal_group(pgid: int, signum: signal.Signals) -> None:
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        pass
    except PermissionError:
        log.error("not allowed to stop process group %d", pgid)
