"""Cron's field grammar as cronie's entry.c reads it: the calendar bugs of issue 12,
every refusal with a message naming the field, and the documented extensions."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from taskgui.core.cron.grammar import is_field_text, parse_fields, split_expression
from taskgui.core.errors import InvalidTaskError
from taskgui.core.recurrence import Cron

NEW_YEAR = datetime(2027, 1, 1, tzinfo=UTC)  # a Friday


def runs(expr: str, count: int, after: datetime = NEW_YEAR, tz: str = "UTC") -> list[datetime]:
    cron = Cron(expr, tz)
    found: list[datetime] = []
    current: datetime | None = after
    for _ in range(count):
        assert current is not None
        current = cron.next_after(current)
        assert current is not None
        found.append(current)
    return found


# ----------------------------------------------------------- the calendar bugs


def test_a_single_value_range_is_that_value_not_every_value() -> None:
    # croniter 7.0.0 read 'N-N' as '*': this fired at 00:01.
    assert Cron("5-5 * * * *").next_after(NEW_YEAR) == datetime(2027, 1, 1, 0, 5, tzinfo=UTC)
    assert runs("5-5 * * * *", 2)[1] == datetime(2027, 1, 1, 1, 5, tzinfo=UTC)
    assert runs("0 5-5 * * *", 2) == [
        datetime(2027, 1, 1, 5, tzinfo=UTC),
        datetime(2027, 1, 2, 5, tzinfo=UTC),
    ]
    assert runs("0 0 1-1 * *", 2) == [
        datetime(2027, 2, 1, tzinfo=UTC),
        datetime(2027, 3, 1, tzinfo=UTC),
    ]
    assert runs("0 0 * * 7-7", 2) == [  # Sundays only
        datetime(2027, 1, 3, tzinfo=UTC),
        datetime(2027, 1, 10, tzinfo=UTC),
    ]


def test_day_fields_are_anded_when_either_starts_with_a_star() -> None:
    # Odd days that are Mondays: the 11th is the first (the 4th is even).
    assert Cron("0 9 */2 * 1").next_after(NEW_YEAR) == datetime(2027, 1, 11, 9, tzinfo=UTC)
    assert [run.day for run in runs("0 9 */2 * 1", 4)] == [11, 25, 1, 15]
    # '*' in the day of week, restricted day of month: only those days.
    assert [run.day for run in runs("0 0 1,15 * *", 3)] == [15, 1, 15]
    # A day of week that starts with a star but is not all of it still ANDs: '*/2' is
    # 0,2,4,6 (Sunday, Tuesday, Thursday, Saturday), so within 1-7 only those.
    assert [run.day for run in runs("0 0 1-7 * */2", 3)] == [2, 3, 5]


def test_day_fields_are_ored_when_both_are_restricted() -> None:
    days = [run.day for run in runs("0 0 1,15 * 1", 6)]
    assert days == [4, 11, 15, 18, 25, 1]  # the Mondays, the 15th, and the 1st
    # A restricted field that happens to cover every day still ORs: every day.
    assert [run.day for run in runs("0 8 1-31 * 1", 3)] == [1, 2, 3]


def test_every_hour_written_out_is_not_a_star() -> None:
    assert Cron("0 0-23 * * *").wildcard is False
    assert Cron("0 * * * *").wildcard is True
    assert Cron("*/5 3 * * *").wildcard is True
    assert Cron("5 */2 * * *").wildcard is True
    assert Cron("5 2 * * *").wildcard is False
    assert Cron("@hourly").wildcard is True  # cronie sets HR_STAR for it
    assert Cron("@daily").wildcard is False


@pytest.mark.parametrize(
    ("expr", "first"),
    [
        ("*/90 * * * *", datetime(2027, 1, 1, 1, 0, tzinfo=UTC)),  # a step past the end: 0 only
        ("0 8 * * 0-7", datetime(2027, 1, 1, 8, tzinfo=UTC)),  # 0-7 is every day
        ("0 0 * * fri-sun", datetime(2027, 1, 2, tzinfo=UTC)),  # FRI-SUN is 5-0: 5-7 in cron
        ("0 12 * Jan-Feb sAt", datetime(2027, 1, 2, 12, tzinfo=UTC)),  # names in any case
        ("0 0 15 * *", datetime(2027, 1, 15, tzinfo=UTC)),
        ("*,30 2 * * *", datetime(2027, 1, 1, 2, 0, tzinfo=UTC)),
        ("07 09 * * *", datetime(2027, 1, 1, 9, 7, tzinfo=UTC)),  # leading zeros
        ("0 0 29 2 *", datetime(2028, 2, 29, tzinfo=UTC)),
    ],
)
def test_forms_cron_accepts(expr: str, first: datetime) -> None:
    assert Cron(expr).next_after(datetime(2027, 1, 1, 0, 30, tzinfo=UTC)) == first


# --------------------------------------------------------------- the refusals


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("61 * * * *", "minute 61 is not in 0-59"),
        ("0 24 * * *", "hour 24 is not in 0-23"),
        ("0 0 32 * *", "day-of-month 32 is not in 1-31"),
        ("0 0 0 * *", "day-of-month 0 is not in 1-31"),
        ("0 0 * 13 *", "month 13 is not in 1-12"),
        ("0 0 * * 8", "day-of-week 8 is not in 0-7 (0 and 7 are Sunday)"),
        ("0 0 1-61/100 * *", "day-of-month 61 is not in 1-31"),
        ("99999999999 * * * *", "minute 999999… is not in 0-59"),
        ("R * * * *", "the minute field 'R': 'R' (a random or hashed minute"),
        ("H 3 * * *", "the minute field 'H': 'H' (a random or hashed minute"),
        ("0 0 ? * 1", "the day-of-month field '?': '?' is not cron (it is Quartz's 'no value')"),
        (
            "5/15 * * * *",
            "the minute field '5/15': cron takes a step only after a range or '*': "
            "write '5-59/15' (from 5 every 15) or '*/15'",
        ),
        (
            "0 22-2 * * *",
            "the hour field '22-2': the range 22-2 runs backwards, and cron never runs it; "
            "to wrap around, write two ranges: '22-23,0-2'",
        ),
        ("0 0 * * FRI-MON", "write two ranges: 'FRI-SAT,SUN-MON'"),
        ("0 0 * * 5-1", "write two ranges: '5-6,0-1'"),
        ("0 0 * NOV-FEB *", "write two ranges: 'NOV-DEC,JAN-FEB'"),
        ("5-0 * * * *", "the range 5-0 runs backwards"),  # cronie: 5-7; refused here
        ("0 0 25-5 * *", "write two ranges: '25-31,1-5'"),
        ("*/0 * * * *", "the minute field '*/0': a step of 0 never advances"),
        ("*/ * * * *", "the minute field '*/': '*/' has no step after '/'"),
        ("1,,2 * * * *", "the minute field '1,,2': an item of the list is empty"),
        ("1, * * * *", "an item of the list is empty"),
        ("~ * * * *", "'~' (cronie picks a random minute when it loads the crontab)"),
        ("0 0 * * Monday", "'Monday' is neither a number nor a weekday name"),
        ("0 mon * * *", "the hour field 'mon': 'mon' is a name; the hour field takes numbers"),
        ("\uff10 * * * *", "the minute field '\uff10': '\uff10' is not a number"),  # a wide 0
        ("*-5 * * * *", "'*' is the whole range already"),
        ("0 0 15W * *", "'W' (the weekday nearest a day) is not supported"),
        ("0 0 LW * *", "'W' (the weekday nearest a day) is not supported"),
        ("0 L * * *", "the hour field 'L': 'L' and '#' are only for the day of month"),
        ("0 0 * 5L *", "the month field '5L': 'L' and '#' are only for"),
        ("0 0 * * 1#6", "in '1#6' the week after '#' must be 1 to 5"),
        ("0 0 * * * *", "has 6; cron has no seconds or year field"),
        ("0 0 0 * * * 2027", "has 7; cron has no seconds and year fields"),
        ("@Daily", "cron macros are lower case: write '@daily', not '@Daily'"),
        ("@HOURLY", "write '@hourly'"),
        ("@REBOOT", "write '@reboot'"),
        ("@reboot", "@reboot is not a time schedule"),
        ("0 0 30 2 *", "never matches"),
        ("0 0 */20 * 1#2", "never matches"),  # neither the 1st nor the 21st is a 2nd Monday
    ],
)
def test_what_cron_refuses_is_refused_with_a_message_naming_the_field(
    expr: str, message: str
) -> None:
    with pytest.raises(InvalidTaskError) as caught:
        Cron(expr)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_message_names_the_field_that_is_wrong_and_not_another() -> None:
    names = ("minute", "hour", "day-of-month", "month", "day-of-week")
    for position, name in enumerate(names):
        fields = ["*"] * 5
        fields[position] = "x"
        with pytest.raises(InvalidTaskError, match=f"^the {name} field 'x'"):
            Cron(" ".join(fields))


# ------------------------------------------------------------ the extensions


@pytest.mark.parametrize(
    ("expr", "days"),
    [
        ("0 0 L * *", [31, 28, 31]),  # the last day of January, February, March 2027
        ("0 0 L,15 * *", [15, 31, 15]),
        ("0 0 * * 5L", [29, 26, 26]),  # the last Friday of each month
        ("0 0 * * fri#2", [8, 12, 12]),  # the second Friday
        ("0 0 * * 0#5", [31, 30]),  # fifth Sundays: January and May 2027
        ("0 0 */2 * 5L", [29, 25]),  # odd days that are also a last Friday (ANDed)
        ("0 0 1 * 5L", [29, 1, 26]),  # the 1st, or the last Friday (ORed)
    ],
)
def test_documented_extensions_for_the_day_fields(expr: str, days: list[int]) -> None:
    assert [run.day for run in runs(expr, len(days))] == days


def test_split_expression_expands_lower_case_macros_only() -> None:
    assert split_expression("  @weekly ") == ["0", "0", "*", "*", "0"]
    assert split_expression("0  9\t* * 1-5") == ["0", "9", "*", "*", "1-5"]
    assert Cron("@annually") == Cron("0 0 1 1 *")


def test_parse_fields_keeps_the_star_flags_beside_the_values() -> None:
    fields = parse_fields(["*/15", "0-23", "*/2", "*", "1"])
    assert fields.minutes == (0, 15, 30, 45)
    assert fields.hours == tuple(range(24))
    assert (fields.minute_star, fields.hour_star, fields.dom_star, fields.dow_star) == (
        True,
        False,
        True,
        False,
    )
    assert fields.wildcard and fields.days_anded
    assert parse_fields(["0", "0", "*", "*", "7"]).weekdays == frozenset({0})


@pytest.mark.parametrize(
    ("text", "position", "expected"),
    [
        ("*/6", 0, True),
        ("0", 0, True),
        ("root", 0, False),
        ("echo", 0, False),
        ("7z", 0, False),
        ("mon", 4, True),
        ("mon", 0, False),
    ],
)
def test_is_field_text(text: str, position: int, expected: bool) -> None:
    assert is_field_text(text, position) is expected
