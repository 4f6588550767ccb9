"""The real CLI and daemon with run conditions and spread, as a person would use them.

This machine has no system bus: the daemon reads power from /sys/class/power_supply
and the network from the routing table (the kernel fallbacks), which is what a
minimal desktop or a server gives it.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from taskgui.system.network_route import online
from taskgui.system.power_supply import on_battery
from tests.e2e.test_daemon_cli import Taskgui, taskgui, wait_for

__all__ = ["taskgui"]  # the fixture, used by name


def test_show_and_json_carry_the_spread_and_the_conditions(taskgui: Taskgui) -> None:
    task_id = taskgui.add(
        "nightly",
        "true",
        *("--every", "1h", "--spread", "10m", "--spread-fixed"),
        *("--on-ac-power", "--unmetered", "--idle", "5m", "--give-up-after", "30m"),
        "--stop-if-unmet",
    )
    text = taskgui.cli("show", str(task_id)).stdout
    assert "spread over 10m (fixed per task)" in text
    assert "on AC power, network (not metered), idle 5m; stop if it ends; give up after 30m" in text
    definition = taskgui.show(task_id)["definition"]
    assert definition["spread"] == {"v": 1, "seconds": 600.0, "fixed": True}
    assert definition["conditions"] == {
        "v": 1,
        "ac_power": True,
        "network": False,
        "unmetered": True,
        "idle_seconds": 300.0,
        "stop_when_unmet": True,
        "give_up_after_seconds": 1800.0,
    }
    # Export and import keep them.
    exported = taskgui.tmp_path / "tasks.json"
    taskgui.cli("export", str(exported))
    taskgui.cli("delete", str(task_id))
    taskgui.cli("import", str(exported))
    [again] = json.loads(taskgui.cli("list", "--json").stdout)
    assert taskgui.show(again["id"])["definition"]["conditions"] == definition["conditions"]


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (("--every", "1h", "--spread", "2h"), "must be shorter than the time between two runs"),
        (("--spread-fixed",), "--spread-fixed goes with --spread"),
        (("--give-up-after", "1h"), "--give-up-after goes with a condition"),
        (("--stop-if-unmet",), "--stop-if-unmet goes with a condition"),
        (("--idle", "10s"), "the idle time must be between 1m and 1d"),
        (("--spread", "999999999d"), "at most 100 years"),
    ],
)
def test_nonsense_is_refused_with_status_2(
    taskgui: Taskgui, flags: tuple[str, ...], says: str
) -> None:
    result: subprocess.CompletedProcess[str] = taskgui.cli(
        "add", "--name", "x", "--command", "true", *flags, check=False
    )
    assert result.returncode == 2
    assert says in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
@pytest.mark.skipif(
    on_battery() is not False or online() is not True,
    reason="needs a machine the kernel reports on AC power and online",
)
def test_the_daemon_runs_a_task_whose_conditions_hold_here(taskgui: Taskgui) -> None:
    taskgui.start_daemon()
    marker = taskgui.tmp_path / "ran"
    task_id = taskgui.add(
        "plugged in and online", f"touch {marker}", "--on-ac-power", "--network",
        "--spread", "2s",
    )  # fmt: skip
    wait_for(lambda: taskgui.show(task_id)["state"] == "succeeded", what="the task to run")
    assert marker.exists()


@pytest.mark.slow
def test_a_condition_this_machine_cannot_check_waits_and_says_so(taskgui: Taskgui) -> None:
    """No session bus, so no idle monitor: the task waits, visibly, not silently."""
    taskgui.env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    taskgui.start_daemon()
    task_id = taskgui.add("when idle", "true", "--idle", "5m")
    wait_for(
        lambda: taskgui.show(task_id).get("waiting") == "uncheckable",
        what="the task to wait on its condition",
    )
    listing = taskgui.cli("list").stdout
    assert "condition cannot be checked here" in listing
