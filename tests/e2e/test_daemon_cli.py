"""End to end: the real ``taskgui daemon`` and CLI, as separate processes, on one file.

These run the program exactly as a person would, including killing the daemon with
SIGKILL in the middle of a run and starting it again.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


class Taskgui:
    """Runs ``python -m taskgui`` against one database with a private HOME."""

    def __init__(self, tmp_path: Path) -> None:
        self.db = tmp_path / "e2e.sqlite3"
        self.env = {
            **os.environ,
            "HOME": str(tmp_path / "home"),
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "QT_QPA_PLATFORM": "offscreen",
        }
        (tmp_path / "home").mkdir()  # commands run in $HOME by default, as with cron
        self.daemons: list[subprocess.Popen[bytes]] = []
        self.tmp_path = tmp_path

    def cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [sys.executable, "-m", "taskgui", "--db", str(self.db), *args],
            check=False,
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"taskgui {' '.join(args)} failed: {result.stderr}")
        return result

    def add(self, name: str, command: str, *extra: str) -> int:
        return int(self.cli("add", "--name", name, "--command", command, *extra).stdout)

    def show(self, task_id: int) -> dict[str, Any]:
        return dict(json.loads(self.cli("show", str(task_id), "--json").stdout))

    def history(self, task_id: int) -> list[dict[str, Any]]:
        return list(json.loads(self.cli("history", str(task_id), "--json").stdout))

    def start_daemon(self, workers: int = 2) -> subprocess.Popen[bytes]:
        log = (self.tmp_path / f"daemon{len(self.daemons)}.log").open("wb")
        command = [sys.executable, "-m", "taskgui", "--db", str(self.db)]
        daemon = subprocess.Popen(
            [*command, "daemon", "--workers", str(workers)],
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        self.daemons.append(daemon)
        return daemon

    def stop_all(self) -> None:
        for daemon in self.daemons:
            if daemon.poll() is None:
                daemon.kill()
            daemon.wait(timeout=10)


def wait_for(condition: Callable[[], bool], timeout: float = 20.0, what: str = "") -> None:
    """Poll a condition that reads another process's state, with a deadline."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what or condition}")


@pytest.fixture
def taskgui(tmp_path: Path) -> Iterator[Taskgui]:
    app = Taskgui(tmp_path)
    yield app
    app.stop_all()


@pytest.mark.slow
def test_the_daemon_runs_what_the_cli_adds_and_obeys_cancel(taskgui: Taskgui) -> None:
    taskgui.start_daemon()
    quick = taskgui.add("quick", "echo hello from taskgui")
    wait_for(lambda: taskgui.show(quick)["state"] == "succeeded", what="quick to succeed")
    (run,) = taskgui.history(quick)
    assert run["outcome"] == "succeeded" and run["output"] == "hello from taskgui\n"

    slow = taskgui.add("slow", "sleep 60")
    wait_for(lambda: taskgui.show(slow)["state"] == "running", what="slow to start")
    assert taskgui.cli("cancel", str(slow)).returncode == 0
    wait_for(lambda: taskgui.show(slow)["state"] == "cancelled", what="slow to be cancelled")
    wait_for(lambda: taskgui.history(slow)[0]["outcome"] == "cancelled", what="run recorded")

    failing = taskgui.add("failing", "exit 2", "--max-attempts", "2", "--retry-delay", "1s")
    wait_for(lambda: taskgui.show(failing)["state"] == "exhausted", what="retries to run out")
    assert [r["outcome"] for r in taskgui.history(failing)] == ["failed", "failed"]

    unknown = taskgui.cli("cancel", "999", check=False)
    assert unknown.returncode == 1 and unknown.stderr.startswith("taskgui: error: ")


@pytest.mark.slow
def test_list_and_show_say_what_the_daemon_keeps_a_task_waiting_for(taskgui: Taskgui) -> None:
    taskgui.start_daemon(workers=2)
    holder = taskgui.add("holds the key", "sleep 60", "--key", "db")
    wait_for(lambda: taskgui.show(holder)["state"] == "running", what="the key holder")
    keyed = taskgui.add("needs the key", "true", "--key", "db")
    wait_for(lambda: taskgui.show(keyed)["waiting"] == "concurrency_key", what="a key wait")
    busy = taskgui.add("takes the last worker", "sleep 60")
    wait_for(lambda: taskgui.show(busy)["state"] == "running", what="both workers busy")
    queued = taskgui.add("no worker left", "true")
    wait_for(lambda: taskgui.show(queued)["waiting"] == "worker", what="a worker wait")
    tasks = json.loads(taskgui.cli("list", "--json").stdout)
    listed = {task["name"]: task["waiting"] for task in tasks}
    assert listed == {
        "holds the key": None,
        "needs the key": "concurrency_key",
        "takes the last worker": None,
        "no worker left": "worker",
    }
    table = taskgui.cli("list").stdout
    assert "key db" in table and "worker" in table
    assert taskgui.cli("cancel", str(busy)).returncode == 0  # frees a worker
    wait_for(lambda: taskgui.show(queued)["state"] == "succeeded", what="the queued task")
    assert taskgui.show(queued)["waiting"] is None
    assert taskgui.cli("cancel", str(holder)).returncode == 0  # leave no command behind
    wait_for(lambda: taskgui.show(holder)["state"] == "cancelled", what="the holder to stop")


@pytest.mark.slow
def test_sigkill_mid_run_then_restart_finishes_the_work(taskgui: Taskgui) -> None:
    marker = taskgui.tmp_path / "done.txt"
    started = taskgui.tmp_path / "started.txt"
    daemon = taskgui.start_daemon()
    # The first attempt outlives the daemon (its own process group) and would finish
    # long after the restart: only the new daemon stopping it keeps "done" single.
    # (A fixed short sleep made this depend on how fast a loaded machine restarts.)
    first_attempt_sleep = 'if [ "$TASKGUI_ATTEMPT" = 1 ]; then sleep 60; fi'
    task = taskgui.add(
        "interrupted",
        f"echo $$ >> {started}; {first_attempt_sleep}; echo done >> {marker}",
        "--max-attempts",
        "3",
        "--retry-delay",
        "1s",
    )
    wait_for(lambda: started.exists() and started.read_text().endswith("\n"), what="attempt 1")
    wait_for(lambda: taskgui.history(task)[0]["pid"] is not None, what="its pid on disk")
    os.kill(daemon.pid, signal.SIGKILL)
    daemon.wait(timeout=10)
    orphan = int(started.read_text())
    assert taskgui.show(task)["state"] == "running"  # as the crash left it

    taskgui.start_daemon()
    wait_for(lambda: taskgui.show(task)["state"] == "succeeded", timeout=30, what="success")
    outcomes = [run["outcome"] for run in taskgui.history(task)]
    assert outcomes == ["succeeded", "interrupted"]
    assert marker.read_text() == "done\n"
    wait_for(lambda: not Path(f"/proc/{orphan}").exists(), timeout=5, what="the orphan to go")


@pytest.mark.slow
def test_sigterm_stops_gracefully_and_the_interrupted_run_is_retried(taskgui: Taskgui) -> None:
    """A stop of taskgui is not the command's failure: a one-attempt task (as every
    task imported from a crontab is) runs again at the next start, it is not given up
    on (a trial: "exhausted" after a quit whose dialog said it would be retried)."""
    started = taskgui.tmp_path / "started.txt"
    daemon = taskgui.start_daemon()
    command = f"if [ -e {started} ]; then echo again; exit 0; fi; echo x > {started}; sleep 60"
    task = taskgui.add("long", command, "--max-attempts", "1")
    wait_for(started.exists, what="the run to start")
    daemon.send_signal(signal.SIGTERM)
    assert daemon.wait(timeout=30) == 0
    shown = taskgui.show(task)
    assert shown["state"] == "retrying"  # the same attempt, due again at once
    [interrupted] = taskgui.history(task)
    assert interrupted["outcome"] == "interrupted"
    assert interrupted["error"] == "stopped because taskgui daemon was stopped"

    taskgui.start_daemon()
    wait_for(lambda: taskgui.show(task)["state"] == "succeeded", timeout=30, what="the rerun")
    runs = taskgui.history(task)
    assert [run["outcome"] for run in runs] == ["succeeded", "interrupted"]
    assert [run["attempt"] for run in runs] == [1, 1]


@pytest.mark.slow
def test_a_second_daemon_on_the_same_file_is_refused(taskgui: Taskgui) -> None:
    first = taskgui.start_daemon()
    first_log = taskgui.tmp_path / "daemon0.log"
    wait_for(lambda: "taskgui daemon (pid" in first_log.read_text(), what="the first daemon")
    second = taskgui.start_daemon()
    assert second.wait(timeout=30) == 1
    log = (taskgui.tmp_path / "daemon1.log").read_text()
    assert f"process {first.pid} is already running the schedule" in log
    assert "Traceback" not in log


@pytest.mark.slow
def test_a_task_stored_before_the_duration_bound_does_not_stop_the_daemon(
    taskgui: Taskgui,
) -> None:
    # What 'taskgui add --every 999999999d' stored before durations were bounded: from
    # then on every 'taskgui daemon' failed with "internal error: OverflowError".
    # Due within the minute the daemon reads ahead: met (and reported) soon after the
    # start. One due later stays unread until then (tests/runtime/test_hydration.py).
    poisoned = taskgui.add("poisoned", "true", "--every", "1d", "--in", "30s")
    huge = json.dumps({"v": 1, "kind": "every", "seconds": 999_999_999 * 86_400.0})
    with sqlite3.connect(taskgui.db) as connection:
        connection.execute("UPDATE tasks SET recurrence = ? WHERE id = ?", (huge, poisoned))
    connection.close()

    daemon = taskgui.start_daemon()
    log = taskgui.tmp_path / "daemon0.log"
    wait_for(lambda: "taskgui daemon (pid" in log.read_text(), what="the daemon to start")
    healthy = taskgui.add("healthy", "echo fine")
    wait_for(lambda: taskgui.show(healthy)["state"] == "succeeded", what="the healthy task")
    wait_for(lambda: f"task {poisoned} could not be read" in log.read_text(), what="the report")
    daemon.send_signal(signal.SIGTERM)
    assert daemon.wait(timeout=30) == 0
    text = log.read_text()
    assert "at most 100 years" in text
    assert "Traceback" not in text and "internal error" not in text
    with sqlite3.connect(taskgui.db) as connection:  # kept, and set aside
        assert connection.execute("SELECT task_id FROM quarantine").fetchall() == [(poisoned,)]
    connection.close()


@pytest.mark.slow
def test_malformed_requests_do_not_stop_the_cli_reaching_the_daemon(taskgui: Taskgui) -> None:
    task = taskgui.add("steered", "true", "--every", "1h", "--in", "1h")
    taskgui.start_daemon()
    log = taskgui.tmp_path / "daemon0.log"
    wait_for(lambda: "taskgui daemon (pid" in log.read_text(), what="the daemon to start")
    with sqlite3.connect(taskgui.db) as connection:
        connection.executemany(
            "INSERT INTO requests (op, task_id, payload, created_at) VALUES (?, ?, ?, ?)",
            [
                ("update", task, '{"v": 1}', int(time.time() * 1e6)),
                ("update", task, "[" * 100_000, int(time.time() * 1e6)),
                ("pause", task, None, "later"),
                ("pause", task, None, 2**62),
            ],
        )
    connection.close()

    paused = taskgui.cli("pause", str(task), check=False)
    assert (paused.returncode, paused.stdout) == (0, f"task {task} paused\n"), paused.stderr
    assert taskgui.show(task)["state"] == "paused"
    with sqlite3.connect(taskgui.db) as connection:
        unanswered = connection.execute("SELECT count(*) FROM requests WHERE done_at IS NULL")
        assert unanswered.fetchone() == (0,)
    connection.close()
    assert "Traceback" not in log.read_text()


@pytest.mark.slow
def test_a_process_that_left_its_group_is_stopped_after_the_daemon_is_killed(
    taskgui: Taskgui,
) -> None:
    # setsid takes the child out of the run's process group, out of reach of the group
    # signal the next start sends; only the run's own mark finds it after a SIGKILL.
    escaped_pid = taskgui.tmp_path / "escaped.pid"
    daemon = taskgui.start_daemon()
    task = taskgui.add(
        "escapes",
        f"setsid sh -c 'echo $$ > {escaped_pid}; exec sleep 120' & sleep 120",
        "--max-attempts",
        "1",
    )
    wait_for(lambda: escaped_pid.exists() and escaped_pid.read_text().strip() != "", what="it")
    wait_for(lambda: taskgui.history(task)[0]["pid"] is not None, what="its pid on disk")
    escaped = int(escaped_pid.read_text())
    os.kill(daemon.pid, signal.SIGKILL)
    daemon.wait(timeout=10)
    assert Path(f"/proc/{escaped}").exists()  # the crash left it running

    taskgui.start_daemon()

    def gone() -> bool:
        try:
            state = Path(f"/proc/{escaped}/stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            return True
        return state == "Z"

    wait_for(gone, timeout=15, what="the process that left the group to be stopped")
    assert taskgui.history(task)[0]["outcome"] == "interrupted"


def _requests(db: Path, statement: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as connection:
        rows = connection.execute(statement).fetchall()
    connection.close()
    return rows


@pytest.mark.slow
def test_an_import_beside_a_running_daemon_is_told_in_a_few_notices_and_all_scheduled(
    taskgui: Taskgui, tmp_path: Path
) -> None:
    """A trial imported 100,000 tasks while a daemon ran: the CLI filed one "added"
    request per task, each its own commit beside the daemon answering them; the import
    failed ("busy") after its tasks were committed, and 63,187 notices expired while
    the daemon worked through the others, leaving those tasks never scheduled."""
    taskgui.start_daemon()
    log = taskgui.tmp_path / "daemon0.log"
    wait_for(lambda: "taskgui daemon (pid" in log.read_text(), what="the daemon to start")
    template = tmp_path / "one.json"
    (tmp_path / "other").mkdir()
    other = Taskgui(tmp_path / "other")
    other.add("template", "true", "--at", "2030-01-01T00:00:00Z")
    other.cli("export", str(template))
    data = json.loads(template.read_text())
    [task] = data["tasks"]
    count = 2_500
    soon = (datetime.now(UTC) + timedelta(seconds=10)).isoformat()
    data["tasks"] = [
        {**task, "id": 10_000 + index, "name": f"imported {index}"} for index in range(count)
    ]
    data["tasks"][-1] |= {"first_run_at": soon, "command": {**task["command"], "line": "echo last"}}
    bulk = tmp_path / "bulk.json"
    bulk.write_text(json.dumps(data))
    imported = taskgui.cli("import", str(bulk), check=False)
    assert imported.returncode == 0, imported.stderr
    notices = _requests(taskgui.db, "SELECT count(*) FROM requests WHERE op = 'added'")
    assert notices == [(3,)]  # 1,000 ids a notice, not 2,500 notices
    last = int(_requests(taskgui.db, "SELECT max(id) FROM tasks")[0][0])
    wait_for(lambda: taskgui.show(last)["state"] == "succeeded", 40, "the last imported to run")
    left = _requests(
        taskgui.db, "SELECT count(*) FROM requests WHERE done_at IS NULL OR error IS NOT NULL"
    )
    assert left == [(0,)]
    assert "Traceback" not in log.read_text()
