"""The command line's grammar: every command, its flags and its --help examples.

Scripts depend on it, so its surface is a contract: command and flag names (and the
JSON fields, see ``cli.output``). Each command's handler is in ``cli.commands``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import NoReturn

from taskgui import __version__
from taskgui.cli import commands as handlers
from taskgui.cli import shared_schedule
from taskgui.cli import transfer as cli_transfer
from taskgui.cli.add_arguments import (
    add_arguments,
    datetime_arg,
    duration_arg,
    edit_after_arguments,
    notify_arg,
    wake_arg,
    whole_number,
)
from taskgui.cli.context import PROG, UsageError
from taskgui.core.defaults import DEFAULT_WORKERS
from taskgui.core.operation import Op
from taskgui.core.state_groups import state_words

DEFAULT_HISTORY = 20


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors follow taskgui's one-line format and exit code."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


# ------------------------------------------------------------------ argument types


def bounded_int(maximum: int) -> Callable[[str], int]:
    """An argparse type for ids and counts: a whole number from 1 to ``maximum``."""
    return whole_number(1, maximum)


# SQLite stores ids and takes limits as signed 64-bit integers: a larger one is no id.
MAX_ID = 2**63 - 1
MAX_WORKERS = 1_024  # threads, each possibly running a command: beyond this, a typo
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


DEFAULT_WORD = "default"


def _or_default(parse: Callable[[str], object]) -> Callable[[str], object]:
    """``parse``, or the word ``default`` (follow the global setting again)."""

    def parse_or_default(text: str) -> object:
        return DEFAULT_WORD if text.strip().lower() == DEFAULT_WORD else parse(text)

    parse_or_default.__name__ = getattr(parse, "__name__", "value")
    return parse_or_default


def _history_command(commands: argparse._SubParsersAction[_Parser]) -> None:
    history = _command(
        commands,
        "history",
        "Show a task's runs, newest first.",
        "taskgui history 7 --limit 5\ntaskgui history 7 --limit 1 --output",
    )
    _id_argument(history)
    history.add_argument("--json", action="store_true", help="print a JSON array")
    history.add_argument(
        "--output", action="store_true", help="also print what each run printed, under the table"
    )
    history.add_argument(
        "--limit", type=positive_int, default=DEFAULT_HISTORY, help="at most N runs (default 20)"
    )
    history.set_defaults(handler=handlers.cmd_history)


def _node_arguments(daemon: argparse.ArgumentParser) -> None:
    """``daemon --node`` and ``--node-tag``: this machine as a node of a shared schedule."""
    daemon.add_argument(
        "--node",
        metavar="NAME",
        help="on a shared (postgresql://) schedule: this node's name "
        "(default $TASKGUI_NODE, else user@host)",
    )
    daemon.add_argument(
        "--node-tag",
        action="append",
        default=[],
        metavar="TAG",
        help="on a shared schedule: a tag of this node (tasks added with --on-tag TAG run "
        "only on nodes that have it); repeat for several",
    )
    daemon.set_defaults(handler=handlers.cmd_daemon, runs_shared_schedule=True)


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
        help="the database file, or a shared schedule's PostgreSQL DSN (postgresql://... or "
        "'host=... dbname=...') (default: $TASKGUI_DB, else taskgui.sqlite3 in your data folder)",
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
        taskgui add --name upload --command ./upload.sh --after 3 --after 4:finished --only-after
        """,
    )
    add_arguments(add)
    add.set_defaults(handler=handlers.cmd_add)

    listing = _command(
        commands,
        "list",
        "List tasks.",
        "taskgui list\ntaskgui list --state retrying --json | jq '.[].id'",
    )
    listing.add_argument(
        "--state",
        choices=state_words(),
        help="only tasks in this state, or group of states as the window's filters have them "
        "(failed: exhausted or missed; done: succeeded)",
    )
    listing.add_argument("--json", action="store_true", help="print a JSON array")
    listing.set_defaults(handler=handlers.cmd_list)

    show = _command(commands, "show", "Show one task.", "taskgui show 7\ntaskgui show 7 --json")
    _id_argument(show)
    show.add_argument("--json", action="store_true", help="print a JSON object")
    show.set_defaults(handler=handlers.cmd_show)

    _history_command(commands)

    editing = _command(
        commands,
        "edit",
        "Change a task's notification rule, wake-up policy or the tasks it runs after.",
        "taskgui edit 7 --notify after:3\ntaskgui edit 7 --on-wake spread:20m\n"
        "taskgui edit 7 --notify default --on-wake default\n"
        "taskgui edit 7 --after 3 --after 5:finished --only-after yes",
    )
    _id_argument(editing)
    editing.add_argument(
        "--notify",
        type=_or_default(notify_arg),
        metavar="RULE",
        help="on-failure, after:N, on-recovery, on-give-up, never, or default (Settings')",
    )
    editing.add_argument(
        "--on-wake",
        type=_or_default(wake_arg),
        metavar="POLICY",
        help="now, spread:DURATION, ask, or default (the global policy)",
    )
    edit_after_arguments(editing).set_defaults(handler=handlers.cmd_edit)

    for name, (op, summary, done) in _CHANGES.items():
        example = f"taskgui {name} 7"
        if op is Op.PAUSE:
            example += "\ntaskgui pause 7 --for 1h\ntaskgui pause 7 --until 2026-12-02T09:00"
        change = _command(commands, name, summary, example)
        _id_argument(change)
        change.set_defaults(
            handler=handlers.cmd_change, op=op, done=done, for_=None, until=None, force=False
        )
        if op in (Op.DELETE, Op.CANCEL):
            change.add_argument(
                "--force",
                action="store_true",
                help="even when other tasks run after it (they are left waiting for it)",
            )
        if op is Op.PAUSE:
            how_long = change.add_mutually_exclusive_group()
            how_long.add_argument(
                "--for", dest="for_", type=duration_arg, metavar="DURATION",
                help="resume by itself after DURATION",
            )  # fmt: skip
            how_long.add_argument(
                "--until", type=datetime_arg, metavar="ISO_DATETIME",
                help="resume by itself then (local time without an offset)",
            )  # fmt: skip

    daemon = _command(
        commands,
        "daemon",
        "Run the schedule without a window, until interrupted.",
        "taskgui daemon\ntaskgui --db ~/jobs.sqlite3 daemon --workers 8\n"
        "taskgui --db postgresql://me@db/taskgui daemon --node backup-box --node-tag disk",
    )
    daemon.add_argument(
        "--workers",
        type=bounded_int(MAX_WORKERS),
        default=DEFAULT_WORKERS,
        help=f"how many tasks may run at once (default {DEFAULT_WORKERS})",
    )
    daemon.add_argument(
        "--on-wake",
        type=wake_arg,
        metavar="POLICY",
        help="after a sleep, the runs due at once: now, spread:DURATION (spread:10m) or "
        "ask (nobody answers a daemon: it spreads); default: the window's Settings, "
        "else spread:10m",
    )
    _node_arguments(daemon)

    export = _command(commands, "export", cli_transfer.EXPORT_SUMMARY, cli_transfer.EXPORT_EXAMPLES)
    cli_transfer.export_arguments(export)
    export.set_defaults(handler=handlers.cmd_export)
    importing = _command(
        commands, "import", cli_transfer.IMPORT_SUMMARY, cli_transfer.IMPORT_EXAMPLES
    )
    cli_transfer.import_arguments(importing)
    importing.set_defaults(handler=handlers.cmd_import)
    shared_schedule.add_commands(commands, _command)
    return parser


# command -> (operation, summary for --help, what to report when done)
_CHANGES: dict[str, tuple[Op, str, str]] = {
    "cancel": (Op.CANCEL, "Cancel a task for good; a run in progress is stopped.", "cancelled"),
    "pause": (Op.PAUSE, "Pause a task: it keeps its place, starts no scheduled runs.", "paused"),
    "resume": (Op.RESUME, "Resume a paused task.", "resumed"),
    "run-now": (Op.RUN_NOW, "Run a task now, outside its schedule.", "will run now"),
    "retry": (Op.RETRY_NOW, "Run the next attempt of a failed task now.", "will retry now"),
    "delete": (Op.DELETE, "Delete a task and its history.", "deleted"),
}
