"""The worker pool: runs commands on worker threads and reports back by queued signals.

Workers never touch SQLite, the engine or any widget: a worker runs one command and
emits what came of it. Signals emitted from a worker thread reach the pool's owner in
its own thread (Qt queues them), so all bookkeeping happens on one thread.

A run can be queued beyond the free workers (``queue_per_worker``): it waits in the
threads' queue, most urgent first, and the next worker to finish takes it at once,
without waiting for the pool's owner to hear of that end and hand something over (a
round trip through a busy thread per run). Until a worker takes it, ``unqueue`` takes
it back as if never handed over.

A run handed over with a start time takes its worker at once and waits for that time
on the worker thread (see ``CommandRunner.run``): it counts as busy while it waits.

Why plain threads and not ``QThreadPool``: PySide6 6.11's ``QThreadPool`` keeps every
``QRunnable`` started with auto-delete off alive for good (a soak grew by about 3 KiB
per run: one live job and runner per run ever made), and with auto-delete on it still
kept about one in 200 (measured: 103 live after 20,000). ``QThreadPool.start`` with a
callable was measured clean, but a queue of our own was too, with a hand-off about half
as long (idle: 40 µs against 80-150 µs median) and ownership nothing but Python's: a
job is garbage as soon as its report has been emitted. See ``WorkerThreads``.

Reports from workers are gathered: a worker appends its report (the pid, the end) to
one queue; an end wakes the pool's thread unless a wake-up is already on its way, a
start wakes nobody (it comes with the next end, or within ``START_REPORT_MS``), and
the pool's thread takes every report queued by then at once (``runs_reported``).
Under a burst the owner so hears of several runs per wake-up and can commit them in
one transaction (group commit) instead of waking, and committing, once per report.
While every worker has a run queued behind it, nobody waits for those reports: they are
then taken every ``BACKLOG_REPORT_MS`` instead of at each end, several runs a
transaction (measured: a wake-up and its transaction cost the owner about as much as a
run's own bookkeeping, and under load a wake every 2 ms took one or two runs each; its
service thread spent 0.9 ms a run where it spends 0.4 ms in large batches). The queue
must then hold what the workers run while the owner sleeps and works
(``QUEUE_PER_WORKER``).

Signals:
    runs_reported(object): a list of ``PoolReport``, in the order the workers made
        them (a run's start before its end), every one taken at one wake-up; emitted
        before the single-run signals below for the same reports.
    run_started(int, int): run id, process id — the command's process exists.
    run_output(int, str): run id, the output so far of a run still going (at most
        every ``output_interval`` seconds while it prints).
    run_completed(int, object): run id, RunReport — the command ended (any way).
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from taskgui.core.defaults import KILL_GRACE
from taskgui.core.states import RunOutcome
from taskgui.core.status import RunId, RunResult
from taskgui.core.task import Command
from taskgui.runtime.runner import DEFAULT_OUTPUT_INTERVAL, CommandRunner, RunReport
from taskgui.runtime.worker_threads import WorkerThreads

log = logging.getLogger(__name__)

# How soon at most the start of a run still going is heard of (shown, its pid written)
# when no end comes first: starts wake no thread of their own (see _Relay).
START_REPORT_MS = 50
# Under a backlog, while every worker has a run queued behind it, the reports are taken
# at most this often rather than at each end: each taking costs the owner a wake-up and
# a transaction, and the workers do not wait for it meanwhile (see WorkerPool). 10 ms,
# measured against 2 and 5 (fewer runs a wake) and 20 (workers left waiting): 500 runs
# of `sh -c true` through 4 workers, 0.45x APScheduler's memory store at 2 ms with one
# run queued a worker, 0.67x at 10 ms with four (benchmarks/bench_dispatch.py).
BACKLOG_REPORT_MS = 10


class Runner(Protocol):
    """What the pool needs of a run's runner (``CommandRunner`` in the application)."""

    def run(
        self,
        on_started: Callable[[int], None] | None = None,
        gate: threading.Event | None = None,
        start_at: float | None = None,
    ) -> RunReport: ...

    def cancel(self) -> None: ...

    def cancel_unless_begun(self) -> bool: ...


# (command, timeout, extra environment, where to report the output so far) -> a
# runner that runs that command once.
RunnerFactory = Callable[
    [Command, float | None, Mapping[str, str] | None, Callable[[str], None]], Runner
]


@dataclass(frozen=True, slots=True)
class PoolReport:
    """What a worker said of a run: its process started (``pid``) or it ended
    (``report``); exactly one of the two is set."""

    run_id: RunId
    pid: int | None = None
    report: RunReport | None = None
    at: float = 0.0  # when the worker made it (the pool's monotonic clock)


class _Relay(QObject):
    """Carries results from worker threads to the pool's thread.

    Starts and ends go into one queue. An end wakes the pool's thread (``ready``,
    queued to it) unless a wake-up is already on its way, so a burst of reports costs
    one cross-thread event, not one each. A start wakes nobody: it is taken with the
    next end, or by the pool's own timer for starts (``START_REPORT_MS``).
    """

    ready = Signal()
    output = Signal(int, str)

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self._lock = threading.Lock()
        self._reports: collections.deque[PoolReport] = collections.deque()
        self._woken = False  # a ready is on its way and not yet taken

    def report(self, item: PoolReport, *, wake: bool) -> None:
        """From a worker thread."""
        with self._lock:
            self._reports.append(item)
            wake = wake and not self._woken
            if wake:
                self._woken = True
        if wake:
            self.ready.emit()

    def hold(self) -> None:
        """Until the next ``take``, reports wake nobody (the pool takes them itself)."""
        with self._lock:
            self._woken = True

    def take(self) -> list[PoolReport]:
        """On the pool's thread: every report queued so far."""
        with self._lock:
            taken = list(self._reports)
            self._reports.clear()
            self._woken = False
        return taken


class _RunJob:
    """One run on a worker thread: runs its runner, relays the pid and the report."""

    def __init__(
        self,
        run_id: RunId,
        runner: Runner,
        relay: _Relay,
        gate: threading.Event | None,
        start_at: float | None,
        *,
        monotonic: Callable[[], float],
        wake_on_start: bool = False,
    ) -> None:
        self._monotonic = monotonic
        self._wake_on_start = wake_on_start
        self._run_id = run_id
        self._runner = runner
        self._relay = relay
        self._gate = gate
        self._start_at = start_at

    def run(self) -> None:
        # Nothing may escape a job: a failure here becomes the run's result.
        try:
            report = self._runner.run(
                on_started=self._on_started, gate=self._gate, start_at=self._start_at
            )
        except Exception as error:  # pragma: no cover - the runner reports, not raises
            log.exception("worker failed while running run %s", self._run_id)
            report = RunReport(
                outcome=RunOutcome.FAILED,
                result=RunResult(error=f"internal error in taskgui: {error}"),
                duration=0.0,
            )
        try:
            self._relay.report(PoolReport(self._run_id, report=report), wake=True)
        except RuntimeError:  # the pool was destroyed while this run went on
            log.warning("run %s ended after its pool was gone", self._run_id)

    def _on_started(self, pid: int) -> None:
        report = PoolReport(self._run_id, pid=pid, at=self._monotonic())
        self._relay.report(report, wake=self._wake_on_start)


class WorkerPool(QObject):
    """At most ``size`` commands at once; the dispatcher decides which."""

    runs_reported = Signal(object)
    run_started = Signal(int, int)
    run_output = Signal(int, str)
    run_completed = Signal(int, object)

    def __init__(
        self,
        size: int,
        monotonic: Callable[[], float],
        *,
        kill_grace: float = KILL_GRACE,
        runner_factory: RunnerFactory | None = None,
        output_interval: float = DEFAULT_OUTPUT_INTERVAL,
        queue_per_worker: int = 0,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        if size < 1:
            raise ValueError("the worker pool needs at least one worker")
        if queue_per_worker < 0:
            raise ValueError("the pool's queue cannot be negative")
        self._queue_per_worker = queue_per_worker
        self._monotonic = monotonic
        self._kill_grace = kill_grace
        self._new_runner = runner_factory or self._command_runner
        self._output_interval = output_interval
        # Idle threads are kept: a task due after a long wait would otherwise pay for a
        # new OS thread (~0.2 ms) before it starts. They end with this object.
        self._threads = WorkerThreads(size, name="taskgui-worker")
        self.destroyed.connect(self._threads.close)
        self._relay = _Relay(self)
        self._relay.ready.connect(self._on_relay_ready)
        self._relay.output.connect(self._on_relay_output)
        self._runners: dict[RunId, Runner] = {}
        self._queued: dict[RunId, int] = {}  # run -> its job's number, queued runs only
        # Starts wake nobody (see _Relay): while a run's start has not been heard of,
        # this takes the reports every START_REPORT_MS, so that a run that goes on for
        # long is shown started (and its pid written) that soon, not at its end.
        self._unstarted: set[RunId] = set()
        self._starts = QTimer(self)
        self._starts.setSingleShot(True)
        self._starts.setInterval(START_REPORT_MS)
        self._starts.timeout.connect(self._on_starts_timeout)
        self._backlog = QTimer(self)
        self._backlog.setSingleShot(True)
        self._backlog.setTimerType(Qt.TimerType.PreciseTimer)
        self._backlog.setInterval(BACKLOG_REPORT_MS)
        self._backlog.timeout.connect(self._on_relay_ready)

    @property
    def size(self) -> int:
        return self._threads.size

    @property
    def busy(self) -> int:
        return len(self._runners)

    @property
    def working(self) -> int:
        """Runs a worker has (running or waiting for their start): not those queued."""
        return max(0, len(self._runners) - self._threads.queued)

    @property
    def free(self) -> int:
        """Workers with no run: a run handed over now starts at once."""
        return max(0, self.size - len(self._runners))

    @property
    def queue_room(self) -> int:
        """How many more runs may be queued beyond the free workers."""
        size = self.size
        return max(0, size * (1 + self._queue_per_worker) - max(size, len(self._runners)))

    def resize(self, size: int) -> None:
        if size < 1:
            raise ValueError("the worker pool needs at least one worker")
        self._threads.resize(size)

    def submit(
        self,
        run_id: RunId,
        command: Command,
        *,
        timeout: float | None,
        extra_env: Mapping[str, str] | None = None,
        gate: threading.Event | None = None,
        start_at: float | None = None,
        rank: int = 0,
        queued: bool = False,
    ) -> None:
        """Hand a run to a worker thread; with ``gate``, it starts once the gate is set,
        and with ``start_at`` (monotonic) not before that moment. Runs waiting for a
        worker are taken lowest ``rank`` first; a ``queued`` one (handed over with no
        worker free for it) can be taken back with ``unqueue`` until one takes it."""
        relay = self._relay
        runner = self._new_runner(
            command, timeout, extra_env, lambda text: relay.output.emit(run_id, text)
        )
        self._runners[run_id] = runner
        # A queued run may wait long for its worker: its start wakes the pool's thread
        # (with the end it followed, as a rule) rather than a timer looking meanwhile.
        if not queued:
            self._unstarted.add(run_id)
            if not self._starts.isActive():
                self._starts.start()
        job = _RunJob(
            run_id,
            runner,
            self._relay,
            gate,
            start_at,
            monotonic=self._monotonic,
            wake_on_start=queued,
        )
        number = self._threads.start(job.run, rank)
        if queued:
            self._queued[run_id] = number

    def unqueue(self, run_id: RunId) -> bool:
        """Take back a queued run no worker has taken yet: True if it will never run
        and never be reported (its place is free at once); False otherwise."""
        number = self._queued.pop(run_id, None)
        if number is None or not self._threads.take_back(number):
            return False
        del self._runners[run_id]
        self._unstarted.discard(run_id)
        return True

    def cancel(self, run_id: RunId) -> bool:
        """Stop a run's process group (SIGTERM, then SIGKILL). False if not running."""
        runner = self._runners.get(run_id)
        if runner is None:
            return False
        runner.cancel()
        return True

    def withdraw(self, run_id: RunId) -> bool:
        """Cancel a run only if it has not begun starting its process (it waits for
        its gate or start time): then it ends cancelled having started nothing, and
        True. False if unknown or already starting (``cancel`` stops those)."""
        runner = self._runners.get(run_id)
        return runner is not None and runner.cancel_unless_begun()

    def cancel_all(self) -> None:
        for runner in list(self._runners.values()):
            runner.cancel()

    def wait_for_done(self, msecs: int) -> bool:
        """Block until every worker thread is idle (for shutdown and tests only)."""
        return self._threads.wait_for_done(msecs / 1000)

    def _command_runner(
        self,
        command: Command,
        timeout: float | None,
        extra_env: Mapping[str, str] | None,
        on_output: Callable[[str], None],
    ) -> Runner:
        return CommandRunner(
            command,
            timeout=timeout,
            monotonic=self._monotonic,
            extra_env=extra_env,
            kill_grace=self._kill_grace,
            on_output=on_output,
            output_interval=self._output_interval,
        )

    def _on_relay_output(self, run_id: int, text: str) -> None:
        if run_id in self._runners:  # not a late report of a run that already ended
            self.run_output.emit(run_id, text)

    def _on_starts_timeout(self) -> None:
        self._on_relay_ready()
        if self._unstarted:
            self._starts.start()

    def _on_relay_ready(self) -> None:
        reports = self._relay.take()
        if not reports:
            return
        for item in reports:
            self._unstarted.discard(item.run_id)
            if item.report is not None:
                self._runners.pop(item.run_id, None)
                self._queued.pop(item.run_id, None)
        self.runs_reported.emit(reports)
        for item in reports:
            if item.report is not None:
                self.run_completed.emit(item.run_id, item.report)
            elif item.pid is not None:
                self.run_started.emit(item.run_id, item.pid)
        if self._threads.queued >= self.size:  # a backlog: see BACKLOG_REPORT_MS
            self._relay.hold()
            self._backlog.start()
