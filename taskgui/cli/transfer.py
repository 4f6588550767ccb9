"""``taskgui export`` and ``taskgui import``: flags, reading and writing, the report.

Kept out of ``cli.commands`` so that file only dispatches the two commands. The rules
that matter (the file format, the crontab, what is skipped) live in ``core``; the
writes in ``control.transfer``; reaching a running scheduler in
``control.store_client``. What is here is the part only a command line has: files
and stdin, and how the report is printed.

Import reaches a running scheduler the way ``taskgui add`` does: the tasks are
inserted in one transaction, then a running scheduler is told about each. With
``--replace`` the replaced tasks must also leave the schedule: with no scheduler
running, the CLI takes the lock and deletes them through the engine itself; while one
runs, it asks that process to delete them and waits for its answers. The add is
atomic either way; the deletes follow it (see ``control.transfer``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from taskgui.cli.output import json_text
from taskgui.control.store_client import StoreClient
from taskgui.control.transfer import PartialImportError, export_document, replace_planned
from taskgui.core.clock import Clock
from taskgui.core.errors import InvalidTaskError, TaskguiError
from taskgui.core.operation import Op
from taskgui.core.recurrence import load_zone
from taskgui.core.task import TaskId, TaskSpec
from taskgui.core.terminal_text import visible_json
from taskgui.core.transfer.crontab import parse_crontab
from taskgui.core.transfer.export_file import TransferFormatError, dump_document, parse_document
from taskgui.core.transfer.plan import ImportPlan, ParsedImport, plan_import
from taskgui.store.protocols import TaskRepository
from taskgui.system.accounts import crontab_source
from taskgui.system.files import (
    MAX_IMPORT_BYTES,
    read_bounded_text,
    read_import_file,
    refuse_unless_regular,
    write_private,
)
from taskgui.system.local_zone import local_zone_name

STDIO = "-"
Note = Callable[[str], None]

EXPORT_SUMMARY = "Write every task definition as JSON (to stdout without FILE)."
EXPORT_EXAMPLES = """
taskgui export backup.json
taskgui export --with-history > everything.json
"""
IMPORT_SUMMARY = "Import tasks from an export file or a crontab."
IMPORT_DESCRIPTION = """\
Import tasks from a file written by 'taskgui export', or with --crontab from a
crontab. The whole file is checked first; then every task is added in one
transaction, or none is. A task whose name already exists is skipped (with
--replace, the existing task is deleted and the imported one added). Tasks that
had finished when they were exported are left out, and run history in the file is
not imported. The report lists what was added and every line or task that was
skipped, with the reason.

Crontab: five-field entries and @hourly/@daily/@weekly/@monthly/@yearly become cron
tasks (no retries, as in cron), read as cronie reads them; VAR=value lines set the
environment of the entries below them, CRON_TZ their time zone, SHELL the shell they
run with and HOME their working folder; the comment lines directly above an entry
name it. A system crontab (/etc/crontab, /etc/cron.d/*) has a user after each
schedule: the lines for you are imported without it, the others are reported. @reboot
and lines that cannot be converted are reported, never dropped.
"""
IMPORT_EXAMPLES = """
taskgui import backup.json
taskgui import --replace --dry-run backup.json
crontab -l | taskgui import --crontab -
taskgui import --crontab --tz Europe/Berlin --json old-crontab.txt
sudo taskgui import --crontab --dry-run /etc/crontab
"""


# --------------------------------------------------------------------------- flags


def export_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file", nargs="?", metavar="FILE", help="where to write (default or '-': stdout)"
    )
    parser.add_argument(
        "--with-history", action="store_true", help="add every task's recorded runs"
    )


def import_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = IMPORT_DESCRIPTION
    parser.add_argument("file", metavar="FILE", help="the file to read; '-' reads stdin")
    parser.add_argument(
        "--crontab", action="store_true", help="FILE is a crontab (e.g. from 'crontab -l')"
    )
    kind = parser.add_mutually_exclusive_group()
    kind.add_argument(
        "--system-crontab",
        dest="system",
        action="store_const",
        const=True,
        help="with --crontab: it has a user after each schedule, like /etc/crontab "
        "(default: recognised by its path or its lines)",
    )
    kind.add_argument(
        "--user-crontab",
        dest="system",
        action="store_const",
        const=False,
        help="with --crontab: it has no user column, like the output of 'crontab -l'",
    )
    parser.add_argument(
        "--replace",
        action="store_true",
        help="delete existing tasks that have an imported task's name, instead of skipping",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="show what would be imported; change nothing"
    )
    parser.add_argument(
        "--tz",
        metavar="ZONE",
        help="with --crontab: the zone of schedules before any CRON_TZ line (default: local)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


# -------------------------------------------------------------------------- export


def check_export_target(name: str | None) -> None:
    """Refuse (exit 2) an export file name that names no file to replace: empty, a
    folder, or something that is not a regular file (a pipe, a device, a link)."""
    if name in (None, STDIO):
        return
    assert name is not None
    if not name.strip():
        raise InvalidTaskError("the export file name is empty; give a file name, or '-' for stdout")
    target = Path(name)
    if not target.name or target.name == ".." or target.is_dir():
        raise InvalidTaskError(f"{name} is a folder; give the name of a file to write")
    try:
        refuse_unless_regular(target)
    except OSError as error:
        raise InvalidTaskError(f"{error.strerror} ({name})") from None


def export(
    args: argparse.Namespace,
    repository: TaskRepository,
    clock: Clock,
    note: Note,
    *,
    stdout: TextIO | None = None,
) -> int:
    """Write the document to FILE (created private: definitions may hold secrets)."""
    document = export_document(repository, clock.now(), with_history=args.with_history)
    quarantined = repository.quarantined()
    if quarantined:
        ids = ", ".join(str(task.task_id) for task in quarantined)
        note(f"{len(quarantined)} damaged task(s) could not be read and are not exported: {ids}")
    text = dump_document(document)
    if args.file in (None, STDIO):
        (stdout or sys.stdout).write(visible_json(text))  # the same JSON, terminal-safe
        return 0
    write_private(Path(args.file), text)
    count = len(document["tasks"])
    print(f"exported {count} task{'' if count == 1 else 's'} to {args.file}", file=stdout)
    return 0


# -------------------------------------------------------------------------- import


def read_import(
    args: argparse.Namespace, clock: Clock, *, stdin: TextIO | None = None
) -> ParsedImport:
    """Read FILE and check all of it; every refusal comes before a database is opened."""
    if args.tz is not None and not args.crontab:
        raise InvalidTaskError("--tz goes with --crontab")
    if args.system is not None and not args.crontab:
        flag = "--system-crontab" if args.system else "--user-crontab"
        raise InvalidTaskError(f"{flag} goes with --crontab")
    text = read_input(args.file, stdin or sys.stdin)
    source = "stdin" if args.file == STDIO else args.file
    try:
        if args.crontab:
            zone = args.tz if args.tz is not None else local_zone_name()
            load_zone(zone)
            path = None if args.file == STDIO else args.file
            kind = crontab_source(path, system=args.system)
            return parse_crontab(text, now=clock.now(), default_tz=zone, source=kind)
        return parse_document(text)
    except TransferFormatError as error:
        raise TransferFormatError(f"{source}: {error}", error.problems) from None


def report_dry_run(args: argparse.Namespace, parsed: ParsedImport, clock: Clock) -> int:
    """--dry-run into a database that does not exist yet: planned against no tasks."""
    plan = plan_import(parsed, [], clock.now(), replace_existing=args.replace)
    _print_report(args, plan, None)
    return 0


def import_(
    args: argparse.Namespace, parsed: ParsedImport, client: StoreClient, clock: Clock
) -> int:
    """Plan what ``read_import`` read against the existing tasks; write (unless --dry-run)."""
    now = clock.now()
    plan = plan_import(parsed, client.store.list_tasks(), now, replace_existing=args.replace)
    stored = None if args.dry_run else commit(plan, client)
    _print_report(args, plan, stored)
    return 0


def _print_report(
    args: argparse.Namespace, plan: ImportPlan, stored: list[TaskSpec] | None
) -> None:
    """The report of a dry run (``stored`` None) or of what was added."""
    report = plan.report if stored is None else plan.report.done()
    if args.json:
        data = report.to_json()
        if stored is not None:
            data["ids"] = [spec.id for spec in stored]
        print(json_text(data))
    else:
        print(report.render())


def read_input(name: str, stdin: TextIO) -> str:
    """The text of FILE, or of stdin for '-'; a TaskguiError (exit 1) when it cannot be
    read, saying which file and why ("no such file or directory", "is a directory")."""
    if name == STDIO:
        binary = getattr(stdin, "buffer", None)
        if binary is None:  # a text stream of a test, say: bounded all the same
            text = stdin.read(MAX_IMPORT_BYTES + 1)
            if len(text) > MAX_IMPORT_BYTES:
                raise InvalidTaskError(f"stdin is larger than {MAX_IMPORT_BYTES // 2**20} MB")
            return text
        return read_bounded_text("stdin", binary)
    return read_import_file(name)


def commit(plan: ImportPlan, client: StoreClient) -> list[TaskSpec]:
    """Write the plan and make sure whoever runs the schedule follows it; then link the
    tasks that run after others by their new ids (``core.transfer.links``)."""
    stored = _write(plan, client)
    for spec in plan.linked(stored):
        client.update_task(spec)
    return stored


def _write(plan: ImportPlan, client: StoreClient) -> list[TaskSpec]:
    if not plan.to_delete:
        return client.add_tasks(plan.to_add)  # inserted, then announced if scheduled
    return client.here_or_elsewhere(
        here=lambda operations, now: replace_planned(operations, plan, now),
        elsewhere=lambda: _replace_remotely(plan, client),
    )


def _replace_remotely(plan: ImportPlan, client: StoreClient) -> list[TaskSpec]:
    """A scheduler runs: add and announce the new tasks, then ask it to delete the old.

    Not atomic across the two steps: for a moment both the old and the new tasks are
    scheduled, and if a delete is refused or unanswered, both stay (nothing is lost;
    the error names the ids to delete).
    """
    stored = client.store.add_tasks(plan.to_add, client.clock.now()) if plan.to_add else []
    client.announce(stored)
    failed: list[TaskId] = []
    causes: list[str] = []
    for task_id in plan.delete_ids:
        try:
            client.request(Op.DELETE, task_id)
        except TaskguiError as error:
            failed.append(task_id)
            causes.append(str(error))
    if failed:
        raise PartialImportError(stored, failed, "; ".join(dict.fromkeys(causes)))
    return stored
