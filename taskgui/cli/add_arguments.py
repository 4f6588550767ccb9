"""``taskgui add``: its flags, and turning them into a validated ``TaskSpec``.

Kept apart from ``cli.py`` because it is the one command with real input rules: times
(a naive ``--at`` is local wall time), durations (``core.duration``), the cron time
zone (the machine's own zone unless told otherwise) and how the retry flags combine.
Everything that core validation can judge is left to core, so the dialog and the CLI
reject the same things with the same words.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

from taskgui.core.conditions import RunConditions
from taskgui.core.dependencies import After, Upstream
from taskgui.core.duration import parse_duration
from taskgui.core.errors import InvalidTaskError
from taskgui.core.iso_time import read_iso
from taskgui.core.notify_rules import NotifyRule, parse_rule
from taskgui.core.recurrence import Cron, Every, EveryMode, Once, Recurrence
from taskgui.core.retry import DEFAULT_MAX_DELAY, MAX_ATTEMPTS_LIMIT, Backoff, RetryPolicy
from taskgui.core.spread import Spread
from taskgui.core.states import MisfirePolicy, OverlapPolicy
from taskgui.core.task import (
    DEFAULT_MISFIRE_GRACE,
    PRIORITY_MAX,
    PRIORITY_MIN,
    Command,
    TaskSpec,
)
from taskgui.core.text_rules import quoted
from taskgui.core.wake import WakePolicy, parse_wake_policy
from taskgui.system.local_zone import local_wall_time, local_zone_name


class AddUsageError(InvalidTaskError):
    """Flags that do not fit together (exit status 2, like any invalid input)."""


# ------------------------------------------------------------------ argument types


def duration_arg(text: str) -> timedelta:
    """An argparse type for ``30s``, ``5m``, ``1h30m``, ``2d``."""
    try:
        return parse_duration(text)
    except InvalidTaskError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


_MAX_DIGITS = 30  # anything longer is out of range; int() need not read a novel


def whole_number(minimum: int, maximum: int) -> Callable[[str], int]:
    """An argparse type for a whole number from ``minimum`` to ``maximum``; the error
    quotes what was given cut short (argparse's own echoes 5,000 digits back)."""

    def parse(text: str) -> int:
        try:
            value = int(text) if len(text) <= _MAX_DIGITS else None
        except ValueError:
            value = None
        if value is None or not minimum <= value <= maximum:
            raise argparse.ArgumentTypeError(
                f"expected a whole number from {minimum:,} to {maximum:,}, not {quoted(text)}"
            )
        return value

    return parse


priority_arg = whole_number(PRIORITY_MIN, PRIORITY_MAX)


def datetime_arg(text: str) -> datetime:
    """An argparse type for ISO 8601; a time without an offset is local wall time."""
    moment = read_iso(text)
    if moment is None:
        raise argparse.ArgumentTypeError(
            f"cannot read {quoted(text)} as a date and time; write it like 2026-03-01T09:30 "
            "(local time) or 2026-03-01T09:30+01:00"
        )
    try:
        if moment.tzinfo is None:
            moment = local_wall_time(moment)  # this machine's clocks, DST gaps included
        return moment.astimezone(UTC)
    except (ValueError, OverflowError, OSError):
        # A valid date within a day of the calendar's ends (year 1, 9999) that cannot
        # be moved to UTC or the local zone. Every time from 0001-01-02 to 9999-12-30
        # can, in every zone (offsets are under a day), and so is accepted.
        raise argparse.ArgumentTypeError(
            f"{quoted(text)} is too close to the ends of the calendar; give a time from "
            "0001-01-02 to 9999-12-30"
        ) from None


def wake_arg(text: str) -> WakePolicy:
    """An argparse type for ``now``, ``ask``, ``spread:10m``."""
    try:
        return parse_wake_policy(text)
    except InvalidTaskError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def notify_arg(text: str) -> NotifyRule:
    """An argparse type for ``on-failure|after:N|on-recovery|on-give-up|never``."""
    try:
        return parse_rule(text)
    except InvalidTaskError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def after_arg(text: str) -> Upstream:
    """An argparse type for ``ID`` or ``ID:succeeded|failed|finished``."""
    task_text, _, outcome = text.partition(":")
    choices = ", ".join(after.value for after in After)
    try:
        task_id = int(task_text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{quoted(text)} is not ID or ID:OUTCOME (outcome one of {choices})"
        ) from None
    if not 0 < task_id < 2**63:
        raise argparse.ArgumentTypeError(f"{quoted(text)}: a task id is a whole number from 1")
    try:
        after = After(outcome) if outcome else After.SUCCEEDED
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{quoted(outcome)} is not an outcome to run after; use one of {choices}"
        ) from None
    return Upstream(task_id, after)


# --------------------------------------------------------------------------- flags


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``taskgui add``; names are part of the scripting contract."""
    parser.add_argument("--name", required=True, help="a name to recognise the task by")
    parser.add_argument("--command", required=True, metavar="CMD", help="the command line")
    when = parser.add_argument_group("when").add_mutually_exclusive_group()
    when.add_argument(
        "--at",
        type=datetime_arg,
        metavar="ISO_DATETIME",
        help="first run time, ISO 8601; without an offset it is local time (default: now)",
    )
    when.add_argument(
        "--in", dest="in_", type=duration_arg, metavar="DURATION", help="first run after DURATION"
    )
    repeat = parser.add_argument_group("repeat (default: run once)")
    every_or_cron = repeat.add_mutually_exclusive_group()
    every_or_cron.add_argument(
        "--every", type=duration_arg, metavar="DURATION", help="repeat, e.g. 30s, 5m, 1h30m, 2d"
    )
    every_or_cron.add_argument("--cron", metavar="EXPR", help="5-field cron, e.g. '0 9 * * 1-5'")
    repeat.add_argument(
        "--fixed-delay",
        action="store_true",
        help="with --every: measure the interval from the end of the previous run",
    )
    repeat.add_argument("--tz", metavar="ZONE", help="with --cron: IANA zone (default: local)")
    retry = parser.add_argument_group("retry (default: 3 attempts, exponential backoff)")
    retry.add_argument(
        "--max-attempts",
        type=whole_number(1, MAX_ATTEMPTS_LIMIT),
        metavar="N",
        help="runs per occurrence; 1: none",
    )
    retry.add_argument(
        "--retry-delay", type=duration_arg, metavar="DURATION", help="first delay (default 10s)"
    )
    retry.add_argument(
        "--retry-max-delay", type=duration_arg, metavar="DURATION", help="cap (default 1h)"
    )
    retry.add_argument("--backoff", choices=[backoff.value for backoff in Backoff])
    retry.add_argument("--jitter", action="store_true", help="spread retries out randomly")
    run = parser.add_argument_group("running")
    run.add_argument(
        "--priority",
        type=priority_arg,
        default=0,
        metavar="INT",
        help="higher runs first (default 0)",
    )
    run.add_argument("--timeout", type=duration_arg, metavar="DURATION", help="stop it after")
    run.add_argument("--key", metavar="KEY", help="tasks sharing a key never run at once")
    run.add_argument(
        "--on-node", metavar="NAME", help="on a shared schedule: run only on this node"
    )
    run.add_argument(
        "--on-tag", metavar="TAG", help="on a shared schedule: run only on a node with this tag"
    )
    run.add_argument(
        "--overlap",
        choices=[policy.value for policy in OverlapPolicy],
        default=OverlapPolicy.SKIP.value,
        help="when the next run is due while one is going (default skip)",
    )
    run.add_argument(
        "--misfire",
        choices=[policy.value for policy in MisfirePolicy],
        default=MisfirePolicy.RUN_ONCE.value,
        help="runs missed while asleep, down or paused, once back or resumed: one "
        "catch-up run, skip them, or run all (default run_once)",
    )
    run.add_argument(
        "--grace",
        type=duration_arg,
        metavar="DURATION",
        help="how late a run may start and still count as on time (default 1m); with "
        "--misfire skip, a run later than this is recorded as missed",
    )
    run.add_argument("--cwd", metavar="DIR", help="run in DIR (relative to here)")
    run.add_argument(
        "--env", action="extend", nargs="+", metavar="NAME=VALUE", help="extra variables"
    )
    run.add_argument(
        "--no-shell", action="store_true", help="split the command into arguments, no shell"
    )
    run.add_argument("--paused", action="store_true", help="add it paused")
    run.add_argument(
        "--spread",
        type=duration_arg,
        metavar="DURATION",
        help="start each run up to DURATION late, at random (a fleet is not all at :00)",
    )
    run.add_argument(
        "--spread-fixed",
        action="store_true",
        help="with --spread: the same offset every time, from the task's id (like cron's H)",
    )
    after = parser.add_argument_group("run after other tasks")
    after.add_argument(
        "--after",
        type=after_arg,
        action="append",
        metavar="ID[:OUTCOME]",
        help="run when task ID ends: succeeded (default), failed or finished; give it "
        "again for 'after all of these'",
    )
    after.add_argument(
        "--only-after",
        action="store_true",
        help="with --after: no schedule of its own, it runs only after those tasks",
    )
    conditions = parser.add_argument_group("conditions (a due run waits until they hold)")
    conditions.add_argument("--on-ac-power", action="store_true", help="only on AC power")
    conditions.add_argument("--network", action="store_true", help="only while online")
    conditions.add_argument(
        "--unmetered", action="store_true", help="only on a connection that is not metered"
    )
    conditions.add_argument(
        "--idle", type=duration_arg, metavar="DURATION", help="only after DURATION of user idle"
    )
    conditions.add_argument(
        "--stop-if-unmet",
        action="store_true",
        help="stop a run when a condition ends (SIGTERM to its processes); it runs again "
        "when they hold, with no attempt spent",
    )
    conditions.add_argument(
        "--give-up-after",
        type=duration_arg,
        metavar="DURATION",
        help="a run that waited this long is counted missed (default: at the next run)",
    )
    run.add_argument(
        "--notify",
        type=notify_arg,
        metavar="RULE",
        help="when to tell you: on-failure, after:N (failures in a row), on-recovery, "
        "on-give-up or never (default: the rule in Settings, on-give-up)",
    )
    run.add_argument(
        "--on-wake",
        type=wake_arg,
        metavar="POLICY",
        help="after a sleep with many runs due at once: now, spread:DURATION "
        "(spread:10m) or ask (default: the policy in Settings or the daemon's --on-wake)",
    )


def edit_after_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """``taskgui edit``'s flags for the tasks it runs after; returns ``parser``."""
    after = parser.add_mutually_exclusive_group()
    after.add_argument(
        "--after",
        type=after_arg,
        action="append",
        metavar="ID[:OUTCOME]",
        help="run after these tasks instead (repeatable; a cycle is refused, named)",
    )
    after.add_argument("--no-after", action="store_true", help="run after no task any more")
    parser.add_argument(
        "--only-after",
        choices=("yes", "no"),
        help="yes: no schedule of its own, only after its tasks; no: keep its schedule",
    )
    return parser


# -------------------------------------------------------------------- the spec


def spec_from_args(args: argparse.Namespace, now: datetime) -> TaskSpec:
    """The task the flags describe; InvalidTaskError (exit 2) when they do not add up."""
    upstreams = tuple(getattr(args, "after", None) or ())
    only_after = bool(getattr(args, "only_after", False))
    if only_after and not upstreams:
        raise AddUsageError("--only-after goes with --after ID")
    if only_after and (args.at or args.in_ or args.every or args.cron):
        raise AddUsageError(
            "--only-after runs the task only after others; drop --at, --in, --every and --cron"
        )
    start = _start(args, now)
    recurrence = _recurrence(args)
    first_run_at = start
    if isinstance(recurrence, Cron):
        # A cron task's first run is its first match at or after the start (--at 09:00
        # with '0 9 * * *' is 09:00 itself), not the moment it was added.
        first_run_at = recurrence.first_at_or_after(start)
    command = Command(
        line=args.command,
        use_shell=not args.no_shell,
        cwd=os.path.abspath(os.path.expanduser(args.cwd)) if args.cwd else None,
        env=env_pairs(args.env or ()),
    )
    return TaskSpec(
        name=args.name,
        command=command,
        first_run_at=first_run_at,
        priority=args.priority,
        recurrence=recurrence,
        retry=retry_policy(args),
        timeout=args.timeout,
        concurrency_key=args.key,
        on_node=getattr(args, "on_node", None),
        on_tag=getattr(args, "on_tag", None),
        overlap=OverlapPolicy(args.overlap),
        misfire=MisfirePolicy(args.misfire),
        misfire_grace=args.grace if args.grace is not None else DEFAULT_MISFIRE_GRACE,
        paused=args.paused,
        notify=getattr(args, "notify", None),
        on_wake=getattr(args, "on_wake", None),
        spread=_spread(args),
        conditions=_conditions(args),
        after=upstreams,
        only_after=only_after,
    )


def _spread(args: argparse.Namespace) -> Spread | None:
    if args.spread is None:
        if args.spread_fixed:
            raise AddUsageError("--spread-fixed goes with --spread DURATION")
        return None
    return Spread(args.spread, fixed=args.spread_fixed)


def _conditions(args: argparse.Namespace) -> RunConditions:
    conditions = RunConditions(
        ac_power=args.on_ac_power,
        network=args.network,
        unmetered=args.unmetered,
        idle_for=args.idle,
        stop_when_unmet=args.stop_if_unmet,
        give_up_after=args.give_up_after,
    )
    for flag, given in (("--give-up-after", args.give_up_after is not None),
                        ("--stop-if-unmet", args.stop_if_unmet)):  # fmt: skip
        if given and not conditions:
            raise AddUsageError(f"{flag} goes with a condition (--on-ac-power, --network, ...)")
    return conditions


def _start(args: argparse.Namespace, now: datetime) -> datetime:
    if args.at is not None:
        start: datetime = args.at
        return start
    if args.in_ is None:
        return now
    delay: timedelta = args.in_
    try:
        return now + delay
    except OverflowError:
        raise InvalidTaskError(f"--in {args.in_} is too far in the future") from None


def _recurrence(args: argparse.Namespace) -> Recurrence:
    if args.fixed_delay and args.every is None:
        raise AddUsageError("--fixed-delay goes with --every")
    if args.tz is not None and args.cron is None:
        raise AddUsageError("--tz goes with --cron")
    if args.every is not None:
        mode = EveryMode.FIXED_DELAY if args.fixed_delay else EveryMode.FIXED_RATE
        return Every(args.every, mode)
    if args.cron is not None:
        return Cron(args.cron, args.tz if args.tz is not None else local_zone_name())
    return Once()


def retry_policy(args: argparse.Namespace) -> RetryPolicy:
    """RetryPolicy() defaults, changed only by the flags given.

    ``--max-attempts 1`` (or ``--backoff none``) means no retry at all; asking for
    attempts and ``--backoff none`` together is contradictory and refused.
    """
    attempts: int | None = args.max_attempts
    if args.backoff == Backoff.NONE.value:
        if attempts not in (None, 1):
            raise AddUsageError("--backoff none never retries; drop --max-attempts or set it to 1")
        return RetryPolicy.no_retry()
    if attempts == 1 and args.backoff is None:
        return RetryPolicy.no_retry()
    defaults = RetryPolicy()
    base = args.retry_delay if args.retry_delay is not None else defaults.base_delay
    cap = args.retry_max_delay
    if cap is None:
        cap = max(DEFAULT_MAX_DELAY, base)  # a long first delay raises the default cap
    return RetryPolicy(
        backoff=Backoff(args.backoff) if args.backoff else Backoff.EXPONENTIAL,
        max_attempts=attempts if attempts is not None else defaults.max_attempts,
        base_delay=base,
        max_delay=cap,
        jitter=args.jitter,
    )


def env_pairs(items: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``NAME=VALUE`` strings as pairs; names are checked by ``Command``."""
    pairs: list[tuple[str, str]] = []
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise AddUsageError(f"--env {item!r} needs the form NAME=VALUE")
        pairs.append((name, value))
    return tuple(pairs)


# ----------------------------------------------------------------- local time zone
