"""Turning a crontab into cron tasks: pure parsing, every line accounted for.

What is converted, and how (the choices a person can see in the report):

- ``m h dom mon dow command`` and the macros ``@hourly``, ``@daily``/``@midnight``,
  ``@weekly``, ``@monthly``, ``@yearly``/``@annually`` become ``Cron`` tasks; each line
  is read as cronie reads it (``crontab_entry``): a six-field (seconds) line, a command
  option cronie does not know, or a ``%`` that starts stdin is refused with the reason.
- A system crontab (``/etc/crontab``, ``/etc/cron.d/*``) has a user after the schedule.
  It is recognised by the caller (an option, the file's path) or by its lines: every
  entry has a user of this machine in that column. A line for the user taskgui runs
  as is imported without the user name; a line for another user is refused, naming
  that user, because taskgui would run it as someone else.
- ``VAR=value`` (spaces around ``=`` and matching quotes allowed, as cron does) sets
  the environment of the entries below it; cron expands no variables, nor does this.
  ``CRON_TZ=zone`` sets the time zone of the schedules below it instead (otherwise
  the local zone). ``SHELL=`` is the shell the commands below it run with, and
  ``HOME=`` their working folder too, as in cron. Cron's mail settings (``MAILTO``,
  ...) are not applied; each is listed as a note saying why.
- A task's name is its comment: the ``#`` lines directly above the entry (back to a
  blank or empty ``#`` line), joined. Commented-out entries, the ``m h dom mon dow
  command`` header and the rulers drawn under it are not names. Without a comment,
  the start of the command is. Names that repeat within one crontab get " (2)", ...
- ``@reboot``, and any line that is none of the above, is skipped with the reason.

Cron tasks never retry (as in cron) and keep the misfire policy run_once; the report
says so. Nothing here reads a file or a clock: the caller passes text, ``now`` and
what it knows of the machine (``CrontabSource``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import PurePosixPath

from taskgui.core.errors import InvalidTaskError
from taskgui.core.recurrence import Cron, load_zone, normalize_cron
from taskgui.core.retry import RetryPolicy
from taskgui.core.states import MisfirePolicy
from taskgui.core.task import MAX_NAME_LENGTH, Command, TaskSpec
from taskgui.core.transfer.crontab_entry import Entry, read_entry
from taskgui.core.transfer.plan import Candidate, ParsedImport
from taskgui.core.transfer.report import SkippedItem

DERIVED_NAME_LENGTH = 40
NO_RETRY = RetryPolicy.no_retry()
_ENV_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)")
# Words of the column header ("m h dom mon dow command") and of the ruler drawn under
# it in Debian's /etc/crontab ("|  .---- day of week (0 - 6) (Sunday=0 or 7) OR sun,...").
# fmt: off
_HEADER_WORDS = frozenset((
    "m", "h", "min", "mins", "minute", "minutes", "hr", "hour", "hours", "dom", "day",
    "days", "of", "month", "months", "mon", "dow", "week", "weekday", "weekdays", "wday",
    "command", "commands", "cmd", "user", "username", "name", "to", "be", "executed",
))
_RULER_WORDS = frozenset((
    "or", "and", "sunday", "monday", "tuesday", "wednesday", "thursday", "friday",
    "saturday", "sun", "tue", "wed", "thu", "fri", "sat", "jan", "feb", "mar", "apr",
    "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
))
# fmt: on
_DRAWING = re.compile(r"[-|.+=_~^`']{2,}|\|")
# Cron's own settings: (what taskgui does instead). Not passed to the commands.
_CRON_SETTINGS = {
    "MAILTO": "taskgui does not mail output; each run's output is kept in its history",
    "MAILFROM": "taskgui does not mail output; each run's output is kept in its history",
    "CONTENT_TYPE": "taskgui does not mail output",
    "CONTENT_TRANSFER_ENCODING": "taskgui does not mail output",
    "RANDOM_DELAY": "taskgui starts runs on time and has no random delay",
}
_RULES_NOTE = (
    "imported cron tasks behave like cron where taskgui can: no retries, commands run "
    "through the shell in your home folder. They differ in two ways: a run missed while "
    "the schedule was not running is made up once when it runs again (misfire policy "
    "run_once; cron skips it), and a run due while the previous one is still going is "
    "skipped (cron would start a second copy)"
)
SYSTEM_CRONTABS = (PurePosixPath("/etc/crontab"), PurePosixPath("/etc/cron.d"))


@dataclass(frozen=True, slots=True, kw_only=True)
class CrontabSource:
    """What the caller knows about the crontab and the machine.

    ``system``: True when the crontab has a user column (an option said so, or its
    path is a system crontab's: ``is_system_crontab``), False when it has none, None
    to recognise it from the lines. ``user``: the account taskgui runs commands as.
    ``accounts``: the machine's account names, by which a user column is recognised.
    """

    system: bool | None = None
    user: str | None = None
    accounts: frozenset[str] = frozenset()
    why_system: str = "the option given"


def is_system_crontab(path: str) -> bool:
    """True for /etc/crontab and the files in /etc/cron.d (pure: reads no file)."""
    where = PurePosixPath(path)
    return where == SYSTEM_CRONTABS[0] or where.parent == SYSTEM_CRONTABS[1]


@dataclass(slots=True)
class _State:
    """What the lines read so far mean for the next entry."""

    zone: str
    zone_error: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    shell: str | None = None
    home: str | None = None
    comment: list[str] = field(default_factory=list)
    names: set[str] = field(default_factory=set)


def parse_crontab(
    text: str, *, now: datetime, default_tz: str, source: CrontabSource | None = None
) -> ParsedImport:
    """Every convertible entry of ``text`` as a candidate; every other line as skipped.

    ``now`` is when the import happens (each task's first run is its first match
    after it); ``default_tz`` is the IANA zone of schedules before any CRON_TZ line.
    """
    load_zone(default_tz)
    source = source or CrontabSource()
    lines = list(_lines(text))
    system = source.system
    why = source.why_system
    if system is None:
        system = _has_user_column(lines, source.accounts)
        why = "every entry has a user of this machine after its schedule"
    state = _State(zone=default_tz)
    candidates: list[Candidate] = []
    skipped: list[SkippedItem] = []
    notes: list[str] = []
    for number, line in lines:
        where = f"line {number}"
        body = line.strip()
        if not body:
            state.comment.clear()
        elif body.startswith("#"):
            _read_comment(body, state)
        elif match := _ENV_LINE.fullmatch(body):
            state.comment.clear()
            problem = _read_setting(match[1], _unquote(match[2].strip()), where, state, notes)
            if problem:
                skipped.append(SkippedItem(where, line, problem))
        else:
            name = " ".join(state.comment)
            state.comment.clear()
            try:
                entry = read_entry(body, system=system)
                spec = _task(entry, name, state, now, source.user)
            except InvalidTaskError as error:
                skipped.append(SkippedItem(where, line, str(error)))
            else:
                candidates.append(Candidate(where, line, spec))
                notes.extend(f"{where}: {note}" for note in entry.notes)
    if system:
        notes.insert(0, _system_note(why, source.user))
    if candidates:
        notes.append(_RULES_NOTE)
        notes.append(
            f"schedules use the time zone {default_tz} unless a CRON_TZ line above them "
            "says otherwise"
        )
    return ParsedImport(candidates=tuple(candidates), skipped=tuple(skipped), notes=tuple(notes))


def _lines(text: str) -> Iterator[tuple[int, str]]:
    # splitlines() would also split on form feeds and other separators cron keeps.
    for number, line in enumerate(text.split("\n"), start=1):
        yield number, line.removesuffix("\r")


def _has_user_column(lines: list[tuple[int, str]], accounts: frozenset[str]) -> bool:
    """True when every entry line has an account of this machine after its schedule
    and a command after that: then it is a system crontab."""
    known = accounts | {"root"}
    entries = 0
    for _, line in lines:
        body = line.strip().removeprefix("-")
        if not body or body.startswith("#") or _ENV_LINE.fullmatch(body):
            continue
        words = body.split(None, 2 if body.startswith("@") else 6)
        after = words[1:] if body.startswith("@") else words[5:]
        if len(after) < 2 or after[0] not in known:
            return False
        entries += 1
    return entries > 0


def _system_note(why: str, me: str | None) -> str:
    head = f"read as a system crontab, with a user after each schedule ({why})"
    if me is None:
        return f"{head}; no line is imported: taskgui does not know which user it runs as"
    return (
        f"{head}: the lines for {me} are imported without the user name, the lines for "
        "other users are skipped"
    )


def _read_comment(body: str, state: _State) -> None:
    """A comment line: part of the next entry's name, or the end of a comment paragraph."""
    content = body.lstrip("#").strip()
    if not content or _looks_like_crontab_line(content) or _is_header(content):
        # An empty '#' line ends a paragraph; a commented-out entry, the column header
        # or a ruler describes no task below it.
        state.comment.clear()
        return
    state.comment.append(" ".join(content.split()))


def _is_header(content: str) -> bool:
    """True for a column header ('m h dom mon dow command') or a ruler drawn for it."""
    words = re.findall(r"[a-z]+", content.lower())
    drawing = bool(_DRAWING.search(content))
    if not words:
        return True  # punctuation only: a ruler
    vocabulary = _HEADER_WORDS | _RULER_WORDS if drawing else _HEADER_WORDS
    return all(word in vocabulary for word in words) and (drawing or len(words) >= 3)


def _looks_like_crontab_line(text: str) -> bool:
    """True for a commented-out entry or VAR=value line (it names no task below it)."""
    if _ENV_LINE.fullmatch(text):
        return True
    parts = text.split(None, 5)
    if text.startswith("@"):
        return len(parts) >= 2 and _is_macro(parts[0])
    return len(parts) == 6 and _is_expression(parts[:5])


def _is_expression(fields: list[str]) -> bool:
    try:
        normalize_cron(" ".join(fields))
    except InvalidTaskError:
        return False
    return True


def _is_macro(word: str) -> bool:
    return word == "@reboot" or _is_expression([word])


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _read_setting(name: str, value: str, where: str, state: _State, notes: list[str]) -> str | None:
    """Apply a VAR=value line to the entries below; return why it is skipped, if it is."""
    if name == "CRON_TZ":
        try:
            load_zone(value)
        except InvalidTaskError as error:
            state.zone_error = f"its time zone is unknown (CRON_TZ on {where}: {error})"
            return str(error)
        state.zone, state.zone_error = value, None
        return None
    if name in _CRON_SETTINGS:
        notes.append(f"{name}={value} ({where}) is not applied: {_CRON_SETTINGS[name]}")
        return None
    if "\0" in value:
        return f"the value of {name} contains a NUL character"
    if name == "SHELL":
        return _read_shell(value, where, state, notes)
    state.env[name] = value
    if name == "HOME":
        state.home = value if value.startswith("/") else None
        notes.append(
            f"HOME={value} ({where}) is the working folder of the commands below it, as in cron"
            if value.startswith("/")
            else f"HOME={value} ({where}) is passed to the commands below it; it is not an "
            "absolute path, so they start in your home folder"
        )
    if name == "TZ":
        notes.append(
            f"TZ={value} ({where}) is passed to the commands below it, as cron does; it "
            "does not change when they run (CRON_TZ does)"
        )
    return None


def _read_shell(value: str, where: str, state: _State, notes: list[str]) -> str | None:
    if not value.startswith("/"):
        return (
            f"SHELL must be an absolute path such as /bin/bash (cron runs it without "
            f"searching PATH); the lines below run with {state.shell or '/bin/sh'}"
        )
    state.shell = None if value == "/bin/sh" else value
    notes.append(f"SHELL={value} ({where}): the commands below it run with {value}, as in cron")
    return None


def _task(entry: Entry, comment: str, state: _State, now: datetime, me: str | None) -> TaskSpec:
    """The task for one entry; InvalidTaskError says why there is none."""
    if entry.user is not None and entry.user != me:
        who = f"as {me}" if me else "as one user, and does not know which"
        raise InvalidTaskError(
            f"runs as the user {entry.user} (the user column of a system crontab); taskgui "
            f"runs commands {who}, so it is not imported: import it as {entry.user}"
        )
    if state.zone_error:
        raise InvalidTaskError(state.zone_error)
    recurrence = Cron(entry.expr, state.zone)
    return TaskSpec(
        name=_unique(_name(comment, entry.command), state.names),
        command=Command(
            line=entry.command,
            env=tuple(state.env.items()),
            cwd=state.home,
            shell_path=state.shell,
        ),
        first_run_at=recurrence.first_at_or_after(now),
        recurrence=recurrence,
        retry=NO_RETRY,
        misfire=MisfirePolicy.RUN_ONCE,
    )


def _name(comment: str, command: str) -> str:
    if comment:
        return _shorten(comment, MAX_NAME_LENGTH - 6)  # room for a " (99)" suffix
    return _shorten(" ".join(command.split()), DERIVED_NAME_LENGTH)


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def _unique(name: str, used: set[str]) -> str:
    """``name``, or ``name (2)``, ``name (3)``... when this crontab already used it."""
    candidate, number = name, 1
    while candidate in used:
        number += 1
        candidate = f"{name} ({number})"
    used.add(candidate)
    return candidate
