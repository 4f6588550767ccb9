"""From matching wall-clock minutes to real instants, across DST changes as cronie does.

cronie's ``cron.c`` wakes every minute and compares the wall clock with the minute it
expected (its "virtual time"). A DST change shows up as a jump, and what it does then
depends on the kind of job (``CronFields.wildcard``: the minute or hour field starts
with ``*``):

- **Spring forward** (the clock jumps ahead, e.g. 02:00 -> 03:00): wildcard jobs run
  only at the minute the clock now shows, so their times in the gap are skipped
  (``0 */2 * * *`` runs at 04:00, not 03:00). Fixed-time jobs whose time fell in the
  gap run right after it, at the first real minute.
- **Fall back** (the clock repeats, e.g. 03:00 -> 02:00): fixed-time jobs already ran
  in the first pass and do not run again; wildcard jobs run through both passes as
  the wall clock shows them, so they keep their spacing in real time.

The same rules hold for every zone and any size of change: 30- and 45-minute shifts
(Lord Howe, Chatham) and changes at midnight (Santiago, where the gap or the repeated
hour falls on a different day). Deliberate differences, documented in the README:

- cronie launches a fixed-time job once for *each* of its times that fell in a gap
  (``15,45 2 * * *`` twice at 03:00); taskgui runs it once: two copies of the same
  command started in the same second are never what was meant.
- cronie treats a jump of more than 3 hours as a clock reset (the skipped times are
  lost) and one of 1-4 minutes as a late wake-up (every job catches up). Since 1970
  the only changes of those sizes are date-line moves (Samoa skipped 30 December
  2011) and one 7-hour change in Antarctica; taskgui applies the rules above to
  them too, so a fixed-time job of a skipped day runs once when it ends.
- cronie applies these rules in the system's zone only (a ``CRON_TZ`` job can miss
  or repeat a run, its man page says); taskgui applies them in each task's zone.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, tzinfo

from taskgui.core.cron.matching import CronCalendar

_SECOND = timedelta(seconds=1)


def next_fire(
    calendar: CronCalendar, wildcard: bool, zone: tzinfo, after: datetime
) -> datetime | None:
    """The first instant strictly after ``after`` (aware) at which the job runs, in UTC.

    None when the calendar has no match left. ``zone`` is the job's zone; ``UTC``
    takes a shortcut, since it has no changes of offset. Wall times are handled as
    aware datetimes in ``zone`` with fold 0 (arithmetic and comparison between them
    are on the wall clock), and built from fields: ``datetime.replace`` would cost
    more than the search.
    """
    if zone is UTC:
        return calendar.next_match(after if after.tzinfo is UTC else after.astimezone(UTC), UTC)
    local = after.astimezone(zone)
    if local.fold:  # the second pass of a fall-back
        _start, end, offset = _overlap(zone, local)
        if wildcard:
            match = calendar.next_match(local, zone)
            if match is not None and match < end:
                return (match - offset).replace(tzinfo=UTC)
            return _first_instant(calendar, wildcard, zone, match)
        # A fixed-time job ran these wall times in the first pass: go on after them.
        return _first_instant(calendar, wildcard, zone, calendar.next_match(end - _SECOND, zone))
    match = calendar.next_match(local, zone)
    if wildcard and _is_repeated(zone, local):  # the first pass of a fall-back
        start, end, offset = _overlap(zone, local)
        if match is None or match >= end:
            # Nothing left in the first pass: the second pass starts over at ``start``.
            again = calendar.next_match(start - _SECOND, zone)
            if again is not None and again < end:
                return (again - offset).replace(tzinfo=UTC)
    return _first_instant(calendar, wildcard, zone, match)


def _first_instant(
    calendar: CronCalendar, wildcard: bool, zone: tzinfo, match: datetime | None
) -> datetime | None:
    """The first instant of wall time ``match`` or, if it does not exist, of a later one.

    A repeated wall time gives its first instance. A wall time in a spring-forward
    gap gives, for a fixed-time job, the instant the gap ends; a wildcard job goes
    on to its next match.
    """
    while match is not None:
        before = match.utcoffset()
        after = _second(match).utcoffset()
        assert before is not None and after is not None
        if before >= after:  # an ordinary time, or the first instance of a repeated one
            return match.astimezone(UTC)
        if not wildcard:
            return _transition(zone, _naive(match) - after, _naive(match) - before, after)
        match = calendar.next_match(match, zone)
    return None


def _second(wall: datetime) -> datetime:
    """The same wall time with fold 1 (its second instance, or the later offset)."""
    return datetime(
        wall.year, wall.month, wall.day, wall.hour, wall.minute, wall.second,
        wall.microsecond, tzinfo=wall.tzinfo, fold=1,
    )  # fmt: skip


def _naive(wall: datetime) -> datetime:
    return datetime(
        wall.year, wall.month, wall.day, wall.hour, wall.minute, wall.second, wall.microsecond
    )


def _is_repeated(zone: tzinfo, local: datetime) -> bool:
    """True when the wall time of ``local`` occurs twice (a fall-back's overlap)."""
    first = _first(zone, local).utcoffset()
    second = _second(local).utcoffset()
    assert first is not None and second is not None
    return first > second


def _first(zone: tzinfo, wall: datetime) -> datetime:
    return datetime(
        wall.year, wall.month, wall.day, wall.hour, wall.minute, wall.second,
        wall.microsecond, tzinfo=zone,
    )  # fmt: skip


def _overlap(zone: tzinfo, local: datetime) -> tuple[datetime, datetime, timedelta]:
    """For a repeated wall time: the repeated span [start, end) of wall times (aware in
    ``zone``, fold 0), and the offset of its second pass."""
    first = _first(zone, local).utcoffset()
    second = _second(local).utcoffset()
    assert first is not None and second is not None
    wall = _naive(local)
    change = _transition(zone, wall - first, wall - second, second)
    start = _first(zone, change.replace(tzinfo=None) + second)
    return start, start + (first - second), second


def _transition(zone: tzinfo, low: datetime, high: datetime, new: timedelta) -> datetime:
    """The instant in (low, high] (naive UTC) at which the offset becomes ``new``.

    Offsets change on whole seconds, so a bisection on seconds finds it exactly; it
    runs only at a DST change, a handful of times a year per task.
    """
    low, high = low.replace(microsecond=0), high.replace(microsecond=0)
    while high - low > _SECOND:
        middle = low + timedelta(seconds=(high - low) // _SECOND // 2)
        if middle.replace(tzinfo=UTC).astimezone(zone).utcoffset() == new:
            high = middle
        else:
            low = middle
    return high.replace(tzinfo=UTC)
