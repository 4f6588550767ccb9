"""The fire-time memo: a remembered answer is the one a search gives, in any order of
questions, across DST changes, and for schedules that fire rarely or often."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from taskgui.core.cron.dst import next_fire
from taskgui.core.cron.memo import LIMIT, FireMemo
from taskgui.core.recurrence import Cron

T0 = datetime(2026, 3, 1, tzinfo=UTC)  # a month with a spring-forward in Europe and the US
SCHEDULES = [
    ("0 3 * * *", "UTC"),
    ("*/15 9-17 * * 1-5", "Europe/Berlin"),
    ("30 2 * * *", "Europe/Berlin"),  # its time is skipped once (spring forward)
    ("*/20 1-2 * * *", "America/New_York"),  # wildcard in the repeated hour (fall back)
    ("30 2 1 * *", "America/New_York"),
    ("0 0 29 2 *", "UTC"),  # once in four years
]


def searched(cron: Cron, after: datetime) -> datetime | None:
    """The answer without any memo: the search itself."""
    return next_fire(cron._calendar, cron.fields.wildcard, cron._zone, after)


@settings(max_examples=60, deadline=None)
@given(
    schedule=st.sampled_from(SCHEDULES),
    offsets=st.lists(st.integers(0, 400 * 86_400_000_000), min_size=1, max_size=60),
)
def test_every_answer_is_the_searched_one(schedule: tuple[str, str], offsets: list[int]) -> None:
    cron = Cron(*schedule)
    for offset in offsets + offsets:  # each asked twice: the second comes from the memo
        after = T0 + timedelta(microseconds=offset)
        assert cron.next_after(after) == searched(cron, after)


def test_the_answers_of_a_month_of_starts_need_few_searches() -> None:
    cron = Cron("0 3 * * *", "UTC")
    starts = [T0 + timedelta(minutes=37 * i) for i in range(1000)]  # about 26 days
    assert [cron.first_at_or_after(s) for s in starts] == [
        searched(cron, s - timedelta(microseconds=1)) for s in starts
    ]
    assert len(cron._memo._spans) <= 27  # one span per day it answered


def test_a_full_memo_starts_over() -> None:
    memo = FireMemo()
    for i in range(LIMIT + 5):
        at = T0 + timedelta(hours=2 * i)
        memo.put(at, at + timedelta(hours=1))
    assert len(memo._spans) == 5
    last = T0 + timedelta(hours=2 * (LIMIT + 4))
    assert memo.get(last + timedelta(minutes=30)) == last + timedelta(hours=1)
    assert memo.get(last + timedelta(hours=1)) is None  # the answer itself is not in it
    assert memo.get(T0) is None


def test_asked_at_an_answer_it_gives_the_next_one() -> None:
    cron = Cron("30 2 * * *", "Europe/Berlin")
    first = cron.next_after(T0)
    assert first is not None
    again = cron.next_after(first)  # the span [T0, first) must not answer its end
    assert again == searched(cron, first) and again != first
    assert cron.next_after(T0 + (first - T0) / 2) == first
