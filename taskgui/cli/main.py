"""The command line: add, inspect and steer tasks in the same database as the app.

Scripts depend on it, so its surface is a contract: command and flag names, the JSON
fields (see ``cli_format``), one ``taskgui: error: ...`` line on stderr, and exit
status 0 (done), 1 (the task does not exist or the operation failed), 2 (bad usage or
input), 130 (interrupted). Never a traceback.

A change must reach whoever runs the schedule: performed here under the scheduler
lock when nobody does, else requested of the process that does (``control.store_client``).
This module is the entry: the global flags, the context, errors to exit statuses; the
grammar is in ``cli.parser``, what each command does in ``cli.commands``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from taskgui.cli import shared_schedule
from taskgui.cli.context import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    Context,
    DaemonLauncher,
    UsageError,
)
from taskgui.cli.parser import build_parser
from taskgui.core.clock import Clock, SystemClock
from taskgui.core.defaults import REQUEST_TIMEOUT
from taskgui.core.errors import InvalidTaskError, TaskguiError
from taskgui.core.terminal_text import visible
from taskgui.store.errors import DatabaseFolderMissingError
from taskgui.store.paths import (
    default_database_path,
    refuse_missing_folder,
    resolve_database_path,
    shared_dsn,
)
from taskgui.store.sqlite.opening import open_sqlite
from taskgui.store.sqlite.repository import SqliteRepository

ERROR_PREFIX = f"{PROG}: error: "
REQUEST_TIMEOUT_SECONDS = REQUEST_TIMEOUT  # core.defaults; a name here for tests to set
REPORT_HINT = "this is a bug in taskgui; please report it with the command you ran"

# The front ends above this one, passed in by ``__main__`` so that the command line
# never imports Qt (or the composition roots) itself.
GuiLauncher = Callable[[list[str]], int]


def _open_store(
    database: Path, now: datetime, reset_corrupt: bool
) -> tuple[SqliteRepository, Path | None]:
    # ``open_sqlite`` looked up here at each call (a test interrupts it).
    return open_sqlite(database, now, reset_corrupt=reset_corrupt)


# ---------------------------------------------------------------------------- main


def _error(message: str, status: int) -> int:
    # Messages quote names and paths as given: a terminal must not obey what is in them.
    print(ERROR_PREFIX + visible(" ".join(message.split())), file=sys.stderr)
    return status


def _run(
    argv: list[str], clock: Clock, gui: GuiLauncher | None, daemon: DaemonLauncher | None
) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exited:  # --help and --version print and "exit" 0
        return exited.code if isinstance(exited.code, int) else EXIT_OK
    except UsageError as error:
        return _error(str(error), EXIT_USAGE)
    if args.command is None:
        if gui is not None:
            return gui(argv)
        return _error("choose a command (see 'taskgui --help')", EXIT_USAGE)
    if args.db is not None and not args.db.strip():
        # An empty --db (an unset variable in a script, say) must not quietly mean the
        # default database: that is some other schedule than the one meant.
        return _error("--db needs a file path, not an empty one (see 'taskgui --help')", EXIT_USAGE)
    ctx = Context(
        database=resolve_database_path(args.db),
        reset_corrupt=args.reset_corrupt,
        clock=clock,
        open_store=_open_store,
        request_timeout=REQUEST_TIMEOUT_SECONDS,
        daemon=daemon,
    )
    try:
        dsn = shared_dsn(args.db)
        if dsn is None and ctx.database != default_database_path():
            # Named by hand: a typo's folder is never made.
            refuse_missing_folder(ctx.database, "--db" if args.db else "$TASKGUI_DB")
        if dsn is not None and not getattr(args, "runs_shared_schedule", False):
            return shared_schedule.run(args, dsn, clock)  # postgresql://: no file, no lock
        if (done := shared_schedule.run_file_command(args, clock)) is not None:
            return done
        return int(args.handler(args, ctx))
    except (UsageError, InvalidTaskError, DatabaseFolderMissingError) as error:
        return _error(str(error), EXIT_USAGE)
    except TaskguiError as error:  # not found, invalid state, store errors, refusals
        return _error(str(error), EXIT_FAILED)
    except BrokenPipeError:
        raise  # the reader went away ('taskgui list | head'); main() ends quietly
    except OSError as error:  # e.g. the lock file's folder is not writable
        where = f" ({error.filename})" if error.filename else ""
        return _error(f"{error.strerror or error}{where}", EXIT_FAILED)


def main(
    argv: Sequence[str] | None = None,
    *,
    clock: Clock | None = None,
    gui: GuiLauncher | None = None,
    daemon: DaemonLauncher | None = None,
) -> int:
    """Run one command line and return its exit status; never raises.

    ``gui`` opens the window when no command is given and ``daemon`` runs ``taskgui
    daemon`` (``__main__`` passes them in, so this module never imports Qt or the
    composition roots). ``clock`` lets tests fix the time.
    """
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        return _run(arguments, clock or SystemClock(), gui, daemon)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # e.g. 'taskgui list | head -1'
        _silence_stdout()
        return EXIT_FAILED
    except Exception as error:
        return _error(f"internal error: {type(error).__name__}: {error}; {REPORT_HINT}", 1)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not complain."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    finally:
        os.close(devnull)
