"""A private D-Bus bus for one test, and the fake desktop services on it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import count
from pathlib import Path

import pytest
from PySide6.QtDBus import QDBusConnection

_names = count()
ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def private_bus() -> Iterator[str]:
    """Start a ``dbus-daemon`` of our own; yield its address; stop it afterwards."""
    if shutil.which("dbus-daemon") is None:
        pytest.skip("needs dbus-daemon for a private bus")
    command = ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1"]
    if shutil.which("setpriv"):
        # Ended with the test process even when that one crashes (a Qt crash skips the
        # finally below), instead of lingering as an orphan for the rest of the day.
        command = ["setpriv", "--pdeathsig", "TERM", *command]
    daemon = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert daemon.stdout is not None
        address = daemon.stdout.readline().strip()
        assert address.startswith("unix:"), address
        yield address
    finally:
        daemon.terminate()
        daemon.communicate(timeout=10)


class FakeDesktopServices:
    """The fake services of ``tests.helpers.fake_desktop_bus``, driven line by line."""

    def __init__(self, address: str, services: list[str]) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.helpers.fake_desktop_bus", address, *services],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert self._readline() == "ready"

    def _readline(self) -> str:
        assert self._process.stdout is not None
        return self._process.stdout.readline().strip()

    def command(self, line: str) -> None:
        """Send one command (``set upower OnBattery true``) and wait until it is done."""
        assert self._process.stdin is not None
        self._process.stdin.write(line + "\n")
        self._process.stdin.flush()
        assert self._readline() == "ok"

    def stop(self) -> None:
        self._process.kill()
        self._process.communicate(timeout=10)  # also closes both pipes


def connect(address: str) -> QDBusConnection:
    """A QtDBus connection of this test's own to the private bus."""
    connection = QDBusConnection.connectToBus(address, f"taskgui-test-{next(_names)}")
    assert connection.isConnected(), connection.lastError().message()
    return connection
