"""CommandRunner against real processes: outcomes, output, timeouts, cancel, no leaks.

Nothing is mocked: the point of the runner is how it behaves with real process groups,
pipes and signals. Every test keeps its commands short-lived, and those that start
processes meant to outlive a timeout check afterwards that none survived.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from taskgui.core.errors import InvalidTaskError
from taskgui.core.states import RunOutcome
from taskgui.core.status import RunResult
from taskgui.core.task import Command
from taskgui.runtime.output_tail import TailBuffer
from taskgui.runtime.run_wait import thread_wake_pipe
from taskgui.runtime.runner import CommandRunner, RunReport
from tests.helpers.processes import fresh_python

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc; Linux only")

CAP = 64 * 1024


def run(line: str, **kwargs: object) -> RunReport:
    """Run a shell command line with the real monotonic clock."""
    names = ("use_shell", "cwd", "env", "shell_path")
    command_fields = {k: kwargs.pop(k) for k in names if k in kwargs}
    runner_kwargs: dict[str, object] = {"timeout": None, **kwargs}
    runner = CommandRunner(
        Command(line=line, **command_fields),  # type: ignore[arg-type]
        monotonic=time.monotonic,
        **runner_kwargs,  # type: ignore[arg-type]
    )
    return runner.run()


def wait_until(predicate: Callable[[], bool], timeout: float = 3.0) -> bool:
    """Poll ``predicate`` until it holds; processes end asynchronously to the test."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, process group) of a process, or None when it no longer exists."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text.rpartition(")")[2].split()
    return fields[0], int(fields[2])


def is_gone(pid: int) -> bool:
    """True when ``pid`` has exited. A zombie counts: it runs nothing, and an orphan's
    zombie is for init to reap, which in a container may be slow or never."""
    stat = _stat(pid)
    return stat is None or stat[0] in "ZX"


def live_members(pgid: int) -> list[int]:
    """Processes of group ``pgid`` that are still running (zombies excluded)."""
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None and stat[1] == pgid and stat[0] not in "ZX":
                members.append(int(entry))
    return members


def read_pid(path: Path, timeout: float = 3.0) -> int:
    assert wait_until(lambda: path.exists() and path.read_text().strip() != "", timeout)
    return int(path.read_text())


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


# --- outcomes --------------------------------------------------------------------------


def test_success_captures_output() -> None:
    report = run("echo hello; printf 'world'")
    assert report.outcome is RunOutcome.SUCCEEDED
    assert report.result.exit_code == 0
    assert report.result.error is None
    assert report.result.output == "hello\nworld"
    assert 0 <= report.duration < 5


def test_non_zero_exit_fails_with_its_status() -> None:
    report = run("echo before; exit 3")
    assert report.outcome is RunOutcome.FAILED
    assert report.result.exit_code == 3
    assert report.result.error == "exit status 3"
    assert report.result.output == "before\n"


def test_stderr_is_captured_in_order_with_stdout() -> None:
    report = run("echo out; echo err >&2; echo out2")
    assert report.result.output == "out\nerr\nout2\n"


def test_shell_command_not_found_says_so() -> None:
    report = run("taskgui-no-such-command-xyz --flag")
    assert report.outcome is RunOutcome.FAILED
    assert report.result.exit_code == 127
    assert report.result.error == "exit status 127 (command not found)"
    assert "taskgui-no-such-command-xyz" in report.result.output


BASH_ONLY = '[[ 1 == 1 ]] && echo double-brackets; echo out &>> "$LOG"; echo $SHELL'


@pytest.mark.skipif(not os.path.exists("/bin/bash"), reason="needs /bin/bash")
def test_a_command_runs_with_the_shell_it_names(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    report = run(BASH_ONLY, shell_path="/bin/bash", env={"LOG": str(log)})
    assert report.outcome is RunOutcome.SUCCEEDED, report.result
    assert report.result.output == "double-brackets\n/bin/bash\n"  # SHELL set, as cron does
    assert log.read_text() == "out\n"
    # The same line under /bin/sh (dash on Debian) is not what was meant.
    plain = run(BASH_ONLY, env={"LOG": str(log)})
    assert "double-brackets" not in plain.result.output or os.path.realpath("/bin/sh").endswith(
        "bash"
    )


def test_a_shell_that_does_not_exist_fails_without_starting() -> None:
    report = run("echo hi", shell_path="/nonexistent/bash")
    assert report.outcome is RunOutcome.FAILED
    assert report.result.exit_code is None
    assert "/nonexistent/bash" in (report.result.error or "")


def test_shell_not_executable_says_so(tmp_path: Path) -> None:
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\necho ran\n")
    script.chmod(0o644)
    report = run(shlex.quote(str(script)))
    assert report.outcome is RunOutcome.FAILED
    assert report.result.error == "exit status 126 (not executable)"


def test_killed_by_a_signal_from_outside_names_the_signal() -> None:
    report = run("kill -KILL $$")
    assert report.outcome is RunOutcome.FAILED
    assert report.result.exit_code == -signal.SIGKILL
    assert report.result.error == "killed by signal SIGKILL"


def test_stdin_is_empty() -> None:
    report = run("cat; echo done", timeout=5.0)
    assert report.outcome is RunOutcome.SUCCEEDED
    assert report.result.output == "done\n"


# --- environment and working directory -------------------------------------------------


def test_command_env_and_extra_env_are_applied_over_the_process_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TASKGUI_TEST_INHERITED", "inherited")
    monkeypatch.setenv("TASKGUI_TEST_OVERRIDDEN", "from process")
    report = run(
        'printf "%s|%s|%s|%s" "$TASKGUI_TEST_INHERITED" "$TASKGUI_TEST_OVERRIDDEN" '
        '"$GREETING" "$TASKGUI_TASK_ID"',
        env=(("GREETING", "from command"), ("TASKGUI_TEST_OVERRIDDEN", "from command")),
        extra_env={"TASKGUI_TASK_ID": "42", "GREETING": "from extra"},
    )
    assert report.result.output == "inherited|from command|from extra|42"


def test_cwd_is_applied(tmp_path: Path) -> None:
    report = run("pwd -P", cwd=str(tmp_path))
    assert report.result.output.strip() == str(tmp_path.resolve())


def test_default_cwd_is_home_as_cron_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    report = run("pwd -P")
    assert report.result.output.strip() == str(tmp_path.resolve())


def test_relative_cwd_is_relative_to_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path))
    report = run("pwd -P", cwd="sub")
    assert report.result.output.strip() == str((tmp_path / "sub").resolve())


def test_missing_cwd_fails_without_starting(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    runner = CommandRunner(
        Command(line="true", cwd=str(missing)), timeout=None, monotonic=time.monotonic
    )
    report = runner.run()
    assert report.outcome is RunOutcome.FAILED
    assert report.result.error == f"working directory {missing} does not exist"
    assert report.result.exit_code is None
    assert runner.pid is None


def test_cwd_that_is_a_file_fails(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("")
    report = run("true", cwd=str(a_file))
    assert report.outcome is RunOutcome.FAILED
    assert report.result.error == f"working directory {a_file} is not a directory"


# --- argv mode ---------------------------------------------------------------------------


def test_argv_mode_keeps_quoting_and_does_not_expand() -> None:
    report = run("/bin/echo 'a  b' c $HOME", use_shell=False)
    assert report.outcome is RunOutcome.SUCCEEDED
    assert report.result.output == "a  b c $HOME\n"


def test_argv_mode_program_not_found() -> None:
    report = run("taskgui-no-such-program-xyz arg", use_shell=False)
    assert report.outcome is RunOutcome.FAILED
    assert report.result.error == "command not found: taskgui-no-such-program-xyz"
    assert report.result.exit_code is None


def test_argv_mode_unbalanced_quote_is_refused_before_any_run() -> None:
    """A line that cannot be split never becomes a task (it used to fail every run,
    its retries spent, with "cannot split the command line")."""
    with pytest.raises(InvalidTaskError, match=r"cannot be split into words \(no closing"):
        Command(line="echo 'unbalanced", use_shell=False)


def test_argv_mode_permission_denied(tmp_path: Path) -> None:
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\necho ran\n")
    script.chmod(0o644)
    report = run(shlex.quote(str(script)), use_shell=False)
    assert report.outcome is RunOutcome.FAILED
    assert report.result.error == f"permission denied: {script} cannot be executed"


def test_argv_mode_missing_interpreter_is_not_reported_as_missing_program(
    tmp_path: Path,
) -> None:
    script = tmp_path / "script"
    script.write_text("#!/taskgui/no/such/interpreter\n")
    script.chmod(0o755)
    report = run(shlex.quote(str(script)), use_shell=False)
    assert report.outcome is RunOutcome.FAILED
    assert report.result.error is not None
    assert "interpreter" in report.result.error


# --- output capping ----------------------------------------------------------------------


def test_output_flood_keeps_only_the_tail_in_bounded_memory() -> None:
    total = 50_000_000
    tracemalloc.start()
    try:
        started = time.monotonic()
        report = run(f"yes | head -c {total}", timeout=30.0, output_cap=CAP)
        elapsed = time.monotonic() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.outcome is RunOutcome.SUCCEEDED
    prefix = f"[... {total - CAP} bytes of earlier output cut ...]\n"
    assert report.result.output == prefix + "y\n" * (CAP // 2)
    assert peak < 2_000_000, f"peak Python memory {peak} bytes while capturing {total} bytes"
    assert elapsed < 10


def test_output_under_the_cap_is_kept_whole() -> None:
    report = run("head -c 1000 /dev/zero | tr '\\0' x", output_cap=1000)
    assert report.result.output == "x" * 1000


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    report = run("printf 'ok \\377\\376 end'")
    assert report.outcome is RunOutcome.SUCCEEDED
    assert report.result.output == "ok \ufffd\ufffd end"


def test_tail_buffer_holds_at_most_twice_the_cap() -> None:
    tail = TailBuffer(100)
    for index in range(1000):
        tail.feed(bytes([48 + index % 10]) * 37)
        assert tail.held <= 2 * 100 + 37
    text = tail.text()
    assert text.startswith("[... 36900 bytes of earlier output cut ...]\n")
    assert len(text.partition("\n")[2]) == 100


def test_tail_buffer_does_not_start_inside_a_character() -> None:
    tail = TailBuffer(4)
    tail.feed("aaé€".encode())  # 2 + 2 + 3 bytes: the last 4 start in the middle of é
    assert tail.text() == "[... 4 bytes of earlier output cut ...]\n€"


def test_tail_buffer_with_zero_cap_keeps_nothing_but_the_count() -> None:
    tail = TailBuffer(0)
    tail.feed(b"abc")
    assert tail.held == 0
    assert tail.text() == "[... 3 bytes of earlier output cut ...]\n"


# --- timeout -----------------------------------------------------------------------------


@pytest.mark.parametrize("days", [25, 36_525])
def test_a_timeout_longer_than_epoll_can_wait_still_lets_the_run_finish(days: int) -> None:
    # epoll refuses waits over about 24.8 days: every run of such a task used to fail
    # with "OverflowError: timeout is too large" (timeouts go up to 100 years).
    report = run("sleep 0.1; echo done", timeout=days * 86_400.0)

    assert report.outcome is RunOutcome.SUCCEEDED, report.result.error
    assert report.result.output == "done\n"


def test_timeout_terminates_with_sigterm_without_waiting_for_the_grace() -> None:
    report = run("sleep 30", timeout=0.3, kill_grace=10.0)
    assert report.outcome is RunOutcome.TIMED_OUT
    assert report.result.error == "timed out after 300ms"
    assert report.result.exit_code == -signal.SIGTERM
    assert 0.3 <= report.duration < 3


def test_timeout_kills_a_command_that_ignores_sigterm_and_its_children(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    runner = CommandRunner(
        Command(line=f"trap '' TERM; sleep 30 & echo $! > {pidfile}; echo waiting; wait"),
        timeout=0.3,
        kill_grace=0.3,
        monotonic=time.monotonic,
    )
    report = runner.run()
    assert report.outcome is RunOutcome.TIMED_OUT
    assert report.result.exit_code == -signal.SIGKILL
    assert report.result.output == "waiting\n"
    assert 0.6 <= report.duration < 3
    grandchild = read_pid(pidfile)
    assert wait_until(lambda: is_gone(grandchild))
    assert runner.pid is not None
    assert wait_until(lambda: not live_members(runner.pid or 0))


def test_children_that_ignore_sigterm_die_after_the_grace_even_if_the_leader_exits(
    tmp_path: Path,
) -> None:
    pidfile = tmp_path / "pid"
    runner = CommandRunner(
        Command(line=f"(trap '' TERM; exec sleep 30) & echo $! > {pidfile}; wait"),
        timeout=0.3,
        kill_grace=0.3,
        monotonic=time.monotonic,
    )
    report = runner.run()
    assert report.outcome is RunOutcome.TIMED_OUT
    assert report.result.exit_code == -signal.SIGTERM  # the shell itself obeyed
    grandchild = read_pid(pidfile)
    assert wait_until(lambda: is_gone(grandchild))
    assert wait_until(lambda: not live_members(runner.pid or 0))


# --- processes that left the group (setsid) ------------------------------------------


def escaping(line: str, **kwargs: object) -> CommandRunner:
    """A runner for ``line``, with a short timeout and grace unless told otherwise."""
    settings: dict[str, object] = {"timeout": 0.3, "kill_grace": 0.3, **kwargs}
    return CommandRunner(Command(line=line), monotonic=time.monotonic, **settings)  # type: ignore[arg-type]


@contextlib.contextmanager
def reaped_at_the_end(pidfile: Path) -> Iterator[None]:
    """Kill whatever pid ``pidfile`` names once the test is over, whatever it found."""
    try:
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(pidfile.read_text()), signal.SIGKILL)


def test_timeout_stops_a_process_that_left_the_group_with_setsid(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    runner = escaping(f"setsid sleep 30 & echo $! > {pidfile}; wait")
    with reaped_at_the_end(pidfile):
        report = runner.run()
        assert report.outcome is RunOutcome.TIMED_OUT
        assert wait_until(lambda: is_gone(read_pid(pidfile)))


def test_cancel_stops_a_process_that_left_the_group_and_its_parent(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    # A daemon's double fork: the subshell exits at once, so the escaped sleep is
    # re-parented to init and nothing of the run's group leads to it any more.
    runner = escaping(f"(setsid sleep 30 & echo $! > {pidfile}); sleep 30", timeout=None)
    with reaped_at_the_end(pidfile):
        worker = threading.Thread(target=runner.run)
        worker.start()
        escaped = read_pid(pidfile)
        # $! is known before the child has run setsid(): wait for it to have done so.
        wait_until(lambda: (_stat(escaped) or ("", 0))[1] == escaped)
        stat = _stat(escaped)
        assert stat is not None and stat[1] == escaped != runner.pid  # a group of its own
        runner.cancel()
        worker.join(10)
        assert not worker.is_alive()
        assert wait_until(lambda: is_gone(escaped))


def test_an_escaped_process_that_ignores_sigterm_is_killed_after_the_grace(
    tmp_path: Path,
) -> None:
    pidfile = tmp_path / "pid"
    inner = f"trap '' TERM; echo $$ > {pidfile}; exec sleep 30"
    runner = escaping(f"setsid sh -c {shlex.quote(inner)} & wait")
    with reaped_at_the_end(pidfile):
        report = runner.run()
        assert report.outcome is RunOutcome.TIMED_OUT
        escaped = read_pid(pidfile)
        assert wait_until(lambda: is_gone(escaped))


def test_a_run_that_ends_by_itself_leaves_what_it_detached_on_purpose(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    runner = escaping(f"setsid sleep 30 > /dev/null 2>&1 & echo $! > {pidfile}", timeout=None)
    with reaped_at_the_end(pidfile):
        report = runner.run()
        assert report.outcome is RunOutcome.SUCCEEDED
        assert not is_gone(read_pid(pidfile))  # as cron does: only a stop stops it


def test_every_run_carries_a_mark_of_its_own() -> None:
    marks = {run("echo $TASKGUI_RUN_MARK").result.output.strip() for _ in range(2)}
    assert len(marks) == 2
    assert all(len(mark) == 32 and int(mark, 16) >= 0 for mark in marks)


# --- cancel ------------------------------------------------------------------------------


def test_cancel_from_another_thread_stops_the_whole_group_quickly(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    runner = CommandRunner(
        Command(line=f"sleep 30 & echo $! > {pidfile}; wait"),
        timeout=None,
        kill_grace=10.0,
        monotonic=time.monotonic,
    )
    reports: list[RunReport] = []
    worker = threading.Thread(target=lambda: reports.append(runner.run()))
    worker.start()
    grandchild = read_pid(pidfile)
    cancelled_at = time.monotonic()
    runner.cancel()
    runner.cancel()  # idempotent
    worker.join(timeout=5)
    assert not worker.is_alive()
    assert time.monotonic() - cancelled_at < 2
    [report] = reports
    assert report.outcome is RunOutcome.CANCELLED
    assert report.result.error == "cancelled"
    assert report.result.exit_code == -signal.SIGTERM
    assert wait_until(lambda: is_gone(grandchild))
    assert wait_until(lambda: not live_members(runner.pid or 0))


def test_cancel_a_command_that_ignores_sigterm_uses_sigkill_after_the_grace() -> None:
    runner = CommandRunner(
        Command(line="trap '' TERM; echo ready; sleep 30"),
        timeout=None,
        kill_grace=0.2,
        monotonic=time.monotonic,
    )
    threading.Timer(0.2, runner.cancel).start()
    report = runner.run()
    assert report.outcome is RunOutcome.CANCELLED
    assert report.result.exit_code == -signal.SIGKILL
    assert report.result.output == "ready\n"
    assert wait_until(lambda: not live_members(runner.pid or 0))


class _CancelledWhileLooking(CommandRunner):
    """A runner whose cancel lands just after the wait loop first looks at the flag,
    as a GIL switch to the canceller's thread there would make it."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        self._flag = False
        self._looks = 0
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    @property
    def _cancelled(self) -> bool:
        value = self._flag
        self._looks += 1
        if self._looks == 3 and self._begun:  # the loop's first turn, with the process up
            self._cancel_locked()
        return value

    @_cancelled.setter
    def _cancelled(self, value: bool) -> None:
        self._flag = value


def test_a_cancel_landing_while_the_loop_looks_still_gives_the_kill_grace() -> None:
    """The grace is measured on the clock: a cancel between two looks at the flag had
    the stop time 0.0 (the clock unread), so SIGKILL went at once."""
    runner = _CancelledWhileLooking(
        Command(line="trap '' TERM; echo ready; sleep 30"),
        timeout=None,
        kill_grace=1.0,
        monotonic=time.monotonic,
    )
    report = runner.run()
    assert report.outcome is RunOutcome.CANCELLED
    assert report.duration >= 1.0  # the grace, then SIGKILL (TERM is ignored)
    assert report.result.exit_code == -signal.SIGKILL


def test_cancel_before_run_starts_nothing() -> None:
    runner = CommandRunner(
        Command(line="echo should not run"), timeout=None, monotonic=time.monotonic
    )
    runner.cancel()
    report = runner.run()
    assert report.outcome is RunOutcome.CANCELLED
    assert report.result.error == "cancelled"
    assert report.result.output == ""
    assert report.duration == 0.0
    assert runner.pid is None


def test_cancel_after_run_changes_nothing_and_a_runner_runs_once() -> None:
    runner = CommandRunner(Command(line="echo done"), timeout=None, monotonic=time.monotonic)
    report = runner.run()
    runner.cancel()
    assert report.outcome is RunOutcome.SUCCEEDED
    with pytest.raises(RuntimeError):
        runner.run()


# --- start time ---------------------------------------------------------------------------


def test_a_start_time_is_waited_for_before_anything_starts() -> None:
    runner = CommandRunner(Command(line="true"), timeout=None, monotonic=time.monotonic)
    start_at = time.monotonic() + 0.2
    spawned: list[float] = []
    report = runner.run(on_started=lambda pid: spawned.append(time.monotonic()), start_at=start_at)
    assert report.outcome is RunOutcome.SUCCEEDED
    assert spawned[0] >= start_at  # same clock as the wait: no tolerance needed


def test_cancel_during_the_wait_for_the_start_time_starts_nothing() -> None:
    runner = CommandRunner(
        Command(line="echo should not run"), timeout=None, monotonic=time.monotonic
    )
    reports: list[RunReport] = []
    waiting = threading.Thread(
        target=lambda: reports.append(runner.run(start_at=time.monotonic() + 60))
    )
    waiting.start()
    assert wait_until(lambda: runner._run_called)  # inside run(): waiting for the time
    runner.cancel()
    waiting.join(timeout=5)  # far sooner than the start time: the cancel woke it
    assert not waiting.is_alive()
    [report] = reports
    assert report.outcome is RunOutcome.CANCELLED
    assert report.result == RunResult(error="cancelled")
    assert runner.pid is None


# --- output while it runs ---------------------------------------------------------------


class Reports:
    """Collects ``on_output`` reports; ``wait_for`` blocks until one holds some text."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self._changed = threading.Condition()

    def __call__(self, text: str) -> None:
        with self._changed:
            self.texts.append(text)
            self._changed.notify_all()

    def wait_for(self, part: str, timeout: float = 10.0) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: any(part in text for text in self.texts), timeout)


def _run_in_thread(runner: CommandRunner) -> tuple[threading.Thread, list[RunReport]]:
    done: list[RunReport] = []
    thread = threading.Thread(target=lambda: done.append(runner.run()))
    thread.start()
    return thread, done


def test_the_output_so_far_is_reported_while_the_command_runs(tmp_path: Path) -> None:
    go = tmp_path / "go"
    reports = Reports()
    line = f"echo one; while [ ! -e {go} ]; do sleep 0.01; done; echo two"
    runner = CommandRunner(
        Command(line=line),
        timeout=None,
        monotonic=time.monotonic,
        on_output=reports,
        output_interval=0.05,
    )
    thread, done = _run_in_thread(runner)
    try:
        assert reports.wait_for("one"), "no report while the command was still going"
        assert reports.texts[0] == "one\n"
    finally:
        go.touch()
        thread.join(timeout=10)
    assert done[0].result.output == "one\ntwo\n"


def test_a_burst_of_output_costs_a_few_reports_and_the_end_of_it_comes_through(
    tmp_path: Path,
) -> None:
    go = tmp_path / "go"
    reports = Reports()
    runner = CommandRunner(
        Command(line=f"seq 1 20000; while [ ! -e {go} ]; do sleep 0.01; done"),
        timeout=None,
        monotonic=time.monotonic,
        on_output=reports,
        output_interval=0.2,
    )
    started = time.monotonic()
    thread, _done = _run_in_thread(runner)
    try:
        # The burst is over long before the command is: its end is reported anyway.
        assert reports.wait_for("\n20000\n")
    finally:
        go.touch()
        thread.join(timeout=10)
    elapsed = time.monotonic() - started
    assert len(reports.texts) <= elapsed / 0.2 + 2  # one per interval at most
    assert len(reports.texts) < 20000 / 100  # nowhere near one per chunk read


def test_a_failing_output_callback_does_not_disturb_the_run() -> None:
    def explode(text: str) -> None:
        raise RuntimeError("the view broke")

    report = run("echo fine", on_output=explode, output_interval=0.01)
    assert report.outcome is RunOutcome.SUCCEEDED
    assert report.result.output == "fine\n"


# --- not hanging, not leaking ------------------------------------------------------------


def test_background_child_holding_the_pipe_does_not_hang_the_run() -> None:
    runner = CommandRunner(
        Command(line="sleep 5 & echo started"), timeout=None, monotonic=time.monotonic
    )
    started = time.monotonic()
    try:
        report = runner.run()
        assert time.monotonic() - started < 2
        assert report.outcome is RunOutcome.SUCCEEDED
        assert report.result.output == "started\n"
    finally:
        if runner.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(runner.pid, signal.SIGKILL)


def test_on_started_gets_the_pid_and_a_failing_callback_leaves_no_process() -> None:
    seen: list[int] = []
    runner = CommandRunner(Command(line="echo hi"), timeout=None, monotonic=time.monotonic)
    assert runner.run(on_started=seen.append).outcome is RunOutcome.SUCCEEDED
    assert seen == [runner.pid]

    def explode(pid: int) -> None:
        raise RuntimeError("callback failed")

    doomed = CommandRunner(Command(line="sleep 30"), timeout=None, monotonic=time.monotonic)
    with pytest.raises(RuntimeError, match="callback failed"):
        doomed.run(on_started=explode)
    assert doomed.pid is not None
    assert is_gone(doomed.pid)


def test_no_file_descriptors_leak_over_many_runs(tmp_path: Path) -> None:
    lines = [
        ("echo ok", True, None),
        ("exit 1", True, None),
        ("taskgui-no-such-program-xyz", False, None),
        ("true", True, str(tmp_path / "missing")),
        ("sleep 30", True, None),  # timed out
    ]
    # What is kept from run to run (this thread's wake pipe, the one /dev/null every
    # command reads) is made by the first run; after that nothing may grow.
    CommandRunner(Command(line="true"), timeout=None, monotonic=time.monotonic).run()
    before = open_fds()
    for index in range(20):
        line, use_shell, cwd = lines[index % len(lines)]
        CommandRunner(
            Command(line=line, use_shell=use_shell, cwd=cwd),
            timeout=0.05,
            kill_grace=0.1,
            monotonic=time.monotonic,
        ).run()
    assert open_fds() == before


def test_out_of_descriptors_on_a_new_thread_is_a_failed_run_not_an_exception() -> None:
    """No descriptor left for a new worker thread's wake pipe: the run is reported
    failed, as a command that could not start, and nothing is printed as ignored."""
    code = """
import os, resource, threading, time
from taskgui.core.task import Command
from taskgui.runtime.runner import CommandRunner
reports = []
def run():
    runner = CommandRunner(Command(line="true"), timeout=None, monotonic=time.monotonic)
    reports.append(runner.run())
thread = threading.Thread(target=run)
highest = max(int(fd) for fd in os.listdir("/proc/self/fd"))
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (highest + 1, hard))
thread.start(); thread.join()
print(reports[0].outcome.value, reports[0].result.error)
"""
    done = fresh_python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("failed could not start the command:"), done.stdout
    assert "Too many open files" in done.stdout
    assert done.stderr == ""


def test_a_threads_wake_pipe_is_closed_when_the_thread_ends() -> None:
    def run_true() -> None:
        report = CommandRunner(Command(line="true"), timeout=None, monotonic=time.monotonic).run()
        assert report.outcome is RunOutcome.SUCCEEDED

    run_true()  # /dev/null for standard input: opened once a process
    before = open_fds()
    for _ in range(3):
        thread = threading.Thread(target=run_true)
        thread.start()
        thread.join()
    assert open_fds() == before


def test_a_wake_left_in_the_threads_pipe_does_not_touch_the_next_run() -> None:
    # A cancel that comes as a run ends may leave its byte in the thread's wake pipe.
    os.write(thread_wake_pipe().write_fd, b"\0\0\0")
    report = CommandRunner(
        Command(line="sleep 0.2; echo done"), timeout=None, monotonic=time.monotonic
    ).run()
    assert report.outcome is RunOutcome.SUCCEEDED
    assert report.result.output == "done\n"
    assert report.duration >= 0.2


@pytest.mark.parametrize(
    "kwargs",
    [{"timeout": 0.0}, {"timeout": -1.0}, {"kill_grace": -1.0}, {"output_cap": -1}],
)
def test_invalid_settings_are_rejected(kwargs: dict[str, float]) -> None:
    settings: dict[str, float | None] = {"timeout": None, **kwargs}
    with pytest.raises(ValueError):
        CommandRunner(Command(line="true"), monotonic=time.monotonic, **settings)  # type: ignore[arg-type]


def test_without_pidfds_exits_and_timeouts_are_still_noticed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Kernels before 5.3 (or seccomp filters) have no pidfd_open; the runner falls back
    # to a short wait. Removing the function exercises that path with real processes.
    monkeypatch.delattr(os, "pidfd_open", raising=False)
    report = run("echo fallback")
    assert report.outcome is RunOutcome.SUCCEEDED
    assert report.result.output == "fallback\n"
    assert report.duration < 1
    timed_out = run("sleep 30", timeout=0.2, kill_grace=0.2)
    assert timed_out.outcome is RunOutcome.TIMED_OUT
    assert timed_out.duration < 2
