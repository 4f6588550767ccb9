"""A shared schedule named by libpq's keyword/value form, ``--db 'host=... dbname=...'``,
on the real server, as a new user gives it (empty XDG folders).

A trial: the form was taken for a file name, and a SQLite file literally named
``host=127.0.0.1 dbname=test user=root password=x`` was made in the working folder.
Now everything a URI does, this form does: the CLI (``--db`` and TASKGUI_DB), a node,
the TASKGUI_DB a command finds (no password), the window's status bar and log and its
autostart entry (no password), and a failure's message (the password masked).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from psycopg.conninfo import conninfo_to_dict
from pytestqt.qtbot import QtBot

from taskgui.app.shared_window import SharedSession, follower
from taskgui.core.clock import SystemClock
from taskgui.ui.desktop.autostart import Autostart
from taskgui.ui.window.main_window import MainWindow
from tests.helpers.shared_nodes import Nodes, _environ, wait_for

SECRET = "s3cret"  # trust auth ignores it: it must only never show


@pytest.fixture
def keyword_dsn(dsn: str) -> str:
    """The test's database as a keyword/value string, with a password in it."""
    parts = conninfo_to_dict(dsn)
    return (
        f"host={parts['host']} port={parts['port']} dbname={parts['dbname']} "
        f"user={parts['user']} password={SECRET}"
    )


def _taskgui(
    home: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The CLI, in a folder of its own: a file it wrongly made there would show."""
    home.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "taskgui", *args],
        cwd=home,
        env={**_environ(home), **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _files_in(home: Path) -> list[str]:
    return sorted(p.name for p in home.rglob("*") if p.is_file())


def test_the_cli_and_a_node_take_a_keyword_value_dsn(keyword_dsn: str, tmp_path: Path) -> None:
    home = tmp_path / "home-cli"
    seen = tmp_path / "seen.txt"
    command = f'printf %s "$TASKGUI_DB" > {seen}'
    added = _taskgui(home, "--db", keyword_dsn, "add", "--name", "where", "--command", command)
    assert (added.returncode, added.stdout.strip()) == (0, "1"), added.stderr
    assert _files_in(home) == [], "no file of the schedule's own was made"
    listed = _taskgui(home, "list", "--json", env={"TASKGUI_DB": keyword_dsn})
    assert listed.returncode == 0, listed.stderr
    assert [task["name"] for task in json.loads(listed.stdout)] == ["where"]
    assert SECRET not in added.stderr + listed.stderr + listed.stdout

    nodes = Nodes(keyword_dsn, tmp_path)
    try:
        nodes.join("a")
        wait_for(lambda: nodes.state(1) == "succeeded", 30)
    finally:
        nodes.stop_all()
    # The command found the schedule to run ``taskgui`` on, its password left out (libpq
    # reads it from ~/.pgpass or PGPASSWORD then).
    expected = keyword_dsn.removesuffix(f" password={SECRET}")
    assert seen.read_text() == expected
    assert SECRET not in nodes.log("a")


def test_a_failure_on_a_keyword_value_dsn_masks_the_password(tmp_path: Path) -> None:
    home = tmp_path / "home"
    nowhere = "host=127.0.0.1 port=1 dbname=x user=me password='hun ter2' connect_timeout=1"
    result = _taskgui(home, "--db", nowhere, "list")
    assert result.returncode == 1, result.stderr
    assert "password=*** connect_timeout=1" in result.stderr
    assert "hun" not in result.stderr + result.stdout
    assert _files_in(home) == []


def test_the_window_shows_a_keyword_value_dsn_without_its_password(
    keyword_dsn: str, tmp_path: Path, qtbot: QtBot
) -> None:
    home = tmp_path / "home-cli"
    added = _taskgui(home, "--db", keyword_dsn, "add", "--name", "hello", "--in", "1h",
                     "--command", "true")  # fmt: skip
    assert added.returncode == 0, added.stderr
    clock = SystemClock()
    repository, service = follower(keyword_dsn, clock)
    shared = SharedSession(keyword_dsn, service, clock)
    service.start()
    try:
        window = MainWindow(service, clock, location=shared.location, schedule_owner="")
        qtbot.addWidget(window)
        shared.attach(window)
        qtbot.waitUntil(lambda: window.model.row_of(1) is not None, timeout=10_000)
        shown = window.location_label.text()
        assert shown == keyword_dsn.replace(SECRET, "***")
        entry = Autostart(tmp_path / "autostart" / "taskgui.desktop", tuple(shared.launch_command))
        entry.enable()
        text = entry.path.read_text()
        assert SECRET not in text and f"dbname={conninfo_to_dict(keyword_dsn)['dbname']}" in text
        assert shared.launch_command[-2:] == [
            "--db",
            keyword_dsn.removesuffix(f" password={SECRET}"),
        ]
    finally:
        service.shutdown()
        repository.close()


def test_the_program_opens_its_window_on_a_keyword_value_dsn(
    keyword_dsn: str, tmp_path: Path
) -> None:
    home = tmp_path / "home-window"
    home.mkdir()
    log = home / "state" / "taskgui" / "log" / "taskgui.log"
    with (tmp_path / "window.stderr").open("w") as stderr:
        window = subprocess.Popen(
            [sys.executable, "-m", "taskgui", "--db", keyword_dsn],
            cwd=home,
            env=_environ(home),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            wait_for(lambda: log.exists() and "runs its schedule" in log.read_text(), 30)
        finally:
            window.send_signal(signal.SIGTERM)
            code = window.wait(timeout=30)
    text = log.read_text()
    assert code == 0, (tmp_path / "window.stderr").read_text()
    assert f"follows the shared schedule {keyword_dsn.replace(SECRET, '***')}" in text
    assert SECRET not in text + (tmp_path / "window.stderr").read_text()
    assert not list(home.rglob("*.sqlite3")) and not list(home.glob("host=*"))


@pytest.fixture(autouse=True)
def _no_stray_files() -> Iterator[None]:
    """Nothing named after the DSN in the working folder of the test run either."""
    yield
    assert not list(Path.cwd().glob("host=*"))
