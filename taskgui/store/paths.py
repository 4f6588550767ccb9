"""Where the database lives, and making its home private.

Default: ``platformdirs.user_data_dir("taskgui")/taskgui.sqlite3``. ``--db PATH`` (passed
in by the front ends) wins over ``TASKGUI_DB``, which wins over the default. The folder
is 0700 and the file 0600: commands and environment values may hold secrets.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import platformdirs

DB_FILENAME = "taskgui.sqlite3"
ENV_VAR = "TASKGUI_DB"


def default_database_path() -> Path:
    return Path(platformdirs.user_data_dir("taskgui", appauthor=False)) / DB_FILENAME


def resolve_database_path(
    explicit: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> Path:
    """The database path to use: the explicit one, else $TASKGUI_DB, else the default."""
    if explicit:
        return Path(explicit).expanduser()
    env_value = (os.environ if environ is None else environ).get(ENV_VAR, "").strip()
    if env_value:
        return Path(env_value).expanduser()
    return default_database_path()


def prepare_private_file(path: Path) -> None:
    """Create the folder (0700 when we create it) and the file (0600) if missing.

    An existing folder keeps its mode (it may be shared on purpose, e.g. a project
    folder given with --db); an existing file is tightened to 0600 only when it is
    ours to tighten, i.e. we can write it.
    """
    folder = path.parent
    if not folder.exists():
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not path.exists():
        fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
        os.close(fd)
    elif os.access(path, os.W_OK) and path.stat().st_mode & 0o077:
        path.chmod(0o600)
