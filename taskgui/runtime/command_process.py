"""A command's process: how it starts, and the sentences for why it failed.

The argv (through the shell, or split as a shell would), the working directory (home
by default, as cron does), the environment (the command's, the run's mark) and a
``Popen`` in a session of its own; a start failure or an exit said so a person can act
on it ("command not found: rsnyc", "exit status 127 (command not found)").
"""

from __future__ import annotations

import errno
import os
import shlex
import signal
import subprocess
import threading
from collections.abc import Mapping

from taskgui.core.task import Command

SHELL = "/bin/sh"
_SHELL_EXIT_HINTS = {126: "not executable", 127: "command not found"}


class StartError(Exception):
    """The command could not be started; the message is for a person."""


def argv_of(command: Command) -> list[str]:
    line = command.line
    if command.use_shell:
        return [command.shell_path or SHELL, "-c", line]
    try:
        argv = shlex.split(line)
    except ValueError as error:
        raise StartError(f"cannot split the command line: {error}") from None
    if not argv:
        raise StartError("the command line has nothing to run")
    return argv


def working_directory(command: Command) -> str:
    """The working directory: the home directory by default, as cron does.

    A relative directory is taken relative to home too, so its meaning does not
    depend on where taskgui itself happened to be started. Not looked at here: the
    child's ``chdir`` finds out (``start_failure`` says what it found), which spares
    every run a ``stat`` of a folder that is nearly always there.
    """
    home = os.path.expanduser("~")
    given = command.cwd
    return home if given is None else os.path.join(home, os.path.expanduser(given))


def start_process(
    command: Command, argv: list[str], cwd: str, extra_env: Mapping[str, str]
) -> tuple[subprocess.Popen[bytes], int]:
    """The command's process, in a session and process group of its own, and the read
    end of the one pipe its output (stdout and stderr) goes to, non-blocking.

    The pipe is made here, not by ``Popen``: ``Popen`` wraps its read end in a buffered
    file (an ``fstat``, an ``lseek`` and an ``ioctl`` a run) that the runner never reads
    through. Standard input is one ``/dev/null`` kept open for every run rather than
    opened and closed by each. Every system call a worker saves is one fewer hand-over
    of the GIL to the scheduler's other threads, which is what a run's cost is made of
    when four workers and the service thread share it (benchmarks/bench_dispatch.py).
    """
    try:
        env = environment(command, extra_env)
        read_fd, write_fd = os.pipe2(os.O_CLOEXEC)
    except OSError as error:  # out of descriptors
        raise StartError(f"could not start the command: {error}") from None
    except ValueError as error:  # e.g. a NUL byte in extra_env
        raise StartError(f"could not start the command: {error}") from None
    try:
        os.set_blocking(read_fd, False)
        proc = subprocess.Popen(
            argv,
            stdin=_NullInput.fd(),
            stdout=write_fd,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    except OSError as error:
        os.close(read_fd)
        raise StartError(start_failure(error, argv[0], cwd)) from None
    except ValueError as error:  # e.g. a NUL byte in the command line
        os.close(read_fd)
        raise StartError(f"could not start the command: {error}") from None
    except BaseException:  # anything else Popen raises: the pipe goes with it
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)  # the child has its copy; EOF comes when every writer is gone
    return proc, read_fd


class _NullInput:
    """``/dev/null`` opened once for reading: every command's standard input.

    Kept for the life of the process (close-on-exec, so no command inherits it beyond
    its standard input); a command cannot change what others read from it.
    """

    _lock = threading.Lock()
    _fd: int | None = None

    @classmethod
    def fd(cls) -> int:
        if cls._fd is None:
            with cls._lock:
                if cls._fd is None:
                    cls._fd = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        return cls._fd


def environment(command: Command, extra_env: Mapping[str, str]) -> dict[bytes, bytes]:
    """This process's environment, then the command's, then ``extra_env``, encoded.

    Encoded here because ``Popen`` encodes every variable of a text environment on
    each start: ``{**os.environ, ...}`` decoded and encoded again cost about 85 µs a
    run (35 variables), a copy of the environment as CPython holds it, already
    encoded (``os.environ._data``), about 10 µs. Where that is not there, the slow way.
    """
    held = getattr(os.environ, "_data", None)
    if isinstance(held, dict):
        env: dict[bytes, bytes] = dict(held)
    else:  # pragma: no cover - CPython on POSIX always has it
        env = {os.fsencode(name): os.fsencode(value) for name, value in os.environ.items()}
    for name, value in command.env:
        env[os.fsencode(name)] = os.fsencode(value)
    for name, value in extra_env.items():
        env[os.fsencode(name)] = os.fsencode(value)
    if command.shell_path is not None:
        env[b"SHELL"] = os.fsencode(command.shell_path)  # as cron sets it for its commands
    return env


def describe_exit(code: int | None, use_shell: bool) -> str:
    """How a command that did not succeed ended; the shell's own codes explained."""
    if code is None:
        return "ended without an exit status"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        return f"killed by signal {name}"
    hint = _SHELL_EXIT_HINTS.get(code) if use_shell else None
    return f"exit status {code} ({hint})" if hint else f"exit status {code}"


def start_failure(error: OSError, program: str, cwd: str) -> str:
    """A sentence a person can act on for an exec or chdir failure."""
    reason = error.strerror or str(error)
    if error.filename == cwd:
        if isinstance(error, FileNotFoundError):
            return f"working directory {cwd} does not exist"
        if isinstance(error, NotADirectoryError):
            return f"working directory {cwd} is not a directory"
        return f"cannot enter working directory {cwd}: {reason.lower()}"
    if isinstance(error, FileNotFoundError):
        if os.sep in program and os.path.exists(os.path.join(cwd, program)):
            return f"cannot run {program}: its interpreter (the #! line) was not found"
        return f"command not found: {program}"
    if isinstance(error, PermissionError) or error.errno == errno.EACCES:
        return f"permission denied: {program} cannot be executed"
    return f"could not start {program}: {reason}"
