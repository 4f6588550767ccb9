"""Is the machine online? Read from the kernel's routing table, without any service.

The fallback for machines without NetworkManager. Online means: a default route (IPv4
in ``/proc/net/route`` or IPv6 in ``/proc/net/ipv6_route``) leaves through an interface
that is up and is not the loopback. That is reachability of a gateway, not of the
internet (NetworkManager's connectivity check knows more); whether the connection is
metered cannot be told here at all.
"""

from __future__ import annotations

from pathlib import Path

PROC_NET = Path("/proc/net")
SYS_NET = Path("/sys/class/net")
_RTF_UP = 0x1


def online(proc_net: Path = PROC_NET, sys_net: Path = SYS_NET) -> bool | None:
    """True if a default route leaves through an interface that is up; None if unknown."""
    interfaces = _default_route_interfaces(proc_net)
    if interfaces is None:
        return None
    return any(_is_up(sys_net / name) for name in interfaces if name != "lo")


def _default_route_interfaces(proc_net: Path) -> set[str] | None:
    found: set[str] = set()
    readable = False
    try:
        lines = (proc_net / "route").read_text(encoding="ascii").splitlines()[1:]
        readable = True
    except OSError:
        lines = []
    for line in lines:
        fields = line.split()
        # Iface Destination Gateway Flags ... Mask: a default route has both zero.
        default = len(fields) >= 8 and fields[1] == "00000000" and fields[7] == "00000000"
        if default and int(fields[3], 16) & _RTF_UP:
            found.add(fields[0])
    try:
        lines6 = (proc_net / "ipv6_route").read_text(encoding="ascii").splitlines()
        readable = True
    except OSError:
        lines6 = []
    for line in lines6:
        fields = line.split()
        # dest prefix_len src src_len next_hop metric refcnt use flags iface
        default = len(fields) >= 10 and set(fields[0]) == {"0"} and fields[1] == "00"
        if default and int(fields[8], 16) & _RTF_UP and fields[9] != "lo":
            found.add(fields[9])
    return found if readable else None


def _is_up(interface: Path) -> bool:
    try:
        state = (interface / "operstate").read_text(encoding="ascii").strip()
    except OSError:
        return False
    # "unknown" is what many virtual and tunnel devices report while they carry traffic.
    return state in {"up", "unknown"}
