"""weak_slot: a slot that neither keeps its object alive nor calls it once gone."""

from __future__ import annotations

import gc
import weakref

from taskgui.runtime.weak_slot import weak_slot


class Listener:
    def __init__(self) -> None:
        self.heard: list[tuple[int, str]] = []

    def hear(self, number: int, word: str = "") -> None:
        self.heard.append((number, word))


def test_the_slot_calls_its_object_while_it_lives() -> None:
    listener = Listener()
    slot = weak_slot(Listener.hear, listener)
    slot(1)
    slot(2, word="two")
    assert listener.heard == [(1, ""), (2, "two")]


def test_the_slot_keeps_nothing_alive_and_is_quiet_once_its_object_is_gone() -> None:
    listener = Listener()
    gone = weakref.ref(listener)
    slot = weak_slot(Listener.hear, listener)
    del listener
    gc.collect()
    assert gone() is None  # the slot held no strong reference
    slot(3)  # arrives late: nothing to call, no error
