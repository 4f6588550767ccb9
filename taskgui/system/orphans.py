"""Stopping commands that a dead scheduler left running.

Each command runs in its own process group, so killing the scheduler (SIGKILL, a
crash, a power-cut-free OOM kill) does not kill the command. Its run is recorded as
interrupted at the next start and retried; if the old process were left alone it
would run alongside its own retry. So the next scheduler stops it first.

A process id may have been reused by then. A group is only stopped when one of its
processes still carries the marker taskgui put in every command's environment
(``TASKGUI_TASK_ID`` with that run's task id).

Every run also carries a mark of its own (``TASKGUI_RUN_MARK``, see
``process_tree.run_mark``), derived from its record: the task, the kind of slot, the
scheduled time and the attempt, and the database. From the interrupted run's record
the next start derives it again and stops every process that carries it: those that
left the group (``setsid``, a daemon's double fork), and all of the run's processes
when the scheduler died before it committed the run's pid. Only processes of the run
that was interrupted carry that mark, so processes that *earlier*, finished runs left
running on purpose (``nohup``, a detached ``tmux``) are never touched; the task's and
database's markers alone (the same for every run of a task) are never enough.
"""

from __future__ import annotations

import logging
import signal
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from taskgui.core.status import RunRecord
from taskgui.system.process_tree import ProcessTree, run_mark

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
    database: str | None = None,
    grace: float = 2.0,
    sleep: Callable[[float], None] = time.sleep,
) -> list[RunRecord]:
    """SIGTERM the processes of interrupted runs still alive, SIGKILL them after ``grace``.

    A run's processes are its recorded process group (when one of its members still
    carries the task's marker: a pid may have been reused) and every process carrying
    the run's own mark. ``database`` is the schedule's resolved path, as the scheduler
    gave it to ``run_mark``. Returns the runs whose processes were found and stopped.
    """
    found: list[tuple[RunRecord, ProcessTree]] = []
    for run in runs:
        mark = run_mark(database, run.task_id, run.kind.value, run.scheduled_at, run.attempt)
        tree = ProcessTree(run.pid if is_orphan_of(run) else None, mark)
        if tree.running():
            found.append((run, tree))
            log.warning(
                "stopping what run %d of task %d left running (pid %s)",
                run.id,
                run.task_id,
                run.pid if run.pid is not None else "not recorded",
            )
    for _run, tree in found:
        tree.signal(signal.SIGTERM)
    waited = 0.0
    while waited < grace and any(tree.running() for _run, tree in found):
        sleep(0.05)
        waited += 0.05
    for _run, tree in found:
        if tree.running():
            tree.signal(signal.SIGKILL)
    return [run for run, _tree in found]
