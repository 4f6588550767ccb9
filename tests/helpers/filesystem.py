"""Real file-system conditions for the store's fault tests: a folder's exact contents,
running a child as an unprivileged user, and a read-only mount.

Tests may run as root, whom file modes do not restrict: a "read-only folder" is then
made real by running the child as ``nobody`` (65534). A read-only *mount* needs no
privilege: ``unshare -rm`` gives the child its own user and mount namespace, where it
bind-mounts the folder onto itself read-only. Where neither is possible the test is
skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOBODY = 65534


def folder_state(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file in ``folder`` with its bytes and mode: to show nothing was touched."""
    return {
        entry.name: (entry.read_bytes(), entry.stat().st_mode & 0o7777)
        for entry in sorted(folder.iterdir())
        if entry.is_file()
    }


@contextmanager
def shared_folder(prefix: str = "taskgui-fs-") -> Iterator[Path]:
    """A 0755 folder outside tmp_path (whose parents are 0700) that 'nobody' can enter."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        for path in (folder, *folder.rglob("*")):
            if path.is_dir():
                path.chmod(0o755)
        shutil.rmtree(folder)


def unprivileged() -> tuple[str, ...]:
    """A ``taskgui`` argument prefix that runs the program as a user file modes restrict.

    As root, the child becomes ``nobody`` once it has imported the program (the
    interpreter may live where ``nobody`` cannot read; see ``tests/helpers/as_nobody``).
    """
    return ("--as-nobody",) if os.geteuid() == 0 else ()


def taskgui(
    *args: str,
    home: Path,
    prefix: tuple[str, ...] = (),
    env: Mapping[str, str] | None = None,
    **kwargs: Any,
) -> subprocess.CompletedProcess[str]:
    """``python -m taskgui ARGS`` as a new user would run it (private HOME and XDG)."""
    environ = {
        **os.environ,
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "PYTHONPATH": str(ROOT),
        "QT_QPA_PLATFORM": "offscreen",
        **(env or {}),
    }
    environ.pop("TASKGUI_DB", None)
    program = (
        ("-m", "tests.helpers.as_nobody") if args[:1] == ("--as-nobody",) else ("-m", "taskgui")
    )
    if program[1] != "taskgui":
        args = args[1:]
    return subprocess.run(
        [*prefix, sys.executable, *program, *args],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        **kwargs,
    )


_BIND_READ_ONLY = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'


def read_only_mount(folder: Path) -> tuple[str, ...]:
    """A command prefix that runs its command with ``folder`` mounted read-only.

    Skips the test when this system cannot make one (no ``unshare``, or user
    namespaces are disabled).
    """
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1) to make a read-only mount")
    prefix = (unshare, "-rm", "sh", "-c", _BIND_READ_ONLY, "sh", str(folder))
    probe = subprocess.run(
        [*prefix, "sh", "-c", f'touch "{folder}/.probe" 2>/dev/null && echo writable || echo ro'],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if probe.stdout.strip() != "ro":
        pytest.skip(f"cannot make a read-only mount here: {probe.stderr.strip() or probe.stdout}")
    return prefix
