"""End to end in one process: a real service, real commands, and a fake UPower and
NetworkManager on a private D-Bus bus flipping the machine's state."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from taskgui.core.conditions import RunConditions
from taskgui.core.states import RunOutcome, TaskState, WaitReason
from taskgui.runtime.conditions.monitor import ConditionMonitor
from taskgui.runtime.conditions.sources import IdleFact, NetworkFact, PowerFact
from tests.helpers.private_bus import FakeDesktopServices, connect, private_bus
from tests.helpers.service import Harness, spec

WAIT_MS = 10_000


@pytest.fixture
def desktop() -> Iterator[tuple[str, FakeDesktopServices]]:
    with private_bus() as address:
        services = FakeDesktopServices(address, ["upower", "nm", "mutter"])
        try:
            yield address, services
        finally:
            services.stop()


def watch_the_bus(harness: Harness, address: str, qtbot: QtBot) -> None:
    """The service follows the fake desktop's power, network and idle facts; returns
    once the first reading has arrived."""
    bus = connect(address)
    monitor = ConditionMonitor(PowerFact(bus), NetworkFact(bus), IdleFact(bus))
    with qtbot.waitSignal(monitor.conditions_changed, timeout=WAIT_MS):
        harness.service.watch_conditions(monitor)


def test_a_task_waits_on_battery_and_runs_when_plugged_in(
    tmp_path: Path, qtbot: QtBot, desktop: tuple[str, FakeDesktopServices]
) -> None:
    address, services = desktop
    services.command("set upower OnBattery true")
    harness = Harness(tmp_path, qtbot, workers=2)
    try:
        watch_the_bus(harness, address, qtbot)
        marker = tmp_path / "ran"
        added = harness.service.add_task(
            spec("plugged", f"touch {marker}", conditions=RunConditions(ac_power=True))
        )
        qtbot.waitUntil(
            lambda: harness.service.task(added.id).status.waiting is WaitReason.AC_POWER,
            timeout=WAIT_MS,
        )
        # The wait reason is written for the CLI and a window following this process.
        assert harness.repository.wait_reasons()[added.id] is WaitReason.AC_POWER
        assert not marker.exists()

        services.command("set upower OnBattery false")
        harness.wait_state(added.id, TaskState.SUCCEEDED)
        assert marker.exists()
    finally:
        harness.close()


def test_offline_then_online(
    tmp_path: Path, qtbot: QtBot, desktop: tuple[str, FakeDesktopServices]
) -> None:
    address, services = desktop
    services.command("set nm Connectivity 1")
    harness = Harness(tmp_path, qtbot, workers=1)
    try:
        watch_the_bus(harness, address, qtbot)
        added = harness.service.add_task(
            spec("sync", "true", conditions=RunConditions(network=True))
        )
        qtbot.waitUntil(
            lambda: harness.service.task(added.id).status.waiting is WaitReason.NETWORK,
            timeout=WAIT_MS,
        )
        services.command("set nm Connectivity 4")
        harness.wait_state(added.id, TaskState.SUCCEEDED)
    finally:
        harness.close()


def test_unplugging_stops_the_run_and_plugging_in_runs_it_again_with_no_attempt_spent(
    tmp_path: Path, qtbot: QtBot, desktop: tuple[str, FakeDesktopServices]
) -> None:
    address, services = desktop
    services.command("set upower OnBattery false")
    harness = Harness(tmp_path, qtbot, workers=2)
    try:
        watch_the_bus(harness, address, qtbot)
        log = tmp_path / "log"
        pid_file = tmp_path / "sleeper.pid"
        # The first run sleeps (a long backup, say) in a child it leaves behind; the
        # second finishes at once. One attempt only: a spent attempt would exhaust it.
        line = (
            f"if [ -e {log} ]; then echo again >> {log}; exit 0; fi; "
            f"echo first >> {log}; sleep 60 & echo $! > {pid_file}; wait"
        )
        added = harness.service.add_task(
            spec("backup", line, conditions=RunConditions(ac_power=True, stop_when_unmet=True))
        )
        qtbot.waitUntil(lambda: pid_file.exists() and pid_file.read_text().strip() != "",
                        timeout=WAIT_MS)  # fmt: skip
        sleeper = int(pid_file.read_text())

        services.command("set upower OnBattery true")
        qtbot.waitUntil(lambda: len(harness.finished) == 1, timeout=WAIT_MS)
        _ticket, outcome, result = harness.finished[0]
        assert outcome is RunOutcome.STOPPED
        assert result.error == "stopped: on battery"
        assert not _alive(sleeper)  # the whole group had SIGTERM, not just the shell
        qtbot.waitUntil(
            lambda: harness.service.task(added.id).status.waiting is WaitReason.AC_POWER,
            timeout=WAIT_MS,
        )

        services.command("set upower OnBattery false")
        harness.wait_state(added.id, TaskState.SUCCEEDED)
        assert log.read_text().split() == ["first", "again"]
        history = harness.repository.runs(added.id)
        assert sorted((run.outcome, run.attempt) for run in history) == sorted(
            [(RunOutcome.STOPPED, 1), (RunOutcome.SUCCEEDED, 1)]
        )
        stopped = next(run for run in history if run.outcome is RunOutcome.STOPPED)
        assert stopped.error == "stopped: on battery"
    finally:
        harness.close()


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie of an exited child counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"
