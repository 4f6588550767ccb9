"""Turning a crontab into cron tasks: pure parsing, every line accounted for.

What is converted, and how (the choices a person can see in the report):

- ``m h dom mon dow command`` and the macros ``@hourly``, ``@daily``/``@midnight``,
  ``@weekly``, ``@monthly``, ``@yearly``/``@annually`` become ``Cron`` tasks.
- ``VAR=value`` (spaces around ``=`` and matching quotes allowed, as cron does) sets
  the environment of the entries below it; cron expands no variables, nor does this.
  ``CRON_TZ=zone`` sets the time zone of the schedules below it instead (otherwise
  the local zone). Cron's own settings (``MAILTO``, ``SHELL``, ...) are not applied;
  each is listed as a note saying why.
- In a cron command, ``\\%`` is a literal ``%`` and an unescaped ``%`` starts the
  command's stdin; taskgui has no stdin for commands, so such a line is skipped.
- A task's name is its comment: the ``#`` lines directly above the entry (back to a
  blank or empty ``#`` line), joined. Commented-out entries and the ``m h dom mon dow
  command`` header are not names. Without a comment, the start of the command is.
  Names that repeat within one crontab get " (2)", " (3)", ...
- ``@reboot``, and any line that is none of the above, is skipped with the reason.

Cron tasks never retry (as in cron) and keep the misfire policy run_once; the report
says so. Nothing here reads a file or a clock: the caller passes text and ``now``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

from taskgui.core.errors import InvalidTaskError
from taskgui.core.recurrence import Cron, load_zone, normalize_cron
from taskgui.core.retry import RetryPolicy
from taskgui.core.states import MisfirePolicy
from taskgui.core.task import MAX_NAME_LENGTH, Command, TaskSpec
from taskgui.core.transfer_plan import Candidate, ParsedImport
from taskgui.core.transfer_report import SkippedItem

DERIVED_NAME_LENGTH = 40
NO_RETRY = RetryPolicy.no_retry()
_ENV_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)")
_HEADER = ("m", "h", "dom", "mon", "dow", "command")
_REBOOT = (
    "@reboot runs when the machine starts, which is not a time schedule; taskgui cannot "
    "run it (start it from your session's autostart or a systemd unit instead)"
)
_PERCENT = (
    "uses % (in cron, the text after an unescaped % is the command's stdin), which "
    "taskgui does not support; write \\% if a literal % is meant"
)
_NOT_AN_ENTRY = (
    "not a crontab entry: expected five time fields and a command, an @macro and a "
    "command, or a VAR=value line"
)
# Cron's own settings: (what taskgui does instead). Not passed to the commands.
_CRON_SETTINGS = {
    "MAILTO": "taskgui does not mail output; each run's output is kept in its history",
    "MAILFROM": "taskgui does not mail output; each run's output is kept in its history",
    "CONTENT_TYPE": "taskgui does not mail output",
    "CONTENT_TRANSFER_ENCODING": "taskgui does not mail output",
    "SHELL": "taskgui runs shell commands with /bin/sh; where a command needs "
    "another shell, call it explicitly (e.g. bash -c '...')",
    "RANDOM_DELAY": "taskgui starts runs on time and has no random delay",
}
_RULES_NOTE = (
    "imported cron tasks behave like cron where taskgui can: no retries, commands run "
    "through the shell in your home folder. They differ in two ways: a run missed while "
    "the schedule was not running is made up once when it runs again (misfire policy "
    "run_once; cron skips it), and a run due while the previous one is still going is "
    "skipped (cron would start a second copy)"
)


@dataclass(slots=True)
class _State:
    """What the lines read so far mean for the next entry."""

    zone: str
    zone_error: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    comment: list[str] = field(default_factory=list)
    names: set[str] = field(default_factory=set)


def parse_crontab(text: str, *, now: datetime, default_tz: str) -> ParsedImport:
    """Every convertible entry of ``text`` as a candidate; every other line as skipped.

    ``now`` is when the import happens (each task's first run is its first match
    after it); ``default_tz`` is the IANA zone of schedules before any CRON_TZ line.
    """
    load_zone(default_tz)
    state = _State(zone=default_tz)
    candidates: list[Candidate] = []
    skipped: list[SkippedItem] = []
    notes: list[str] = []
    for number, line in _lines(text):
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
                spec = _entry(body, name, state, now)
            except InvalidTaskError as error:
                skipped.append(SkippedItem(where, line, str(error)))
            else:
                candidates.append(Candidate(where, line, spec))
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


def _read_comment(body: str, state: _State) -> None:
    """A comment line: part of the next entry's name, or the end of a comment paragraph."""
    content = body.lstrip("#").strip()
    if not content or _looks_like_crontab_line(content) or tuple(content.split()) == _HEADER:
        # An empty '#' line ends a paragraph; a commented-out entry or the column header
        # describes no task below it.
        state.comment.clear()
        return
    state.comment.append(" ".join(content.split()))


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
    if word.lower() == "@reboot":
        return True
    try:
        normalize_cron(word)  # the recurrence module is the authority on macros
    except InvalidTaskError:
        return False
    return True


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
    state.env[name] = value
    if name == "TZ":
        notes.append(
            f"TZ={value} ({where}) is passed to the commands below it, as cron does; it "
            "does not change when they run (CRON_TZ does)"
        )
    return None


def _entry(body: str, comment: str, state: _State, now: datetime) -> TaskSpec:
    """The task for one entry line; InvalidTaskError says why there is none."""
    if body.startswith("@"):
        expr, *rest = body.split(None, 1)
        if expr.lower() == "@reboot":
            raise InvalidTaskError(_REBOOT)
        command = rest[0] if rest else ""
    else:
        # A minute field starts with a digit or '*'; anything else is not an entry.
        if body[0] not in "0123456789*":
            raise InvalidTaskError(_NOT_AN_ENTRY)
        parts = body.split(None, 5)
        expr = " ".join(parts[:5])
        command = parts[5] if len(parts) == 6 else ""
        if len(parts) < 5:
            raise InvalidTaskError(_NOT_AN_ENTRY)
    if state.zone_error:
        raise InvalidTaskError(state.zone_error)
    recurrence = Cron(expr, state.zone)
    if not command:
        raise InvalidTaskError(f"the schedule {expr!r} has no command after it")
    line = _unescape_percent(command)
    if line is None:
        raise InvalidTaskError(_PERCENT)
    return TaskSpec(
        name=_unique(_name(comment, line), state.names),
        command=Command(line=line, env=tuple(state.env.items())),
        first_run_at=recurrence.first_at_or_after(now),
        recurrence=recurrence,
        retry=NO_RETRY,
        misfire=MisfirePolicy.RUN_ONCE,
    )


def _unescape_percent(command: str) -> str | None:
    r"""Cron's ``\%`` as ``%``; None when an unescaped ``%`` (stdin) is used."""
    out: list[str] = []
    index = 0
    while index < len(command):
        char = command[index]
        if char == "\\" and command.startswith("%", index + 1):
            out.append("%")
            index += 2
            continue
        if char == "%":
            return None
        out.append(char)
        index += 1
    return "".join(out)


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
