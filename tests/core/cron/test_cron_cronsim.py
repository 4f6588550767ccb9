"""A differential test against cronsim, a cron implementation this project did not write.

cronsim (2.8, 2.9) follows Debian cron, a sibling of cronie. Where the two answers differ,
cronie decides: in UTC by the field values the expression means (built here by brute
force from the text, independently of ``cron_grammar``), across DST by
``tests/helpers/cronie_model`` (cron.c's loop). Every difference must be one of
``KNOWN``, each recorded with its reason, and each must still be seen, so the record
stays true when cronsim changes. (It did: 2.9 reads 'N-N/k' as cronie does, so that
difference is expected only of the versions before it.)
"""

from __future__ import annotations

import bisect
import importlib.metadata
import random
import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from cronsim import CronSim

from taskgui.core.recurrence import Cron
from tests.helpers.cronie_model import cronie_launches
from tests.helpers.zone_changes import Change, changes

KNOWN = {
    "N-N/step": "cronsim before 2.9 reads a one-value range with a step, 'N-N/k', as 'N/k' "
    "(from N to the end of the field every k); cronie's get_range sets N only",
    "past run in a repeated hour": "cronsim walks a fixed-time job over naive wall times and "
    "takes each one's first instance, so asked from the second pass of a repeated hour it "
    "answers the first-pass run, which is already over; cronie runs the job next after it",
    "real-hour steps at a 30-minute fall-back": "cronsim steps a wildcard job's hour by "
    "adding 3,600 s of real time; across Lord Howe's 30-minute fall-back that lands on :30 "
    "and skips the runs before it, which cronie makes as the wall clock shows them",
    "rounding inside a 45-minute gap": "cronsim rounds a wildcard job's time down to :00 "
    "inside Chatham's spring-forward gap (02:45-03:45), a wall time that does not exist, "
    "and its next hour comes one too late; cronie runs at the first matching wall time",
}
# cronsim 2.9 sets N alone for 'N-N/k', as cronie does (2.8 ran N, N+k, ... to the end).
CRONSIM_READS_N_N_STEP_AS_CRONIE = tuple(
    int(part) for part in importlib.metadata.version("cronsim").split(".")[:2]
) >= (2, 9)
ISSUE_ZONES = (
    "UTC",
    "Europe/Berlin",
    "America/New_York",
    "Australia/Lord_Howe",
    "America/Santiago",
    "Asia/Kolkata",
    "Pacific/Chatham",
)
DST_EXPRESSIONS = (
    "30 2 * * *",
    "15,45 2 * * *",
    "45 2 * * *",
    "0 3 * * *",
    "5 1-3 * * *",
    "0,30 0,1,2,3 * * *",
    "0 0-23 * * *",
    "0 0 * * *",
    "30 23 * * *",
    "*/20 2 * * *",
    "*/15 1-3 * * *",
    "0 */2 * * *",
    "*/7 * * * *",
    "*/30 * * * *",
    "0 * * * *",
)


def cronsim_next(expr: str, zone: str, after: datetime) -> datetime | None:
    tz = UTC if zone == "UTC" else ZoneInfo(zone)
    try:
        return next(CronSim(expr, after.astimezone(tz))).astimezone(UTC)
    except StopIteration:
        return None


# ------------------------------------------------------------ the calendar, UTC


def _field_values(text: str, low: int, high: int) -> set[int]:
    """What a numeric cron field means, straight from the grammar: the reference."""
    values: set[int] = set()
    for term in text.split(","):
        base, _, step = term.partition("/")
        first, last = (low, high) if base == "*" else map(int, (base.split("-") * 2)[:2])
        values.update(range(first, last + 1, int(step or 1)))
    return values


def _reference_next(expr: str, after: datetime) -> datetime:
    """The next matching minute, found day by day from the reference field values."""
    minute, hour, dom, month, dow = expr.split(" ")
    minutes, hours = _field_values(minute, 0, 59), _field_values(hour, 0, 23)
    days, months = _field_values(dom, 1, 31), _field_values(month, 1, 12)
    weekdays = {value % 7 for value in _field_values(dow, 0, 7)}
    anded = dom.startswith("*") or dow.startswith("*")
    day = after.replace(hour=0, minute=0, second=0, microsecond=0)
    while True:
        in_dom, in_dow = day.day in days, (day.weekday() + 1) % 7 in weekdays
        if day.month in months and ((in_dom and in_dow) if anded else (in_dom or in_dow)):
            for h in sorted(hours):
                for m in sorted(minutes):
                    candidate = day.replace(hour=h, minute=m)
                    if candidate > after:
                        return candidate
        day += timedelta(days=1)


def _random_field(rng: random.Random, low: int, high: int) -> str:
    terms = []
    for _ in range(rng.randint(1, 3)):
        a = rng.randint(low, high)
        b = rng.randint(a, high)
        terms.append(
            rng.choice(
                [
                    "*",
                    f"*/{rng.randint(1, high - low + 2)}",
                    str(a),
                    f"{a}-{b}",
                    f"{a}-{b}/{rng.randint(1, 9)}",
                    f"{a}-{a}/{rng.randint(1, 9)}",
                ]
            )
        )
    return ",".join(terms)


def _random_expression(rng: random.Random) -> str:
    ranges = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))
    return " ".join(_random_field(rng, low, high) for low, high in ranges)


def test_the_calendar_agrees_with_cronsim_in_utc_but_for_known_differences() -> None:
    rng = random.Random(12)
    seen: Counter[str] = Counter()
    compared = 0
    while compared < 1500:
        expr = _random_expression(rng)
        try:
            cron = Cron(expr)
        except Exception:  # e.g. 31 February: both refuse or never match
            continue
        compared += 1
        after = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=rng.randint(0, 2 * 10**6))
        ours, theirs = cron.next_after(after), cronsim_next(expr, "UTC", after)
        assert ours == _reference_next(expr, after.replace(tzinfo=None)).replace(tzinfo=UTC)
        if ours != theirs:
            assert not CRONSIM_READS_N_N_STEP_AS_CRONIE, (expr, after, ours, theirs)
            assert re.search(r"(^|[ ,])(\d+)-\2/", expr), (expr, after, ours, theirs)
            seen["N-N/step"] += 1
    # Before 2.9 the difference must still be seen (the record stays true); from 2.9
    # there is none at all.
    assert (seen["N-N/step"] > 0) is not CRONSIM_READS_N_N_STEP_AS_CRONIE, seen


def test_a_one_value_range_with_a_step_is_that_value_alone() -> None:
    """'5-5/2' is minute 5 alone, in cronie (get_range) and here; croniter ran it every
    minute. Beside cronsim when it reads it the same way (2.9 on)."""
    cron = Cron("5-5/2 * * * *")
    start = datetime(2026, 1, 1, tzinfo=UTC)
    runs: list[datetime] = []
    for _ in range(3):
        after = cron.next_after(runs[-1] if runs else start)
        assert after is not None
        runs.append(after)
    assert [(run.hour, run.minute) for run in runs] == [(0, 5), (1, 5), (2, 5)]
    if CRONSIM_READS_N_N_STEP_AS_CRONIE:
        previous = [start, *runs[:-1]]
        assert [cronsim_next("5-5/2 * * * *", "UTC", at) for at in previous] == runs


@pytest.mark.parametrize(
    "expr",
    [
        "0 0 L * *",
        "0 12 L,15 * *",
        "0 0 * * 5L",
        "30 6 * * 1#2",
        "0 0 * * 0#5",
        "0 0 1 * 5L",
        "0 0 */2 * 5L",
        "0 9 * jan-mar mon-fri",
        "0 9 * * SUN,sat",
        "0 9 */2 * 1",
        "0 0 1,15 * 1",
        "*/90 * * * *",
        "0 22-23,0-1 * * *",
        "0 8 * * 0-7",
    ],
)
def test_extensions_names_and_the_issue_examples_agree_with_cronsim(expr: str) -> None:
    cron = Cron(expr)
    after = datetime(2026, 1, 1, tzinfo=UTC)
    for _ in range(40):
        ours = cron.next_after(after)
        assert ours == cronsim_next(expr, "UTC", after), (expr, after)
        assert ours is not None
        after = ours


# ----------------------------------------------------------------- across DST


def _classify(change: Change, cron: Cron, after: datetime, ours: datetime, theirs: datetime) -> str:
    if theirs <= after:
        return "past run in a repeated hour"
    odd_offset = any(offset.total_seconds() % 3600 for offset in (change.before, change.after))
    if cron.wildcard and theirs > ours and odd_offset:
        if change.is_gap:
            return "rounding inside a 45-minute gap"
        return "real-hour steps at a 30-minute fall-back"
    raise AssertionError(f"an unknown difference: {cron.expr!r} in {change.zone} after {after}")


def test_dst_agrees_with_cronsim_but_for_known_differences_and_cronie_decides() -> None:
    seen: Counter[str] = Counter()
    for zone in ISSUE_ZONES:
        found = [change for year in (2026, 2027) for change in changes(zone, year)]
        summer = datetime(2026, 6, 1, tzinfo=UTC)
        for change in found or [Change(zone, summer, timedelta(0), timedelta(0))]:
            moment = change.at
            start, end = moment - timedelta(hours=4), moment + timedelta(hours=30)
            for expr in DST_EXPRESSIONS:
                cron = Cron(expr, zone)
                launches = sorted(
                    set(
                        cronie_launches(
                            cron._calendar.matches, cron.wildcard, ZoneInfo(zone), start, end
                        )
                    )
                )
                after = moment - timedelta(hours=3)
                while after < moment + timedelta(hours=3):
                    ours = cron.next_after(after)
                    cronie_next = launches[bisect.bisect_right(launches, after)]
                    assert ours == cronie_next, (zone, expr, after)
                    theirs = cronsim_next(expr, zone, after)
                    assert theirs is not None and ours is not None
                    if ours != theirs:
                        seen[_classify(change, cron, after, ours, theirs)] += 1
                    after += timedelta(minutes=7)
    assert set(seen) == set(KNOWN) - {"N-N/step"}, seen
