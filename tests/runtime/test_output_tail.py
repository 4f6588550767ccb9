"""One output cap: a run's tail fits what the store keeps, so it is stored unchanged."""

from __future__ import annotations

import pytest

from taskgui.core.output_cap import OUTPUT_CAP_BYTES, cut_bytes
from taskgui.runtime.output_tail import DEFAULT_OUTPUT_CAP, MARKER_ROOM, TailBuffer, cut_marker
from taskgui.store.protocols import cap_output


@pytest.mark.parametrize(
    "chunk",
    [b"x" * 1000, "é€😀\n".encode(), b"\xff\xfe" * 7, b"line of output\n" * 50],
)
def test_the_tail_of_any_output_is_stored_as_the_runner_reported_it(chunk: bytes) -> None:
    tail = TailBuffer(DEFAULT_OUTPUT_CAP)
    for _ in range(3 * OUTPUT_CAP_BYTES // len(chunk) + 1):
        tail.feed(chunk)
    text = tail.text()
    assert cut_bytes(text)  # the one marker, with its count
    assert len(text.encode()) <= OUTPUT_CAP_BYTES
    assert cap_output(text) == text  # the store keeps the count of cut bytes


def test_the_room_fits_the_longest_marker() -> None:
    assert len(cut_marker(2**64).encode()) <= MARKER_ROOM
    assert DEFAULT_OUTPUT_CAP == OUTPUT_CAP_BYTES - MARKER_ROOM
