"""The worker pool keeps nothing of a run once the run is over.

PySide6 6.11's QThreadPool kept every QRunnable started with auto-delete off (and with
it the run's CommandRunner) alive for good: a soak grew by about 3 KiB per run. These
tests count the run objects still alive after thousands of runs: with a fake runner
at the pool's runner seam for the count, and with real processes through the whole
service for the real thing.
"""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Callable, Mapping
from datetime import timedelta
from pathlib import Path

from pytestqt.qtbot import QtBot
from shiboken6 import Shiboken

from taskgui.core.clock import SystemClock
from taskgui.core.states import RunOutcome
from taskgui.core.status import RunResult
from taskgui.core.task import Command
from taskgui.runtime import pool as pool_module
from taskgui.runtime.pool import WorkerPool
from taskgui.runtime.runner import CommandRunner, RunReport
from tests.helpers.service import Harness, spec

CLOCK = SystemClock()
FAKE_RUNS = 5_000
REAL_RUNS = 300
LEAK_RUNS = 200


class InstantRunner:
    """Runs nothing: reports success at once (the runner seam, for counting objects)."""

    def __init__(self) -> None:
        self.cancelled = False

    def run(
        self,
        on_started: Callable[[int], None] | None = None,
        gate: threading.Event | None = None,
        start_at: float | None = None,
    ) -> RunReport:
        if gate is not None:
            gate.wait()
        if on_started is not None:
            on_started(0)
        return RunReport(outcome=RunOutcome.SUCCEEDED, result=RunResult(exit_code=0), duration=0)

    def cancel(self) -> None:
        self.cancelled = True

    def cancel_unless_begun(self) -> bool:
        return False


def live(kind: type) -> int:
    gc.collect()
    return sum(1 for obj in gc.get_objects() if type(obj) is kind)


def test_no_run_object_outlives_its_run_after_thousands_of_runs(qtbot: QtBot) -> None:
    made: list[weakref.ref[InstantRunner]] = []

    def factory(
        command: Command,
        timeout: float | None,
        env: Mapping[str, str] | None,
        on_output: Callable[[str], None],
    ) -> InstantRunner:
        runner = InstantRunner()
        made.append(weakref.ref(runner))
        return runner

    pool = WorkerPool(4, CLOCK.monotonic, runner_factory=factory)
    started: list[int] = []
    completed: list[int] = []
    pool.run_started.connect(lambda run_id, pid: started.append(run_id))
    next_id = iter(range(1, FAKE_RUNS + 1))

    def submit_while_free() -> None:  # as the dispatcher does: never more than free
        while pool.free:
            run_id = next(next_id, None)
            if run_id is None:
                return
            pool.submit(run_id, Command(line="true"), timeout=None)

    def on_completed(run_id: int, report: object) -> None:
        completed.append(run_id)
        submit_while_free()

    pool.run_completed.connect(on_completed)
    submit_while_free()
    qtbot.waitUntil(lambda: len(completed) == FAKE_RUNS, timeout=60_000)
    assert pool.wait_for_done(5_000)

    assert sorted(completed) == list(range(1, FAKE_RUNS + 1))
    assert len(started) == FAKE_RUNS
    assert pool.busy == 0
    assert len(made) == FAKE_RUNS
    gc.collect()
    assert sum(ref() is not None for ref in made) == 0
    assert live(pool_module._RunJob) == 0
    assert pool._threads.thread_count <= 4


def test_real_runs_through_the_service_leave_no_runner_behind(tmp_path: Path, qtbot: QtBot) -> None:
    before = live(CommandRunner)
    harness = Harness(tmp_path, qtbot, workers=4)
    try:
        harness.service.add_tasks([spec(f"t{index}", "true") for index in range(REAL_RUNS)])
        qtbot.waitUntil(lambda: len(harness.finished) == REAL_RUNS, timeout=120_000)
        assert {outcome for _, outcome, _ in harness.finished} == {RunOutcome.SUCCEEDED}
        qtbot.waitUntil(lambda: harness.service.busy_workers == 0, timeout=10_000)
        assert harness.service.pool.wait_for_done(5_000)
        harness.finished.clear()  # the test's own record holds results, not runners
        assert live(CommandRunner) - before == 0
        assert live(pool_module._RunJob) == 0
    finally:
        harness.close()


def _tracked_objects() -> int:
    """What the collector tracks, less weak references: a sqlite3 connection keeps one
    per cursor it made and drops the dead ones only every 200 cursors, so their count
    swings by up to 200 with the number of statements a run happens to take."""
    return sum(1 for item in gc.get_objects() if not isinstance(item, weakref.ref))


def test_the_service_holds_no_more_objects_after_hundreds_more_runs(
    tmp_path: Path, qtbot: QtBot
) -> None:
    """Any per-run leak, wherever it is: run one task again and again and count every
    object the garbage collector tracks. It also bounds the cost of a full collection,
    which walks them all (the old pool's leak made one take 0.2 s after 4,000 runs)."""
    harness = Harness(tmp_path, qtbot, workers=2)
    try:
        task = harness.service.add_task(spec("again", "true"))
        qtbot.waitUntil(lambda: len(harness.finished) == 1, timeout=10_000)  # its own run

        def run_times(count: int) -> None:
            for _ in range(count):
                harness.finished.clear()
                harness.service.run_now(task.id)
                qtbot.waitUntil(lambda: len(harness.finished) == 1, timeout=10_000)
                qtbot.waitUntil(lambda: harness.service.busy_workers == 0, timeout=10_000)
            harness.finished.clear()

        run_times(50)  # warm-up: caches, statements, threads
        gc.collect()
        before = _tracked_objects()
        run_times(LEAK_RUNS)
        gc.collect()
        grown = _tracked_objects() - before
        assert grown < LEAK_RUNS // 4, f"{grown} more objects after {LEAK_RUNS} runs"
    finally:
        harness.close()


def test_a_deleted_pool_ends_its_threads(qtbot: QtBot) -> None:
    pool = WorkerPool(2, CLOCK.monotonic)
    threads_before = set(threading.enumerate())
    with qtbot.waitSignal(pool.run_completed, timeout=10_000):
        pool.submit(1, Command(line="true"), timeout=None)
    assert pool.wait_for_done(5_000)
    workers = set(threading.enumerate()) - threads_before
    assert workers  # the run had a thread of the pool's own
    Shiboken.delete(pool)
    for thread in workers:
        thread.join(timedelta(seconds=10).total_seconds())
        assert not thread.is_alive()
