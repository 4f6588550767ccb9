"""Three real ``taskgui daemon --db postgresql://...`` processes as the nodes of one
shared schedule, as new users start them (empty XDG folders, no SQLite file), on a
database of their own on the real server.

Tasks come from the CLI (and a bulk of the same writes through the repository); every
command appends its run mark (task, kind, occurrence, attempt) to a log file, so a
run that happened twice shows there whatever the database says.
"""

from __future__ import annotations

import json
import os
import signal
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from taskgui.core.recurrence import Every
from taskgui.core.task import Command
from taskgui.store.postgres.repository import PostgresRepository
from tests.helpers.factories import fixed_retry, make_spec
from tests.helpers.shared_nodes import LOG_LINE, Nodes, wait_for


def _marks(log: Path) -> Counter[str]:
    if not log.exists():
        return Counter()
    return Counter(line.split()[2] for line in log.read_text().splitlines() if line.strip())


def test_tasks_added_by_the_cli_run_exactly_once_across_three_daemons(
    nodes: Nodes, tmp_path: Path
) -> None:
    log = tmp_path / "runs.log"
    line = LOG_LINE.format(log=log)
    nodes.join("a", "b", "c")
    once = [nodes.add("--name", f"<b>once {n}</b>", "--command", line) for n in range(3)]
    every = nodes.add("--name", "every", "--every", "1s", "--command", line)
    retried = nodes.add(
        "--name",
        "retried",
        "--max-attempts",
        "3",
        "--retry-delay",
        "1s",
        "--command",
        f'{line}; [ "$TASKGUI_ATTEMPT" -ge 2 ]',
    )
    overlap = tmp_path / "overlap"
    keyed_line = (
        f"{line}; mkdir {tmp_path}/held 2>/dev/null || echo x >> {overlap}; "
        f"sleep 0.3; rmdir {tmp_path}/held"
    )
    keyed = [
        nodes.add("--name", f"keyed {n}", "--key", "disk", "--command", keyed_line)
        for n in range(3)
    ]
    # 1,000 more, written as the CLI writes them (in one transaction): 770 one-off,
    # 100 retrying once, 100 on ten keys, 30 every second.
    now = datetime.now(UTC)
    fails_first = f'{line}; [ "$TASKGUI_ATTEMPT" -ge 2 ]'

    def on_key(key: str) -> str:
        held = tmp_path / f"held-{key}"
        return f"{line}; mkdir {held} 2>/dev/null || echo x >> {overlap}; sleep 0.05; rmdir {held}"

    kinds = {
        "once": [make_spec(0, first_run_at=now, command=Command(line=line))] * 770,
        "retrying": [
            make_spec(
                0, first_run_at=now, command=Command(line=fails_first), retry=fixed_retry(3, 1.0)
            )
        ]
        * 100,
        "keyed": [
            make_spec(
                0,
                first_run_at=now,
                command=Command(line=on_key(f"k{n % 10}")),
                concurrency_key=f"k{n % 10}",
            )
            for n in range(100)
        ],
        "every": [
            make_spec(
                0,
                first_run_at=now,
                command=Command(line=line),
                recurrence=Every(timedelta(seconds=1)),
            )
        ]
        * 30,
    }
    repository = PostgresRepository(nodes.dsn, listen=False)
    try:
        bulk = {
            kind: [stored.id for stored in repository.add_tasks(specs, now)]
            for kind, specs in kinds.items()
        }
    finally:
        repository.close()
    one_offs = [*once, *keyed, *bulk["once"], *bulk["keyed"]]
    retrying = [retried, *bulk["retrying"]]
    recurring = [every, *bulk["every"]]

    def settled() -> bool:
        done = nodes.query(
            "SELECT count(*) FROM tasks WHERE id = ANY(%s) AND state = 'succeeded'",
            (one_offs,),
        )[0][0]
        retried_ok = nodes.query(
            "SELECT count(*) FROM tasks WHERE id = ANY(%s) AND state = 'succeeded' AND attempt = 2",
            (retrying,),
        )[0][0]
        slowest = nodes.query(
            "SELECT min(n) FROM (SELECT count(r.id) AS n FROM unnest(%s::bigint[]) AS t(id) "
            "LEFT JOIN runs r ON r.task_id = t.id AND r.outcome = 'succeeded' "
            "GROUP BY t.id) AS c",
            (recurring,),
        )[0][0]
        return bool(done == len(one_offs) and retried_ok == len(retrying) and slowest >= 3)

    wait_for(settled, 90)
    codes = nodes.stop_all()
    assert codes == {"a": 0, "b": 0, "c": 0}, [
        (tmp_path / f"{n}.stderr").read_text()[-2000:] for n in "abc"
    ]
    marks = _marks(log)
    assert [mark for mark, count in marks.items() if count > 1] == []
    by_task = Counter(int(row.split()[0]) for row in log.read_text().splitlines())
    assert all(by_task[task] == 1 for task in one_offs), [t for t in one_offs if by_task[t] != 1]
    assert all(by_task[task] == 2 for task in retrying)
    assert all(by_task[task] >= 3 for task in recurring)
    assert not overlap.exists()  # the key held across the nodes
    # Work was shared: more than one node ran the runs, and each run names its node.
    ran_on = dict(
        nodes.query(
            "SELECT node, count(*) FROM runs WHERE outcome IS NOT NULL AND missed IS NULL "
            "GROUP BY node"
        )
    )
    assert set(ran_on) <= {"a", "b", "c"} and len(ran_on) >= 2, ran_on
    # Stopped cleanly: nothing claimed was left open (a run dispatched as the nodes
    # left stays unclaimed, for the next node to run).
    left = nodes.query("SELECT count(*) FROM runs WHERE outcome IS NULL AND node IS NOT NULL")
    assert left[0][0] == 0
    history = nodes.cli("history", str(retried), "--json")
    assert {run["node"] for run in json.loads(history.stdout)} <= {"a", "b", "c"}


def test_a_killed_daemons_run_is_rescued_and_a_killed_leader_replaced(
    nodes: Nodes, tmp_path: Path
) -> None:
    log = tmp_path / "runs.log"
    line = LOG_LINE.format(log=log)
    nodes.join("a", "b", "c")
    slow = nodes.add(
        "--name",
        "slow",
        "--max-attempts",
        "2",
        "--retry-delay",
        "1s",
        "--command",
        f"sleep 1.5; {line}",
    )

    def claimed() -> list[tuple[Any, ...]]:
        return nodes.query(
            "SELECT node FROM runs WHERE task_id = %s AND outcome IS NULL AND node IS NOT NULL",
            (slow,),
        )

    wait_for(lambda: bool(claimed()), 30)
    [(runner,)] = claimed()
    nodes.processes[runner].kill()  # SIGKILL mid-run: no goodbye
    wait_for(
        lambda: nodes.query("SELECT state FROM tasks WHERE id = %s", (slow,))[0][0] == "succeeded",
        30,
    )
    runs = nodes.query(
        "SELECT attempt, node, outcome, error FROM runs WHERE task_id = %s ORDER BY id", (slow,)
    )
    assert runs[0][:3] == (1, runner, "interrupted")
    assert runs[0][3].startswith(f"rescued from node {runner}, which stopped answering")
    assert runs[1][0] == 2 and runs[1][1] != runner and runs[1][2] == "succeeded"
    # The leader dies: another leads within twice the lease (3 s) and runs what comes.
    leader = nodes.leader()
    assert leader is not None
    if leader == runner:  # already replaced
        leader = next(name for name in nodes.processes if name != runner)
    alive = [name for name in nodes.processes if name not in (runner, leader)]
    nodes.processes[leader].kill()
    took = wait_for(lambda: nodes.leader() in alive, 15)
    assert took <= 2 * 3.0 + 1.0, took  # 1 s for the steps' timing and this poll
    after = nodes.add("--name", "after", "--command", line)
    wait_for(
        lambda: nodes.query("SELECT state FROM tasks WHERE id = %s", (after,))[0][0] == "succeeded",
        15,
    )
    assert _marks(log)  # the runs wrote their marks


def test_a_second_daemon_answering_as_a_live_node_is_refused(nodes: Nodes) -> None:
    """A trial: a second `taskgui daemon` on one machine (the same default name) closed
    the first's running run as a crash's leftover and stopped its command, and the two
    took the lead from each other. It is refused now, with one line, and the first runs on.
    """
    nodes.join("same")
    slow = nodes.add("--name", "slow", "--command", "sleep 8")
    wait_for(lambda: nodes.state(slow) == "running", 30)
    first = nodes.processes["same"]
    nodes.processes["same-first"] = first
    nodes.start("same")  # the second, by the same name
    second = nodes.processes["same"]
    assert second.wait(timeout=30) == 1
    error = (nodes.tmp / "same.stderr").read_text()
    assert f"node same is already running (pid {first.pid} on " in error
    assert "--node NAME" in error and "Traceback" not in error
    assert first.poll() is None
    wait_for(lambda: nodes.state(slow) == "succeeded", 30)
    outcomes = nodes.query("SELECT outcome FROM runs WHERE task_id = %s", (slow,))
    assert outcomes == [("succeeded",)]  # never interrupted by the second
    nodes.processes["same"] = first
    del nodes.processes["same-first"]


def test_a_command_on_the_shared_schedule_finds_it_in_taskgui_db(
    nodes: Nodes, tmp_path: Path
) -> None:
    """A trial: TASKGUI_DB was empty there, so a `taskgui` a command ran read the node's
    own file ("no tasks"). It names the shared schedule (without a password)."""
    seen = tmp_path / "seen.txt"
    nodes.join("a")
    task = nodes.add("--name", "where", "--command", f'printf %s "$TASKGUI_DB" > {seen}')
    wait_for(lambda: nodes.state(task) == "succeeded", 30)
    assert seen.read_text() == nodes.dsn


def _alive(pid: int) -> bool:
    """The process exists and is not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def test_a_killed_nodes_command_is_stopped_when_it_restarts_after_its_rescue(
    nodes: Nodes, tmp_path: Path
) -> None:
    """A trial: node a was SIGKILLed mid-run, the leader rescued the run and b ran its
    retry; a restarted on the same machine, but its old command ran on beside the retry
    (the rescue had closed the run, so the restart did not count it among its own)."""
    nodes.join("a", "b")
    slow = nodes.add(
        "--name", "slow", "--max-attempts", "2", "--retry-delay", "1s", "--command", "sleep 60"
    )

    def started() -> list[tuple[Any, ...]]:
        return nodes.query(
            "SELECT node, pid FROM runs WHERE task_id = %s AND pid IS NOT NULL ORDER BY id",
            (slow,),
        )

    wait_for(lambda: bool(started()), 30)
    [(runner, pid)] = started()
    other = "b" if runner == "a" else "a"
    nodes.processes[runner].kill()  # SIGKILL mid-run: its command goes on
    nodes.processes[runner].wait(timeout=10)
    try:
        # Rescued by the leader, and the retry (attempt 2) runs on the other node.
        wait_for(lambda: len(started()) == 2, 30)
        assert started()[1][0] == other
        assert _alive(pid)  # the first attempt's command still runs on this machine
        nodes.start(runner)
        wait_for(lambda: not _alive(pid), 15)
        log = nodes.log(runner)
        assert "stopping what run" in log and f"pid {pid}" in log, log
        assert nodes.state(slow) == "running"  # the retry on the other node goes on
    finally:
        if _alive(pid):
            os.killpg(pid, signal.SIGKILL)
