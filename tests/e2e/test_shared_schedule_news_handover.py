"""A run that ends while the lead changes hands is told once: its log lines and its
webhook, whoever decides it (``store.postgres.news``, the outbox).

Three real daemons with a real webhook receiver on 127.0.0.1; in each trial a task
that fails once (and gives up) runs on a chosen node while the leader is SIGKILLed:

* **on a follower, the leader frozen**: the leader is SIGSTOPped while the run goes
  on elsewhere, the run's end is committed by the follower, then the leader is
  SIGKILLed: it never saw the end, and the next leader must decide and tell it;
* **on the leader itself**, killed a moment after its own claimer committed the end
  (0 to 30 ms later: before it read it, after it decided and committed, or while it
  told it).

Each killed node is started again under its name (a new process: its old outbox
rows are not its own). Afterwards no end is lost: every task has a log line for its
failed attempt, one for its give-up, and a webhook, across the three nodes' logs,
exactly once when the leader never saw the end. A leader killed in the middle of
telling (a channel took the message, its outbox row was not yet deleted) is the one
case told twice, and then the next leader says in its log that it may repeat it: no
design can know whether a process killed after a send got its answer.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import time
from collections import Counter
from pathlib import Path

from tests.helpers.loopback_servers import WebhookServer
from tests.helpers.shared_nodes import Nodes, wait_for

NAMES = ("a", "b", "c")
TRIALS = 10
# After the end's commit, how long the leader lives on before SIGKILL (seconds).
DELAYS = (0.0, 0.003, 0.01, 0.02, 0.03)


def _leader(nodes: Nodes) -> str:
    found: list[str] = []

    def leads() -> bool:
        name = nodes.leader()
        process = nodes.processes.get(name or "")
        if name is None or process is None or process.poll() is not None:
            return False
        found.append(name)
        return True

    wait_for(leads, 30)
    return found[-1]


def _runs(nodes: Nodes, task_id: int) -> bool:
    """Its run has started (its process is recorded)."""
    return _run(nodes, task_id)[1] is not None


def _ended(nodes: Nodes, task_id: int) -> bool:
    return _run(nodes, task_id)[2] is not None


def _run(nodes: Nodes, task_id: int) -> tuple[str | None, int | None, str | None]:
    rows = nodes.query(
        "SELECT node, pid, outcome FROM runs WHERE task_id = %s ORDER BY id DESC LIMIT 1",
        (task_id,),
    )
    return rows[0] if rows else (None, None, None)


def _exhausted(nodes: Nodes, task_id: int) -> bool:
    return nodes.state(task_id) == "exhausted"


def _beating(nodes: Nodes) -> bool:
    """Every node's current process beats (before that a SIGTERM finds no handler)."""
    beats = dict(nodes.query("SELECT name, pid FROM nodes"))
    return all(beats.get(name) == nodes.processes[name].pid for name in NAMES)


def test_a_run_ending_across_a_change_of_leader_is_told_exactly_once(
    nodes: Nodes, tmp_path: Path
) -> None:
    with WebhookServer() as server:
        for name in NAMES:
            nodes.settings(name, f"[notifications]\nwebhook_url={server.url}/hook\n")
        nodes.join(*NAMES)
        tasks: dict[int, tuple[str, str, str]] = {}  # id: (where it ran, name, killed)
        for trial in range(TRIALS):
            leader = _leader(nodes)
            on_follower = trial % 2 == 0
            where = next(n for n in NAMES if n != leader) if on_follower else leader
            gate = tmp_path / f"end-{trial}"  # the run ends when the test makes it
            task = nodes.add(
                "--name", f"handover {trial}", "--max-attempts", "1", "--on-node", where,
                "--command", f"while [ ! -e {gate} ]; do sleep 0.02; done; exit 3",
            )  # fmt: skip
            point = "follower" if on_follower else "leader"
            tasks[task] = (point, f"handover {trial}", leader)
            wait_for(functools.partial(_runs, nodes, task), 30)  # it runs
            process = nodes.processes[leader]
            if on_follower:
                os.kill(process.pid, signal.SIGSTOP)
                gate.touch()
                wait_for(functools.partial(_ended, nodes, task), 30)
            else:
                gate.touch()
                deadline = time.monotonic() + 30
                while not _ended(nodes, task) and time.monotonic() < deadline:
                    time.sleep(0.001)
                time.sleep(DELAYS[(trial // 2) % len(DELAYS)])
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=20)
            nodes.start(leader)  # a new process under its name
            wait_for(functools.partial(_exhausted, nodes, task), 60)
        wait_for(lambda: len(server.items) >= TRIALS, 60)
        wait_for(lambda: _beating(nodes), 60)
        wait_for(lambda: nodes.query("SELECT count(*) FROM news")[0][0] == 0, 60)
        time.sleep(1.0)  # a second telling, if any, would arrive by now
        codes = nodes.stop_all()
        assert codes == dict.fromkeys(NAMES, 0), codes

    logged = "".join(nodes.log(name) for name in NAMES)
    sent = Counter(
        (body["task"]["id"], body["event"])
        for body in (json.loads(posted.body) for posted in server.items)
    )
    told_again = 0
    for task, (point, title, killed) in tasks.items():
        name = repr(title)
        counts = (
            logged.count(f"task {task} {name}: attempt 1 of 1 failed (exit 3)"),
            logged.count(f"task {task} {name} gave up after 1 attempt;"),
            sent[(task, "gave_up")],
        )
        assert min(counts) >= 1, (point, task, counts, logged)  # never lost
        if point == "follower" or max(counts) == 1:
            assert counts == (1, 1, 1), (point, task, counts, logged)
            continue
        # The leader died while it told it (after a channel took it, before its row
        # was deleted): the next leader tells it again, and says it may repeat it.
        assert max(counts) == 2, (point, task, counts, logged)
        assert f"decision(s) {killed} committed and did not say it told" in logged
        told_again += 1
    assert set(sent) == {(task, "gave_up") for task in tasks}, sent
    print(f"{TRIALS} trials: {told_again} told twice (killed while telling)")
