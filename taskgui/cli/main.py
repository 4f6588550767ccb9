"""The command line: add, inspect and steer tasks in the same database as the app.

Scripts depend on it, so its surface is a contract: command and flag names, the JSON
fields (see ``cli_format``), one ``taskgui: error: ...`` line on stderr, and exit
status 0 (done), 1 (the task does not exist or the operation failed), 2 (bad usage or
input), 130 (interrupted). Never a traceback.

A change must reach whoever runs the schedule. When nobody does, the CLI takes the
scheduler lock itself and changes the schedule through ``Operations`` (engine decides,
repository commits). When a daemon or window holds the lock, the CLI files a request
in the database and waits for that process to carry it out and answer, so the two
never disagree about a task.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from taskgui import __version__
from taskgui.cli import output as cli_format
from taskgui.cli import shared_schedule
from taskgui.cli import transfer as cli_transfer
from taskgui.cli.add_arguments import add_arguments, spec_from_args
from taskgui.control.operations import Operations
from taskgui.control.recovery import recover
from taskgui.core.clock import Clock, SystemClock
from taskgui.core.defaults import DEFAULT_WORKERS
from taskgui.core.engine.engine import Engine
from taskgui.core.errors import (
    InvalidStateError,
    InvalidTaskError,
    TaskguiError,
    TaskNotFoundError,
)
from taskgui.core.operation import Op
from taskgui.core.states import TaskState
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskSpec
from taskgui.core.terminal_text import visible
from taskgui.store.errors import SchedulerAlreadyRunningError
from taskgui.store.memory import MemoryRepository
from taskgui.store.paths import resolve_database_path
from taskgui.store.protocols import TaskRepository
from taskgui.store.sqlite.lock import (
    SchedulerLock,
    holder_pid,
    is_locked,
    lock_path_for,
    refuse_if_holder_lost_its_file,
)
from taskgui.store.sqlite.opening import open_sqlite
from taskgui.store.sqlite.repository import SqliteRepository

PROG = "taskgui"
ERROR_PREFIX = f"{PROG}: error: "
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
REQUEST_POLL_SECONDS = 0.02
REQUEST_TIMEOUT_SECONDS = 10.0
DEFAULT_HISTORY = 20
REPORT_HINT = "this is a bug in taskgui; please report it with the command you ran"

# The front ends above this one, passed in by ``__main__`` so that the command line
# never imports Qt (or the composition roots) itself.
GuiLauncher = Callable[[list[str]], int]
# (database, workers, reset_corrupt) -> exit status of ``taskgui daemon``
DaemonLauncher = Callable[[Path, int, bool], int]


class UsageError(TaskguiError):
    """The command line itself is wrong: exit status 2, like argparse's own errors."""


class OperationFailedError(TaskguiError):
    """The scheduler refused a request or did not answer it: exit status 1."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors follow taskgui's one-line format and exit code."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


@dataclass(frozen=True, slots=True)
class Context:
    """What every command needs, built once from the global flags."""

    database: Path
    reset_corrupt: bool
    clock: Clock
    daemon: DaemonLauncher | None = None


# ------------------------------------------------------------------ argument types


def bounded_int(maximum: int) -> Callable[[str], int]:
    """An argparse type for ids and counts: a whole number from 1 to ``maximum``."""

    def parse(text: str) -> int:
        try:
            value = int(text) if len(text) <= _MAX_DIGITS else 0
        except ValueError:
            value = 0
        if not 1 <= value <= maximum:
            shown = repr(text) if len(text) <= 40 else repr(text[:39] + "…")
            raise argparse.ArgumentTypeError(
                f"expected a whole number from 1 to {maximum:,}, not {shown}"
            )
        return value

    return parse


# SQLite stores ids and takes limits as signed 64-bit integers: a larger one is no id.
MAX_ID = 2**63 - 1
MAX_WORKERS = 1_024  # threads, each possibly running a command: beyond this, a typo
_MAX_DIGITS = 30  # anything longer is out of range; int() need not read a novel
positive_int = bounded_int(MAX_ID)


# --------------------------------------------------------------------------- parser

_FORMATTER = argparse.RawDescriptionHelpFormatter
_MAIN_EPILOG = """\
With no command, taskgui opens its window.

examples:
  taskgui add --name backup --command 'rsync -a ~/docs /mnt/backup' --cron '0 2 * * *'
  taskgui list --state retrying
  taskgui --db ./project.sqlite3 daemon --workers 2
"""


def _command(
    commands: argparse._SubParsersAction[_Parser],
    name: str,
    summary: str,
    examples: str,
) -> argparse.ArgumentParser:
    lines = (line.strip() for line in examples.strip().splitlines())
    epilog = "examples:\n" + "".join(f"  {line}\n" for line in lines)
    return commands.add_parser(
        name, help=summary, description=summary, epilog=epilog, formatter_class=_FORMATTER
    )


def _id_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", type=positive_int, metavar="ID", help="the task's id (see 'list')")


def build_parser() -> argparse.ArgumentParser:
    """The whole command line, with an example or two under every command's --help."""
    parser = _Parser(
        prog=PROG,
        description="A task scheduler with priorities, retries and durable state.",
        epilog=_MAIN_EPILOG,
        formatter_class=_FORMATTER,
    )
    parser.add_argument(
        "--db",
        metavar="PATH",
        help="the database file (default: $TASKGUI_DB, else taskgui.sqlite3 in your data folder)",
    )
    parser.add_argument(
        "--reset-corrupt",
        action="store_true",
        help="if the database is damaged, move it aside (it is never deleted) and start afresh",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")

    add = _command(
        commands,
        "add",
        "Add a task and print its id.",
        """
        taskgui add --name report --command ./report.sh --in 10m
        taskgui add --name sync --command 'make sync' --every 5m --max-attempts 5 --jitter
        taskgui add --name weekly --command backup --cron '0 9 * * 1' --tz Europe/Berlin
        """,
    )
    add_arguments(add)
    add.set_defaults(handler=_cmd_add)

    listing = _command(
        commands,
        "list",
        "List tasks.",
        "taskgui list\ntaskgui list --state retrying --json | jq '.[].id'",
    )
    listing.add_argument("--state", choices=[state.value for state in TaskState])
    listing.add_argument("--json", action="store_true", help="print a JSON array")
    listing.set_defaults(handler=_cmd_list)

    show = _command(commands, "show", "Show one task.", "taskgui show 7\ntaskgui show 7 --json")
    _id_argument(show)
    show.add_argument("--json", action="store_true", help="print a JSON object")
    show.set_defaults(handler=_cmd_show)

    history = _command(
        commands, "history", "Show a task's runs, newest first.", "taskgui history 7 --limit 5"
    )
    _id_argument(history)
    history.add_argument("--json", action="store_true", help="print a JSON array")
    history.add_argument(
        "--limit", type=positive_int, default=DEFAULT_HISTORY, help="at most N runs (default 20)"
    )
    history.set_defaults(handler=_cmd_history)

    for name, (op, summary, done) in _CHANGES.items():
        change = _command(commands, name, summary, f"taskgui {name} 7")
        _id_argument(change)
        change.set_defaults(handler=_cmd_change, op=op, done=done)

    daemon = _command(
        commands,
        "daemon",
        "Run the schedule without a window, until interrupted.",
        "taskgui daemon\ntaskgui --db ~/jobs.sqlite3 daemon --workers 8",
    )
    daemon.add_argument(
        "--workers",
        type=bounded_int(MAX_WORKERS),
        default=DEFAULT_WORKERS,
        help=f"how many tasks may run at once (default {DEFAULT_WORKERS})",
    )
    daemon.set_defaults(handler=_cmd_daemon)

    export = _command(commands, "export", cli_transfer.EXPORT_SUMMARY, cli_transfer.EXPORT_EXAMPLES)
    cli_transfer.export_arguments(export)
    export.set_defaults(handler=_cmd_export)
    importing = _command(
        commands, "import", cli_transfer.IMPORT_SUMMARY, cli_transfer.IMPORT_EXAMPLES
    )
    cli_transfer.import_arguments(importing)
    importing.set_defaults(handler=_cmd_import)
    shared_schedule.add_commands(commands, _command)
    return parser


# ------------------------------------------------------------------ the database


@contextmanager
def _repository(ctx: Context) -> Iterator[SqliteRepository]:
    """Open the database (moving a damaged one aside only if asked), close it after."""
    refuse_if_holder_lost_its_file(ctx.database)  # before anything creates a file
    repository, moved = open_sqlite(ctx.database, ctx.clock.now(), reset_corrupt=ctx.reset_corrupt)
    if moved is not None:
        _note(f"{ctx.database} was damaged; moved it to {moved} and started a fresh database")
    try:
        yield repository
    finally:
        repository.close()


@contextmanager
def _reader(ctx: Context) -> Iterator[TaskRepository]:
    """For commands that only read: a database that does not exist reads as empty.

    Nothing is created for them, not the file and not its folders: 'taskgui show 5'
    on a fresh account (or a mistyped --db) says there is no task 5 and leaves no
    empty database behind.
    """
    if not _exists(ctx.database):
        yield MemoryRepository()
        return
    with _repository(ctx) as repository:
        yield repository


def _exists(database: Path) -> bool:
    """Whether the path names something (a broken symlink too: opening it then says so).

    A database that is missing because it was deleted under the process that runs its
    schedule is not "empty": that is refused first, with what happened.
    """
    refuse_if_holder_lost_its_file(database)
    return database.exists() or database.is_symlink()


def _note(message: str) -> None:
    print(f"{PROG}: {visible(message)}", file=sys.stderr)


def _print_json(value: Any) -> None:
    print(cli_format.json_text(value))


# ------------------------------------------------------------------------ commands


def _cmd_add(args: argparse.Namespace, ctx: Context) -> int:
    now = ctx.clock.now()
    spec = spec_from_args(args, now)
    if spec.first_run_at < now and not spec.recurrence.is_recurring:
        _note("that time has passed; the task is due now (its misfire policy applies)")
    stored = _add(spec, ctx)
    print(stored.id)
    return EXIT_OK


def _add(spec: TaskSpec, ctx: Context) -> TaskSpec:
    """Store the task, then tell a running scheduler about it.

    Insert first, check the lock second: a scheduler that starts in between loads the
    row when it starts, and one already running gets the request ("added" is
    idempotent), so the task is never left out of the schedule.
    """
    with _repository(ctx) as repository:
        now = ctx.clock.now()
        stored = repository.add_tasks([spec], now)[0]
        if is_locked(ctx.database):
            repository.submit_request(Op.ADDED, stored.id, None, now)
    return stored


def _waiting(
    repository: TaskRepository, snapshots: Sequence[TaskSnapshot], ctx: Context
) -> dict[int, str]:
    """What each task waits for, as the window says it (see ``cli_format.wait_reasons``)."""
    return cli_format.wait_reasons(
        snapshots,
        repository.wait_reasons(),
        ctx.clock.now(),
        scheduled=is_locked(ctx.database),
    )


def _cmd_list(args: argparse.Namespace, ctx: Context) -> int:
    state = TaskState(args.state) if args.state else None
    with _reader(ctx) as repository:
        snapshots = repository.list_tasks(state)
        waiting = _waiting(repository, snapshots, ctx)
    if args.json:
        _print_json([cli_format.task_json(s, waiting.get(s.spec.id)) for s in snapshots])
    elif not snapshots:
        print(f"no {state.value} tasks" if state else "no tasks")
    else:
        print("\n".join(cli_format.task_table(snapshots, waiting)))
    return EXIT_OK


def _cmd_show(args: argparse.Namespace, ctx: Context) -> int:
    with _reader(ctx) as repository:
        snapshot = repository.get(args.id)
        waiting = _waiting(repository, [snapshot], ctx).get(snapshot.spec.id)
    if args.json:
        _print_json(cli_format.task_json(snapshot, waiting))
    else:
        print("\n".join(cli_format.task_lines(snapshot, ctx.clock.now(), waiting)))
    return EXIT_OK


def _cmd_history(args: argparse.Namespace, ctx: Context) -> int:
    with _reader(ctx) as repository:
        repository.get(args.id)  # "no task with id N" rather than an empty history
        runs = repository.runs(args.id, args.limit)
    if args.json:
        _print_json([cli_format.run_json(run) for run in runs])
    elif not runs:
        print(f"task {args.id} has not run yet")
    else:
        print("\n".join(cli_format.history_table(runs)))
    return EXIT_OK


# command -> (operation, summary for --help, what to report when done)
_CHANGES: dict[str, tuple[Op, str, str]] = {
    "cancel": (Op.CANCEL, "Cancel a task for good; a run in progress is stopped.", "cancelled"),
    "pause": (Op.PAUSE, "Pause a task: it keeps its place, starts no scheduled runs.", "paused"),
    "resume": (Op.RESUME, "Resume a paused task.", "resumed"),
    "run-now": (Op.RUN_NOW, "Run a task now, outside its schedule.", "will run now"),
    "retry": (Op.RETRY_NOW, "Run the next attempt of a failed task now.", "will retry now"),
    "delete": (Op.DELETE, "Delete a task and its history.", "deleted"),
}


def _unchanged(op: Op, snapshot: TaskSnapshot) -> str | None:
    """What to say instead when pause or resume would change nothing.

    Both then succeed and say so truthfully, rather than claim a change (as resume
    did) or fail (a script that pauses a task wants it paused, and it is). A task
    that has finished (cancelled, succeeded, gave up, missed) is refused by both,
    exit status 1: it will not run again, paused or not.
    """
    if op is Op.PAUSE and snapshot.spec.paused:
        return "is already paused"
    if op is Op.RESUME and not snapshot.spec.paused:
        if snapshot.state.is_terminal:
            raise InvalidStateError(
                f"task {snapshot.spec.name!r} has {snapshot.state.value}; there is nothing "
                "to resume"
            )
        return "is not paused; nothing to resume"
    return None


def _cmd_change(args: argparse.Namespace, ctx: Context) -> int:
    op: Op = args.op
    if not _exists(ctx.database):
        raise TaskNotFoundError(args.id)  # and no database made to say so
    with _repository(ctx) as repository:
        snapshot = repository.get(args.id)  # fail fast, before any lock or request
        unchanged = _unchanged(op, snapshot)
        if unchanged is not None:
            print(f"task {args.id} {unchanged}")
            return EXIT_OK
        lock = SchedulerLock(ctx.database)
        try:
            lock.acquire()
        except SchedulerAlreadyRunningError:
            _request(repository, op, args.id, ctx)
        else:
            try:
                _perform_here(repository, op, args.id, ctx)
            finally:
                lock.release()
            if op in (Op.RUN_NOW, Op.RETRY_NOW):
                _note(
                    "no scheduler is running for this database; the run starts when "
                    "'taskgui daemon' or the app starts"
                )
    print(f"task {args.id} {args.done}")
    return EXIT_OK


def _perform_here(repository: SqliteRepository, op: Op, task_id: int, ctx: Context) -> None:
    """Nobody runs the schedule and we hold the lock: load it, change it, commit."""
    engine = Engine()
    now = ctx.clock.now()
    recovery = recover(repository, engine, now)
    # Lazy: keeps the runtime package out of commands that never need it.
    from taskgui.system.orphans import stop_orphaned_runs  # noqa: PLC0415

    stop_orphaned_runs(recovery.interrupted, database=str(ctx.database.resolve()))
    Operations(engine, repository).perform(op, task_id, None, now)


def _request(repository: SqliteRepository, op: Op, task_id: int, ctx: Context) -> None:
    """Ask the process running the schedule to perform ``op`` and wait for its answer."""
    request_id = repository.submit_request(op, task_id, None, ctx.clock.now())
    deadline = ctx.clock.monotonic() + REQUEST_TIMEOUT_SECONDS
    while True:
        done, error = repository.request_outcome(request_id)
        if done:
            if error:
                raise OperationFailedError(error)
            return
        if ctx.clock.monotonic() >= deadline:
            pid = holder_pid(lock_path_for(ctx.database))
            who = f"process {pid}" if pid else "another process"
            raise OperationFailedError(
                f"the scheduler running {ctx.database} ({who}) did not answer within "
                f"{REQUEST_TIMEOUT_SECONDS:g}s; the request stays queued and may still be "
                f"carried out (check with 'taskgui show {task_id}'), or restart that process"
            )
        time.sleep(REQUEST_POLL_SECONDS)


def _cmd_daemon(args: argparse.Namespace, ctx: Context) -> int:
    if ctx.daemon is None:
        raise OperationFailedError("this taskgui has no daemon to start")
    return ctx.daemon(ctx.database, args.workers, ctx.reset_corrupt)


def _cmd_export(args: argparse.Namespace, ctx: Context) -> int:
    cli_transfer.check_export_target(args.file)
    with _reader(ctx) as repository:
        return cli_transfer.export(args, repository, ctx.clock, _note)


def _cmd_import(args: argparse.Namespace, ctx: Context) -> int:
    # Read and check the whole file first: a refused import touches no database.
    parsed = cli_transfer.read_import(args, ctx.clock)
    if args.dry_run and not _exists(ctx.database):
        return cli_transfer.report_dry_run(args, parsed, ctx.clock)
    with _repository(ctx) as repository:
        return cli_transfer.import_(
            args,
            parsed,
            repository,
            ctx.database,
            ctx.clock,
            request=lambda op, task_id: _request(repository, op, task_id, ctx),
        )


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
        daemon=daemon,
    )
    try:
        if (dsn := shared_schedule.shared_dsn(args.db)) is not None:
            return shared_schedule.run(args, dsn, clock)  # postgresql://: no file, no lock
        if (done := shared_schedule.run_file_command(args, clock)) is not None:
            return done
        return int(args.handler(args, ctx))
    except (UsageError, InvalidTaskError) as error:
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
