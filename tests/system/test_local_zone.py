"""system.local_zone: the one local zone name, in the order libc reads the sources."""

from __future__ import annotations

import shutil
from pathlib import Path

from taskgui.system.local_zone import local_zone_name

ZONES = Path("/usr/share/zoneinfo")


def test_a_symlink_chain_is_followed_to_the_zone(tmp_path: Path) -> None:
    # /etc/localtime -> /etc/alternatives/localtime -> .../zoneinfo/Asia/Tokyo
    hop = tmp_path / "alternatives-localtime"
    hop.symlink_to(ZONES / "Asia" / "Tokyo")
    link = tmp_path / "localtime"
    link.symlink_to(hop)
    assert local_zone_name({}, link, tmp_path / "missing") == "Asia/Tokyo"


def test_the_symlink_wins_over_a_stale_etc_timezone(tmp_path: Path) -> None:
    """libc follows /etc/localtime, so the cron zone must too, or it differs from the
    clock the person sees."""
    link = tmp_path / "localtime"
    link.symlink_to(ZONES / "Europe" / "Paris")
    named = tmp_path / "timezone"
    named.write_text("Asia/Tokyo\n")
    assert local_zone_name({}, link, named) == "Europe/Paris"


def test_tz_names_libc_reads_are_kept(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    assert local_zone_name({"TZ": "EST5EDT"}, missing, missing) == "EST5EDT"
    assert local_zone_name({"TZ": str(ZONES / "Asia" / "Tokyo")}, missing, missing) == "Asia/Tokyo"


def test_a_copied_file_uses_etc_timezone_else_utc(tmp_path: Path) -> None:
    copy = tmp_path / "localtime"
    shutil.copy(ZONES / "America" / "New_York", copy)
    named = tmp_path / "timezone"
    assert local_zone_name({}, copy, named) == "UTC"
    named.write_text("America/New_York\n")
    assert local_zone_name({}, copy, named) == "America/New_York"


def test_hostile_sources_give_utc_and_never_raise(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    binary = tmp_path / "timezone"
    binary.write_bytes(b"\xff\xfe\x00Europe/\x00Paris")
    for env in ({"TZ": "../../etc/passwd"}, {"TZ": "A\0B"}, {"TZ": "x" * 10_000}, {}):
        assert local_zone_name(env, loop, binary) == "UTC"
    assert local_zone_name({}, missing, missing) == "UTC"
