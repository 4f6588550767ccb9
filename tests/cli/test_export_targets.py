"""``taskgui export PATH`` replaces only a regular file: never a pipe, a device or a link.

The write is a rename over the target, which would put a regular file where a named
pipe, a device node (as root, even ``/dev/null``) or a symbolic link was. Real ones
are made in tmp_path (a device node with mknod, as root); the real program refuses
and leaves each exactly as it was.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from taskgui.system.files import write_private
from tests.helpers.filesystem import taskgui


def _fifo(path: Path) -> None:
    os.mkfifo(path, 0o644)


def _device(path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root (mknod)")
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is


def _link(path: Path) -> None:
    target = path.with_name("precious.txt")
    target.write_text("not an export\n")
    path.symlink_to(target)


def _folder(path: Path) -> None:
    path.mkdir()


TARGETS: dict[str, Callable[[Path], None]] = {
    "fifo": _fifo,
    "device": _device,
    "symlink": _link,
    "folder": _folder,
}
KINDS = {
    "fifo": "a named pipe (FIFO)",
    "device": "a device",
    "symlink": "a symbolic link",
    "folder": "a folder",
}


def _describe(path: Path) -> tuple[int, int, str | None]:
    info = path.lstat()
    link = os.readlink(path) if stat.S_ISLNK(info.st_mode) else None
    return info.st_mode, info.st_rdev, link


@pytest.mark.parametrize("kind", list(TARGETS))
def test_export_refuses_a_target_that_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    db = tmp_path / "tasks.sqlite3"
    home = tmp_path / "home"
    added = taskgui("--db", str(db), "add", "--name", "x", "--command", "true", home=home)
    assert added.returncode == 0, added.stderr
    target = tmp_path / "out.json"
    TARGETS[kind](target)
    before = _describe(target)

    result = taskgui("--db", str(db), "export", str(target), home=home)

    assert result.returncode == 2  # bad input, refused before the database is read
    if kind == "folder":
        expected = f"{target} is a folder; give the name of a file to write"
    else:
        expected = (
            f"{KINDS[kind]} is there, not a regular file, and taskgui does not replace it; "
            f"choose a file name instead ({target})"
        )
    assert result.stderr == f"taskgui: error: {expected}\n"
    assert _describe(target) == before
    assert sorted(path.name for path in tmp_path.iterdir() if path.name.startswith(".")) == []
    if kind == "symlink":
        assert (tmp_path / "precious.txt").read_text() == "not an export\n"


def test_a_regular_file_is_still_replaced_privately(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old")
    target.chmod(0o644)
    previous = os.umask(0)
    try:
        write_private(target, "new")
    finally:
        os.umask(previous)
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
