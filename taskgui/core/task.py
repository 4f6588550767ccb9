"""A task definition: what to run, when, how urgently, and what to do on failure.

``TaskSpec`` is what a person entered (in the dialog, on the command line, in an
import). It is a frozen value, validated on construction with messages a person can
act on, and changed with ``dataclasses.replace``. Where the task *is* (pending,
retrying, ...) lives in ``TaskStatus``, owned by the engine.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from taskgui.core.conditions import NO_CONDITIONS, RunConditions
from taskgui.core.dependencies import Upstream, check_upstreams
from taskgui.core.duration import check_duration, format_duration
from taskgui.core.errors import InvalidTaskError
from taskgui.core.fast_init import copier, fast_init
from taskgui.core.notify_rules import NotifyRule
from taskgui.core.recurrence import Cron, Once, Recurrence
from taskgui.core.retry import RetryPolicy
from taskgui.core.spread import Spread
from taskgui.core.states import MisfirePolicy, OverlapPolicy
from taskgui.core.text_rules import has_visible_character, nul_problem, utf8_size
from taskgui.core.wake import WakePolicy

TaskId = int

MAX_NAME_LENGTH = 200
MAX_COMMAND_LENGTH = 100_000
MAX_KEY_LENGTH = 200
MAX_CWD_LENGTH = 4_096  # PATH_MAX
# The environment must fit through execve: Linux takes at most 128 KiB per
# "NAME=value" string (MAX_ARG_STRLEN) and about 2 MiB for the arguments and the whole
# environment together (ARG_MAX); the task's own variables get half of that, leaving
# room for the environment it inherits and the command line.
MAX_ENV_VARIABLES = 1_000
MAX_ENV_ENTRY_BYTES = 128 * 1024
MAX_ENV_BYTES = 1024 * 1024
MAX_SHELL_PATH_LENGTH = 4096  # PATH_MAX
PRIORITY_MIN, PRIORITY_MAX = -1_000_000, 1_000_000
DEFAULT_MISFIRE_GRACE = timedelta(seconds=60)
_ZERO = timedelta(0)
ONCE = Once()
DEFAULT_RETRY = RetryPolicy()
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Command:
    """A command line, run through the shell (as cron does) or split into argv.

    ``env`` holds extra variables as sorted (name, value) pairs, so the value stays
    hashable and compares equal regardless of the order they were given in.
    ``shell_path`` is the shell that runs the line (``/bin/sh`` when None), as a
    crontab's ``SHELL=`` chooses it for the lines below it: bash-only syntax such as
    ``source`` or ``&>>`` means something else, or nothing, to ``/bin/sh``.
    """

    line: str
    use_shell: bool = True
    cwd: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    shell_path: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.line, str) or not self.line.strip():
            raise InvalidTaskError("the command is empty; enter the command line to run")
        if len(self.line) > MAX_COMMAND_LENGTH:
            raise InvalidTaskError(
                f"the command is longer than {MAX_COMMAND_LENGTH:,} characters; "
                "put it in a script and run the script"
            )
        if "\0" in self.line:
            raise InvalidTaskError("the command contains a NUL character")
        if not self.use_shell:
            _check_splits(self.line)
        if self.cwd is not None:
            self._check_cwd()
        if self.env != ():  # no variables (the usual case): nothing to sort or check
            env = self.env.items() if isinstance(self.env, Mapping) else self.env
            pairs = tuple(sorted((str(name), str(value)) for name, value in env))
            _check_env(pairs)
            object.__setattr__(self, "env", pairs)
        if self.shell_path is not None:
            _check_shell_path(self.shell_path, self.use_shell)

    def _check_cwd(self) -> None:
        if not isinstance(self.cwd, str):
            raise InvalidTaskError("the working folder must be text (a path)")
        if not self.cwd.strip():
            object.__setattr__(self, "cwd", None)
            return
        problem = nul_problem(self.cwd, "the working folder")
        if problem:
            raise InvalidTaskError(problem)
        if len(self.cwd) > MAX_CWD_LENGTH:
            raise InvalidTaskError(
                f"the working folder is longer than {MAX_CWD_LENGTH:,} characters"
            )

    @property
    def env_dict(self) -> dict[str, str]:
        return dict(self.env)


def _check_env(pairs: tuple[tuple[str, str], ...]) -> None:
    """Names valid and unique, no NUL, and the whole within what execve accepts."""
    if len(pairs) > MAX_ENV_VARIABLES:
        raise InvalidTaskError(
            f"{len(pairs):,} environment variables is too many; a task takes at most "
            f"{MAX_ENV_VARIABLES:,} (put the rest in a script or a file it reads)"
        )
    total = 0
    for name, value in pairs:
        if not _ENV_NAME.fullmatch(name):
            raise InvalidTaskError(
                f"environment variable name {name[:60]!r} is not valid; use letters, digits "
                "and underscores, not starting with a digit"
            )
        if "\0" in value:
            raise InvalidTaskError(f"the value of {name} contains a NUL character")
        size = utf8_size(name) + utf8_size(value) + 2  # "=" and the terminating NUL
        if size > MAX_ENV_ENTRY_BYTES:
            raise InvalidTaskError(
                f"the value of {name} is longer than a program can be given "
                f"({MAX_ENV_ENTRY_BYTES // 1024} KiB); put it in a file the command reads"
            )
        total += size
    if total > MAX_ENV_BYTES:
        raise InvalidTaskError(
            f"the environment variables take {total:,} bytes, more than "
            f"{MAX_ENV_BYTES // 1024} KiB; put the large values in a file the command reads"
        )
    if len({name for name, _ in pairs}) != len(pairs):
        raise InvalidTaskError("an environment variable is given twice")


def _check_splits(line: str) -> None:
    """A line run without the shell is split as a shell would split it: one that
    cannot be (an unclosed quote) is refused here, not found out at every run (each
    failing, its retries spent, as before 2026-12-02)."""
    try:
        shlex.split(line)
    except ValueError as error:
        raise InvalidTaskError(
            f"the command line cannot be split into words ({str(error).lower()}); close "
            "the quote, or run it through the shell"
        ) from None


def _check_shell_path(path: object, use_shell: bool) -> None:
    if not isinstance(path, str) or not path.startswith("/") or "\0" in path:
        raise InvalidTaskError(f"the shell must be an absolute path like /bin/bash, not {path!r}")
    if len(path) > MAX_SHELL_PATH_LENGTH or path != path.strip():
        raise InvalidTaskError(f"the shell path {path[:60]!r} is not a usable path")
    if not use_shell:
        raise InvalidTaskError("a shell is given, but the command does not run through one")


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class TaskSpec:
    """Everything a person decides about a task.

    ``id`` is 0 until a repository assigns one. ``paused`` is the person's switch
    (like "disabled" in other schedulers): a paused task keeps its place in the
    schedule but starts no scheduled runs. A task whose schedule cannot run (a stored
    cron expression this taskgui refuses, ``recurrence.refusal``) is always paused.
    """

    name: str
    command: Command
    first_run_at: datetime
    id: TaskId = 0
    priority: int = 0
    # Shared defaults: frozen values, so one instance serves every task (building a
    # RetryPolicy per task would cost 2 µs of an add's 10 µs budget).
    recurrence: Recurrence = ONCE
    retry: RetryPolicy = DEFAULT_RETRY
    timeout: timedelta | None = None
    concurrency_key: str | None = None
    overlap: OverlapPolicy = OverlapPolicy.SKIP
    misfire: MisfirePolicy = MisfirePolicy.RUN_ONCE
    misfire_grace: timedelta = DEFAULT_MISFIRE_GRACE
    paused: bool = False
    # When to tell a person about its runs; None follows the default in the settings.
    notify: NotifyRule | None = None
    # Each occurrence starts up to this much late (see core/spread.py).
    spread: Spread | None = None
    # What the machine must be doing for a run to start (see core/conditions.py).
    conditions: RunConditions = NO_CONDITIONS
    # A pause for a while: the task resumes by itself then. Only with ``paused``.
    paused_until: datetime | None = None
    # What a wake-up with many runs due does with this one's (core/wake.py); None:
    # the global policy.
    on_wake: WakePolicy | None = None
    # Run after these tasks end as each edge says (core/dependencies.py), sorted.
    after: tuple[Upstream, ...] = ()
    # No schedule of its own: it runs only when its upstream triggers it.
    only_after: bool = False
    # On a shared schedule: run only on the node of this name, or on a node with this
    # tag ("only where the backup disk is"); None: on any node. A file's schedule has
    # one node, which runs everything.
    on_node: str | None = None
    on_tag: str | None = None

    def __post_init__(self) -> None:
        # Each check has a fast path for the usual value (a plain ASCII name, ids and
        # priorities that are ints, UTC times, the shared defaults), which passes as it
        # is, with no normalising write; anything else takes the full check. An add
        # builds one of these, and this method was most of the add's cost.
        name = self.name
        if not (
            type(name) is str
            and 0 < len(name) <= MAX_NAME_LENGTH
            and name.isascii()
            and name.isprintable()  # no NUL, no control; with the ends, visible
            and name[0] != " "
            and name[-1] != " "
        ):
            object.__setattr__(self, "name", _checked_name(name))
        if self.notify is not None and not isinstance(self.notify, NotifyRule):
            raise InvalidTaskError("the notification rule must be a NotifyRule (or none)")
        if getattr(self.recurrence, "refusal", None) is not None and not self.paused:
            object.__setattr__(self, "paused", True)
        task_id = self.id
        if (
            type(task_id) is not int and (isinstance(task_id, bool) or not isinstance(task_id, int))
        ) or task_id < 0:
            raise InvalidTaskError(f"task ids are whole numbers from 1, not {task_id!r}")
        priority = self.priority
        if type(priority) is not int and (
            isinstance(priority, bool) or not isinstance(priority, int)
        ):
            raise InvalidTaskError("the priority must be a whole number")
        if not PRIORITY_MIN <= priority <= PRIORITY_MAX:
            raise InvalidTaskError(
                f"the priority must be between {PRIORITY_MIN:,} and {PRIORITY_MAX:,}"
            )
        first = self.first_run_at
        if not (type(first) is datetime and first.tzinfo is UTC):
            if not isinstance(first, datetime) or first.utcoffset() is None:
                raise InvalidTaskError(
                    "the first run time must be a date and time with a time zone"
                )
            if first.tzinfo is not UTC:
                object.__setattr__(self, "first_run_at", first.astimezone(UTC))
        if isinstance(self.recurrence, Cron) and self.first_run_at >= _LATE_START:
            self.recurrence.first_at_or_after(self.first_run_at)  # is there a first run?
        if self.timeout is not None:
            check_duration(self.timeout, "the timeout")
            if self.timeout <= _ZERO:
                raise InvalidTaskError("the timeout must be longer than zero (or none)")
        if self.concurrency_key is not None:
            object.__setattr__(self, "concurrency_key", _checked_key(self.concurrency_key))
        if self.on_node is not None:
            object.__setattr__(self, "on_node", _checked_key(self.on_node, "the node name"))
        if self.on_tag is not None:
            object.__setattr__(self, "on_tag", _checked_key(self.on_tag, "the node tag"))
        if self.misfire_grace is not DEFAULT_MISFIRE_GRACE:
            check_duration(self.misfire_grace, "the misfire grace period")
            if self.misfire_grace < _ZERO:
                raise InvalidTaskError("the misfire grace period cannot be negative")
        if type(self.overlap) is not OverlapPolicy or type(self.misfire) is not MisfirePolicy:
            self._check_policies()
        if self.spread is not None:
            self._check_spread()
        if self.conditions is not NO_CONDITIONS and not isinstance(self.conditions, RunConditions):
            raise InvalidTaskError("the run conditions must be RunConditions")
        if self.paused_until is not None:
            self._check_paused_until()
        if self.on_wake is not None and not isinstance(self.on_wake, WakePolicy):
            raise InvalidTaskError("the wake-up policy must be a WakePolicy (or none)")
        if self.after or self.only_after:
            self._check_after()

    def _check_policies(self) -> None:
        """The overlap and misfire policies as their enums (a stored or typed string
        becomes one), or InvalidTaskError naming the choices."""
        for attr, enum in (("overlap", OverlapPolicy), ("misfire", MisfirePolicy)):
            value = getattr(self, attr)
            if not isinstance(value, enum):
                try:
                    object.__setattr__(self, attr, enum(value))
                except ValueError:
                    choices = ", ".join(member.value for member in enum)
                    raise InvalidTaskError(
                        f"{attr} policy {value!r} is not one of {choices}"
                    ) from None

    def _check_after(self) -> None:
        if not self.after:
            if self.only_after:
                raise InvalidTaskError(
                    "a task that runs only after others must name at least one task to run after"
                )
            return
        if not all(isinstance(edge, Upstream) for edge in self.after):
            raise InvalidTaskError("'run after' must list Upstream edges")
        object.__setattr__(self, "after", check_upstreams(self.id, self.after))
        if self.only_after and self.recurrence.is_recurring:
            raise InvalidTaskError(
                "a task that runs only after others has no schedule of its own; "
                "drop the schedule or the 'only after'"
            )

    def _check_paused_until(self) -> None:
        until = self.paused_until
        if until is None:
            return
        if not self.paused:
            object.__setattr__(self, "paused_until", None)  # resumed: nothing to wait for
            return
        if not isinstance(until, datetime) or until.utcoffset() is None:
            raise InvalidTaskError("a pause's end must be a date and time with a time zone")
        if until.tzinfo is not UTC:
            object.__setattr__(self, "paused_until", until.astimezone(UTC))

    def _check_spread(self) -> None:
        """A spread shorter than the gap between two occurrences, or runs would swap
        order and a late start could pass the next occurrence's own."""
        if self.spread is None:
            return
        if not isinstance(self.spread, Spread):
            raise InvalidTaskError("the spread must be a Spread")
        first = self.recurrence.first_at_or_after(self.first_run_at)
        second = self.recurrence.next_after(first)
        if second is not None and self.spread.width >= second - first:
            raise InvalidTaskError(
                f"the spread ({format_duration(self.spread.width)}) must be shorter than "
                f"the time between two runs ({format_duration(second - first)})"
            )

    def with_id(self, task_id: TaskId) -> TaskSpec:
        """This definition under a new id (a repository assigns ids on insert).

        A field-by-field copy rather than ``replace``, which would run
        ``__post_init__`` again: every other field already passed it, and its
        normalisations are idempotent, so re-running it only repeated work (a third of
        the cost of a bulk import). The new id is the one unchecked value, so anything
        but a whole number from 0 still goes through ``replace`` and fails exactly as
        before; so does a subclass, whose extra fields this copy would not know.
        """
        if type(task_id) is not int or task_id < 0 or type(self) is not TaskSpec:
            return replace(self, id=task_id)
        return _copy_with_id(self, task_id)

    @property
    def max_attempts(self) -> int:
        return self.retry.max_attempts

    def describe_schedule(self) -> str:
        """Human text for the schedule, e.g. 'every 5 minutes' or 'once'."""
        return self.recurrence.describe()


# A cron schedule matches at least every 8 years (29 February skips a leap year once
# a century), so only a start this close to the end of the calendar can have no run.
_LATE_START = datetime(9990, 1, 1, tzinfo=UTC)


def _checked_name(value: object) -> str:
    """The name stripped; InvalidTaskError unless it is text a person can see and tell."""
    name = value.strip() if isinstance(value, str) else ""
    if not name:
        raise InvalidTaskError("the task needs a name")
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidTaskError(f"the name is longer than {MAX_NAME_LENGTH} characters")
    problem = nul_problem(name, "the name")
    if problem:
        raise InvalidTaskError(problem)
    if not has_visible_character(name):
        raise InvalidTaskError(
            "the name has no visible character (only spaces, zero-width or direction "
            "marks); give it a name you can read"
        )
    return name


def name_is_canonical(name: str) -> bool:
    """True when ``_checked_name`` would accept ``name`` unchanged (the store's fast path)."""
    if not 0 < len(name) <= MAX_NAME_LENGTH or name.strip() != name:
        return False
    if name.isascii() and name.isprintable():  # non-blank printable ASCII: visible
        return True
    return "\0" not in name and has_visible_character(name)


def _checked_key(value: str | None, what: str = "the concurrency key") -> str | None:
    """A key (or node name, node tag) stripped (blank: none), NUL-free and at most 200
    characters."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidTaskError(f"{what} must be text")
    key = value.strip()
    if not key:
        return None
    if len(key) > MAX_KEY_LENGTH:
        raise InvalidTaskError(
            f"{what} is longer than {MAX_KEY_LENGTH} characters; a short "
            "word that tasks share is enough"
        )
    problem = nul_problem(key, what)
    if problem:
        raise InvalidTaskError(problem)
    return key


# For TaskSpec.with_id: every field copied through the class's twin (core/fast_init),
# the id replaced; a bulk import makes one copy per task.
_copy_with_id: Callable[[TaskSpec, TaskId], TaskSpec] = copier(TaskSpec, "id")
