"""The fire times a cron schedule already found, kept with the spans they answer.

The next fire after ``t`` is the first of a fixed set of instants (the job's fire
times, DST rules applied) that is later than ``t``; so an answer ``a`` found for
``t`` is also the answer for every ``t2`` with ``t <= t2 < a``. A bulk import asks for
the first run of thousands of tasks whose starts fall between the same few fire times
(a nightly job's tasks, started at random moments of a month, have 30 answers), and
the engine and the store ask for the same one twice for every new task. Each answer
is kept with its span, sorted by the span's start, and found by bisection.

Safe to share between threads without a lock: the list is only ever added to (one
list operation each) or replaced whole, and a hit is checked against its own span,
so a race can cost a lookup its hit, never give a wrong answer.
"""

from __future__ import annotations

from bisect import bisect_right
from datetime import UTC, datetime

# Spans kept per schedule before starting over: a bisection over this many is still
# far cheaper than a search, and a schedule that keeps moving on (the engine asks at
# each occurrence) does not grow without bound.
LIMIT = 1024
# A probe ``(after, _LAST)`` sorts after every span asked at ``after`` or before.
_LAST = datetime.max.replace(tzinfo=UTC)


class FireMemo:
    """Spans ``[asked, answer)`` whose answer is known (see the module docstring)."""

    __slots__ = ("_spans",)

    def __init__(self) -> None:
        self._spans: list[tuple[datetime, datetime]] = []

    def get(self, after: datetime) -> datetime | None:
        """The next fire after ``after`` if a known span holds it, else None."""
        spans = self._spans
        index = bisect_right(spans, (after, _LAST)) - 1  # the last span asked <= after
        if index < 0:
            return None
        asked, answer = spans[index]
        return answer if asked <= after < answer else None

    def put(self, after: datetime, answer: datetime) -> None:
        """``answer`` is the next fire after ``after`` (and so for all up to it)."""
        spans = self._spans
        if len(spans) >= LIMIT:
            self._spans = spans = []
        index = bisect_right(spans, (after, _LAST))
        if index < len(spans) and spans[index][1] == answer:
            spans[index] = (after, answer)  # the same answer: that span reaches back
        else:
            spans.insert(index, (after, answer))
