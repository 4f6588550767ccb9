"""What each command does: ``handler(args, ctx) -> exit status``, registered by the parser.

Reads come straight from the database (an absent one reads as empty); changes go
through ``control.store_client``: performed here when nobody runs the schedule, else
requested of the process that does, and waited for.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from taskgui.cli import adding, editing
from taskgui.cli import dependencies as cli_after
from taskgui.cli import output as cli_format
from taskgui.cli import transfer as cli_transfer
from taskgui.cli.change_rules import pause_end, unchanged_note
from taskgui.cli.context import (
    EXIT_OK,
    Context,
    OperationFailedError,
    note,
    print_json,
)
from taskgui.cli.database import client, exists, open_database, reader, scheduled
from taskgui.cli.task_views import print_list, print_show
from taskgui.core.errors import TaskNotFoundError
from taskgui.core.events import TaskRemoved
from taskgui.core.operation import Op
from taskgui.core.task import TaskSpec
from taskgui.store.paths import shared_dsn
from taskgui.store.protocols import TaskRepository


def cmd_add(args: argparse.Namespace, ctx: Context) -> int:
    stored = _add(adding.spec_to_add(args, ctx.clock.now()), ctx)
    print(stored.id)
    return EXIT_OK


def _add(spec: TaskSpec, ctx: Context) -> TaskSpec:
    """Store the task, then tell a running scheduler about it (see store_client)."""
    with open_database(ctx) as repository:
        adding.check_upstreams(spec, repository)
        return client(ctx, repository).add_task(spec)


def cmd_list(args: argparse.Namespace, ctx: Context) -> int:
    with reader(ctx) as repository:
        print_list(args, repository, ctx.clock.now(), scheduled=scheduled(ctx))
    return EXIT_OK


def cmd_show(args: argparse.Namespace, ctx: Context) -> int:
    with reader(ctx) as repository:
        print_show(args, repository, ctx.clock.now(), scheduled=scheduled(ctx))
    return EXIT_OK


def cmd_history(args: argparse.Namespace, ctx: Context) -> int:
    with reader(ctx) as repository:
        repository.get(args.id)  # "no task with id N" rather than an empty history
        runs = repository.runs(args.id, args.limit)
    if args.json:
        print_json([cli_format.run_json(run) for run in runs])
    elif not runs:
        print(f"task {args.id} has not run yet")
    else:
        print("\n".join(cli_format.history_table(runs)))
        if args.output:
            print("\n".join(cli_format.history_outputs(runs)))
    return EXIT_OK


def cmd_change(args: argparse.Namespace, ctx: Context) -> int:
    op: Op = args.op
    if not exists(ctx.database):
        raise TaskNotFoundError(args.id)  # and no database made to say so
    until = pause_end(args, ctx.clock)
    payload = None if until is None else until.isoformat()
    with open_database(ctx) as repository:
        if op is Op.DELETE and _set_aside(repository, args.id):
            # Out of every schedule already (no engine holds it): remove the row here,
            # whoever runs the schedule, rather than ask for a repair by hand.
            repository.apply([TaskRemoved(args.id)], ctx.clock.now())
            print(f"task {args.id} deleted (it was set aside: it could not be read)")
            return EXIT_OK
        snapshot = repository.get(args.id)  # fail fast, before any lock or request
        cli_after.confirm_change(op, snapshot, repository, force=args.force)
        # "pause" of a task paused for a while makes it paused until resumed.
        for_a_while = op is Op.PAUSE and snapshot.spec.paused_until is not None
        unchanged = unchanged_note(op, snapshot) if until is None and not for_a_while else None
        if unchanged is not None:
            print(f"task {args.id} {unchanged}")
            return EXIT_OK
        done_here = client(ctx, repository).change(op, args.id, payload)
        if done_here and op in (Op.RUN_NOW, Op.RETRY_NOW):
            note(
                "no scheduler is running for this database; the run starts when "
                "'taskgui daemon' or the app starts"
            )
    done = args.done if until is None else f"{args.done} until {cli_format.local(until)}"
    print(f"task {args.id} {done}")
    return EXIT_OK


def cmd_edit(args: argparse.Namespace, ctx: Context) -> int:
    """Change the task's own notification rule or wake-up policy ("default": none), or
    the tasks it runs after (checked for tasks that do not exist and for cycles)."""
    editing.changes_after(args)  # a usage error before any database is looked at
    if not exists(ctx.database):
        raise TaskNotFoundError(args.id)
    with open_database(ctx) as repository:
        spec = editing.edited_spec(args, repository)
        client(ctx, repository).update_task(spec)
    print(editing.edited_words(args, spec))
    return EXIT_OK


def _set_aside(repository: TaskRepository, task_id: int) -> bool:
    return any(task.task_id == task_id for task in repository.quarantined())


def cmd_daemon(args: argparse.Namespace, ctx: Context) -> int:
    if ctx.daemon is None:
        raise OperationFailedError("this taskgui has no daemon to start")
    dsn = shared_dsn(args.db)  # a shared schedule: this machine becomes one of its nodes
    database: Path | str = ctx.database if dsn is None else dsn
    return ctx.daemon(
        database, args.workers, ctx.reset_corrupt, args.on_wake, node=args.node, tags=args.node_tag
    )


def cmd_export(args: argparse.Namespace, ctx: Context) -> int:
    cli_transfer.check_export_target(args.file)
    with reader(ctx) as repository:
        return cli_transfer.export(args, repository, ctx.clock, note)


def cmd_import(args: argparse.Namespace, ctx: Context) -> int:
    # Read and check the whole file first: a refused import touches no database.
    parsed = cli_transfer.read_import(args, ctx.clock)
    if args.dry_run and not exists(ctx.database):
        return cli_transfer.report_dry_run(args, parsed, ctx.clock)
    with open_database(ctx) as repository:
        return cli_transfer.import_(args, parsed, client(ctx, repository), ctx.clock)
