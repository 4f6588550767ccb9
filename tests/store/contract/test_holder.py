"""The HolderProbe contract: a store says who runs its schedule, or that nobody does.

How a process comes to hold a schedule is the backend's own (SQLite's scheduler lock:
tests/store/sqlite/test_holder.py); what every follower may rely on is here.
"""

from __future__ import annotations

from typing import cast

import pytest

from taskgui.store.protocols import HolderProbe, ScheduleStore


@pytest.fixture
def probe(store: ScheduleStore) -> HolderProbe:
    if not hasattr(store, "schedule_holder"):
        pytest.skip(f"{type(store).__name__} cannot be followed, so is never asked")
    return cast(HolderProbe, store)


def test_nobody_runs_the_schedule_of_a_new_store(probe: HolderProbe) -> None:
    assert probe.schedule_holder() is None


def test_asking_changes_nothing(probe: HolderProbe, store: ScheduleStore) -> None:
    probe.schedule_holder()
    assert probe.schedule_holder() is None
    assert store.list_tasks() == []
