"""The one place taskgui tells CPython's cyclic collector anything (system/collector.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from taskgui.system.collector import collector_paused, freeze_loaded


@pytest.fixture
def thawed() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()  # the next test's objects are collected as usual


def test_the_collector_is_off_during_a_load_and_on_after_it_even_after_an_error() -> None:
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        assert not gc.isenabled()
        raise RuntimeError("the load failed")
    assert gc.isenabled()


def test_a_pause_inside_a_pause_leaves_the_collector_as_it_found_it() -> None:
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # still the outer load's
    assert gc.isenabled()


def test_what_is_loaded_is_frozen_out_of_reach(thawed: None) -> None:
    schedule = [{"task": index} for index in range(1_000)]
    freeze_loaded()
    assert gc.get_freeze_count() >= len(schedule)
    assert gc.isenabled()  # later garbage is still collected
