"""Is the machine on battery? Read from ``/sys/class/power_supply``, the kernel's view.

The fallback for machines without UPower (a minimal window manager, a headless box).
The kernel lists one folder per supply with a ``type`` (``Mains``, ``USB``, ``Battery``,
...) and, for adapters, ``online``, for batteries ``status``. A machine is on AC power
when an adapter is online, or when no battery discharges; a machine with no supplies at
all is a desktop on mains (UPower says ``OnBattery = false`` there too). Only when the
folder itself is missing (some containers) can it not be told: ``None``.
"""

from __future__ import annotations

from pathlib import Path

POWER_SUPPLY = Path("/sys/class/power_supply")
_ADAPTERS = {"mains", "usb", "usb_c", "usb_pd", "usb_dcp", "usb_cdp", "usb_aca"}


def on_battery(root: Path = POWER_SUPPLY) -> bool | None:
    """True on battery, False on AC power (or no battery), None if it cannot be read."""
    try:
        supplies = sorted(root.iterdir())
    except OSError:
        return None
    adapters_online = False
    discharging = False
    for supply in supplies:
        kind = _read(supply / "type").lower()
        if kind in _ADAPTERS:
            # A USB port that supplies nothing reports online 0: not a power source.
            adapters_online = adapters_online or _read(supply / "online") == "1"
        elif kind == "battery" and _read(supply / "scope").lower() != "device":
            # scope=Device is a mouse's or a headset's battery, not the machine's.
            discharging = discharging or _read(supply / "status").lower() == "discharging"
    if adapters_online:
        return False
    return discharging


def _read(path: Path) -> str:
    """The first line of a sysfs attribute, or "" when it is absent or unreadable."""
    try:
        return path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return ""
