"""Nodes of a shared schedule that each read their power from a fake UPower on a
private bus of their own (their "system bus"), so one machine can be on battery and
another plugged in, and either can change (``fake.command("set upower OnBattery
false")``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager

from tests.helpers.private_bus import FakeDesktopServices, private_bus
from tests.helpers.shared_nodes import Nodes


@contextmanager
def powered(
    nodes: Nodes,
    on_battery: Mapping[str, bool],
    workers: Mapping[str, int] | None = None,
    services: Sequence[str] = ("upower",),
) -> Iterator[dict[str, FakeDesktopServices]]:
    """Start a node per name, on battery or not, and wait until each beats and one
    leads; stop them before their buses go. ``services``: the fakes on each bus (add
    ``nm`` for a NetworkManager, online until told otherwise)."""
    with ExitStack() as stack:
        fakes: dict[str, FakeDesktopServices] = {}
        for name, battery in on_battery.items():
            address = stack.enter_context(private_bus())
            fake = FakeDesktopServices(address, list(services))
            stack.callback(fake.stop)
            fake.command(f"set upower OnBattery {'true' if battery else 'false'}")
            fakes[name] = fake
            nodes.environment[name] = {"DBUS_SYSTEM_BUS_ADDRESS": address}
        for name in on_battery:
            nodes.start(name, (workers or {}).get(name, 4))

        nodes.wait_joined(*on_battery)
        try:
            yield fakes
        finally:
            nodes.stop_all()
