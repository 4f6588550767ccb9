"""End to end: the database file deleted, or its -wal deleted, under a real daemon.

The daemon must stop on its own with a clear error (exit 1) and keep what it held,
and a CLI started meanwhile must refuse rather than make a fresh file nobody runs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.helpers.filesystem import ROOT, taskgui
from tests.helpers.store import raw_connection

pytestmark = pytest.mark.slow


class Daemon:
    """``taskgui daemon`` on ``db`` as a new user runs it, with its output in a file."""

    def __init__(self, db: Path, home: Path) -> None:
        self.db = db
        self.home = home
        self.log = home / "daemon.log"
        environ = {
            **os.environ,
            "HOME": str(home),
            "XDG_STATE_HOME": str(home / "state"),
            "XDG_DATA_HOME": str(home / "data"),
            "PYTHONPATH": str(ROOT),
        }
        with self.log.open("wb") as output:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "taskgui", "--db", str(db), "daemon"],
                cwd=ROOT,
                env=environ,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        wait_for(lambda: "taskgui daemon (pid" in self.output(), "the daemon to start")

    def output(self) -> str:
        return self.log.read_text()

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return taskgui("--db", str(self.db), *args, home=self.home)

    def add(self, name: str, *extra: str) -> int:
        result = self.cli("add", "--name", name, "--command", "true", "--in", "1h", *extra)
        assert result.returncode == 0, result.stderr
        return int(result.stdout)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "data").mkdir()  # a --db folder must exist (only the default's is made)
    running = Daemon(tmp_path / "data" / "tasks.sqlite3", home)
    yield running
    running.stop()


def names_in(path: Path) -> list[str]:
    with raw_connection(path) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return [row[0] for row in connection.execute("SELECT name FROM tasks ORDER BY id")]


def test_a_deleted_database_stops_the_daemon_and_a_cli_meanwhile_refuses(
    daemon: Daemon,
) -> None:
    daemon.add("mine")
    # A run that holds the daemon in its shutdown grace, so the lock stays held a while.
    slow = daemon.cli("add", "--name", "slow", "--command", "sleep 60")
    assert slow.returncode == 0
    wait_for(lambda: '"running"' in daemon.cli("show", "2", "--json").stdout, "slow to run")

    daemon.db.unlink()
    wait_for(lambda: "was deleted while taskgui had it open" in daemon.output(), "notice")
    refused = daemon.cli("add", "--name", "lost", "--command", "true")

    assert refused.returncode == 1
    assert "was deleted while taskgui had it open" in refused.stderr
    assert "still holds the schedule it had open" in refused.stderr
    assert not daemon.db.exists()
    assert daemon.process.wait(timeout=60) == 1
    output = daemon.output()
    assert "ERROR" in output  # the log line
    assert f"taskgui: error: {daemon.db} was deleted while taskgui had it open" in output
    (copy,) = daemon.db.parent.glob("tasks.sqlite3.rescued-*")
    assert f"a copy of the schedule it held was saved as {copy}" in output
    assert names_in(copy) == ["mine", "slow"]


def test_a_deleted_wal_stops_the_daemon_with_nothing_lost(daemon: Daemon) -> None:
    added = [daemon.add(f"task {index}") for index in range(5)]
    wal = daemon.db.with_name(daemon.db.name + "-wal")

    wal.unlink()

    assert daemon.process.wait(timeout=60) == 1
    assert "the write-ahead log of" in daemon.output()
    assert f"every change committed so far is saved in {daemon.db}" in daemon.output()
    assert names_in(daemon.db) == [f"task {index}" for index in range(5)]
    listed = daemon.cli("list", "--json")
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) == len(added)
