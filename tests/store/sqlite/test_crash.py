"""A real crash test: a scheduler process killed with SIGKILL at random moments.

After every kill the database must account for every task (finished with a recorded
run, or still to run) and, once reopened, leave none "running" and no run open. At the
end the schedule must complete: nothing lost, every task run at least once.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from taskgui.control.recovery import recover
from taskgui.core.engine.engine import Engine
from taskgui.core.retry import Backoff, RetryPolicy
from taskgui.core.states import RunOutcome, TaskState
from taskgui.core.task import Command, TaskSpec
from taskgui.store.sqlite.repository import SqliteRepository

ROOT = Path(__file__).resolve().parents[3]
TASKS = 300
TRIALS = 24
FINISHED = {TaskState.SUCCEEDED, TaskState.EXHAUSTED}


def _seed(path: Path) -> None:
    now = datetime.now(UTC)
    specs = []
    for index in range(TASKS):
        # Mostly quick successes; slow ones, so that most kills land while a run goes
        # (with attempts to spare: being interrupted is not their failure); and
        # failures that go through their retries to exhaustion.
        failing = index % 20 == 0
        line = "exit 3" if failing else ("sleep 0.25" if index % 10 == 0 else "true")
        specs.append(
            TaskSpec(
                name=f"job {index}",
                command=Command(line=line),
                first_run_at=now + timedelta(milliseconds=index * 60),
                priority=index % 7,
                retry=RetryPolicy(
                    backoff=Backoff.FIXED,
                    max_attempts=3 if failing else 10,
                    base_delay=timedelta(milliseconds=20),
                    max_delay=timedelta(milliseconds=20),
                ),
            )
        )
    repository = SqliteRepository(path)
    repository.add_tasks(specs, now)
    repository.close()


def _child(path: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.crash_child", str(path), "4"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _check_accounted_for(path: Path) -> Counter[str]:
    """Reopen as the next scheduler would, and check every task is accounted for."""
    repository = SqliteRepository(path)
    try:
        engine = Engine()
        recover(repository, engine, datetime.now(UTC))
        tasks = repository.list_tasks()
        assert len(tasks) == TASKS, "a task vanished"
        states: Counter[str] = Counter()
        for task in tasks:
            states[task.state.value] += 1
            assert task.state is not TaskState.RUNNING, f"task {task.id} left running"
            runs = repository.runs(task.id)
            states["runs interrupted"] += sum(run.outcome is RunOutcome.INTERRUPTED for run in runs)
            assert all(run.outcome is not None for run in runs), f"open run on {task.id}"
            if task.state in FINISHED:
                assert runs, f"task {task.id} finished without a recorded run"
                wanted = RunOutcome.SUCCEEDED if task.state is TaskState.SUCCEEDED else None
                if wanted is not None:
                    assert runs[0].outcome is wanted
            else:
                assert task.state in (TaskState.PENDING, TaskState.RETRYING)
        return states
    finally:
        repository.close()


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "crash.sqlite3"
    _seed(path)
    rng = random.Random(20261130)
    kills = 0
    for _ in range(TRIALS):
        child = _child(path)
        time.sleep(rng.uniform(0.4, 0.9))  # past its start-up, mid-work
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            kills += 1
        child.communicate(timeout=30)  # reaps it and closes its pipe
        _check_accounted_for(path)
    child = _child(path)
    _, stderr = child.communicate(timeout=120)
    assert child.returncode == 0, stderr.decode()
    final = _check_accounted_for(path)
    print(f"\ncrash test: {TRIALS} trials, {kills} SIGKILLs, final states {dict(final)}")
    assert kills >= 20
    assert final["runs interrupted"] > 0, "no kill landed while a run was going"
    del final["runs interrupted"]
    assert set(final) <= {state.value for state in FINISHED}
    assert final[TaskState.EXHAUSTED.value] == TASKS // 20
