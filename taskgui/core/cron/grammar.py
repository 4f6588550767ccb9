"""The five fields of a cron expression, read the way cronie reads them.

cronie's ``src/entry.c`` is the reference (``get_list`` / ``get_range`` /
``get_number``): a field is a comma-separated list of ``*``, ``*/step``, ``N``,
``N-M`` and ``N-M/step``; months and weekdays also take three-letter names in any
case; weekday 7 is Sunday as 0 is. A field that *starts with* ``*`` sets a flag cron
keeps beside the values, and two rules depend on those flags, not on the values:

- day of month and day of week are ANDed when either field starts with ``*``, and
  ORed only when both are restricted (``0 9 */2 * 1``: odd days that are Mondays);
- a job is *wildcard* when its minute or hour field starts with ``*``, which decides
  what it does at a DST change (``taskgui.core.cron.dst``). ``0-23`` is not ``*``.

Everything cron refuses is refused here, with a message naming the field: croniter's
extensions (``R``, ``H``, ``?``, ``5/15``, a seconds or year field), upper-case macros,
values out of range, a step of 0. Differences, each on purpose:

- A wrapped range (``22-2``, ``FRI-MON``) sets no value in cron, so the job never
  runs; it is refused with the two ranges to write instead. cronie reads ``N-0`` as
  ``N-7`` in *every* field (a fix meant for ``FRI-SUN``); taskgui keeps that for the
  day of week only and refuses it elsewhere.
- cronie's ``~`` (a random value picked when the crontab is loaded) is refused: a
  taskgui schedule is the same on every start, so the person picks the value.
- Extensions cron does not have, kept because they say what cron cannot: ``L`` in the
  day of month (its last day), ``5L`` in the day of week (the month's last Friday)
  and ``1#2`` (its second Monday). They take part in the AND/OR rule like any value.
  ``W`` (nearest weekday) is refused: its month-edge rules differ between the
  implementations that have it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from taskgui.core.errors import InvalidTaskError

MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
EXAMPLES = "e.g. '*/5 * * * *' is every 5 minutes, '0 9 * * 1-5' is 09:00 on weekdays"
_MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_MAX_DIGITS = 6  # longer numbers are out of every range; int() of huge text is slow


@dataclass(frozen=True, slots=True)
class _Field:
    """One of the five fields: its name in messages, its range and its names."""

    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()  # names[i] means low + i


_MINUTE = _Field("minute", 0, 59)
_HOUR = _Field("hour", 0, 23)
_DOM = _Field("day-of-month", 1, 31)
_MONTH = _Field("month", 1, 12, _MONTH_NAMES)
_DOW = _Field("day-of-week", 0, 7, _DAY_NAMES)
_FIELDS = (_MINUTE, _HOUR, _DOM, _MONTH, _DOW)


@dataclass(frozen=True, slots=True)
class CronFields:
    """A parsed expression: each field's values, the extensions and cron's star flags.

    Weekdays are 0-6 with Sunday 0 (a 7 is stored as 0). ``last_day`` is the ``L``
    day of month; ``last_weekdays`` the ``nL`` weekdays; ``nth_weekdays`` the
    ``n#k`` pairs (weekday, k).
    """

    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    last_day: bool = False
    last_weekdays: frozenset[int] = frozenset()
    nth_weekdays: frozenset[tuple[int, int]] = frozenset()
    minute_star: bool = False
    hour_star: bool = False
    dom_star: bool = False
    dow_star: bool = False

    @property
    def wildcard(self) -> bool:
        """cronie's MIN_STAR | HR_STAR: the job is about elapsed time at a DST change."""
        return self.minute_star or self.hour_star

    @property
    def days_anded(self) -> bool:
        """cronie's DOM_STAR | DOW_STAR: both day fields must match (else either)."""
        return self.dom_star or self.dow_star

    @property
    def every_dom(self) -> bool:
        return len(self.days) == 31

    @property
    def every_dow(self) -> bool:
        return len(self.weekdays) == 7


def expand_macro(text: str) -> str:
    """The five fields of an ``@macro``; InvalidTaskError for anything cron refuses."""
    if text == "@reboot":
        raise InvalidTaskError("@reboot is not a time schedule; taskgui cannot run it")
    if text in MACROS:
        return MACROS[text]
    if text.lower() in MACROS or text.lower() == "@reboot":
        raise InvalidTaskError(
            f"cron macros are lower case: write {text.lower()!r}, not {text!r} "
            "(cron refuses the other spelling)"
        )
    known = ", ".join(sorted(MACROS))
    raise InvalidTaskError(f"unknown cron macro {text!r}; use one of {known}")


def split_expression(expr: str) -> list[str]:
    """The five fields of ``expr`` (macros expanded), or InvalidTaskError."""
    text = " ".join(expr.split())
    if not text:
        raise InvalidTaskError("the cron expression is empty; write it like '0 9 * * 1-5'")
    if text.startswith("@"):
        return expand_macro(text).split(" ")
    fields = text.split(" ")
    if len(fields) != 5:
        extra = ""
        if len(fields) == 6:
            extra = "; cron has no seconds or year field"
        elif len(fields) == 7:
            extra = "; cron has no seconds and year fields"
        raise InvalidTaskError(
            f"a cron expression has 5 fields (minute hour day month weekday), "
            f"{text!r} has {len(fields)}{extra}"
        )
    return fields


def parse_fields(fields: list[str]) -> CronFields:
    """Read five field texts (see ``split_expression``); InvalidTaskError names the field."""
    minute, hour, dom, month, dow = (
        _parse_field(text, spec) for text, spec in zip(fields, _FIELDS, strict=True)
    )
    weekdays = frozenset(0 if value == 7 else value for value in dow.values)
    return CronFields(
        minutes=tuple(sorted(minute.values)),
        hours=tuple(sorted(hour.values)),
        days=frozenset(dom.values),
        months=frozenset(month.values),
        weekdays=weekdays,
        last_day=dom.last,
        last_weekdays=frozenset(0 if value == 7 else value for value in dow.last_of),
        nth_weekdays=frozenset((0 if day == 7 else day, nth) for day, nth in dow.nth),
        minute_star=fields[0].startswith("*"),
        hour_star=fields[1].startswith("*"),
        dom_star=fields[2].startswith("*"),
        dow_star=fields[4].startswith("*"),
    )


def is_field_text(text: str, position: int) -> bool:
    """True when ``text`` reads as field number ``position`` (0 = minute) of cron.

    The crontab importer uses it to tell a sixth time field from a command.
    """
    try:
        _parse_field(text, _FIELDS[position])
    except InvalidTaskError:
        return False
    return True


@dataclass(slots=True)
class _Parsed:
    """What the terms of one field added up to."""

    values: set[int] = dataclasses.field(default_factory=set)
    last: bool = False
    last_of: set[int] = dataclasses.field(default_factory=set)
    nth: set[tuple[int, int]] = dataclasses.field(default_factory=set)


def _parse_field(text: str, field: _Field) -> _Parsed:
    parsed = _Parsed()
    if not text:
        raise InvalidTaskError(f"the {field.name} field is empty")
    for term in text.split(","):
        _parse_term(term, text, field, parsed)
    return parsed


def _fail(field: _Field, whole: str, why: str) -> InvalidTaskError:
    return InvalidTaskError(f"the {field.name} field {whole!r}: {why}")


def _parse_term(term: str, whole: str, field: _Field, parsed: _Parsed) -> None:
    if not term:
        raise _fail(field, whole, "an item of the list is empty (two commas, or one at an end)")
    _refuse_extensions(term, whole, field)
    if field is _DOM and term.upper() == "L":
        parsed.last = True
        return
    if field is _DOW and (extended := _weekday_extension(term, whole)) is not None:
        day, nth = extended
        if nth == 0:
            parsed.last_of.add(day)
        else:
            parsed.nth.add((day, nth))
        return
    base, slash, step_text = term.partition("/")
    step = 1
    if slash:
        if not step_text:
            raise _fail(field, whole, f"{term!r} has no step after '/'")
        if not (step_text.isascii() and step_text.isdigit()):
            raise _fail(field, whole, f"the step {step_text!r} is not a whole number")
        # A step longer than the field sets only its first value, as in cron.
        step = int(step_text) if len(step_text) <= _MAX_DIGITS else 10**_MAX_DIGITS
        if step == 0:
            raise _fail(field, whole, "a step of 0 never advances; use 1 or more")
    if base == "*":
        first, last = field.low, field.high
    elif "-" in base:
        low_text, _, high_text = base.partition("-")
        first, last = _number(low_text, whole, field), _number(high_text, whole, field)
        if first > last:
            if field is _DOW and last == 0:
                last = 7  # cronie: FRI-SUN is 5-0, read as 5-7
            else:
                raise _fail(field, whole, _wrapped(low_text, high_text, step_text, field))
    else:
        first = last = _number(base, whole, field)
        if slash:
            raise _fail(
                field,
                whole,
                f"cron takes a step only after a range or '*': write "
                f"'{base}-{_top(field)}/{step_text}' (from {base} every {step_text}) "
                f"or '*/{step_text}'",
            )
    parsed.values.update(range(first, last + 1, step))


def _top(field: _Field) -> int:
    return 6 if field is _DOW else field.high


def _refuse_extensions(term: str, whole: str, field: _Field) -> None:
    upper = term.upper()
    if "~" in term:
        raise _fail(
            field,
            whole,
            f"'~' (cronie picks a random {field.name} when it loads the crontab) is not "
            f"supported: a taskgui schedule stays the same, so pick the {field.name} "
            f"yourself, e.g. '{field.low + (field.high - field.low) // 3}'",
        )
    if term == "?":
        raise _fail(field, whole, "'?' is not cron (it is Quartz's 'no value'); write '*'")
    if upper in ("R", "H") or upper.startswith(("R(", "H(", "H/")):
        raise _fail(
            field,
            whole,
            f"{term!r} (a random or hashed {field.name} in some schedulers) is not cron; "
            f"write a fixed {field.name}",
        )
    if "W" in upper and field is _DOM:
        raise _fail(
            field, whole, "'W' (the weekday nearest a day) is not supported; write the days"
        )
    misplaced = "#" in term or (
        "L" in upper if not field.names else upper.endswith("L") and upper[:-1].isdigit()
    )
    if field not in (_DOM, _DOW) and misplaced:
        raise _fail(
            field,
            whole,
            "'L' and '#' are only for the day of month ('L': its last day) and the day "
            "of week ('5L': the last Friday; '1#2': the second Monday)",
        )


def _weekday_extension(term: str, whole: str) -> tuple[int, int] | None:
    """(weekday, 0) for ``nL``, (weekday, k) for ``n#k``; None for any other term."""
    if "#" in term:
        day_text, _, nth_text = term.partition("#")
        if not (nth_text.isascii() and nth_text.isdigit()) or not 1 <= int(nth_text[:2]) <= 5:
            raise _fail(_DOW, whole, f"in {term!r} the week after '#' must be 1 to 5")
        return _number(day_text, whole, _DOW) % 7, int(nth_text)
    if len(term) > 1 and term[-1] in "Ll" and term.lower() not in _DAY_NAMES:
        return _number(term[:-1], whole, _DOW) % 7, 0
    return None


def _number(text: str, whole: str, field: _Field) -> int:
    """A number or (month, weekday) name of ``field``, checked against its range."""
    if text.isascii() and text.isdigit():
        if len(text) > _MAX_DIGITS:
            raise InvalidTaskError(
                f"{field.name} {text[:_MAX_DIGITS]}… is not in {field.low}-{field.high}"
            )
        value = int(text)
        if not field.low <= value <= field.high:
            sunday = " (0 and 7 are Sunday)" if field is _DOW else ""
            raise InvalidTaskError(
                f"{field.name} {value} is not in {field.low}-{field.high}{sunday}"
            )
        return value
    if field.names:
        lowered = text.lower()
        if lowered in field.names:
            return field.low + field.names.index(lowered)
        kind = "month" if field is _MONTH else "weekday"
        first, last = field.names[0].upper(), field.names[-1].upper()
        raise _fail(
            field,
            whole,
            f"{text!r} is neither a number nor a {kind} name; use {field.low}-{field.high} "
            f"or the first three letters of a name ({first}-{last})",
        )
    if not text:
        raise _fail(field, whole, f"a range needs a number on both sides of '-'; {EXAMPLES}")
    if text == "*":
        raise _fail(field, whole, "'*' is the whole range already; it cannot start or end one")
    if text.lower()[:3] in _DAY_NAMES + _MONTH_NAMES:
        raise _fail(field, whole, f"{text!r} is a name; the {field.name} field takes numbers only")
    raise _fail(
        field,
        whole,
        f"{text!r} is not a number; write {field.low}-{field.high}, a range like "
        f"{field.low}-{field.low + 5}, a step like */5, or a list like "
        f"{field.low},{field.low + 5}",
    )


def _wrapped(low_text: str, high_text: str, step_text: str, field: _Field) -> str:
    """Why a backwards range is refused, and the two ranges that say what was meant."""
    names = not low_text.isdigit() and bool(field.names)
    top = field.names[_top(field) - field.low] if names else str(_top(field))
    bottom = field.names[0] if names else str(field.low)
    if names:
        top, bottom = top.upper(), bottom.upper()
    step = f"/{step_text}" if step_text else ""
    return (
        f"the range {low_text}-{high_text} runs backwards, and cron never runs it; to wrap "
        f"around, write two ranges: '{low_text}-{top}{step},{bottom}-{high_text}{step}'"
    )
