"""The command line on a shared schedule: ``--db postgresql://...`` (or TASKGUI_DB).

A PostgreSQL schedule has no file, no lock and no single process that runs it: nodes
share it (``taskgui.runtime.cluster``). These commands work on one: ``add``, ``list``,
``show``, ``history`` read and write the database directly (a node hears of a change
by NOTIFY), ``cancel``, ``pause``, ``resume``, ``run-now``, ``retry``, ``delete`` and
``edit`` go through the leading node's engine (``shared_changes``), ``daemon`` joins as
a node, and ``nodes`` lists the nodes. ``migrate --to`` moves a SQLite file's schedule into
one. ``export`` reads the database; ``import`` adds its tasks in one transaction (the
leader hears of them by NOTIFY and by a request each) and, with ``--replace``, has the
replaced tasks deleted by the leading node's engine, or here, leading for a moment,
when no node runs the schedule (``shared_changes.shared_client``), as the changes are.

psycopg is imported only here, and only for a postgresql:// database.
"""

from __future__ import annotations

import argparse
from typing import Any

from taskgui.cli import adding, editing, shared_changes
from taskgui.cli import output as cli_format
from taskgui.cli import transfer as cli_transfer
from taskgui.cli.context import UsageError, note
from taskgui.cli.task_views import print_list, print_show
from taskgui.core.clock import Clock
from taskgui.core.nodes import SILENT_AFTER
from taskgui.core.terminal_text import visible
from taskgui.store.paths import resolve_database_path
from taskgui.store.postgres.connection import is_dsn, redact


class NotOnPostgresError(UsageError):
    """A command given the wrong kind of database (``nodes`` on a file, ``migrate --to``
    a file, a file's command on a shared schedule): the command line is wrong, exit
    status 2, as the README has bad input (a trial saw 1)."""


def add_commands(commands: Any, make: Any) -> None:
    """``nodes`` and ``migrate``, registered beside the other commands.

    ``make(commands, name, summary, examples)`` is the main parser's way of adding one.
    """
    nodes = make(
        commands,
        "nodes",
        "List the nodes that share a PostgreSQL schedule.",
        "taskgui --db postgresql://me@db/taskgui nodes --json",
    )
    nodes.add_argument("--json", action="store_true", help="print a JSON array")
    nodes.set_defaults(shared_handler=_nodes, file_handler=_needs_postgres)
    migrate = make(
        commands,
        "migrate",
        "Move this database's tasks, states and history into a PostgreSQL schedule.",
        "taskgui migrate --to postgresql://me@db/taskgui\n"
        "taskgui --db ~/old.sqlite3 migrate --to postgresql://db.lan/taskgui",
    )
    migrate.add_argument("--to", required=True, metavar="DSN", help="postgresql://...")
    migrate.set_defaults(file_handler=_migrate)


def run_file_command(args: argparse.Namespace, clock: Clock) -> int | None:
    """Run ``nodes`` or ``migrate`` for a file database; None for any other command."""
    handler = getattr(args, "file_handler", None)
    return None if handler is None else int(handler(args, clock))


def run(args: argparse.Namespace, dsn: str, clock: Clock) -> int:
    """Run a command against the PostgreSQL schedule at ``dsn``."""
    from taskgui.store.postgres.repository import PostgresRepository  # noqa: PLC0415

    # Known by the main parser's handler: ``args.command`` is add's --command too.
    main_handler = getattr(getattr(args, "handler", None), "__name__", "")
    name = main_handler.lstrip("_").removeprefix("cmd_")
    handler = getattr(args, "shared_handler", None) or _SHARED.get(name)
    if handler is None:
        raise NotOnPostgresError(
            f"this command is not available on a PostgreSQL schedule yet ({redact(dsn)}); "
            "add, list, show, history, edit, cancel, pause, resume, run-now, retry, "
            "delete, export, import, daemon and nodes are"
        )
    if handler is shared_changes.edit:
        editing.changes_after(args)  # a usage error before the server is asked
    if handler is _import:  # the whole file is checked before a database is opened
        args.parsed_import = cli_transfer.read_import(args, clock)
    elif handler is _export:
        cli_transfer.check_export_target(args.file)
    repository = PostgresRepository(dsn, listen=False)
    try:
        return int(handler(args, repository, clock))
    finally:
        repository.close()


def _add(args: argparse.Namespace, repository: Any, clock: Clock) -> int:
    now = clock.now()
    spec = adding.spec_to_add(args, now)
    adding.check_upstreams(spec, repository)  # as on a file: no node's engine sees it first
    [stored] = repository.add_tasks([spec], now)
    print(stored.id)
    return 0


def _list(args: argparse.Namespace, repository: Any, clock: Clock) -> int:
    print_list(args, _as_they_wait(repository), clock.now(), scheduled=_led(repository))
    return 0


def _show(args: argparse.Namespace, repository: Any, clock: Clock) -> int:
    print_show(args, _as_they_wait(repository), clock.now(), scheduled=_led(repository))
    return 0


def _as_they_wait(repository: Any) -> Any:
    """A task whose dispatched run no node has taken reads as waiting, and why."""
    from taskgui.store.postgres.waiting import AsTheyWait  # noqa: PLC0415

    return AsTheyWait(repository)


def _led(repository: Any) -> bool:
    """Whether a node leads the schedule now (else a due task waits for one)."""
    from taskgui.store.postgres.cluster import Cluster  # noqa: PLC0415

    return Cluster(repository.session, "").leader()[0] is not None


def _history(args: argparse.Namespace, repository: Any, clock: Clock) -> int:
    repository.get(args.id)
    runs = repository.runs(args.id, args.limit)
    nodes = repository.run_nodes([run.id for run in runs])
    if args.json:
        print(
            cli_format.json_text(
                [{**cli_format.run_json(run), "node": nodes.get(run.id)} for run in runs]
            )
        )
    elif not runs:
        print(f"task {args.id} has not run yet")
    else:
        print("\n".join(cli_format.history_table(runs)))
    return 0


def _export(args: argparse.Namespace, repository: Any, clock: Clock) -> int:
    return cli_transfer.export(args, repository, clock, note)


def _import(args: argparse.Namespace, repository: Any, clock: Clock) -> int:
    client = shared_changes.shared_client(repository, clock)
    return cli_transfer.import_(args, args.parsed_import, client, clock)


def _nodes(args: argparse.Namespace, repository: Any, clock: Clock) -> int:
    from taskgui.store.postgres.cluster import Cluster  # noqa: PLC0415

    listed = Cluster(repository.session, "").nodes(SILENT_AFTER)
    rows = [
        {
            "name": node.name,
            "leader": node.leader,
            "pid": node.pid,
            "host": node.host,
            "last_heartbeat": cli_format.iso(node.last_heartbeat),
            "running": node.running,
            "version": node.version,
            "clock_offset_ms": round(node.clock_offset_ms, 1),
            "clock_off": node.clock_off,
            "answering": node.alive,
            "tags": list(node.tags),
        }
        for node in listed
    ]
    for node in listed:  # on stderr, so a script reading the JSON still sees it
        if node.clock_off:
            note(
                f"node {visible(node.name)}'s clock is {node.clock_offset_ms:+.0f} ms off the "
                "database's (more than 1 s): leases do not depend on it, but the times it "
                "shows and its commands see are off; set up NTP on that machine"
            )
    if args.json:
        print(cli_format.json_text(rows))
        return 0
    if not rows:
        print("no nodes have joined this schedule yet (start 'taskgui daemon' on one)")
        return 0
    table = [
        [
            visible(node.name),
            "yes" if node.leader else "",
            str(node.pid),
            visible(node.host),
            cli_format.local(node.last_heartbeat),
            str(node.running),
            visible(node.version),
            f"{node.clock_offset_ms:+.0f} ms",
            # Where a run pinned to a tag (add --on-tag) may go: the tags it joined with.
            visible(",".join(node.tags)) or "-",
            "" if node.alive else "not answering",
        ]
        for node in listed
    ]
    headers = [
        "name", "leader", "pid", "host", "last heartbeat", "running", "version", "clock", "tags"
    ]  # fmt: skip
    print("\n".join(cli_format.table([*headers, ""], table, numeric={2, 5})))
    return 0


def _needs_postgres(args: argparse.Namespace, clock: Clock) -> int:
    raise NotOnPostgresError(
        "'taskgui nodes' lists the nodes of a shared schedule: give --db postgresql://..."
    )


def _migrate(args: argparse.Namespace, clock: Clock) -> int:
    from taskgui.store.postgres.moving_in import move_in  # noqa: PLC0415
    from taskgui.store.postgres.repository import PostgresRepository  # noqa: PLC0415

    target = args.to.strip()
    if not is_dsn(target):
        raise NotOnPostgresError(
            "--to needs a PostgreSQL DSN (postgresql://... or host=... dbname=...)"
        )
    source = resolve_database_path(args.db)
    if not source.exists():
        raise NotOnPostgresError(f"{source} does not exist: there is nothing to move")
    repository = PostgresRepository(target, listen=False)
    try:
        report = move_in(source, repository)
    finally:
        repository.close()
    print(
        f"moved {report.tasks} task(s), {report.runs} run(s) and {report.quarantined} "
        f"set-aside task(s) from {visible(str(source))} to {redact(target)}"
    )
    return 0


# By the name of the main parser's handler for the command, less its "cmd_" prefix.
_SHARED = {
    "add": _add,
    "list": _list,
    "show": _show,
    "history": _history,
    "change": shared_changes.change,
    "edit": shared_changes.edit,
    "export": _export,
    "import": _import,
}
