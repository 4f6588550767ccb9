"""Real ``taskgui daemon --db postgresql://...`` nodes and CLI runs on a database of
their own, each process as a new user starts it (empty XDG folders, no SQLite file).

Use the fixtures ``postgres``, ``dsn`` and ``nodes`` by importing them into a test
module (``from tests.helpers.shared_nodes import dsn, nodes, postgres``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from psycopg import sql

from tests.helpers.postgres import PostgresServer, session_server
from tests.helpers.store import ROOT

TASKGUI = (sys.executable, "-m", "taskgui")
LOG_LINE = 'echo "$TASKGUI_TASK_ID $TASKGUI_ATTEMPT $TASKGUI_RUN_MARK" >> {log}'


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    yield from session_server()


@pytest.fixture
def dsn(postgres: PostgresServer) -> Iterator[str]:
    name = f"{postgres.database}_{postgres.new_schema()}"
    with postgres.connect() as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield postgres.dsn.rsplit("/", 1)[0] + f"/{name}"
    with postgres.connect() as connection:
        connection.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


def _environ(home: Path) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("TASKGUI_", "XDG_"))},
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "QT_QPA_PLATFORM": "offscreen",
    }


@dataclass
class Nodes:
    dsn: str
    tmp: Path
    processes: dict[str, subprocess.Popen[str]] = field(default_factory=dict)
    files: list[Any] = field(default_factory=list)
    # More environment for a node by name (its own D-Bus buses, for run conditions).
    environment: dict[str, dict[str, str]] = field(default_factory=dict)

    def start(self, name: str, workers: int = 4, *extra: str) -> None:
        home = self.tmp / f"home-{name}"
        stderr = (self.tmp / f"{name}.stderr").open("w")
        self.files.append(stderr)
        self.processes[name] = subprocess.Popen(
            [
                *TASKGUI,
                "--db",
                self.dsn,
                "daemon",
                "--node",
                name,
                "--workers",
                str(workers),
                *extra,
            ],
            cwd=ROOT,
            env={**_environ(home), **self.environment.get(name, {})},
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            text=True,
        )

    def settings(self, name: str, text: str) -> None:
        """Write node ``name``'s preferences (the QSettings INI file) before it starts."""
        folder = self.tmp / f"home-{name}" / "config" / "taskgui"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "taskgui.conf").write_text(text, encoding="utf-8")

    def log(self, name: str) -> str:
        """What node ``name`` wrote to its log file so far."""
        path = self.tmp / f"home-{name}" / "state" / "taskgui" / "log" / "taskgui.log"
        return path.read_text(encoding="utf-8") if path.exists() else ""

    def join(self, *names: str) -> None:
        """Start these nodes and wait until each beats and one leads."""
        for name in names:
            self.start(name)
        self.wait_joined(*names)

    def wait_joined(self, *names: str) -> None:
        """Wait until each of these started nodes beats and one leads."""

        def joined() -> bool:
            try:
                beating = {row[0] for row in self.query("SELECT name FROM nodes")}
                return beating >= set(names) and self.leader() is not None
            except Exception:  # the first daemon is still making the schema
                return False

        wait_for(joined, 30)

    def state(self, task_id: int) -> str:
        return str(self.query("SELECT state FROM tasks WHERE id = %s", (task_id,))[0][0])

    def cli(self, *args: str, db: str | None = None) -> subprocess.CompletedProcess[str]:
        """The CLI on the shared schedule (``db``: on another database, a file's)."""
        return subprocess.run(
            [sys.executable, "-m", "taskgui", "--db", db or self.dsn, *args],
            cwd=ROOT,
            env=_environ(self.tmp / "home-cli"),
            stdin=subprocess.DEVNULL,  # no terminal: a question is refused, never waited on
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def add(self, *args: str) -> int:
        added = self.cli("add", *args)
        assert added.returncode == 0, added.stderr
        return int(added.stdout)

    def query(self, statement: str, params: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
        import psycopg  # noqa: PLC0415

        with psycopg.connect(self.dsn, autocommit=True) as connection:
            connection.execute("SET search_path TO taskgui")
            cursor = connection.execute(statement, params)
            return cursor.fetchall() if cursor.description else []

    def leader(self) -> str | None:
        rows = self.query(
            "SELECT CASE WHEN expires_at > clock_timestamp() THEN node END FROM leadership"
        )
        return rows[0][0] if rows else None

    def stop_all(self) -> dict[str, int | None]:
        for process in self.processes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        codes: dict[str, int | None] = {}
        for name, process in self.processes.items():
            try:
                codes[name] = process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                codes[name] = None
        for file in self.files:
            file.close()
        self.files.clear()
        return codes


@pytest.fixture
def nodes(dsn: str, tmp_path: Path) -> Iterator[Nodes]:
    started = Nodes(dsn, tmp_path)
    yield started
    started.stop_all()


def wait_for(check: Callable[[], bool], timeout: float) -> float:
    begun = time.monotonic()
    while not check():
        if time.monotonic() - begun > timeout:
            raise AssertionError(f"not within {timeout} s")
        time.sleep(0.05)
    return time.monotonic() - begun
