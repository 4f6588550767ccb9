"""What a running command printed: the bounded tail, and reports of it while it runs.

The runner's waiting thread feeds every chunk it reads into a ``TailBuffer`` and asks
``OutputReports`` after each wait whether the tail so far is due to be handed on.
Both are plain objects used from that one thread; only the report callback reaches
out, and it is expected to return at once (the pool emits a queued signal).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from taskgui.core.output_cap import MARKER_ROOM, TAIL_CAP, cut_marker

__all__ = ["DEFAULT_OUTPUT_CAP", "MARKER_ROOM", "OutputReports", "TailBuffer", "cut_marker"]

# The one output cap (``core.output_cap``): what the store keeps, less the room of the
# longest marker, so the tail a run reports is stored as it is.
DEFAULT_OUTPUT_CAP = TAIL_CAP


class TailBuffer:
    """The last ``cap`` bytes of a stream, in at most about ``2 * cap`` bytes of memory.

    Cutting the buffer back on every chunk would move up to ``cap`` bytes per read;
    letting it grow to twice the cap before cutting makes the cost per byte constant
    however much the command prints.
    """

    def __init__(self, cap: int) -> None:
        if cap < 0:
            raise ValueError(f"the output cap cannot be negative, not {cap}")
        self._cap = cap
        self._buffer = bytearray()
        self._dropped = 0
        self.fed = 0  # bytes fed in all: tells a reader whether anything new came

    def feed(self, data: bytes) -> None:
        self.fed += len(data)
        self._buffer += data
        excess = len(self._buffer) - self._cap
        if excess > self._cap:
            del self._buffer[:excess]
            self._dropped += excess

    @property
    def held(self) -> int:
        """Bytes in memory right now (what the memory bound is about)."""
        return len(self._buffer)

    def text(self) -> str:
        """The tail decoded as UTF-8, prefixed with how much was cut, if anything was.

        At most ``cap`` bytes once encoded again: bytes that are not UTF-8 become U+FFFD
        (three bytes for one), so such a tail is cut further rather than let the store
        cut it a second time.
        """
        excess = max(0, len(self._buffer) - self._cap)
        data = bytes(self._buffer[excess:])
        dropped = self._dropped + excess
        while True:
            # After a cut the data may start inside a multi-byte character; start at
            # the next whole one rather than with a replacement character.
            skip = 0
            if dropped:
                while skip < min(3, len(data)) and 0x80 <= data[skip] <= 0xBF:
                    skip += 1
            body = data[skip:].decode("utf-8", errors="replace")
            over = len(body.encode("utf-8")) - self._cap
            if over <= 0:
                break
            data, dropped = data[over:], dropped + over
        if not dropped:
            return body
        return cut_marker(dropped + skip) + body


class OutputReports:
    """Hands the tail so far to a callback, at most once per ``interval``.

    Output that arrives within an interval of the last report waits for the next one
    (``due_in`` says when), so a burst of lines costs one report, not one per line.
    """

    def __init__(
        self, tail: TailBuffer, report: Callable[[str], None] | None, interval: float
    ) -> None:
        self._tail = tail
        self._report = report
        self._interval = interval
        self._reported = 0  # tail.fed at the last report
        self._next = 0.0  # monotonic time the next report may be made

    def due_in(self, now: float) -> float | None:
        """Seconds until output not reported yet should be, or None if all is."""
        if self._report is None or self._tail.fed == self._reported:
            return None
        return max(0.0, self._next - now)

    def report(self, now: float) -> None:
        """Report the tail if something new came and the interval has passed."""
        if self._report is None or self._tail.fed == self._reported or now < self._next:
            return
        self._reported = self._tail.fed
        self._next = now + self._interval
        with contextlib.suppress(Exception):  # a view's trouble must not stop the run
            self._report(self._tail.text())
