"""``taskgui edit``: what the flags change in a task, checked before anyone performs it.

Written once for the file and the shared (PostgreSQL) schedule: the same refusals in
the same words (nothing to change, a task that does not exist, an upstream that does
not exist, a cycle), the same definition sent to whoever runs the schedule, the same
line printed. Only the way the change reaches that engine differs (``commands`` and
``shared_changes``).
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from taskgui.cli import dependencies as cli_after
from taskgui.cli.context import UsageError, note
from taskgui.core.task import TaskSpec
from taskgui.store.protocols import TaskRepository


def changes_after(args: argparse.Namespace) -> bool:
    """Whether the edit rewires "run after"; UsageError when it changes nothing."""
    rewires = args.after is not None or args.no_after or args.only_after is not None
    if args.notify is None and args.on_wake is None and not rewires:
        raise UsageError(
            "say what to change: --notify RULE, --on-wake POLICY, --after ID or --only-after"
        )
    return rewires


def edited_spec(args: argparse.Namespace, repository: TaskRepository) -> TaskSpec:
    """The task's definition as the flags change it (TaskNotFoundError, or
    InvalidTaskError for an upstream that does not exist or a cycle, named)."""
    spec = repository.get(args.id).spec
    if args.notify is not None:
        spec = replace(spec, notify=None if args.notify == "default" else args.notify)
    if args.on_wake is not None:
        spec = replace(spec, on_wake=None if args.on_wake == "default" else args.on_wake)
    if changes_after(args):
        before = spec
        spec = cli_after.edited(spec, args.after, args.no_after, args.only_after)
        cli_after.check_upstreams(spec, repository.list_tasks())
        _say_what_the_schedule_became(before, spec, args.only_after)
    return spec


def _say_what_the_schedule_became(before: TaskSpec, after: TaskSpec, asked: str | None) -> None:
    """Only-after drops a task's own schedule, and ``--only-after no`` cannot bring a
    dropped one back: say so, rather than let it go unnoticed (a trial found an
    every-15-minutes task turned into a one-off by a yes and a no)."""
    if after.only_after and before.recurrence.is_recurring:
        note(
            f"task {after.id}'s own schedule ({before.recurrence.describe()}) is dropped: "
            "it now runs only after its tasks; --only-after no will not bring it back"
        )
    elif asked == "no" and before.only_after and not after.recurrence.is_recurring:
        note(
            f"task {after.id} has no schedule of its own (only-after dropped it): it runs "
            "once; set a schedule in the window's editor"
        )


def edited_words(args: argparse.Namespace, spec: TaskSpec) -> str:
    """What ``edit`` prints once the change is made."""
    notify = spec.notify.text if spec.notify else "default"
    on_wake = spec.on_wake.text if spec.on_wake else "default"
    after = f", {cli_after.after_words(spec)}" if changes_after(args) else ""
    return f"task {args.id} changed: notify {notify}, on wake {on_wake}{after}"
