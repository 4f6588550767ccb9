"""A cancel reaches the node that runs the run at once: the leader commits it, the
commit's NOTIFY wakes the running node, which stops the process (its group: SIGTERM,
then SIGKILL). Real daemons; the run is pinned to the node that does not lead, so the
cancel crosses machines. The only time limit is a generous timeout: how long it took
is printed (``pytest -s``), never asserted.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.helpers.shared_nodes import Nodes, wait_for


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_cancel_stops_the_run_on_the_other_node_promptly(nodes: Nodes, tmp_path: Path) -> None:
    nodes.join("a", "b")
    leader = nodes.leader()
    [runner] = {"a", "b"} - {leader}
    pid_file = tmp_path / "pid"
    marker = tmp_path / "finished"
    task_id = nodes.add(
        "--name", "slow", "--on-node", runner,
        "--command", f"echo $$ > {pid_file}.part && mv {pid_file}.part {pid_file}; "
        f"sleep 60; touch {marker}",
    )  # fmt: skip
    wait_for(pid_file.exists, 30)
    pid = int(pid_file.read_text())
    assert _alive(pid)
    assert nodes.query("SELECT node FROM runs WHERE task_id = %s", (task_id,)) == [(runner,)]
    asked = time.monotonic()
    cancelled = nodes.cli("cancel", str(task_id))  # answered by the leader's engine
    answered = time.monotonic()
    assert cancelled.returncode == 0, cancelled.stderr
    took = wait_for(lambda: not _alive(pid), 10)  # stopped on its node, not at a wake-up
    print(f"cancel answered in {answered - asked:.3f} s; the process ended {took:.3f} s later")
    wait_for(
        lambda: (
            nodes.query("SELECT outcome FROM runs WHERE task_id = %s", (task_id,))
            == [("cancelled",)]
        ),
        10,
    )
    assert nodes.state(task_id) == "cancelled" and not marker.exists()
    assert os.path.exists(pid_file)
