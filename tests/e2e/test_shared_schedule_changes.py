"""``cancel``, ``pause``, ``resume``, ``run-now``, ``retry`` and ``delete`` on a shared
(PostgreSQL) schedule, by the CLI as a new user runs it: performed by the leading
node's engine when a node runs the schedule (a request, answered), and here, leading
for a moment, when none does; then the nodes carry on from what was committed.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.shared_nodes import LOG_LINE, Nodes, wait_for


def _ok(nodes: Nodes, *args: str) -> str:
    result = nodes.cli(*args)
    assert result.returncode == 0, result.stderr
    return result.stdout + result.stderr


def _runs(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_changes_with_no_node_running_are_made_here_and_kept(nodes: Nodes, tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    later = nodes.add("--name", "later", "--in", "1h", "--command", LOG_LINE.format(log=log))
    hourly = nodes.add("--name", "hourly", "--every", "1h", "--in", "1h", "--command", "true")
    gone = nodes.add("--name", "gone", "--in", "1h", "--command", "true")
    assert "paused" in _ok(nodes, "pause", str(later))
    assert nodes.state(later) == "paused"
    assert "resumed" in _ok(nodes, "resume", str(later))
    assert nodes.state(later) == "pending"
    said = _ok(nodes, "run-now", str(later))
    assert "no node runs this shared schedule" in said
    assert "cancelled" in _ok(nodes, "cancel", str(hourly))
    assert nodes.state(hourly) == "cancelled"
    _ok(nodes, "delete", str(gone))
    assert nodes.cli("show", str(gone)).returncode == 1
    assert nodes.leader() is None  # the CLI gave the lead up
    nodes.join("a")  # the node takes the schedule over as the CLI left it
    wait_for(lambda: len(_runs(log)) == 1, 20)  # the run asked for, once
    wait_for(lambda: nodes.state(later) == "pending", 10)  # its own time is still to come
    assert nodes.state(hourly) == "cancelled"


def test_changes_while_a_node_leads_are_performed_by_its_engine(
    nodes: Nodes, tmp_path: Path
) -> None:
    log = tmp_path / "runs.log"
    line = LOG_LINE.format(log=log)
    nodes.join("a", "b")
    hourly = nodes.add("--name", "hourly", "--every", "1h", "--in", "1h", "--command", line)
    assert "paused" in _ok(nodes, "pause", str(hourly))
    assert nodes.state(hourly) == "paused"
    assert "resumed" in _ok(nodes, "resume", str(hourly))
    assert nodes.state(hourly) == "pending"
    _ok(nodes, "run-now", str(hourly))
    wait_for(lambda: len(_runs(log)) == 1, 20)
    # retry: a failed attempt waits an hour for its retry; "retry" runs it now
    flaky = nodes.add(
        "--name", "flaky", "--max-attempts", "3", "--retry-delay", "1h",
        "--command", f'{line}; [ "$TASKGUI_ATTEMPT" -ge 2 ]',
    )  # fmt: skip
    wait_for(lambda: nodes.state(flaky) == "retrying", 20)
    _ok(nodes, "retry", str(flaky))
    wait_for(lambda: nodes.state(flaky) == "succeeded", 20)
    # cancel a run going on one of the nodes: its process is stopped there
    marker = tmp_path / "finished"
    slow = nodes.add("--name", "slow", "--command", f"sleep 30; touch {marker}")
    wait_for(lambda: nodes.state(slow) == "running", 20)
    wait_for(
        lambda: bool(
            nodes.query("SELECT 1 FROM runs WHERE task_id = %s AND pid IS NOT NULL", (slow,))
        ),
        20,
    )
    assert "cancelled" in _ok(nodes, "cancel", str(slow))
    wait_for(
        lambda: (
            nodes.query("SELECT outcome FROM runs WHERE task_id = %s", (slow,))[0][0] == "cancelled"
        ),
        20,
    )
    assert nodes.state(slow) == "cancelled" and not marker.exists()
    _ok(nodes, "delete", str(hourly))
    assert nodes.cli("show", str(hourly)).returncode == 1
    # a refusal comes back from the leader as the CLI's error
    refused = nodes.cli("retry", str(flaky))  # it succeeded: nothing to retry
    assert refused.returncode == 1 and refused.stderr.strip()
