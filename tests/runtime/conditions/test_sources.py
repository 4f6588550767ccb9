"""The condition facts read over a real (private) D-Bus bus from fake desktop services.

The services are written with jeepney, not QtDBus, and type their values the way
UPower, NetworkManager and GNOME's idle monitor do, so this is a real round trip of the
protocol: a property read, a ``PropertiesChanged`` signal, a service that leaves and
comes back, and the kernel fallbacks when a service is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from taskgui.core.conditions import SystemConditions
from taskgui.runtime.conditions.monitor import ConditionMonitor
from taskgui.runtime.conditions.sources import IdleFact, NetworkFact, PowerFact
from tests.helpers.private_bus import FakeDesktopServices, connect, private_bus

WAIT_MS = 5_000


@pytest.fixture
def bus_address() -> Iterator[str]:
    with private_bus() as address:
        yield address


def _services(address: str, *names: str) -> Iterator[FakeDesktopServices]:
    services = FakeDesktopServices(address, list(names))
    try:
        yield services
    finally:
        services.stop()


@pytest.fixture
def desktop(bus_address: str) -> Iterator[FakeDesktopServices]:
    yield from _services(bus_address, "upower", "nm", "mutter")


def _sysfs_battery(root: Path, *, discharging: bool) -> Path:
    battery = root / "BAT0"
    battery.mkdir(parents=True)
    (battery / "type").write_text("Battery\n")
    (battery / "status").write_text("Discharging\n" if discharging else "Charging\n")
    adapter = root / "AC"
    adapter.mkdir()
    (adapter / "type").write_text("Mains\n")
    (adapter / "online").write_text("0\n" if discharging else "1\n")
    return root


def test_power_follows_upower_on_battery(
    qtbot: QtBot, bus_address: str, desktop: FakeDesktopServices, tmp_path: Path
) -> None:
    # The kernel says "discharging": UPower, present, is the one believed.
    power = PowerFact(connect(bus_address), _sysfs_battery(tmp_path / "ps", discharging=True))
    with qtbot.waitSignal(power.changed, timeout=WAIT_MS):
        power.start()
    assert power.on_battery is False
    assert power.source == "org.freedesktop.UPower"

    with qtbot.waitSignal(power.changed, timeout=WAIT_MS):
        desktop.command("set upower OnBattery true")
    assert power.on_battery is True


def test_without_upower_the_kernel_answers_until_upower_appears(
    qtbot: QtBot, bus_address: str, tmp_path: Path
) -> None:
    root = _sysfs_battery(tmp_path / "ps", discharging=True)
    services = FakeDesktopServices(bus_address, [])
    try:
        power = PowerFact(connect(bus_address), root, poll_ms=50)
        with qtbot.waitSignal(power.changed, timeout=WAIT_MS):
            power.start()
        assert (power.on_battery, power.source) == (True, "kernel")

        # The kernel announces nothing: the fallback is read again on its timer.
        (root / "AC" / "online").write_text("1\n")
        qtbot.waitUntil(lambda: power.on_battery is False, timeout=WAIT_MS)

        # UPower starts later (reports on battery): it takes over, and the timer stops.
        services.command("set upower OnBattery true")
        with qtbot.waitSignal(power.changed, timeout=WAIT_MS):
            services.command("own upower")
        assert (power.on_battery, power.source) == (True, "org.freedesktop.UPower")
    finally:
        services.stop()


def test_upower_leaving_the_bus_falls_back_to_the_kernel(
    qtbot: QtBot, bus_address: str, desktop: FakeDesktopServices, tmp_path: Path
) -> None:
    power = PowerFact(connect(bus_address), _sysfs_battery(tmp_path / "ps", discharging=True))
    with qtbot.waitSignal(power.changed, timeout=WAIT_MS):
        power.start()
    assert power.on_battery is False
    with qtbot.waitSignal(power.changed, timeout=WAIT_MS):
        desktop.command("drop upower")
    assert (power.on_battery, power.source) == (True, "kernel")


def test_no_upower_and_no_sysfs_cannot_be_checked(
    qtbot: QtBot, bus_address: str, tmp_path: Path
) -> None:
    power = PowerFact(connect(bus_address), tmp_path / "absent", poll_ms=50)
    power.start()
    qtbot.waitUntil(lambda: power.source == "kernel", timeout=WAIT_MS)
    assert power.on_battery is None


@pytest.mark.parametrize(
    ("commands", "online", "metered"),
    [
        ([], True, False),
        (["set nm Connectivity 1"], False, False),  # none
        (["set nm Connectivity 2"], False, False),  # behind a captive portal
        (["set nm Metered 1"], True, True),  # yes
        (["set nm Metered 3"], True, True),  # guess-yes
        (["set nm Metered 0"], True, None),  # unknown
        # Connectivity checking switched off: "connected (global)" decides.
        (["set nm Connectivity 0", "set nm State 70"], True, False),
        (["set nm Connectivity 0", "set nm State 50"], False, False),
    ],
)
def test_network_follows_networkmanager(  # noqa: PLR0917 (fixtures and parameters)
    qtbot: QtBot,
    bus_address: str,
    desktop: FakeDesktopServices,
    commands: list[str],
    online: bool,
    metered: bool | None,
) -> None:
    network = NetworkFact(connect(bus_address))
    with qtbot.waitSignal(network.changed, timeout=WAIT_MS):
        network.start()
    for command in commands:
        desktop.command(command)
    qtbot.waitUntil(lambda: (network.online, network.metered) == (online, metered), timeout=WAIT_MS)
    assert network.source == "org.freedesktop.NetworkManager"


def _proc_net(root: Path, *, default_route: bool) -> tuple[Path, Path]:
    proc, sys_net = root / "proc", root / "sys"
    proc.mkdir(parents=True)
    header = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
    routes = "wlan0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
    if default_route:
        routes += "wlan0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
    (proc / "route").write_text(header + routes)
    (sys_net / "wlan0").mkdir(parents=True)
    (sys_net / "wlan0" / "operstate").write_text("up\n")
    return proc, sys_net


def test_without_networkmanager_a_default_route_means_online(
    qtbot: QtBot, bus_address: str, tmp_path: Path
) -> None:
    proc, sys_net = _proc_net(tmp_path, default_route=True)
    services = FakeDesktopServices(bus_address, [])
    try:
        network = NetworkFact(connect(bus_address), proc, sys_net, poll_ms=50)
        with qtbot.waitSignal(network.changed, timeout=WAIT_MS):
            network.start()
        # Online, and whether the connection is metered cannot be told from the kernel.
        assert (network.online, network.metered, network.source) == (True, None, "kernel")
        (sys_net / "wlan0" / "operstate").write_text("down\n")
        qtbot.waitUntil(lambda: network.online is False, timeout=WAIT_MS)
    finally:
        services.stop()


def test_idle_time_comes_from_mutter_then_the_screensaver(qtbot: QtBot, bus_address: str) -> None:
    for names, source in (
        (["mutter", "screensaver"], "org.gnome.Mutter.IdleMonitor"),
        (["screensaver"], "org.freedesktop.ScreenSaver"),
    ):
        services = FakeDesktopServices(bus_address, names)
        try:
            services.command("idle 600000")
            idle = IdleFact(connect(bus_address))
            with qtbot.waitSignal(idle.changed, timeout=WAIT_MS):
                idle.read()
            assert (idle.idle_for, idle.source) == (timedelta(minutes=10), source)
        finally:
            services.stop()


def test_idle_with_no_monitor_cannot_be_checked(qtbot: QtBot, bus_address: str) -> None:
    idle = IdleFact(connect(bus_address))
    idle.read()
    qtbot.waitUntil(lambda: idle.source == "none", timeout=WAIT_MS)
    assert idle.idle_for is None


def test_idle_is_read_again_when_asked(
    qtbot: QtBot, bus_address: str, desktop: FakeDesktopServices
) -> None:
    idle = IdleFact(connect(bus_address))
    with qtbot.waitSignal(idle.changed, timeout=WAIT_MS):
        idle.read()
    assert idle.idle_for == timedelta(0)
    desktop.command("idle 90000")
    with qtbot.waitSignal(idle.changed, timeout=WAIT_MS):
        idle.look_in(timedelta(milliseconds=10))
    assert idle.idle_for == timedelta(seconds=90)


def test_the_monitor_reports_every_fact_together(
    qtbot: QtBot, bus_address: str, desktop: FakeDesktopServices
) -> None:
    bus = connect(bus_address)
    monitor = ConditionMonitor(PowerFact(bus), NetworkFact(bus), IdleFact(bus))
    monitor.start()
    expected = SystemConditions(on_battery=False, online=True, metered=False, idle_for=timedelta(0))
    qtbot.waitUntil(lambda: monitor.current == expected, timeout=WAIT_MS)
    with qtbot.waitSignal(monitor.conditions_changed, timeout=WAIT_MS) as blocker:
        desktop.command("set nm Connectivity 1")
    assert blocker.args == [
        SystemConditions(on_battery=False, online=False, metered=False, idle_for=timedelta(0))
    ]
    assert monitor.sources == {
        "power": "org.freedesktop.UPower",
        "network": "org.freedesktop.NetworkManager",
        "idle": "org.gnome.Mutter.IdleMonitor",
    }
