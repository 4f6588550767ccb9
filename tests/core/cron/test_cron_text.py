"""A cron schedule in words never contradicts the schedule.

The examples of issue 12 word for word, and a property: the clock-time part of the
description, read back by the small reader below, names exactly the times at which
the schedule runs in a day, and "Every N minutes" is said only when every gap is N.
"""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taskgui.core.recurrence import Cron
from tests.helpers.cron import runs_between

DAY = datetime(2027, 1, 4, tzinfo=UTC)  # a Monday


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        ("*/90 * * * *", "Every hour at :00"),
        ("0 22-23,0-1 * * *", "At 00:00, 01:00, 22:00 and 23:00"),
        ("0 8 * * 0-7", "At 08:00"),
        ("0 9 */2 * 1", "At 09:00, on odd days of the month that are Mondays"),
        ("5-5 * * * *", "Every hour at :05"),
        ("0 5-5 * * *", "At 05:00"),
        ("0 0 1-1 * *", "At 00:00, on day 1 of the month"),
        ("0 0 * * 7-7", "At 00:00, on Sunday"),
        ("0 9 * * 1-5", "At 09:00, Monday through Friday"),
        ("*/7 * * * *", "Every hour at :00, :07, :14, :21, :28, :35, :42, :49 and :56"),
        ("*/15 * * * *", "Every 15 minutes"),
        ("0 */5 * * *", "At 00:00, 05:00, 10:00, 15:00 and 20:00"),
        ("*/15 9-17 * * 1-5", "Every 15 minutes, between 09:00 and 17:59, Monday through Friday"),
        ("0 0 1 * 1", "At 00:00, on day 1 of the month, and on every Monday"),
        ("0 8 1-31 * 1", "At 08:00"),  # ORed with every day of the month: every day
        ("0 0 */2 * 1-5", "At 00:00, on odd days of the month that fall on Monday through Friday"),
        ("0 0 L * *", "At 00:00, on the last day of the month"),
        ("0 0 * * 5L", "At 00:00, on the last Friday of the month"),
        ("0 0 * * mon#2", "At 00:00, on the second Monday of the month"),
        ("0 9 * jan-mar mon", "At 09:00, on Monday, in January through March"),
        ("0 0 29 2 *", "At 00:00, on day 29 of the month, only in February"),
        ("* * * * *", "Every minute"),
        ("@hourly", "Every hour at :00"),
        ("@weekly", "At 00:00, on Sunday"),
    ],
)
def test_the_words_for_each_example(expr: str, text: str) -> None:
    assert Cron(expr).describe(with_zone=False) == text


def test_the_zone_is_named_after_the_words() -> None:
    assert Cron("0 9 * * 1-5", "Europe/Berlin").describe() == (
        "At 09:00, Monday through Friday (Europe/Berlin)"
    )


# ------------------------------------------------------------ read the words back


def _numbers(text: str) -> set[int]:
    """'0 through 29 and 45' or ':00, :07 and :14' -> the numbers it names."""
    values: set[int] = set()
    for raw in re.split(r", | and ", text):
        item = raw.strip().lstrip(":")
        if " through " in item:
            first, last = item.split(" through ")
            values.update(range(int(first.lstrip(":")), int(last.lstrip(":")) + 1))
        else:
            values.add(int(item))
    return values


def read_times(text: str) -> set[tuple[int, int]]:
    """The (hour, minute) pairs the clock-time part of a description names."""
    if text.startswith("At "):
        listed = re.split(r", (?:on|in|only) ", text[3:], maxsplit=1)[0]
        return {
            (int(hour), int(minute))
            for hour, minute in re.findall(r"(\d\d):(\d\d)", listed.split(", Monday")[0])
        }
    head, rest = re.split(r", (?=between |in the hours )|$", text, maxsplit=1)
    hours = set(range(24))
    if rest.startswith("between "):
        hours = set()
        for first, last in re.findall(r"between (\d\d):00 and (\d\d):59", rest):
            hours.update(range(int(first), int(last) + 1))
    elif rest.startswith("in the hours "):
        hours = _numbers(rest.removeprefix("in the hours ").split(", on ")[0])
    if head == "Every minute":
        minutes = set(range(60))
    elif match := re.fullmatch(r"Every (\d+) minutes", head):
        minutes = set(range(0, 60, int(match[1])))
    elif head.startswith("Every hour at minutes "):
        minutes = _numbers(head.removeprefix("Every hour at minutes "))
    else:
        minutes = _numbers(head.removeprefix("Every hour at "))
    return {(hour, minute) for hour in hours for minute in minutes}


def _field(low: int, high: int) -> st.SearchStrategy[str]:
    value = st.integers(low, high)
    term = st.one_of(
        st.just("*"),
        st.integers(1, high - low + 2).map(lambda k: f"*/{k}"),
        value.map(str),
        st.tuples(value, value).map(lambda ab: f"{min(ab)}-{max(ab)}"),
        st.tuples(value, value, st.integers(1, 9)).map(
            lambda abk: f"{min(abk[:2])}-{max(abk[:2])}/{abk[2]}"
        ),
    )
    return st.lists(term, min_size=1, max_size=3).map(",".join)


@settings(max_examples=300, deadline=None)
@given(minute=_field(0, 59), hour=_field(0, 23))
def test_the_times_in_words_are_the_times_it_runs(minute: str, hour: str) -> None:
    cron = Cron(f"{minute} {hour} * * *")
    text = cron.describe(with_zone=False)
    runs = runs_between(cron, DAY - timedelta(microseconds=1), DAY + timedelta(days=1, minutes=-1))
    assert read_times(text) == {(run.hour, run.minute) for run in runs}, text
    if step_claim := re.match(r"Every (\d+) minutes", text):
        step = int(step_claim[1])
        # The claim holds for every gap inside the hours named, across hours too.
        in_window = [b - a for a, b in itertools.pairwise(runs) if b - a <= timedelta(hours=1)]
        assert set(in_window) == {timedelta(minutes=step)}, text
