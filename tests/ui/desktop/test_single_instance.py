"""One window per schedule: the second start hands over to the first."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from taskgui.ui.desktop.single_instance import SingleInstance, server_name

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def runtime_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    return folder


@pytest.fixture
def instances() -> Iterator[list[SingleInstance]]:
    made: list[SingleInstance] = []
    yield made
    for instance in made:
        instance.close()


def make(instances: list[SingleInstance], database: Path, **where: Any) -> SingleInstance:
    instance = SingleInstance(server_name(database, **where))
    instances.append(instance)
    return instance


def name_of(database: Path, **where: Any) -> str:
    name = server_name(database, **where)
    assert name is not None
    return name


def start_app(database: Path, home: Path, **changes: str | None) -> subprocess.Popen[str]:
    """The real entry point on ``database``, with private state (``None`` unsets)."""
    environ = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "QT_QPA_PLATFORM": "offscreen",
        "HOME": str(home),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CONFIG_HOME": str(home / "config"),
    }
    for key, value in changes.items():
        if value is None:
            environ.pop(key, None)
        else:
            environ[key] = value
    return subprocess.Popen(
        [sys.executable, "-m", "taskgui", "--db", str(database)],
        env=environ,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_the_name_depends_on_the_database_and_the_user(tmp_path: Path, runtime_dir: Path) -> None:
    one = name_of(tmp_path / "a.sqlite3")
    assert one == name_of(tmp_path / "x" / ".." / "a.sqlite3")  # resolved
    assert one != name_of(tmp_path / "b.sqlite3")
    assert Path(one).parent == runtime_dir
    # Each user has a folder of their own; this process cannot make another user's.
    assert (
        server_name(tmp_path / "a.sqlite3", uid=os.getuid() + 1, environ={}, temp=str(tmp_path))
        is None
    )


def test_a_second_start_hands_over_to_the_first(
    tmp_path: Path, qtbot: QtBot, instances: list[SingleInstance]
) -> None:
    database = tmp_path / "schedule.sqlite3"
    first = make(instances, database)
    assert first.listen()
    second = make(instances, database)
    assert not second.listen()  # the name is taken by a live instance
    with qtbot.waitSignal(first.message_received, timeout=5_000) as received:
        assert second.send("show")
    assert received.args == ["show"]


def test_different_databases_run_side_by_side(
    tmp_path: Path, instances: list[SingleInstance]
) -> None:
    assert make(instances, tmp_path / "one.sqlite3").listen()
    other = make(instances, tmp_path / "two.sqlite3")
    assert not other.send()  # nobody listens for this one yet
    assert other.listen()


def test_a_stale_socket_left_by_a_crash_is_replaced(
    tmp_path: Path, qtbot: QtBot, instances: list[SingleInstance]
) -> None:
    database = tmp_path / "schedule.sqlite3"
    name = name_of(database)
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(name)  # a socket file with nobody accepting on it
    dead.close()
    assert os.path.exists(name)
    first = make(instances, database)
    assert not first.send()
    assert first.listen()
    with qtbot.waitSignal(first.message_received, timeout=5_000):
        assert make(instances, database).send("show")


def test_starting_the_app_again_raises_the_running_one_and_exits(
    tmp_path: Path, qtbot: QtBot, instances: list[SingleInstance]
) -> None:
    """The real entry point, in a subprocess, against an instance listening here."""
    database = tmp_path / "schedule.sqlite3"
    running = make(instances, database)
    assert running.listen()
    with qtbot.waitSignal(running.message_received, timeout=30_000) as received:
        child = start_app(database, tmp_path)
    try:
        _out, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    assert received.args == ["show"]
    assert child.returncode == 0, err
    assert not database.exists()  # it never opened the schedule


# ------------------------------------------------ no XDG_RUNTIME_DIR, other users

NOBODY = 65534
needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="making a file another user's needs root (chown)"
)


@pytest.fixture
def temp() -> Iterator[Path]:
    """The shared temporary folder, as /tmp is: anyone may create names in it (short,
    as a socket's path must be)."""
    folder = Path(tempfile.mkdtemp(prefix="tg-"))
    folder.chmod(0o1777)
    yield folder
    shutil.rmtree(folder)


def without_runtime_dir(temp: Path) -> dict[str, Any]:
    return {"environ": {}, "temp": str(temp)}


class Squatter:
    """Another local user's socket, listening at a name: it must never be spoken to."""

    def __init__(self, name: str) -> None:
        Path(name).parent.mkdir(parents=True, exist_ok=True)
        self.socket = socket.socket(socket.AF_UNIX)
        self.socket.bind(name)
        self.socket.listen(4)
        self.socket.setblocking(False)
        if os.geteuid() == 0:
            os.chown(name, NOBODY, NOBODY)

    def was_contacted(self) -> bool:
        try:
            connection, _ = self.socket.accept()
        except BlockingIOError:
            return False
        connection.close()
        return True

    def close(self) -> None:
        self.socket.close()


def test_without_a_runtime_dir_the_socket_is_in_a_private_folder_of_ours(
    tmp_path: Path, temp: Path, qtbot: QtBot, instances: list[SingleInstance]
) -> None:
    database = tmp_path / "schedule.sqlite3"
    name = name_of(database, **without_runtime_dir(temp))

    folder = Path(name).parent
    assert folder == temp / f"taskgui-{os.getuid()}"
    info = folder.lstat()
    assert stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()
    assert stat.S_IMODE(info.st_mode) == 0o700
    first = make(instances, database, **without_runtime_dir(temp))
    assert first.listen()
    with qtbot.waitSignal(first.message_received, timeout=5_000):
        assert make(instances, database, **without_runtime_dir(temp)).send("show")


@needs_root
def test_a_folder_another_user_made_first_is_not_trusted(
    tmp_path: Path, temp: Path, instances: list[SingleInstance]
) -> None:
    database = tmp_path / "schedule.sqlite3"
    squat = temp / f"taskgui-{os.getuid()}"
    squat.mkdir(mode=0o700)
    os.chown(squat, NOBODY, NOBODY)

    assert server_name(database, **without_runtime_dir(temp)) is None
    instance = SingleInstance(None)
    instances.append(instance)
    assert not instance.send("show")  # "nobody runs": this start opens its own window
    assert instance.listen()


@pytest.mark.parametrize("mode", [0o755, 0o770, 0o777])
def test_a_folder_of_ours_open_to_others_is_not_trusted(
    tmp_path: Path, temp: Path, mode: int
) -> None:
    folder = temp / f"taskgui-{os.getuid()}"
    folder.mkdir()
    folder.chmod(mode)
    assert server_name(tmp_path / "schedule.sqlite3", **without_runtime_dir(temp)) is None
    assert stat.S_IMODE(folder.stat().st_mode) == mode  # not ours to change silently


def test_a_symlink_at_the_folders_name_is_not_trusted(tmp_path: Path, temp: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    (temp / f"taskgui-{os.getuid()}").symlink_to(target)
    assert server_name(tmp_path / "schedule.sqlite3", **without_runtime_dir(temp)) is None


def test_a_runtime_dir_that_is_not_private_is_not_used(tmp_path: Path, temp: Path) -> None:
    shared = tmp_path / "shared-run"
    shared.mkdir()
    shared.chmod(0o755)
    name = name_of(
        tmp_path / "schedule.sqlite3", environ={"XDG_RUNTIME_DIR": str(shared)}, temp=str(temp)
    )
    assert Path(name).parent == temp / f"taskgui-{os.getuid()}"


@needs_root
def test_another_users_socket_at_the_name_is_never_spoken_to_and_is_replaced(
    tmp_path: Path, qtbot: QtBot, instances: list[SingleInstance]
) -> None:
    database = tmp_path / "schedule.sqlite3"
    name = name_of(database)
    squatter = Squatter(name)
    try:
        first = make(instances, database)
        assert not first.send("show")
        assert first.listen()  # the name is ours again
        assert not squatter.was_contacted()
        assert Path(name).lstat().st_uid == os.getuid()
        with qtbot.waitSignal(first.message_received, timeout=5_000):
            assert make(instances, database).send("show")
    finally:
        squatter.close()


@needs_root
def test_another_user_binding_first_no_longer_makes_the_app_exit(
    tmp_path: Path, temp: Path
) -> None:
    """The attack, through the real program: no XDG_RUNTIME_DIR, and another user has
    bound the name taskgui used in the shared temp folder (and made our folder's name
    theirs). The window must start all the same, speaking to neither."""
    database = tmp_path / "schedule.sqlite3"
    digest = Path(name_of(database, **without_runtime_dir(temp))).name.split("-")[1]
    (temp / f"taskgui-{os.getuid()}").rmdir()
    legacy = Squatter(str(temp / f"taskgui-{os.getuid()}-{digest}"))
    ours = Squatter(str(temp / f"taskgui-{os.getuid()}" / f"taskgui-{digest}"))
    os.chown(temp / f"taskgui-{os.getuid()}", NOBODY, NOBODY)
    child = start_app(database, tmp_path, TMPDIR=str(temp), XDG_RUNTIME_DIR=None)
    try:
        deadline = time.monotonic() + 60
        while not database.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert child.poll() is None, child.communicate()[1]  # it did not exit at once
        assert database.exists()  # it opened the schedule
        assert not legacy.was_contacted() and not ours.was_contacted()
    finally:
        child.terminate()
        try:
            _out, err = child.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()  # never leave a window behind the test run
            _out, err = child.communicate(timeout=30)
        legacy.close()
        ours.close()
    assert "one window per schedule is off" in err
