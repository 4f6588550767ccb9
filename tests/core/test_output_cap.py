"""The one output cap and its one marker, whoever cuts: the store or the runner."""

from __future__ import annotations

import pytest

from taskgui.core.output_cap import (
    MARKER_ROOM,
    OUTPUT_CAP_BYTES,
    TAIL_CAP,
    cap_text,
    cut_bytes,
    cut_marker,
)
from taskgui.runtime.output_tail import DEFAULT_OUTPUT_CAP, TailBuffer
from taskgui.store.protocols import cap_output


def test_the_marker_says_how_much_was_cut_and_can_be_read_back() -> None:
    assert cut_marker(1234) == "[... 1234 bytes of earlier output cut ...]\n"
    assert cut_bytes(cut_marker(1234) + "the rest") == 1234
    assert cut_bytes("[... 1234 bytes of earlier output cut ...] no newline") is None
    assert cut_bytes("output that starts like a marker: [... 5 bytes") is None
    assert cut_bytes("") is None


@pytest.mark.parametrize("size", [OUTPUT_CAP_BYTES + 1, 99_999, 100_001, 10**6 + 7])
def test_what_is_kept_and_what_is_counted_add_up_to_the_output(size: int) -> None:
    text = "".join(chr(ord("a") + index % 26) for index in range(size))
    capped = cap_text(text)
    _marker, kept = capped.split("\n", 1)
    assert cut_bytes(capped) == size - len(kept)
    assert text.endswith(kept)
    # As much as fits: one byte more would not (the marker's digits taken into account).
    assert OUTPUT_CAP_BYTES - 1 <= len(capped) <= OUTPUT_CAP_BYTES


@pytest.mark.parametrize("character", ["é", "€", "🙂"])
def test_a_cut_inside_a_character_counts_the_rest_of_it_as_cut(character: str) -> None:
    text = character * OUTPUT_CAP_BYTES
    capped = cap_text(text)
    kept = capped.split("\n", 1)[1]
    assert set(kept) == {character}
    assert cut_bytes(capped) == len(text.encode()) - len(kept.encode())
    assert len(capped.encode()) <= OUTPUT_CAP_BYTES


def test_the_runner_and_the_store_write_the_same_marker() -> None:
    """Both cut with ``cut_marker``: a stored run reads the same whoever cut it."""
    tail = TailBuffer(DEFAULT_OUTPUT_CAP)
    tail.feed(b"y" * (3 * OUTPUT_CAP_BYTES))
    from_the_runner = tail.text()
    from_the_store = cap_output("y" * (3 * OUTPUT_CAP_BYTES))
    runner_count = cut_bytes(from_the_runner)
    store_count = cut_bytes(from_the_store)
    assert runner_count is not None and store_count is not None
    assert from_the_runner == cut_marker(runner_count) + "y" * DEFAULT_OUTPUT_CAP
    assert from_the_store.startswith(cut_marker(store_count))
    assert cap_output(from_the_runner) == from_the_runner  # never cut twice


def test_the_runner_leaves_room_for_the_longest_marker() -> None:
    assert DEFAULT_OUTPUT_CAP == TAIL_CAP == OUTPUT_CAP_BYTES - MARKER_ROOM
    assert len(cut_marker(2**64).encode()) <= MARKER_ROOM


def test_short_text_is_left_alone() -> None:
    assert cap_text("") == ""
    assert cap_text("é" * (OUTPUT_CAP_BYTES // 2)) == "é" * (OUTPUT_CAP_BYTES // 2)
