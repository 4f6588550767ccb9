"""What a shared schedule's run carries of its task's conditions, and what a node's
machine readings offer a claim: the same judgement as ``RunConditions.unmet``."""

from __future__ import annotations

from datetime import timedelta

import pytest

from taskgui.core.conditions import RunConditions, SystemConditions
from taskgui.store.postgres.placement import NOWHERE, Here, here, placement_of
from tests.helpers.factories import make_spec

READINGS = [
    SystemConditions(),
    SystemConditions(on_battery=False, online=True, metered=False, idle_for=timedelta(hours=1)),
    SystemConditions(on_battery=True, online=True, metered=True, idle_for=timedelta(0)),
    SystemConditions(on_battery=False, online=False, metered=False),
    SystemConditions(on_battery=None, online=True, metered=None, idle_for=timedelta(minutes=5)),
]
CONDITIONS = [
    RunConditions(ac_power=True),
    RunConditions(network=True),
    RunConditions(unmetered=True),
    RunConditions(idle_for=timedelta(minutes=5)),
    RunConditions(ac_power=True, unmetered=True, idle_for=timedelta(minutes=10)),
]


def _claimable(needs: tuple[str, ...] | None, idle_s: float | None, offer: Here) -> bool:
    """The claim's SQL filter, in Python: ``needs <@ met`` and ``idle_s <= idle``."""
    named = needs is None or set(needs) <= set(offer.met)
    idle = idle_s is None or (offer.idle_s is not None and idle_s <= offer.idle_s)
    return named and idle


@pytest.mark.parametrize("system", READINGS)
@pytest.mark.parametrize("conditions", CONDITIONS)
def test_a_claim_takes_a_run_exactly_when_its_conditions_hold_on_the_machine(
    system: SystemConditions, conditions: RunConditions
) -> None:
    placement = placement_of(make_spec(0, conditions=conditions))
    assert placement is not None
    holds = conditions.unmet(system) is None
    assert _claimable(placement.needs, placement.idle_s, here(system)) is holds


def test_a_task_without_pin_or_conditions_goes_anywhere_and_no_reading_meets_nothing() -> None:
    assert placement_of(make_spec(0)) is None
    assert here(None) == NOWHERE == Here()
