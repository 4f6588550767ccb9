"""The one output cap: how much of what a run printed is kept, and the line that says
how much was cut.

The end of a log is where the error is, so the *tail* is kept, at most
``OUTPUT_CAP_BYTES`` of UTF-8 with the marker included, and the marker counts the
bytes cut: ``[... 1234 bytes of earlier output cut ...]``. Two writers cut output: the
runner, while the command runs (``runtime.output_tail.TailBuffer``, which leaves
``MARKER_ROOM`` for the longest marker, so its tail is stored as it is), and the store,
for output from anywhere else (``store.protocols.cap_output``, which uses ``cap_text``
here). Both write this one marker, so a reader (a person, ``cut_bytes``) sees one form.
"""

from __future__ import annotations

import re

# What the store keeps of a run's output, marker included.
OUTPUT_CAP_BYTES = 64 * 1024

_MARKER = "[... {} bytes of earlier output cut ...]\n"
_MARKER_LINE = re.compile(r"\[\.\.\. (\d+) bytes of earlier output cut \.\.\.\]\n")

# The longest marker (a 20-digit count, more bytes than any output could have).
MARKER_ROOM = len(_MARKER.format(10**20 - 1).encode("utf-8"))

# The runner's tail: the cap less the marker's room, so the tail with its marker is
# never cut a second time by the store.
TAIL_CAP = OUTPUT_CAP_BYTES - MARKER_ROOM


def cut_marker(dropped: int) -> str:
    """The line that starts a tail which lost its first ``dropped`` bytes."""
    return _MARKER.format(dropped)


def cut_bytes(text: str) -> int | None:
    """How many bytes were cut from the start of ``text``, or None if none were."""
    match = _MARKER_LINE.match(text)
    return int(match.group(1)) if match else None


def cap_text(text: str, limit: int = OUTPUT_CAP_BYTES) -> str:
    """The tail of ``text`` within ``limit`` bytes of UTF-8, the marker included.

    Never splits a character: a cut that lands inside one drops the rest of it too
    (counted). ``text`` must encode (no lone surrogates: see ``storable_text``).
    """
    if text.isascii():  # the usual case: one byte per character
        if len(text) <= limit:
            return text
        keep = _room(len(text), limit)
        return cut_marker(len(text) - keep) + text[len(text) - keep :]
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    keep = _room(len(data), limit)
    start = len(data) - keep
    while start < len(data) and data[start] & 0xC0 == 0x80:
        start += 1  # a continuation byte: the character began before the cut
    return cut_marker(start) + data[start:].decode("utf-8")


def _room(size: int, limit: int) -> int:
    """Bytes of the tail to keep of ``size`` so that it and its marker fit ``limit``.

    The marker for ``size`` is at least as long as the one for what is really cut, so
    the first guess fits; the second takes back a digit the count may not need.
    """
    keep = max(limit - len(cut_marker(size)), 0)
    return max(limit - len(cut_marker(size - keep)), 0) if keep else 0
