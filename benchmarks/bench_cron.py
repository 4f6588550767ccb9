"""Choose the cron evaluator by measurement: correctness first, then the cost of a next run.

    python benchmarks/bench_cron.py            # the full run
    python benchmarks/bench_cron.py --smoke    # a few calls per cell (for the test)

Three evaluators are measured in the same run, each the way it is meant to be used:

* ``croniter`` (7.x): ``croniter(expr, start).get_next(datetime)``, what taskgui used.
* ``cronsim`` (2.8): ``next(CronSim(expr, start))``, which follows Debian cron.
* ``taskgui``: ``Cron(expr, tz)``'s evaluator (``cron_grammar`` + ``cron_calendar`` +
  ``cron_dst``), without the memo ``next_after`` puts in front of it.

**Correctness** is the share of cases answered as cronie would (each case from issue
12: the calendar bugs, the day rule, DST in whole-hour, 30- and 45-minute and midnight
zones); the expected answers are cronie's, checked in ``tests/core/test_cron_*.py``.
**Cost** is microseconds per next run, the median of ``--repeats`` rounds of
``--calls`` calls on a mix of expressions, in UTC and in Europe/Berlin, with the start
moved on each call so no evaluator answers from a memo. Ratios are against taskgui in
the same run, so they carry over to other machines when the absolute numbers do not.

This is a benchmark, not a test: it always exits 0 unless it crashes.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from taskgui.core.recurrence import Cron  # noqa: E402

Next = Callable[[str, tzinfo, datetime], datetime | None]
EXPRESSIONS = (
    "*/5 * * * *",
    "0 9 * * 1-5",
    "30 2 * * *",
    "0 0 1 * *",
    "15,45 8-18 * * *",
    "0 */2 * * *",
    "0 12 13 * 5",
    "0 0 29 2 *",
)
ZONES = (UTC, ZoneInfo("Europe/Berlin"))
START = datetime(2026, 1, 1, tzinfo=UTC)


def _zone(name: str) -> tzinfo:
    return UTC if name == "UTC" else ZoneInfo(name)


def _wall(zone: str, text: str, fold: int = 0) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=_zone(zone), fold=fold).astimezone(UTC)


@dataclass(frozen=True)
class Case:
    what: str
    expr: str
    zone: str
    after: datetime
    expected: datetime


CASES = (
    Case(
        "N-N is N",
        "5-5 * * * *",
        "UTC",
        _wall("UTC", "2027-01-01 00:00"),
        _wall("UTC", "2027-01-01 00:05"),
    ),
    Case(
        "N-N hours",
        "0 5-5 * * *",
        "UTC",
        _wall("UTC", "2027-01-01 06:00"),
        _wall("UTC", "2027-01-02 05:00"),
    ),
    Case(
        "odd days that are Mondays",
        "0 9 */2 * 1",
        "UTC",
        _wall("UTC", "2027-01-01 00:00"),
        _wall("UTC", "2027-01-11 09:00"),
    ),
    Case(
        "*/90 is :00 only",
        "*/90 * * * *",
        "UTC",
        _wall("UTC", "2027-01-01 00:30"),
        _wall("UTC", "2027-01-01 01:00"),
    ),
    Case(
        "a wildcard job skips a gap",
        "0 */2 * * *",
        "Europe/Berlin",
        _wall("Europe/Berlin", "2027-03-28 00:30"),
        _wall("Europe/Berlin", "2027-03-28 04:00"),
    ),
    Case(
        "a fixed-time job runs after a gap",
        "30 2 * * *",
        "Europe/Berlin",
        _wall("Europe/Berlin", "2027-03-27 12:00"),
        _wall("Europe/Berlin", "2027-03-28 03:00"),
    ),
    Case(
        "once in a repeated hour",
        "30 2 * * *",
        "Europe/Berlin",
        _wall("Europe/Berlin", "2027-10-31 02:10", 1),
        _wall("Europe/Berlin", "2027-11-01 02:30"),
    ),
    Case(
        "0-23 is fixed-time",
        "0 0-23 * * *",
        "Europe/Berlin",
        _wall("Europe/Berlin", "2027-10-31 02:10"),
        _wall("Europe/Berlin", "2027-10-31 03:00"),
    ),
    Case(
        "both passes for a wildcard job",
        "0 * * * *",
        "Europe/Berlin",
        _wall("Europe/Berlin", "2027-10-31 02:10"),
        _wall("Europe/Berlin", "2027-10-31 02:00", 1),
    ),
    Case(
        "Lord Howe's 30-minute fall-back",
        "*/7 * * * *",
        "Australia/Lord_Howe",
        _wall("Australia/Lord_Howe", "2027-04-04 01:57"),
        _wall("Australia/Lord_Howe", "2027-04-04 01:35", 1),
    ),
    Case(
        "Lord Howe, wildcard after it",
        "*/20 2 * * *",
        "Australia/Lord_Howe",
        _wall("Australia/Lord_Howe", "2026-04-04 23:00"),
        _wall("Australia/Lord_Howe", "2026-04-05 02:00"),
    ),
    Case(
        "Chatham's 45-minute gap",
        "0 */2 * * *",
        "Pacific/Chatham",
        _wall("Pacific/Chatham", "2026-09-27 03:47"),
        _wall("Pacific/Chatham", "2026-09-27 04:00"),
    ),
    Case(
        "Santiago's midnight gap",
        "0 0 * * *",
        "America/Santiago",
        _wall("America/Santiago", "2026-09-05 12:00"),
        _wall("America/Santiago", "2026-09-06 01:00"),
    ),
)


def _croniter() -> Next | None:
    try:
        from croniter import croniter  # noqa: PLC0415
    except ImportError:
        return None

    def next_run(expr: str, zone: tzinfo, after: datetime) -> datetime | None:
        found: datetime = croniter(expr, after.astimezone(zone)).get_next(datetime)
        return found.astimezone(UTC)

    return next_run


def _cronsim() -> Next | None:
    try:
        from cronsim import CronSim  # noqa: PLC0415
    except ImportError:
        return None

    def next_run(expr: str, zone: tzinfo, after: datetime) -> datetime | None:
        return next(CronSim(expr, after.astimezone(zone))).astimezone(UTC)

    return next_run


def _taskgui() -> Next:
    crons: dict[tuple[str, tzinfo], Cron] = {}

    def next_run(expr: str, zone: tzinfo, after: datetime) -> datetime | None:
        key = (expr, zone)
        cron = crons.get(key)
        if cron is None:
            cron = crons[key] = Cron(expr, "UTC" if zone is UTC else str(zone))
        return cron._next(after)  # the evaluator itself, not the memo in front of it

    return next_run


def correctness(next_run: Next) -> tuple[int, list[str]]:
    wrong: list[str] = []
    for case in CASES:
        try:
            answer = next_run(case.expr, _zone(case.zone), case.after)
        except Exception as error:  # a library that refuses a case got it wrong
            answer = None
            wrong.append(f"{case.what} ({type(error).__name__})")
            continue
        if answer != case.expected:
            wrong.append(case.what)
    return len(CASES) - len(wrong), wrong


def cost(next_run: Next, zone: tzinfo, calls: int, repeats: int) -> float:
    """Median microseconds per next run over ``repeats`` rounds of ``calls`` calls."""
    rounds: list[float] = []
    for _ in range(repeats):
        started = time.perf_counter()
        for index in range(calls):
            expr = EXPRESSIONS[index % len(EXPRESSIONS)]
            next_run(expr, zone, START + timedelta(minutes=37 * index))
        rounds.append((time.perf_counter() - started) / calls * 1e6)
    return statistics.median(rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--smoke", action="store_true", help="a few calls (for the test)")
    args = parser.parse_args()
    calls, repeats = (40, 2) if args.smoke else (args.calls, args.repeats)
    print(f"python {platform.python_version()} on {platform.machine()}, {calls} calls x {repeats}")

    ours = _taskgui()
    peers = {"taskgui": ours, "cronsim": _cronsim(), "croniter": _croniter()}
    print(f"\n{'evaluator':<10} {'cronie cases':>12}  wrong")
    for name, next_run in peers.items():
        if next_run is None:
            print(f"{name:<10} {'n/a':>12}  (pip install -e '.[dev]')")
            continue
        right, wrong = correctness(next_run)
        print(f"{name:<10} {f'{right}/{len(CASES)}':>12}  {', '.join(wrong) or '-'}")

    header = f"{'UTC':>8} {'Berlin':>8} {'ratio UTC':>10} {'ratio Berlin':>13}"
    print(f"\n{'next run (us/call)':<22} {header}")
    base = [cost(ours, zone, calls, repeats) for zone in ZONES]
    for name, next_run in peers.items():
        if next_run is None:
            print(f"{name:<22} {'n/a':>8} {'n/a':>8}")
            continue
        figures = base if name == "taskgui" else [cost(next_run, z, calls, repeats) for z in ZONES]
        ratios = [figure / reference for figure, reference in zip(figures, base, strict=True)]
        print(
            f"{name:<22} {figures[0]:>8.1f} {figures[1]:>8.1f} "
            f"{ratios[0]:>9.2f}x {ratios[1]:>12.2f}x"
        )
    print("\nratio (same run): each evaluator's cost over taskgui's")


if __name__ == "__main__":
    main()
