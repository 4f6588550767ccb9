"""cronie's crond main loop (``src/cron.c``), minute by minute: the reference for DST.

A direct transcription of ``main()``'s loop and ``find_jobs()``: the virtual clock,
the four kinds of wake-up (one minute on, a small or medium jump forward, a jump
back, a large jump), and which jobs each kind runs (wildcard, fixed-time or both).
It knows nothing of taskgui's code: whether a wall minute matches is passed in, so a
test can give it sets it built itself.

It models the daemon running with ``TZ`` set to the job's zone, waking promptly at
every minute, and jobs that start at once (no RANDOM_DELAY, no queue backlog).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta, tzinfo

_WALL_EPOCH = datetime(1970, 1, 1)
_UTC_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MINUTE_COUNT = 60  # cron.c's MINUTE_COUNT: minutes in an hour


def cronie_launches(
    matches: Callable[[datetime], bool],
    wildcard: bool,
    zone: tzinfo,
    start: datetime,
    end: datetime,
) -> list[datetime]:
    """Every launch cronie makes in (start, end], as UTC instants, in order.

    A job launched twice in the same minute (a fixed-time job with two times in one
    spring-forward gap) appears twice.
    """
    launches: list[datetime] = []
    now = int((start - _UTC_EPOCH).total_seconds()) // 60 * 60
    last = (end - _UTC_EPOCH).total_seconds()

    def clock(epoch: int) -> int:  # set_time(): wall minutes since the epoch
        offset = datetime.fromtimestamp(epoch, UTC).astimezone(zone).utcoffset()
        assert offset is not None
        return (epoch + int(offset.total_seconds())) // 60

    def find_jobs(vtime: int, do_wild: bool, do_non_wild: bool) -> None:
        wall = _WALL_EPOCH + timedelta(minutes=vtime)  # gmtime(virtualSecond)
        if matches(wall) and ((do_non_wild and not wildcard) or (do_wild and wildcard)):
            launches.append(datetime.fromtimestamp(now, UTC))

    time_running = virtual_time = clock(now)
    while True:
        now += 60  # cron_sleep() to the next minute
        if now > last:
            return launches
        time_running = clock(now)
        time_diff = time_running - virtual_time
        if time_diff == 1:
            virtual_time = time_running
            find_jobs(virtual_time, True, True)
        elif time_diff > 3 * MINUTE_COUNT or time_diff < -(3 * MINUTE_COUNT):  # large
            virtual_time = time_running
            find_jobs(time_running, True, True)
        elif time_diff > 5:  # medium: "for example because we went to DST"
            find_jobs(time_running, True, False)
            while True:
                virtual_time += 1
                find_jobs(virtual_time, False, True)
                if virtual_time >= time_running:
                    break
        elif time_diff > 0:  # small: woke up late, catch up every job
            while True:
                virtual_time += 1
                find_jobs(virtual_time, True, True)
                if virtual_time >= time_running:
                    break
        else:  # negative: "eg. because of DST ending"; virtual time waits
            find_jobs(time_running, True, False)
