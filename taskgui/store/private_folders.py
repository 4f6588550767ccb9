"""Creating taskgui's folders private before anything is written into them.

A new account has none of them: not ``~/.local/share/taskgui``, often not even
``~/.local/share``. Every entry point (the window, the daemon, the CLI) makes the
database's folder, and the window and daemon their log folder too, *before* it takes
the scheduler lock (a file in that folder) or opens the database, so a first start
works and the folders holding commands and their environment are 0700 from the start.

Every level this creates is 0700, as the XDG base directory spec asks for the base
folders. ``mkdir(parents=True)`` would give the parents the umask's mode (0755).

A folder that already exists keeps its mode when it holds anything that is not
taskgui's: it may be shared on purpose (a project folder given with ``--db``). One that
holds only taskgui's files (or nothing, as after ``mkdir`` by hand) and is ours is made
0700, and the log says so.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable
from pathlib import Path

import platformdirs

from taskgui.store.errors import DatabasePathError

log = logging.getLogger(__name__)

APP_NAME = "taskgui"
PRIVATE_MODE = 0o700


def make_private_folder(folder: Path, is_ours: Callable[[str], bool]) -> None:
    """Create ``folder`` and any missing parents 0700; tighten it when it is all ours.

    ``is_ours(name)`` says whether an entry of the folder is one of taskgui's own files.
    Raises DatabasePathError (with the reason and what to do) when the folder cannot be
    created or a file stands where it should be.
    """
    missing = _missing_levels(folder)
    for level in missing:
        try:
            level.mkdir(mode=PRIVATE_MODE)
        except FileExistsError:
            pass  # another start made it a moment ago
        except OSError as error:
            raise DatabasePathError(
                f"cannot create the folder {level} ({error.strerror}); create it yourself "
                "or choose another location with --db or TASKGUI_DB",
                folder,
            ) from None
        else:
            # mkdir's mode passes through the umask; a umask of 0777 would leave it 0000.
            level.chmod(PRIVATE_MODE)
    if not folder.is_dir():
        raise DatabasePathError(
            f"{folder} is not a folder; move that file away or choose another location "
            "with --db or TASKGUI_DB",
            folder,
        )
    if not missing:
        _tighten_if_ours(folder, is_ours)


def make_database_folder(database: Path) -> None:
    """The database's folder, private; the file, its WAL files, lock and copies are ours."""
    make_private_folder(database.parent, lambda name: name.startswith(database.name))


def make_log_folder() -> Path:
    """``user_log_dir("taskgui")`` (``$XDG_STATE_HOME/taskgui/log``), private, returned."""
    folder = Path(platformdirs.user_log_dir(APP_NAME, appauthor=False))
    if folder.parent.name == APP_NAME:  # .../taskgui/log: the app's state folder first
        make_private_folder(folder.parent, lambda name: name == folder.name)
    make_private_folder(folder, lambda name: name.startswith(f"{APP_NAME}.log"))
    return folder


def make_config_folder() -> Path:
    """``user_config_dir("taskgui")``, where the settings file lives, private, returned."""
    folder = Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))
    make_private_folder(folder, lambda name: name.startswith(APP_NAME))
    return folder


def _missing_levels(folder: Path) -> list[Path]:
    """The folders from the topmost missing one down to ``folder``, in creation order."""
    missing: list[Path] = []
    level = folder.absolute()
    while not level.exists() and level != level.parent:
        if level.is_symlink():
            break  # a dangling link: let mkdir report it below rather than follow it
        missing.append(level)
        level = level.parent
    return missing[::-1]


def _tighten_if_ours(folder: Path, is_ours: Callable[[str], bool]) -> None:
    try:
        info = folder.stat()
        if not info.st_mode & 0o077 or info.st_uid != os.geteuid():
            return
        if info.st_mode & stat.S_ISVTX:  # a shared folder such as /tmp
            return
        entries = os.listdir(folder)
    except OSError:
        return  # not ours to judge; opening the database will say what is wrong
    if not all(is_ours(name) for name in entries):
        return
    try:
        folder.chmod(PRIVATE_MODE)
    except OSError as error:  # a read-only mount, say: opening it will tell what matters
        log.debug("cannot make %s private (%s)", folder, error.strerror)
        return
    log.info(
        "made %s private (mode %o, was %o): it holds taskgui's commands and their environment",
        folder,
        PRIVATE_MODE,
        stat.S_IMODE(info.st_mode),
    )
