"""Run one task's command as a child process and say how it ended.

Pure stdlib on purpose: the worker pool calls :meth:`CommandRunner.run` from one of
its worker threads, and keeping Qt out of here means the hard part (process groups,
timeouts, cancel, bounded output) can be tested with real processes and no event loop.

Why it is built the way it is:

- The command gets its own session and process group, so SIGTERM/SIGKILL on timeout or
  cancel reach everything it started, not just the shell; and a mark in its
  environment, so they also reach what left the group with ``setsid`` (see
  ``taskgui.system.process_tree``).
- One thread does all the waiting with ``poll`` on the output pipe, a self-pipe
  that :meth:`~CommandRunner.cancel` writes to, and a pidfd that becomes readable when
  the process exits. Nothing polls on a timer unless pidfds are unavailable.
- Only the thread inside :meth:`~CommandRunner.run` sends signals and reaps. ``cancel``
  merely asks, so a signal can never go to a process id the kernel has already reused.
- A run can be handed over before its time with a start time (``start_at``): the
  worker thread then waits for it on its own, so the moment the command starts costs
  a timer wake-up on that thread instead of a hand-off from another one. The wait
  ends early only for a cancel, and then nothing is started.
- Output is kept as a bounded tail: a command printing gigabytes costs at most about
  twice the cap in memory. While it runs, the tail so far is handed to ``on_output``
  at most every ``output_interval`` seconds (and once more after a quiet spell), so a
  view can show a running command's output without ever waiting for this thread.
- Anything the command does (fail to start, exit non-zero, hang) comes back as a
  :class:`RunReport`, never as an exception: the caller records runs, it does not debug them.
"""

from __future__ import annotations

import contextlib
import enum
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta

from taskgui.core.defaults import KILL_GRACE
from taskgui.core.duration import format_duration
from taskgui.core.states import RunOutcome
from taskgui.core.status import RunResult
from taskgui.core.task import Command
from taskgui.runtime.command_process import (
    StartError,
    argv_of,
    describe_exit,
    start_process,
    working_directory,
)
from taskgui.runtime.output_tail import DEFAULT_OUTPUT_CAP, OutputReports, TailBuffer
from taskgui.runtime.run_wait import RunWatch, earliest, thread_wake_pipe
from taskgui.system.process_tree import RUN_MARK, ProcessTree, new_mark, open_pidfd

DEFAULT_KILL_GRACE = KILL_GRACE  # core.defaults: the one definition
DEFAULT_OUTPUT_INTERVAL = 0.5  # seconds between two reports of the output so far

_EXIT_POLL = 0.05  # how often to look for an exit when there is no pidfd to wait on
_GROUP_POLL_FIRST, _GROUP_POLL_MAX = 0.01, 0.25  # waiting for a run's processes to end
_DRAIN_WINDOW = 0.1  # how long to keep reading after the command exited


@dataclass(frozen=True, slots=True, kw_only=True)
class RunReport:
    """What a finished run came to: how it ended, what it printed, how long it took."""

    outcome: RunOutcome
    result: RunResult
    duration: float  # seconds, from just before the process started until it was reaped
    # The runner's monotonic clock just before the process started (None: it never
    # did): when the run really began, whenever the report is read.
    began: float | None = None


class _Stop(enum.Enum):
    """Why the runner ended the process itself."""

    TIMEOUT = enum.auto()
    CANCEL = enum.auto()


class CommandRunner:
    """Runs one command once: start, wait (with timeout and cancel), capture, report.

    ``monotonic`` is injected (the caller passes ``clock.monotonic``) because only
    ``core/clock.py`` may read the system clocks. ``extra_env`` is laid over the
    process and command environment; the worker passes ``TASKGUI_TASK_ID`` and
    ``TASKGUI_ATTEMPT`` there.
    """

    def __init__(
        self,
        command: Command,
        *,
        timeout: float | None,
        monotonic: Callable[[], float],
        extra_env: Mapping[str, str] | None = None,
        output_cap: int = DEFAULT_OUTPUT_CAP,
        kill_grace: float = DEFAULT_KILL_GRACE,
        on_output: Callable[[str], None] | None = None,
        output_interval: float = DEFAULT_OUTPUT_INTERVAL,
    ) -> None:
        if timeout is not None and not timeout > 0:
            raise ValueError(f"the timeout must be positive or None, not {timeout!r}")
        if not kill_grace >= 0:
            raise ValueError(f"the kill grace cannot be negative, not {kill_grace!r}")
        if output_cap < 0:
            raise ValueError(f"the output cap cannot be negative, not {output_cap!r}")
        if not output_interval > 0:
            raise ValueError(f"the output interval must be positive, not {output_interval!r}")
        self._on_output = on_output
        self._output_interval = output_interval
        self._command = command
        self._timeout = timeout
        self._monotonic = monotonic
        self._extra_env = dict(extra_env or {})
        self._output_cap = output_cap
        self._kill_grace = kill_grace
        self._lock = threading.Lock()  # guards the next four fields
        # Wakes a run waiting for its start time when it is cancelled. Made by such a
        # run alone: most runs start at once, and the runner is made on the scheduler's
        # own thread, where every microsecond of a run counts (a Condition is ~3 µs).
        self._changed: threading.Condition | None = None
        self._cancelled = False
        self._run_called = False
        self._begun = False  # past its start time: the process is being started
        self._wake_w: int | None = None
        self._pid: int | None = None
        # In the command's environment (see process_tree): the scheduler passes the
        # run's own (``run_mark``), so that a later start can find it after a crash.
        self._mark = self._extra_env.get(RUN_MARK) or new_mark()

    @property
    def pid(self) -> int | None:
        """The child's pid (also its process group id) once started, else None."""
        return self._pid

    def cancel(self) -> None:
        """Ask the run to stop. Safe from any thread, any number of times, at any moment.

        Only sets a flag and wakes the waiting thread; that thread does the killing.
        """
        with self._lock:
            self._cancel_locked()

    def cancel_unless_begun(self) -> bool:
        """Cancel only a run that has not begun starting its process (it waits for its
        gate or its start time, or was never run): True if it will start nothing; False
        if its process is already being started (it then runs on)."""
        with self._lock:
            if self._begun:
                return False
            self._cancel_locked()
            return True

    def _cancel_locked(self) -> None:
        if not self._cancelled:
            self._cancelled = True
            if self._changed is not None:
                self._changed.notify_all()
            if self._wake_w is not None:
                with contextlib.suppress(BlockingIOError):
                    os.write(self._wake_w, b"\0")

    def run(
        self,
        on_started: Callable[[int], None] | None = None,
        gate: threading.Event | None = None,
        start_at: float | None = None,
    ) -> RunReport:
        """Run the command to the end and report how it went. Blocks; call once.

        ``on_started(pid)`` is called from this thread as soon as the process exists
        (the worker relays it, so the UI can show the pid). If it raises, the process
        group is killed and reaped before the exception propagates.

        With a ``gate``, nothing starts until the gate is set: the scheduler hands the
        run over first and commits it to the database meanwhile, so the thread's wake-up
        overlaps the commit instead of following it. To abandon a gated run, cancel it
        and then set the gate.

        With ``start_at`` (on the injected monotonic clock), nothing starts before that
        moment: this thread waits for it itself. A cancel meanwhile ends the run at once
        as cancelled, without a process.
        """
        if gate is not None:
            gate.wait()
        with self._lock:
            if self._run_called:
                raise RuntimeError("a CommandRunner runs its command only once")
            self._run_called = True
            if start_at is not None:
                self._wait_until(start_at)
            if self._cancelled:
                return _report(RunOutcome.CANCELLED, RunResult(error="cancelled"), 0.0)
            self._begun = True
            try:
                wake = thread_wake_pipe()
            except OSError as error:  # out of descriptors: a run that could not start
                result = RunResult(error=f"could not start the command: {error}")
                return _report(RunOutcome.FAILED, result, 0.0)
            # Set before the process exists, so a cancel() racing with the start is
            # never lost: either it is seen here, or it writes to this pipe.
            self._wake_w = wake.write_fd
        try:
            return self._run(wake.read_fd, on_started)
        finally:
            with self._lock:
                self._wake_w = None  # from now on a cancel writes to no thread's pipe

    def _wait_until(self, start_at: float) -> None:
        """Until ``start_at`` or a cancel; called with the lock held.

        A condition variable rather than the poll: its timed wait has sub-millisecond
        resolution (poll counts whole milliseconds and rounds up), and it cannot run
        out of descriptors.
        """
        changed = self._changed = threading.Condition(self._lock)
        while not self._cancelled:
            remaining = start_at - self._monotonic()
            if remaining <= 0:
                return
            changed.wait(remaining)

    def _run(self, wake_r: int, on_started: Callable[[int], None] | None) -> RunReport:
        started = self._monotonic()
        try:
            argv = argv_of(self._command)
            cwd = working_directory(self._command)
            proc, out_fd = start_process(
                self._command, argv, cwd, {**self._extra_env, RUN_MARK: self._mark}
            )
        except StartError as error:
            result = RunResult(error=str(error))
            return _report(RunOutcome.FAILED, result, self._monotonic() - started)
        self._pid = proc.pid
        tree = ProcessTree(proc.pid, self._mark)
        tail = TailBuffer(self._output_cap)
        try:
            if on_started is not None:
                on_started(proc.pid)
            stop, ended = self._supervise(
                proc, tree, out_fd=out_fd, wake_r=wake_r, started=started, tail=tail
            )
        finally:
            if proc.returncode is None:  # on_started raised, or a bug here: never leak
                tree.signal(signal.SIGKILL)
                proc.wait()
            os.close(out_fd)
        return _report(*self._conclude(proc.returncode, stop, tail), ended - started, began=started)

    # --- waiting --------------------------------------------------------------------

    def _supervise(
        self,
        proc: subprocess.Popen[bytes],
        tree: ProcessTree,
        *,
        out_fd: int,
        wake_r: int,
        started: float,
        tail: TailBuffer,
    ) -> tuple[_Stop | None, float]:
        """Wait for the process, enforcing timeout and cancel; return why it stopped.

        Three phases: until the group leader is reaped; then, if the runner stopped it
        and has not yet sent SIGKILL, until the rest of its processes (the group and
        those that left it) are gone or the grace runs out; then a short drain of
        output already written.
        """
        pidfd = open_pidfd(proc.pid)
        watch = RunWatch(out_fd, wake_r, pidfd, tail)
        try:
            stop, kill_at = self._wait_for_leader(proc, tree, watch, started)
            ended = self._monotonic()
            # A readable pidfd and the wake pipe would now only spin the loops below.
            watch.forget_wake_and_exit()
            if kill_at is not None:
                self._wait_for_tree(tree, watch, kill_at)
            self._drain(watch)
        finally:
            if pidfd is not None:
                os.close(pidfd)
        return stop, ended

    def _wait_for_leader(
        self, proc: subprocess.Popen[bytes], tree: ProcessTree, watch: RunWatch, started: float
    ) -> tuple[_Stop | None, float | None]:
        """Until the process exits: read output, and stop it on timeout or cancel.

        Returns why the runner stopped it (if it did) and when SIGKILL is due, None
        once it has been sent.

        The common run (no timeout, no cancel, a few lines of output) is one or two
        waits: the process is looked at (``waitpid``) only once its pidfd says it has
        exited, and the clock is read only when something is timed. Each step skipped
        here is a few microseconds, and every run pays for all of them while holding
        the GIL the scheduler's other threads are waiting for.
        """
        deadline = None if self._timeout is None else started + self._timeout
        reports = (
            None
            if self._on_output is None
            else OutputReports(watch.tail, self._on_output, self._output_interval)
        )
        stop: _Stop | None = None
        kill_at: float | None = None
        exited = watch.exit_fd is None  # without a pidfd: look after every wait
        while not (exited and proc.poll() is not None):
            # Read once a turn, without the lock: the flag only ever turns True, and
            # cancel() writes to the wake pipe after setting it, so a turn never misses
            # it. Once: a cancel landing between two reads would stop the run with the
            # clock unread, its SIGKILL due at kill_grace after 0.0, that is at once.
            cancelled = self._cancelled
            timed = deadline is not None or kill_at is not None or reports is not None
            now = self._monotonic() if timed or cancelled else 0.0
            if stop is None:
                if cancelled:
                    stop = _Stop.CANCEL
                elif deadline is not None and now >= deadline:
                    stop = _Stop.TIMEOUT
                if stop is not None:
                    tree.signal(signal.SIGTERM)
                    kill_at = now + self._kill_grace
            if kill_at is not None and now >= kill_at:
                tree.signal(signal.SIGKILL)
                kill_at = None
            timeout: float | None = None
            if watch.exit_fd is None:
                timeout = _EXIT_POLL
            if stop is None and deadline is not None:
                timeout = earliest(timeout, deadline - now)
            if kill_at is not None:
                timeout = earliest(timeout, kill_at - now)
            if reports is not None:
                reports.report(now)
                timeout = earliest(timeout, reports.due_in(now))
            exited = watch.wait(timeout) or watch.exit_fd is None
        return stop, kill_at

    def _wait_for_tree(self, tree: ProcessTree, watch: RunWatch, kill_at: float) -> None:
        """The leader answered SIGTERM: give the rest of the run's processes the same
        grace, then make sure nothing of the command survives it.

        Polls, but only here: there is no descriptor to wait on for a whole group. The
        interval backs off because each look scans /proc.
        """
        interval = _GROUP_POLL_FIRST
        while tree.running():
            now = self._monotonic()
            if now >= kill_at:
                tree.signal(signal.SIGKILL)
                return
            watch.wait(min(kill_at - now, interval))
            interval = min(interval * 2, _GROUP_POLL_MAX)

    def _drain(self, watch: RunWatch) -> None:
        """Read what is already in the pipe, briefly: a background child may hold it
        open for ever, and the run is over when its main process is."""
        if not watch.output_open:
            return
        drain_until = self._monotonic() + _DRAIN_WINDOW
        while watch.output_open:
            remaining = drain_until - self._monotonic()
            if remaining <= 0:
                return
            watch.wait(remaining)

    # --- concluding -----------------------------------------------------------------

    def _conclude(
        self, code: int | None, stop: _Stop | None, tail: TailBuffer
    ) -> tuple[RunOutcome, RunResult]:
        output = tail.text()
        if stop is _Stop.TIMEOUT:
            assert self._timeout is not None
            limit = format_duration(timedelta(seconds=self._timeout))
            return RunOutcome.TIMED_OUT, RunResult(
                exit_code=code, error=f"timed out after {limit}", output=output
            )
        if stop is _Stop.CANCEL:
            return RunOutcome.CANCELLED, RunResult(exit_code=code, error="cancelled", output=output)
        if code == 0:
            return RunOutcome.SUCCEEDED, RunResult(exit_code=0, output=output)
        return RunOutcome.FAILED, RunResult(
            exit_code=code, error=describe_exit(code, self._command.use_shell), output=output
        )


def _report(
    outcome: RunOutcome, result: RunResult, duration: float, *, began: float | None = None
) -> RunReport:
    return RunReport(outcome=outcome, result=result, duration=max(0.0, duration), began=began)
