"""Group commit: what the workers reported while the service thread was busy is taken
at one wake-up and written in one transaction, starts (pids) and ends together.

Real processes and a real SQLite file; the service thread is kept busy by simply not
running its event loop (this test's thread is that thread) while the commands end.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from taskgui.core.clock import SystemClock
from taskgui.core.events import Event, RunFinished
from taskgui.core.states import RunOutcome
from taskgui.core.status import RunId, RunResult
from taskgui.core.task import Command
from taskgui.runtime.pool import PoolReport, WorkerPool
from taskgui.runtime.runner import RunReport
from tests.helpers.service import Harness, spec

CLOCK = SystemClock()


class _GatedRunner:
    """Starts (reports a pid) at once, then ends when ``release`` is set."""

    def __init__(self, release: threading.Event, ended: Callable[[], None]) -> None:
        self._release = release
        self._ended = ended

    def run(
        self,
        on_started: Callable[[int], None] | None = None,
        gate: threading.Event | None = None,
        start_at: float | None = None,
    ) -> RunReport:
        if gate is not None:
            gate.wait()
        if on_started is not None:
            on_started(os.getpid())
        self._release.wait(10)
        self._ended()
        return RunReport(outcome=RunOutcome.SUCCEEDED, result=RunResult(exit_code=0), duration=0)

    def cancel(self) -> None:
        self._release.set()

    def cancel_unless_begun(self) -> bool:
        return False


def test_reports_made_while_the_pool_thread_is_busy_arrive_in_one_batch(qtbot: QtBot) -> None:
    release = threading.Event()
    ended = threading.Semaphore(0)

    def factory(
        command: Command,
        timeout: float | None,
        env: Mapping[str, str] | None,
        on_output: Callable[[str], None],
    ) -> _GatedRunner:
        return _GatedRunner(release, ended.release)

    pool = WorkerPool(3, CLOCK.monotonic, runner_factory=factory)
    batches: list[list[PoolReport]] = []
    pool.runs_reported.connect(batches.append)
    for run_id in (1, 2, 3):
        pool.submit(run_id, Command(line="true"), timeout=None)
    release.set()
    for _ in range(3):  # every run has ended on its thread; this thread saw nothing yet
        assert ended.acquire(timeout=10)
    time.sleep(0.05)  # past the report that follows the end
    qtbot.waitUntil(lambda: sum(len(batch) for batch in batches) == 6, timeout=5_000)
    assert len(batches) == 1
    [batch] = batches
    assert sorted(item.run_id for item in batch if item.pid is not None) == [1, 2, 3]
    assert sorted(item.run_id for item in batch if item.report is not None) == [1, 2, 3]
    for run_id in (1, 2, 3):  # each run's start before its end
        kinds = [
            "start" if item.pid is not None else "end" for item in batch if item.run_id == run_id
        ]
        assert kinds == ["start", "end"]
    assert pool.busy == 0
    assert pool.wait_for_done(5_000)


def test_the_runs_that_ended_meanwhile_are_committed_in_one_transaction(
    tmp_path: Path, qtbot: QtBot
) -> None:
    go = tmp_path / "go"
    harness = Harness(tmp_path, qtbot, workers=4)
    try:
        line = f"while [ ! -e {go} ]; do sleep 0.01; done"
        tasks = harness.service.add_tasks([spec(f"t{index}", line) for index in range(4)])
        repository = harness.repository

        def pids() -> list[Any]:
            return [run.pid for task in tasks for run in repository.runs(task.id)]

        qtbot.waitUntil(lambda: len(pids()) == 4 and None not in pids(), timeout=10_000)
        applied: list[tuple[list[Event], dict[RunId, RunResult]]] = []
        original = repository.apply

        def apply(
            events: Sequence[Event],
            now: datetime,
            results: Mapping[RunId, RunResult] | None = None,
            pids: Mapping[RunId, int] | None = None,
        ) -> None:
            applied.append((list(events), dict(results or {})))
            original(events, now, results, pids)

        repository.apply = apply  # type: ignore[method-assign]
        go.touch()
        # Not running this thread's event loop: the service hears nothing meanwhile.
        deadline = time.monotonic() + 10
        while any(os.path.exists(f"/proc/{pid}") for pid in pids()):
            assert time.monotonic() < deadline, "the commands did not end"
            time.sleep(0.01)
        time.sleep(0.1)  # each worker's report follows its process's end
        qtbot.waitUntil(lambda: len(harness.finished) == 4, timeout=10_000)
        finishing = [
            entry for entry in applied if any(isinstance(e, RunFinished) for e in entry[0])
        ]
        assert len(finishing) == 1, [len(entry[0]) for entry in applied]
        events, results = finishing[0]
        assert sum(isinstance(event, RunFinished) for event in events) == 4
        assert {result.exit_code for result in results.values()} == {0}
        assert all(run.outcome is not None for task in tasks for run in repository.runs(task.id))
    finally:
        harness.close()
