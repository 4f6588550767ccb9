"""Who taskgui runs as and which accounts the machine has: what a crontab import needs
to read a system crontab's user column (``core.crontab.CrontabSource``).

Here rather than in either front end because the CLI and the window both import
crontabs, and the window may not import the command line. Plain ``pwd``: no Qt.
"""

from __future__ import annotations

import os
import pwd

from taskgui.core.transfer.crontab import CrontabSource, is_system_crontab


def current_user() -> str | None:
    """The name of the account this process runs as (None if it has none)."""
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:  # a uid without a passwd entry (some containers)
        return None


def account_names() -> frozenset[str]:
    """Every account name this machine knows."""
    return frozenset(entry.pw_name for entry in pwd.getpwall())


def crontab_source(path: str | None, *, system: bool | None = None) -> CrontabSource:
    """What to tell the crontab reader about a crontab read from ``path`` (None: pasted
    or stdin). ``system``: what an option said (None: nothing, recognise it)."""
    why = "the option given"
    if system is None and path is not None and is_system_crontab(os.path.abspath(path)):
        system, why = True, f"{path} is a system crontab"
    return CrontabSource(
        system=system, user=current_user(), accounts=account_names(), why_system=why
    )
