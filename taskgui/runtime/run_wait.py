"""What a run's thread waits on while its command runs: output, a cancel, the exit.

``CommandRunner`` (``runtime.runner``) runs one command on a worker thread and waits
for three things at once: output on the command's pipe, a byte on the thread's wake
pipe (a cancel from another thread) and the process's pidfd (its exit). These are
those waits, as lean as Python allows, because a worker runs one per run while the
scheduler's other threads wait for the GIL it holds: one ``poll`` a wait, no
descriptor made per run but the pidfd.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading

from taskgui.runtime.output_tail import TailBuffer

__all__ = ["MAX_WAIT", "RunWatch", "WakePipe", "earliest", "thread_wake_pipe"]

_READ_CHUNK = 64 * 1024  # the default Linux pipe capacity: one read empties a full pipe
MAX_WAIT = 3_600.0  # the longest single wait in the poll (see RunWatch.wait)


class WakePipe:
    """A pipe a cancel writes a byte to, to wake the thread running that command.

    One a thread, kept from run to run (a pipe, two ``ioctl``s and two ``close``s a
    run otherwise), closed when the thread ends and its locals go. A byte left by a
    cancel that came as a run ended costs the next run one more turn of its wait loop,
    nothing else: every turn looks at the run's own flag.
    """

    __slots__ = ("read_fd", "write_fd")

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)

    def __del__(self) -> None:
        if hasattr(self, "write_fd"):  # else pipe2 failed: there is nothing to close
            os.close(self.read_fd)
            os.close(self.write_fd)


_per_thread = threading.local()


def thread_wake_pipe() -> WakePipe:
    wake: WakePipe | None = getattr(_per_thread, "wake", None)
    if wake is None:
        wake = _per_thread.wake = WakePipe()
    return wake


def earliest(timeout: float | None, other: float | None) -> float | None:
    """The sooner of two waits, where None is no limit."""
    if other is None:
        return timeout
    return other if timeout is None or other < timeout else timeout


class RunWatch:
    """What one run waits on: its output pipe, the wake pipe and the process's pidfd.

    ``select.poll`` rather than a ``selectors`` selector: one system call a wait and no
    descriptor of its own (an epoll is made, filled and closed per run), and none of the
    wrapper's Python per event. Used by the run's own thread alone.
    """

    __slots__ = ("_out_fd", "_poll", "_wake_fd", "exit_fd", "output_open", "tail")

    def __init__(self, out_fd: int, wake_fd: int, exit_fd: int | None, tail: TailBuffer) -> None:
        self._poll = select.poll()
        self._out_fd = out_fd
        self._wake_fd = wake_fd
        self.exit_fd = exit_fd
        self.tail = tail
        self.output_open = True
        for fd in (out_fd, wake_fd) if exit_fd is None else (out_fd, wake_fd, exit_fd):
            self._poll.register(fd, select.POLLIN)

    def forget_wake_and_exit(self) -> None:
        """Stop waiting for a cancel or the exit: the process has been reaped."""
        self._poll.unregister(self._wake_fd)
        if self.exit_fd is not None:
            self._poll.unregister(self.exit_fd)
            self.exit_fd = None

    def wait(self, timeout: float | None) -> bool:
        """Block until output, a wake-up or an exit (or the timeout); consume what came.
        True if the pidfd said the process has exited.

        At most ``MAX_WAIT`` at a time: poll takes its timeout as a C int of
        milliseconds (about 24.8 days) and refuses more, and a task's timeout may be up
        to 100 years. Every caller loops and works out again what remains, so a slice
        changes nothing.
        """
        millis = None if timeout is None else min(timeout, MAX_WAIT) * 1000.0
        exited = False
        for fd, _ in self._poll.poll(millis):
            if fd == self._out_fd:
                try:
                    data = os.read(fd, _READ_CHUNK)
                except BlockingIOError:
                    continue
                if data:
                    self.tail.feed(data)
                else:  # end of file: every writer has closed the pipe
                    self._poll.unregister(fd)
                    self.output_open = False
            elif fd == self._wake_fd:
                with contextlib.suppress(BlockingIOError):
                    os.read(fd, 64)
            else:
                exited = True
        return exited
