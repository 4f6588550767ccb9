"""One crontab entry line, read as cronie's ``load_entry`` (``src/entry.c``) reads it.

``read_entry`` takes an entry line (not a comment, blank or ``VAR=value`` line) and
returns its schedule, its user (system crontabs) and the command exactly as cron
would run it, or InvalidTaskError with the reason the line is not imported. The
order is cronie's: an optional ``-`` (do not log), the schedule, the user column,
command options (``-n``), then the ``%`` rule applied when the command runs.

Refusals that keep a wrong command from running: a sixth time field (cron has no
seconds; cronie refuses a line whose command starts with ``*``, and anything else
would be run as the command), a command option cronie does not know, and a ``%``
that starts the command's stdin, which taskgui does not give a command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from taskgui.core.errors import InvalidTaskError
from taskgui.core.recurrence import normalize_cron

NOT_AN_ENTRY = (
    "not a crontab entry: expected five time fields and a command, an @macro and a "
    "command, or a VAR=value line"
)
PERCENT = (
    "uses % (in cron, the text after an unescaped % is the command's stdin), which "
    "taskgui does not support; write \\% if a literal % is meant"
)
# A sixth word made of time-field characters (5, */6, 1-5, 0,30, ?) is a time field.
_TIME_FIELD = re.compile(r"[0-9*/,?#LW-]*[0-9*?][0-9*/,?#LW-]*")
USER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\$?")
_BLANKS = " \t"


@dataclass(frozen=True, slots=True)
class Entry:
    """An entry as cron reads it: ``expr`` (five fields or a macro), the ``user``
    column of a system crontab (None in a user crontab), the ``command`` cron runs,
    and ``notes`` on what of the line is not part of the command."""

    expr: str
    user: str | None
    command: str
    notes: tuple[str, ...] = ()


def read_entry(body: str, *, system: bool) -> Entry:
    """The entry on ``body`` (a line without its indentation); InvalidTaskError says
    why it is not imported. ``system``: the line has a user column."""
    notes: list[str] = []
    text = body
    if text.startswith("-"):
        text = text[1:]
        notes.append("the leading '-' (cronie: do not log the command) is dropped")
    if text.startswith("@"):
        expr, _, rest = _split_word(text)
        if expr == "@reboot":
            raise InvalidTaskError(
                "@reboot runs when the machine starts, which is not a time schedule; taskgui "
                "cannot run it (start it from your session's autostart or a systemd unit "
                "instead)"
            )
    else:
        if not text or text[0] not in "0123456789*":
            raise InvalidTaskError(NOT_AN_ENTRY)
        parts = text.split(None, 5)
        if len(parts) < 5:
            raise InvalidTaskError(NOT_AN_ENTRY)
        expr, rest = " ".join(parts[:5]), parts[5] if len(parts) == 6 else ""
    normalize_cron(expr)  # the field cron would refuse, named
    user = None
    if system:
        user, _, rest = _split_word(rest)
        _refuse_sixth_field(expr, user)
        if not user:
            raise InvalidTaskError(f"the schedule {expr!r} has no user and command after it")
        if not USER_NAME.fullmatch(user):
            raise InvalidTaskError(
                f"{user!r} is not a user name, but a system crontab has the user after the "
                "schedule (minute hour day month weekday user command)"
            )
    else:
        _refuse_sixth_field(expr, _split_word(rest)[0])
    command = _without_options(rest, expr, notes)
    line = cron_command(command)
    if line is None:
        raise InvalidTaskError(PERCENT)
    return Entry(expr, user, line, tuple(notes))


def cron_command(command: str) -> str | None:
    r"""The command as cron runs it: ``\%`` is ``%`` (cronie's do_command.c); None when
    an unescaped ``%`` ends it (the rest would be its stdin).

    A backslash escapes the next character whatever it is, so in ``\\%`` the ``%`` is
    not escaped; only before ``%`` is the backslash removed (``\n`` stays ``\n``).
    """
    out: list[str] = []
    escaped = False
    for char in command:
        if escaped:
            if char == "%":
                out[-1] = "%"
            else:
                out.append(char)
            escaped = False
        elif char == "\\":
            out.append(char)
            escaped = True
        elif char == "%":
            return None
        else:
            out.append(char)
    return "".join(out)


def _split_word(text: str) -> tuple[str, str, str]:
    """(first word, the blanks after it, the rest)."""
    stripped = text.lstrip(_BLANKS)
    for index, char in enumerate(stripped):
        if char in _BLANKS:
            return stripped[:index], char, stripped[index:].lstrip(_BLANKS)
    return stripped, "", ""


def _refuse_sixth_field(expr: str, word: str) -> None:
    if expr.startswith("@") or not _TIME_FIELD.fullmatch(word):
        return
    start = (
        "cronie refuses the line ('bad command')"
        if word.startswith("*")
        else (f"cron would run '{word} …' as the command")
    )
    raise InvalidTaskError(
        f"a sixth time field after {expr!r}: cron has five (minute hour day month "
        f"weekday) and no seconds field, so {start}; write the schedule in five fields"
    )


def _without_options(command: str, expr: str, notes: list[str]) -> str:
    """The command without cronie's leading options (``-n``), as load_entry reads them."""
    seen: set[str] = set()
    while command.startswith("-"):
        option = command[:2]
        if option != "-n" or command[2:3] not in ("", *_BLANKS) or option in seen:
            what = "given twice" if option in seen else "not an option cronie knows"
            word = command.split(maxsplit=1)[0]
            raise InvalidTaskError(
                f"the command starts with {word!r}, which cronie reads as an option "
                f"({what}) and refuses the line ('bad option'); if it is part of the "
                "command, start the command with something else"
            )
        seen.add(option)
        command = command[2:].lstrip(_BLANKS)
        notes.append(
            "cronie's -n option (mail the output only when the command fails) is not part "
            "of the command; taskgui keeps the output of every run in its history"
        )
    if not command:
        raise InvalidTaskError(f"the schedule {expr!r} has no command after it")
    return command
