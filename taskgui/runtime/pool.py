"""The worker pool: runs commands on a QThreadPool and reports back by queued signals.

Workers never touch SQLite, the engine or any widget: a worker runs one command and
emits what came of it. Signals emitted from a pool thread reach the pool's owner in
its own thread (Qt queues them), so all bookkeeping happens on one thread.

A run handed over with a start time takes its worker at once and waits for that time
on the worker thread (see ``CommandRunner.run``): it counts as busy while it waits.

Signals:
    run_started(int, int): run id, process id — the command's process exists.
    run_output(int, str): run id, the output so far of a run still going (at most
        every ``output_interval`` seconds while it prints).
    run_completed(int, object): run id, RunReport — the command ended (any way).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from taskgui.core.states import RunOutcome
from taskgui.core.status import RunId, RunResult
from taskgui.core.task import Command
from taskgui.runtime.runner import DEFAULT_OUTPUT_INTERVAL, CommandRunner, RunReport

log = logging.getLogger(__name__)


class _Relay(QObject):
    """Carries results from pool threads to the pool's thread."""

    started = Signal(int, int)
    output = Signal(int, str)
    completed = Signal(int, object)


class _RunJob(QRunnable):
    def __init__(
        self,
        run_id: RunId,
        relay: _Relay,
        gate: threading.Event | None,
        start_at: float | None,
    ) -> None:
        super().__init__()
        self.setAutoDelete(False)  # the pool keeps the Python object alive until done
        self._run_id = run_id
        self.runner: CommandRunner | None = None  # set before the job is started
        self._relay = relay
        self._gate = gate
        self._start_at = start_at

    def run(self) -> None:
        # Nothing may escape QRunnable.run: a failure here becomes the run's result.
        try:
            assert self.runner is not None
            report = self.runner.run(
                on_started=self._on_started, gate=self._gate, start_at=self._start_at
            )
        except Exception as error:  # pragma: no cover - the runner reports, not raises
            log.exception("worker failed while running run %s", self._run_id)
            report = RunReport(
                outcome=RunOutcome.FAILED,
                result=RunResult(error=f"internal error in taskgui: {error}"),
                duration=0.0,
            )
        self._relay.completed.emit(self._run_id, report)

    def _on_started(self, pid: int) -> None:
        self._relay.started.emit(self._run_id, pid)

    def on_output(self, text: str) -> None:
        self._relay.output.emit(self._run_id, text)


class WorkerPool(QObject):
    """At most ``size`` commands at once; the dispatcher decides which."""

    run_started = Signal(int, int)
    run_output = Signal(int, str)
    run_completed = Signal(int, object)

    def __init__(
        self,
        size: int,
        monotonic: Callable[[], float],
        *,
        kill_grace: float = 5.0,
        output_interval: float = DEFAULT_OUTPUT_INTERVAL,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        if size < 1:
            raise ValueError("the worker pool needs at least one worker")
        self._monotonic = monotonic
        self._kill_grace = kill_grace
        self._output_interval = output_interval
        self._threads = QThreadPool(self)
        self._threads.setMaxThreadCount(size)
        # Keep idle threads: by default they expire after 30 s, and a task due after a
        # longer wait would then pay for a new OS thread (~0.2 ms) before it starts.
        self._threads.setExpiryTimeout(-1)
        self._relay = _Relay(self)
        self._relay.started.connect(self.run_started)
        self._relay.output.connect(self._on_relay_output)
        self._relay.completed.connect(self._on_relay_completed)
        self._jobs: dict[RunId, tuple[_RunJob, CommandRunner]] = {}

    @property
    def size(self) -> int:
        return self._threads.maxThreadCount()

    @property
    def busy(self) -> int:
        return len(self._jobs)

    @property
    def free(self) -> int:
        return max(0, self.size - len(self._jobs))

    def resize(self, size: int) -> None:
        if size < 1:
            raise ValueError("the worker pool needs at least one worker")
        self._threads.setMaxThreadCount(size)

    def submit(
        self,
        run_id: RunId,
        command: Command,
        *,
        timeout: float | None,
        extra_env: Mapping[str, str] | None = None,
        gate: threading.Event | None = None,
        start_at: float | None = None,
    ) -> None:
        """Hand a run to a worker thread; with ``gate``, it starts once the gate is set,
        and with ``start_at`` (monotonic) not before that moment."""
        job = _RunJob(run_id, self._relay, gate, start_at)
        runner = CommandRunner(
            command,
            timeout=timeout,
            monotonic=self._monotonic,
            extra_env=extra_env,
            kill_grace=self._kill_grace,
            on_output=job.on_output,
            output_interval=self._output_interval,
        )
        job.runner = runner
        self._jobs[run_id] = (job, runner)
        self._threads.start(job)

    def cancel(self, run_id: RunId) -> bool:
        """Stop a run's process group (SIGTERM, then SIGKILL). False if not running."""
        entry = self._jobs.get(run_id)
        if entry is None:
            return False
        entry[1].cancel()
        return True

    def withdraw(self, run_id: RunId) -> bool:
        """Cancel a run only if it has not begun starting its process (it waits for
        its gate or start time): then it ends cancelled having started nothing, and
        True. False if unknown or already starting (``cancel`` stops those)."""
        entry = self._jobs.get(run_id)
        return entry is not None and entry[1].cancel_unless_begun()

    def cancel_all(self) -> None:
        for _, runner in list(self._jobs.values()):
            runner.cancel()

    def wait_for_done(self, msecs: int) -> bool:
        """Block until every worker thread is idle (for shutdown and tests only)."""
        return bool(self._threads.waitForDone(msecs))

    def _on_relay_output(self, run_id: int, text: str) -> None:
        if run_id in self._jobs:  # not a late report of a run that already ended
            self.run_output.emit(run_id, text)

    def _on_relay_completed(self, run_id: int, report: object) -> None:
        self._jobs.pop(run_id, None)
        self.run_completed.emit(run_id, report)
