"""Run conditions decide from plain facts: which holds, which not, and what to say."""

from __future__ import annotations

from datetime import timedelta

import pytest

from taskgui.core.conditions import Condition, RunConditions, SystemConditions, Unmet
from taskgui.core.errors import InvalidTaskError

HOME = SystemConditions(on_battery=False, online=True, metered=False, idle_for=timedelta(0))


def test_no_conditions_never_wait_even_where_nothing_can_be_checked() -> None:
    assert not RunConditions()
    assert RunConditions().unmet(SystemConditions()) is None


@pytest.mark.parametrize(
    ("conditions", "system", "expected"),
    [
        (RunConditions(ac_power=True), HOME, None),
        (
            RunConditions(ac_power=True),
            SystemConditions(on_battery=True),
            Unmet(Condition.AC_POWER, "on battery"),
        ),
        (
            RunConditions(network=True),
            SystemConditions(online=False),
            Unmet(Condition.NETWORK, "offline"),
        ),
        # Not metered implies online: offline is the reason, not the cost.
        (
            RunConditions(unmetered=True),
            SystemConditions(online=False, metered=False),
            Unmet(Condition.NETWORK, "offline"),
        ),
        (
            RunConditions(unmetered=True),
            SystemConditions(online=True, metered=True),
            Unmet(Condition.UNMETERED, "metered connection"),
        ),
        (
            RunConditions(idle_for=timedelta(minutes=10)),
            SystemConditions(idle_for=timedelta(minutes=9, seconds=59)),
            Unmet(Condition.IDLE, "user active"),
        ),
        (
            RunConditions(idle_for=timedelta(minutes=10)),
            SystemConditions(idle_for=timedelta(minutes=10)),
            None,
        ),
        # Power is named first: a person fixes the plug before the Wi-Fi.
        (
            RunConditions(ac_power=True, network=True),
            SystemConditions(on_battery=True, online=False),
            Unmet(Condition.AC_POWER, "on battery"),
        ),
    ],
)  # fmt: skip
def test_the_first_condition_that_does_not_hold_is_named(
    conditions: RunConditions, system: SystemConditions, expected: Unmet | None
) -> None:
    assert conditions.unmet(system) == expected


@pytest.mark.parametrize(
    ("conditions", "reason"),
    [
        (RunConditions(ac_power=True), "cannot check the power supply here"),
        (RunConditions(network=True), "cannot check the network here"),
        (RunConditions(idle_for=timedelta(minutes=5)), "cannot check idle time here"),
    ],
)
def test_a_fact_this_machine_cannot_report_waits_and_says_so(
    conditions: RunConditions, reason: str
) -> None:
    unmet = conditions.unmet(SystemConditions())
    assert unmet is not None
    assert (unmet.reason, unmet.checkable) == (reason, False)


def test_unmetered_cannot_be_told_from_the_kernel_alone() -> None:
    unmet = RunConditions(unmetered=True).unmet(SystemConditions(online=True, metered=None))
    assert unmet == Unmet(Condition.UNMETERED, "cannot tell if the connection is metered", False)


def test_required_lists_what_is_asked() -> None:
    assert RunConditions(unmetered=True, idle_for=timedelta(minutes=1)).required == {
        Condition.NETWORK,
        Condition.UNMETERED,
        Condition.IDLE,
    }


def test_idle_says_when_it_will_hold() -> None:
    conditions = RunConditions(idle_for=timedelta(minutes=10))
    assert conditions.idle_holds_in(SystemConditions(idle_for=timedelta(minutes=4))) == timedelta(
        minutes=6
    )
    assert conditions.idle_holds_in(SystemConditions(idle_for=timedelta(hours=1))) == timedelta(0)
    assert conditions.idle_holds_in(SystemConditions()) is None
    assert RunConditions().idle_holds_in(HOME) is None


@pytest.mark.parametrize(
    "kwargs",
    [
        {"idle_for": timedelta(seconds=30)},
        {"idle_for": timedelta(days=2)},
        {"idle_for": timedelta(days=999_999_999)},
        {"give_up_after": timedelta(0)},
        {"give_up_after": timedelta(days=999_999_999)},
        {"idle_for": 600},
    ],
)
def test_out_of_range_values_are_refused_clearly(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidTaskError):
        RunConditions(**kwargs)  # type: ignore[arg-type]


def test_describe_reads_as_a_setting() -> None:
    conditions = RunConditions(
        ac_power=True, unmetered=True, idle_for=timedelta(minutes=10), stop_when_unmet=True
    )
    assert conditions.describe() == (
        "on AC power, network (not metered), idle 10m; stop if it ends"
    )
    assert RunConditions(stop_when_unmet=True).describe() == ""
