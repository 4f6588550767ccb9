"""A cron schedule in words, written from the values cron will use, never from the text.

cron-descriptor, used before, read the text and got the meaning wrong where it
matters: ``*/90 * * * *`` was "Every 90 minutes" (cron runs it hourly at :00),
``0 22-23,0-1 * * *`` "22:00 through 23:59" (four runs on the hour), ``0 9 */2 * 1``
"every 2 days, or on Monday" (odd days that are Mondays). Here every phrase is made
from the parsed sets (``CronFields``) and cron's day rule, so it can only say what
runs. "Every N minutes" is said only when the gaps really are all N minutes, across
hour boundaries too; otherwise the times are listed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from taskgui.core.cron.grammar import CronFields

_LISTED_TIMES = 12  # list every clock time up to this many a day
_DAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_ORDINALS = ("first", "second", "third", "fourth", "fifth")
_MONDAY_FIRST = (1, 2, 3, 4, 5, 6, 0)


def describe_fields(fields: CronFields) -> str:
    """The schedule as one sentence, e.g. 'At 09:00, Monday through Friday'."""
    parts = [_time_phrase(fields.minutes, fields.hours)]
    days = _day_phrase(fields)
    if days:
        parts.append(days)
    if len(fields.months) < 12:
        parts.append(_month_phrase(sorted(fields.months)))
    return ", ".join(parts)


# ----------------------------------------------------------------- times of day


def _time_phrase(minutes: Sequence[int], hours: Sequence[int]) -> str:
    every_hour = len(hours) == 24
    if len(minutes) * len(hours) <= _LISTED_TIMES and not every_hour:
        return "At " + _join([f"{hour:02d}:{minute:02d}" for hour in hours for minute in minutes])
    minute_part = _minute_phrase(minutes)
    if every_hour:
        return minute_part
    return f"{minute_part}, {_hours_phrase(hours)}"


def _minute_phrase(minutes: Sequence[int]) -> str:
    if len(minutes) == 60:
        return "Every minute"
    step = _even_step(minutes, 60)
    if step is not None and step > 1:
        return f"Every {step} minutes"
    if len(minutes) <= _LISTED_TIMES:
        return "Every hour at " + _join([f":{minute:02d}" for minute in minutes])
    return f"Every hour at minutes {_join(_runs(minutes, str))}"


def _even_step(values: Sequence[int], cycle: int) -> int | None:
    """k when ``values`` is 0, k, 2k, ... and k divides ``cycle``: then every gap,
    including the one from the last value round to the first, is k."""
    if len(values) < 2 or values[0] != 0:
        return None
    step = values[1]
    if cycle % step or list(values) != list(range(0, cycle, step)):
        return None
    return step


def _hours_phrase(hours: Sequence[int]) -> str:
    spans = _spans(hours)
    if len(spans) > 3:
        return "in the hours " + _join([f"{hour:02d}" for hour in hours])
    return _join([f"between {first:02d}:00 and {last:02d}:59" for first, last in spans])


# ------------------------------------------------------------------------- days


def _day_phrase(fields: CronFields) -> str:
    dom = None if fields.every_dom else _dom_phrase(fields)
    dow = None if fields.every_dow else _dow_items(fields)
    if fields.days_anded:
        if dom is None and dow is None:
            return ""
        if dom is None:
            assert dow is not None
            return _dow_phrase(dow)
        if dow is None:
            return dom
        return f"{dom} that {_dow_condition(fields, dow)}"
    # Both restricted: cron runs on either. If one of them is every day, so is the union.
    if dom is None or dow is None:
        return ""
    every = [item if item.startswith("the ") else f"every {item}" for item in dow]
    return f"{dom}, and on {_join(every)}"


def _dom_phrase(fields: CronFields) -> str:
    days = sorted(fields.days)
    if days == list(range(1, 32, 2)):
        text = "odd days"
    elif days == list(range(2, 32, 2)):
        text = "even days"
    elif days:
        word = "day" if len(days) == 1 else "days"
        text = f"{word} {_join(_runs(days, str))}"
    else:
        text = ""
    if fields.last_day:
        text = f"{text} and the last day" if text else "the last day"
    return f"on {text} of the month"


def _dow_items(fields: CronFields) -> list[str]:
    """The weekday selection as items: day names (or 'X through Y' runs), then the
    'last Friday' and 'second Monday' extensions."""
    ordered = [day for day in _MONDAY_FIRST if day in fields.weekdays]
    items = _runs(ordered, lambda day: _DAY_NAMES[day], consecutive=_next_weekday)
    items += [
        f"the last {_DAY_NAMES[day]} of the month"
        for day in _MONDAY_FIRST
        if day in fields.last_weekdays
    ]
    nth = sorted(fields.nth_weekdays, key=lambda pair: (pair[1], _MONDAY_FIRST.index(pair[0])))
    items += [f"the {_ORDINALS[week - 1]} {_DAY_NAMES[day]} of the month" for day, week in nth]
    return items


def _dow_phrase(items: list[str]) -> str:
    if len(items) == 1 and " through " in items[0]:
        return items[0]  # 'Monday through Friday', as people write it
    return "on " + _join(items)


def _dow_condition(fields: CronFields, items: list[str]) -> str:
    """How the day-of-month days are narrowed down when both fields must match."""
    if fields.last_weekdays or fields.nth_weekdays:
        return "are also " + _join(items, "or")
    if any(" through " in item for item in items):
        return "fall on " + _join(items, "or")
    return "are " + _join([_plural(item) for item in items], "or")


def _plural(item: str) -> str:
    return item + "s" if item in _DAY_NAMES else item


def _next_weekday(a: int, b: int) -> bool:
    return _MONDAY_FIRST.index(b) == _MONDAY_FIRST.index(a) + 1


def _month_phrase(months: list[int]) -> str:
    items = _runs(months, lambda month: _MONTH_NAMES[month - 1])
    return ("only in " if len(months) == 1 else "in ") + _join(items)


# ---------------------------------------------------------------------- helpers


def _spans(values: Sequence[int]) -> list[tuple[int, int]]:
    """Consecutive values grouped: [1, 2, 3, 7] -> [(1, 3), (7, 7)]."""
    spans: list[tuple[int, int]] = []
    for value in values:
        if spans and value == spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], value)
        else:
            spans.append((value, value))
    return spans


def _runs(
    values: Sequence[int],
    namer: Callable[[int], str],
    consecutive: Callable[[int, int], bool] = lambda a, b: b == a + 1,
) -> list[str]:
    """Values as items, runs of three or more as 'first through last'."""
    groups: list[list[int]] = []
    for value in values:
        if groups and consecutive(groups[-1][-1], value):
            groups[-1].append(value)
        else:
            groups.append([value])
    items: list[str] = []
    for group in groups:
        if len(group) >= 3:
            items.append(f"{namer(group[0])} through {namer(group[-1])}")
        else:
            items.extend(namer(value) for value in group)
    return items


def _join(items: Sequence[str], word: str = "and") -> str:
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} {word} {items[-1]}"
