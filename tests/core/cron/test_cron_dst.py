"""DST as cronie's cron.c handles it: the examples of issue 12, in whole-hour,
30-minute (Lord Howe), 45-minute (Chatham) and midnight (Santiago) zones, and the one
deliberate difference. ``tests/helpers/cronie_model.py`` is cron.c's loop itself."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from taskgui.core.recurrence import Cron
from tests.helpers.cron import runs_between
from tests.helpers.cronie_model import cronie_launches


def at(zone: str, wall: str, *, fold: int = 0) -> datetime:
    """A wall time in ``zone`` ('2027-03-28 04:00') as UTC; ``fold=1``: its second instance."""
    naive = datetime.fromisoformat(wall)
    return naive.replace(tzinfo=ZoneInfo(zone), fold=fold).astimezone(UTC)


def runs(expr: str, zone: str, start: datetime, end: datetime) -> list[datetime]:
    """Every run in (start, end]."""
    return runs_between(Cron(expr, zone), start, end)


def walls(instants: list[datetime], zone: str) -> list[str]:
    """Instants as local wall times with their offsets, '03:00+02:00'."""
    return [moment.astimezone(ZoneInfo(zone)).strftime("%d %H:%M%z") for moment in instants]


def cronie(expr: str, zone: str, start: datetime, end: datetime) -> list[datetime]:
    cron = Cron(expr, zone)
    return cronie_launches(cron._calendar.matches, cron.wildcard, ZoneInfo(zone), start, end)


# --------------------------------------------------------------- spring forward


def test_a_wildcard_job_skips_the_times_in_a_gap() -> None:
    berlin = "Europe/Berlin"
    # 2027-03-28: 02:00 CET is 03:00 CEST. 03:00 is not an even hour: next is 04:00.
    assert Cron("0 */2 * * *", berlin).next_after(at(berlin, "2027-03-28 00:30")) == at(
        berlin, "2027-03-28 04:00"
    )
    # '*/20 2' has no 02:xx that day at all; it runs again the next night.
    assert walls(
        runs(
            "*/20 2 * * *", berlin, at(berlin, "2027-03-27 03:00"), at(berlin, "2027-03-29 03:00")
        ),
        berlin,
    ) == ["29 02:00+0200", "29 02:20+0200", "29 02:40+0200"]


def test_a_fixed_time_job_in_a_gap_runs_once_right_after_it() -> None:
    berlin = "Europe/Berlin"
    day = runs("30 2 * * *", berlin, at(berlin, "2027-03-27 12:00"), at(berlin, "2027-03-29 12:00"))
    assert walls(day, berlin) == ["28 03:00+0200", "29 02:30+0200"]


def test_cronie_launches_once_per_skipped_time_and_taskgui_once_on_purpose() -> None:
    berlin = "Europe/Berlin"
    start, end = at(berlin, "2027-03-28 00:00"), at(berlin, "2027-03-28 12:00")
    gap_end = at(berlin, "2027-03-28 03:00")
    # cronie: 02:15 and 02:45 were both skipped, so it starts the job twice at 03:00.
    assert cronie("15,45 2 * * *", berlin, start, end) == [gap_end, gap_end]
    # taskgui: one run. Two copies of one command started in the same second are
    # never what was meant (README, "Cron and daylight saving time").
    assert runs("15,45 2 * * *", berlin, start, end) == [gap_end]


# ------------------------------------------------------------------- fall back


def test_a_fixed_time_job_runs_once_in_a_repeated_hour_a_wildcard_job_twice() -> None:
    berlin = "Europe/Berlin"  # 2027-10-31: 03:00 CEST is 02:00 CET again
    start, end = at(berlin, "2027-10-31 01:30"), at(berlin, "2027-10-31 03:30")
    # '0-23' is written out, not '*': a fixed-time job.
    assert walls(runs("0 0-23 * * *", berlin, start, end), berlin) == [
        "31 02:00+0200",
        "31 03:00+0100",
    ]
    assert walls(runs("0 * * * *", berlin, start, end), berlin) == [
        "31 02:00+0200",
        "31 02:00+0100",
        "31 03:00+0100",
    ]
    for expr in ("0 0-23 * * *", "0 * * * *"):
        assert runs(expr, berlin, start, end) == cronie(expr, berlin, start, end)


def test_a_fixed_time_job_asked_from_the_second_pass_goes_on_to_the_next_day() -> None:
    berlin = "Europe/Berlin"
    second_pass = at(berlin, "2027-10-31 02:10", fold=1)
    assert Cron("30 2 * * *", berlin).next_after(second_pass) == at(berlin, "2027-11-01 02:30")
    assert Cron("*/30 2 * * *", berlin).next_after(second_pass) == at(
        berlin, "2027-10-31 02:30", fold=1
    )


def test_lord_howe_30_minute_fall_back() -> None:
    howe = "Australia/Lord_Howe"  # 2027-04-04: 02:00+11:00 is 01:30+10:30
    cron = Cron("*/7 * * * *", howe)
    first_pass = at(howe, "2027-04-04 01:57")
    assert cron.next_after(first_pass) == at(howe, "2027-04-04 01:35", fold=1)
    assert walls(runs("*/7 * * * *", howe, first_pass, at(howe, "2027-04-04 02:10")), howe) == [
        "04 01:35+1030",
        "04 01:42+1030",
        "04 01:49+1030",
        "04 01:56+1030",
        "04 02:00+1030",
        "04 02:07+1030",
    ]
    assert walls(runs("45 1 * * *", howe, at(howe, "2027-04-03 12:00"), first_pass), howe) == [
        "04 01:45+1100"  # once, in the first pass
    ]


def test_lord_howe_30_minute_spring_forward() -> None:
    howe = "Australia/Lord_Howe"  # 2026-10-04: 02:00+10:30 is 02:30+11:00
    start, end = at(howe, "2026-10-04 00:00"), at(howe, "2026-10-04 03:00")
    assert walls(runs("15 2 * * *", howe, start, end), howe) == ["04 02:30+1100"]
    assert walls(runs("*/10 2 * * *", howe, start, end), howe) == [
        "04 02:30+1100",
        "04 02:40+1100",
        "04 02:50+1100",
    ]


def test_chatham_45_minute_changes() -> None:
    chatham = "Pacific/Chatham"
    # 2026-09-27: 02:45+12:45 is 03:45+13:45.
    spring = (at(chatham, "2026-09-27 01:00"), at(chatham, "2026-09-27 05:00"))
    assert walls(runs("0 3 * * *", chatham, *spring), chatham) == ["27 03:45+1345"]
    assert walls(runs("50 2 * * *", chatham, *spring), chatham) == ["27 03:45+1345"]
    assert walls(runs("0 */2 * * *", chatham, *spring), chatham) == [
        "27 02:00+1245",
        "27 04:00+1345",
    ]
    # 2026-04-05: 03:45+13:45 is 02:45+12:45 again.
    fall = (at(chatham, "2026-04-05 01:50"), at(chatham, "2026-04-05 04:10"))
    assert walls(runs("0 3 * * *", chatham, *fall), chatham) == ["05 03:00+1345"]
    half_hours = runs("*/30 * * * *", chatham, *fall)
    assert walls(half_hours, chatham) == [
        "05 02:00+1345",
        "05 02:30+1345",
        "05 03:00+1345",
        "05 03:30+1345",
        "05 03:00+1245",
        "05 03:30+1245",
        "05 04:00+1245",
    ]
    assert {b - a for a, b in itertools.pairwise(half_hours)} == {timedelta(minutes=30)}


def test_santiago_changes_at_midnight() -> None:
    santiago = "America/Santiago"
    # 2026-09-06 (a Sunday): 00:00-04:00 is 01:00-03:00; that day has no 00:xx.
    spring = (at(santiago, "2026-09-05 12:00"), at(santiago, "2026-09-07 12:00"))
    assert walls(runs("0 0 * * *", santiago, *spring), santiago) == [
        "06 01:00-0300",
        "07 00:00-0300",
    ]
    assert walls(runs("30 0 * * 0", santiago, *spring), santiago) == ["06 01:00-0300"]
    assert walls(runs("*/30 0 * * *", santiago, *spring), santiago) == [
        "07 00:00-0300",
        "07 00:30-0300",
    ]
    # 2026-04-04 (a Saturday): 24:00-03:00 is 23:00-04:00, so Saturday's 23:xx repeats.
    fall = (at(santiago, "2026-04-04 22:00"), at(santiago, "2026-04-05 01:00"))
    assert walls(runs("30 23 * * 6", santiago, *fall), santiago) == ["04 23:30-0300"]
    assert walls(runs("*/30 23 * * *", santiago, *fall), santiago) == [
        "04 23:00-0300",
        "04 23:30-0300",
        "04 23:00-0400",
        "04 23:30-0400",
    ]
    assert walls(runs("0 0 * * 0", santiago, *fall), santiago) == ["05 00:00-0400"]


@pytest.mark.parametrize(
    ("zone", "start"),
    [
        ("Europe/Berlin", "2027-03-27 12:00"),
        ("Europe/Berlin", "2027-10-30 12:00"),
        ("Australia/Lord_Howe", "2026-10-03 12:00"),
        ("Australia/Lord_Howe", "2027-04-03 12:00"),
        ("Pacific/Chatham", "2026-09-26 12:00"),
        ("Pacific/Chatham", "2026-04-04 12:00"),
        ("America/Santiago", "2026-09-05 12:00"),
        ("America/Santiago", "2026-04-04 12:00"),
    ],
)
@pytest.mark.parametrize(
    "expr",
    [
        "30 2 * * *",
        "15,45 2 * * *",
        "*/20 2 * * *",
        "0 */2 * * *",
        "*/7 * * * *",
        "0 0-23 * * *",
        "*/15 0,23 * * *",
        "45 1-3 * * *",
        "0 0 * * 0",
    ],
)
def test_the_examples_match_cronie_over_two_days(zone: str, start: str, expr: str) -> None:
    begin = at(zone, start)
    end = begin + timedelta(days=2)
    assert runs(expr, zone, begin, end) == sorted(set(cronie(expr, zone, begin, end)))


def test_a_skipped_day_runs_its_fixed_time_job_once_where_cronie_skips_it() -> None:
    # Samoa moved across the date line: 29 December 2011 23:59 -10:00 was followed by
    # 31 December 00:00 +14:00. cronie reads a jump of more than three hours as a clock
    # reset and skips what fell in it; taskgui treats it as any gap (README).
    apia = "Pacific/Apia"
    start, end = at(apia, "2011-12-29 00:00"), at(apia, "2012-01-01 00:00")
    assert walls(runs("0 12 * * *", apia, start, end), apia) == [
        "29 12:00-1000",
        "31 00:00+1400",  # the run of the 30th, which did not exist
        "31 12:00+1400",
    ]
    assert walls(cronie("0 12 * * *", apia, start, end), apia) == [
        "29 12:00-1000",
        "31 12:00+1400",
    ]
    # A wildcard job skips the missing day, as it skips any gap, and as cronie does.
    assert runs("0 */6 * * *", apia, start, end) == cronie("0 */6 * * *", apia, start, end)
