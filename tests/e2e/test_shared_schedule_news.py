"""A shared schedule's daemons tell what a file's daemon tells: a log line for each
failed attempt and for a task that gives up, and the outside notifications (a real
webhook on 127.0.0.1), once per decision whichever node ran the run: the leading
node's engine decides, and only what it committed is told.
"""

from __future__ import annotations

import json
import signal
import time
from datetime import datetime, timedelta
from pathlib import Path

from tests.helpers.loopback_servers import WebhookServer
from tests.helpers.shared_nodes import Nodes, wait_for

NAME = "nightly sync\x1b[31m"  # an escape in the name must not reach the log raw


def _posted(server: WebhookServer) -> list[dict[str, object]]:
    return [json.loads(posted.body) for posted in server.items]


def test_failed_attempts_and_a_give_up_are_logged_and_sent_once(
    nodes: Nodes, tmp_path: Path
) -> None:
    with WebhookServer() as server:
        for name in ("a", "b"):
            nodes.settings(name, f"[notifications]\nwebhook_url={server.url}/hook\n")
        nodes.join("a", "b")
        flaky = nodes.add(
            "--name", NAME, "--command", "echo trying; exit 3", "--max-attempts", "2",
            "--retry-delay", "1s", "--backoff", "fixed",
        )  # fmt: skip
        loud = nodes.add(
            "--name", "loud", "--command", "exit 4", "--max-attempts", "2", "--retry-delay", "1h",
            "--notify", "on-failure",
        )  # fmt: skip
        fine = nodes.add("--name", "fine", "--command", "true", "--notify", "on-failure")
        wait_for(lambda: (nodes.state(flaky), nodes.state(loud)) == ("exhausted", "retrying"), 30)
        wait_for(lambda: nodes.state(fine) == "succeeded", 30)
        server.wait_for(2, timeout=20)
        codes = nodes.stop_all()  # a stop sends what is queued
        assert codes == {"a": 0, "b": 0}, codes

    logged = nodes.log("a") + nodes.log("b")
    name = repr(NAME)
    for attempt in (1, 2):
        line = f"INFO taskgui.daemon: task {flaky} {name}: attempt {attempt} of 2 failed"
        assert logged.count(f"{line} (exit 3): exit status 3\n") == 1, logged
    gave_up = (
        f"WARNING taskgui.daemon: task {flaky} {name} gave up after 2 attempts; "
        "the last failed (exit 3): exit status 3\n"
    )
    assert logged.count(gave_up) == 1, logged
    assert logged.count(f"task {loud} 'loud': attempt 1 of 2 failed (exit 4)") == 1, logged
    assert "\x1b" not in logged
    sent = sorted(_posted(server), key=lambda body: str(body["task"]))
    by_task = {body["task"]["id"]: body for body in sent}  # type: ignore[index]
    assert len(sent) == 2 and set(by_task) == {flaky, loud}, sent  # once each, none for fine
    assert by_task[flaky]["event"] == "gave_up"
    assert by_task[flaky]["run"] == {  # what the node that ran it recorded
        "outcome": "failed",
        "attempt": 2,
        "max_attempts": 2,
        "error": "exit status 3",
        "finished_at": by_task[flaky]["run"]["finished_at"],  # type: ignore[index]
    }
    assert by_task[loud]["event"] == "failed"  # it will be retried


def test_news_held_by_quiet_hours_is_told_by_the_next_leader_if_its_node_stops(
    nodes: Nodes, tmp_path: Path
) -> None:
    now = datetime.now().astimezone()
    quiet = f"{now - timedelta(minutes=2):%H:%M}-{now + timedelta(minutes=30):%H:%M}"
    with WebhookServer() as server:
        # a keeps quiet hours now; b, the next leader, does not.
        hook = f"[notifications]\nwebhook_url={server.url}/hook\n"
        nodes.settings("a", f"{hook}quiet_hours={quiet}\n")
        nodes.settings("b", hook)
        nodes.join("a")
        wait_for(lambda: nodes.leader() == "a", 30)
        nodes.start("b")
        nodes.wait_joined("a", "b")
        failing = nodes.add(
            "--name", "held", "--command", "exit 5", "--max-attempts", "1",
            "--notify", "on-failure",
        )  # fmt: skip
        wait_for(lambda: nodes.state(failing) == "exhausted", 30)
        time.sleep(1)
        assert server.items == []  # a holds it through its quiet hours
        # Its outbox row stays until a sends it: a holds it, it is not told yet.
        assert nodes.query("SELECT count(*) FROM news")[0][0] == 1
        nodes.processes["a"].send_signal(signal.SIGTERM)  # a stops during its quiet hours
        assert nodes.processes["a"].wait(timeout=40) == 0
        server.wait_for(1, timeout=40)  # b leads, and tells what a could not
        time.sleep(1)
    [posted] = _posted(server)
    assert (posted["event"], posted["task"]["id"]) == ("gave_up", failing)  # type: ignore[index]
    assert nodes.query("SELECT count(*) FROM news")[0][0] == 0
