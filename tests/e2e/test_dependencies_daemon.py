"""End to end: "run after" through the real daemon, and a SIGKILL between an upstream's
end and its downstream task's start.

B cannot start before the kill: it shares a concurrency key with a task that holds it
(sleeping). So the daemon dies with A's result and B's trigger committed and B not
started, every time, however loaded the machine is; the restart must run B exactly
once and keep the fan-in mark A left for another task.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from tests.e2e.test_daemon_cli import Taskgui, wait_for
from tests.e2e.test_daemon_cli import taskgui as taskgui  # noqa: PLC0414  (the fixture)


@pytest.mark.slow
def test_a_chain_runs_in_order_through_the_daemon(taskgui: Taskgui) -> None:
    log = taskgui.tmp_path / "order.txt"
    taskgui.start_daemon(workers=2)
    a = taskgui.add("first", f"echo a >> {log}", "--in", "1h")  # run below, once all are added
    b = taskgui.add("second", f"echo b >> {log}", "--after", str(a), "--only-after")
    c = taskgui.add("third", f"echo c >> {log}", "--after", str(b), "--only-after")
    assert "waiting for first" in taskgui.cli("show", str(b)).stdout
    assert taskgui.cli("run-now", str(a)).returncode == 0
    wait_for(lambda: log.exists() and log.read_text() == "a\nb\nc\n", what="a, b, c in order")
    assert [r["kind"] for r in taskgui.history(c)] == ["triggered"]
    assert taskgui.show(c)["waiting"] == "upstream"


@pytest.mark.slow
def test_sigkill_between_the_upstreams_end_and_the_downstreams_start(taskgui: Taskgui) -> None:
    b_ran = taskgui.tmp_path / "b.txt"
    holder_pid = taskgui.tmp_path / "holder.txt"
    daemon = taskgui.start_daemon(workers=3)
    holder = taskgui.add(
        "holds the key", f"echo $$ > {holder_pid}; sleep 120", "--key", "k", "--max-attempts", "1"
    )
    wait_for(lambda: taskgui.show(holder)["state"] == "running", what="the key holder")
    c = taskgui.add("later", "true", "--in", "1h")
    a = taskgui.add("upstream", "true", "--in", "1h")  # started below, once all are added
    b = taskgui.add(
        "downstream", f"echo ran >> {b_ran}", "--after", str(a), "--only-after", "--key", "k"
    )
    fan_in = taskgui.add("after both", "true", "--after", str(a), "--after", str(c), "--only-after")
    assert taskgui.cli("run-now", str(a)).returncode == 0

    def marks(task_id: int) -> dict[int, bool]:
        return {edge["id"]: edge["completed"] for edge in taskgui.show(task_id)["after"]}

    wait_for(lambda: taskgui.show(b)["next_run_kind"] == "triggered", what="the trigger on disk")
    os.kill(daemon.pid, signal.SIGKILL)
    daemon.wait(timeout=10)
    assert taskgui.show(a)["last_outcome"] == "succeeded"
    assert not b_ran.exists()  # killed between A's end and B's start
    assert marks(fan_in) == {a: True, c: False}

    taskgui.start_daemon(workers=3)
    wait_for(b_ran.exists, timeout=30, what="B to run after the restart")
    wait_for(
        lambda: [run["outcome"] for run in taskgui.history(b)] == ["succeeded"],
        what="B's run recorded",
    )
    time.sleep(2)  # long enough for a second run to show, were one owed
    assert b_ran.read_text() == "ran\n"
    assert [run["kind"] for run in taskgui.history(b)] == ["triggered"]
    assert len(taskgui.history(a)) == 1
    assert marks(fan_in) == {a: True, c: False}
    assert taskgui.show(fan_in)["state"] == "pending"
    orphan = int(holder_pid.read_text())
    wait_for(lambda: not Path(f"/proc/{orphan}").exists(), timeout=10, what="the holder to go")
