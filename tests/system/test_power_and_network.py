"""The kernel fallbacks read fake sysfs and procfs trees laid out as the kernel does."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskgui.system.network_route import online
from taskgui.system.power_supply import on_battery


def _supply(root: Path, name: str, **attributes: str) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    for key, value in attributes.items():
        (folder / key).write_text(value + "\n")


def test_a_laptop_unplugged_is_on_battery(tmp_path: Path) -> None:
    _supply(tmp_path, "AC", type="Mains", online="0")
    _supply(tmp_path, "BAT0", type="Battery", status="Discharging")
    assert on_battery(tmp_path) is True


def test_a_laptop_plugged_in_is_on_ac_even_while_charging(tmp_path: Path) -> None:
    _supply(tmp_path, "AC", type="Mains", online="1")
    _supply(tmp_path, "BAT0", type="Battery", status="Charging")
    assert on_battery(tmp_path) is False


def test_a_usb_c_charger_counts_as_ac(tmp_path: Path) -> None:
    _supply(tmp_path, "ucsi-source-psy-USBC000:001", type="USB", online="1")
    _supply(tmp_path, "BAT0", type="Battery", status="Discharging")
    assert on_battery(tmp_path) is False


def test_a_mouse_battery_is_not_the_machines(tmp_path: Path) -> None:
    _supply(tmp_path, "hidpp_battery_0", type="Battery", status="Discharging", scope="Device")
    assert on_battery(tmp_path) is False


def test_a_desktop_without_supplies_is_on_mains(tmp_path: Path) -> None:
    assert on_battery(tmp_path) is False


def test_no_power_supply_folder_cannot_be_told(tmp_path: Path) -> None:
    assert on_battery(tmp_path / "absent") is None


HEADER = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"


@pytest.mark.parametrize(
    ("routes", "ipv6", "state", "expected"),
    [
        ("eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n", "", "up", True),
        ("eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n", "", "down", False),
        # Only the local network: no default route.
        ("eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n", "", "up", False),
        # IPv6 only: ::/0 via eth0, flags RTF_UP|RTF_GATEWAY.
        (
            "",
            "00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
            "fe800000000000000000000000000001 00000400 00000001 00000000 00000003 eth0\n",
            "up",
            True,
        ),
        # The kernel's "unreachable" default route through lo is no way out.
        (
            "",
            "00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
            "00000000000000000000000000000000 ffffffff 00000001 00000000 00200200 lo\n",
            "up",
            False,
        ),
    ],
)
def test_online_means_a_default_route_through_an_interface_that_is_up(
    tmp_path: Path, routes: str, ipv6: str, state: str, expected: bool
) -> None:
    proc, sys_net = tmp_path / "proc", tmp_path / "sys"
    proc.mkdir()
    (proc / "route").write_text(HEADER + routes)
    (proc / "ipv6_route").write_text(ipv6)
    (sys_net / "eth0").mkdir(parents=True)
    (sys_net / "eth0" / "operstate").write_text(state + "\n")
    assert online(proc, sys_net) is expected


def test_no_routing_table_cannot_be_told(tmp_path: Path) -> None:
    assert online(tmp_path / "absent", tmp_path) is None
