"""This machine's IANA time zone name: the default zone of a cron schedule.

Cron needs a *name* (it must survive DST changes and a move to another machine), which
the offset ``datetime.astimezone()`` gives is not. The CLI and the task dialog used to
find it two ways (the dialog asked Qt), which could disagree; this is the one way.

Why not ``tzlocal``: measured on fake roots (a symlink, a relative one, a chain through
another link, a copied file with and without ``/etc/timezone``, a symlink that
disagrees with ``/etc/timezone``, TZ as ``:Name``, a path, a POSIX-style name), it gave
the same answer in most cases, but ignored ``TZ=EST5EDT`` (a zone libc and zoneinfo
both read), preferred ``/etc/timezone`` over a disagreeing ``/etc/localtime`` symlink
(libc follows the symlink, so the cron zone would differ from the clock shown), and
can raise on conflicting files. The one case it did better, a symlink chain, is
covered here by also trying the link's resolved path.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from taskgui.core.errors import InvalidTaskError
from taskgui.core.recurrence import load_zone

LOCALTIME = Path("/etc/localtime")
TIMEZONE_FILE = Path("/etc/timezone")
FALLBACK_ZONE = "UTC"


def local_zone_name(
    environ: Mapping[str, str] | None = None,
    localtime: Path = LOCALTIME,
    timezone_file: Path = TIMEZONE_FILE,
) -> str:
    """The zone name, tried in the order libc uses: ``$TZ``, the ``/etc/localtime``
    symlink (as written, then resolved), ``/etc/timezone``; else UTC. Never raises."""
    env = os.environ if environ is None else environ
    candidates = [env.get("TZ", "").strip().lstrip(":")]
    with contextlib.suppress(OSError):
        candidates.append(str(localtime.readlink()))
    with contextlib.suppress(OSError, RuntimeError):
        if localtime.is_symlink():
            candidates.append(str(localtime.resolve(strict=True)))
    with contextlib.suppress(OSError, UnicodeDecodeError):
        candidates.append(timezone_file.read_text(encoding="utf-8").strip())
    for candidate in candidates:
        name = candidate.rpartition("zoneinfo/")[2] if "zoneinfo/" in candidate else candidate
        if name and _is_zone(name):
            return name
    return FALLBACK_ZONE


def _is_zone(name: str) -> bool:
    if name.startswith("/"):
        return False  # an absolute path that is not under a zoneinfo folder
    try:
        load_zone(name)
    except InvalidTaskError:
        return False
    return True


def local_wall_time(moment: datetime) -> datetime:
    """``moment`` (no offset: a time on this machine's clocks) in this machine's zone,
    by the zone's rules rather than libc's ``mktime``: a time in the spring-forward gap
    (02:30 on the night Berlin's clocks go from 02:00 to 03:00) is the moment the
    clocks would show it just after (03:30), and one of the hour that repeats in
    autumn is its first pass, as cron has them. ``mktime`` made the gap's 02:30 an hour
    *before* the time typed, 01:30 (a trial). Where the zone's name cannot be found
    (the offset libc uses disagrees with the named zone's), libc's reading is kept."""
    zone = load_zone(local_zone_name())
    placed = moment.replace(tzinfo=zone, fold=0)
    libc = moment.astimezone()
    # libc reads a gap or a repeated hour with one of the two offsets around it: any
    # other offset says the named zone is not the one the clocks here follow (TZ set to
    # a POSIX rule, to "", to a file), and libc's reading is kept.
    if libc.utcoffset() not in (placed.utcoffset(), placed.replace(fold=1).utcoffset()):
        return libc
    return placed
