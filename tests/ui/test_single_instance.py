"""One window per schedule: the second start hands over to the first."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from taskgui.ui.single_instance import SingleInstance, server_name

ROOT = Path(__file__).resolve().parents[2]


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


def make(instances: list[SingleInstance], database: Path) -> SingleInstance:
    instance = SingleInstance(server_name(database))
    instances.append(instance)
    return instance


def test_the_name_depends_on_the_database_and_the_user(tmp_path: Path, runtime_dir: Path) -> None:
    one = server_name(tmp_path / "a.sqlite3", uid=1000)
    assert one == server_name(tmp_path / "x" / ".." / "a.sqlite3", uid=1000)  # resolved
    assert one != server_name(tmp_path / "b.sqlite3", uid=1000)
    assert one != server_name(tmp_path / "a.sqlite3", uid=1001)
    assert Path(one).parent == runtime_dir
    assert server_name(tmp_path / "a", environ={}).startswith("/")  # a temp folder instead


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
    name = server_name(database)
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
    environ = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "QT_QPA_PLATFORM": "offscreen",
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    with qtbot.waitSignal(running.message_received, timeout=30_000) as received:
        child = subprocess.Popen(
            [sys.executable, "-m", "taskgui", "--db", str(database)],
            env=environ,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    try:
        _out, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    assert received.args == ["show"]
    assert child.returncode == 0, err
    assert not database.exists()  # it never opened the schedule
