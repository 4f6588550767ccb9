"""``taskgui edit`` on a shared (PostgreSQL) schedule, by the CLI as a new user runs it:
every option and every refusal answers as on a file (exit status, words, ``show
--json``), with no node running (the CLI leads for a moment) and while a real node
runs the schedule (its engine performs the change, and the next run follows it).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from tests.helpers.shared_nodes import LOG_LINE, Nodes, wait_for

FAR = "2099-01-01T00:00"
# When a task was added differs between the two schedules (a one-off is due then).
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00")


def _answers(nodes: Nodes, db: str | None, args: list[list[str]]) -> list[tuple[int, str, str]]:
    """Each command's exit status, output and error, the database's name blanked."""
    said = []
    for command in args:
        result = nodes.cli(*command, db=db)
        place = db or nodes.dsn
        out = _TIME.sub("TIME", result.stdout)
        said.append((result.returncode, out, result.stderr.replace(place, "DB")))
    return said


def _three(nodes: Nodes, db: str | None) -> None:
    for added in (
        ["--name", "fetch", "--every", "1h", "--at", FAR],
        ["--name", "build", "--after", "1", "--only-after"],
        ["--name", "upload", "--after", "2", "--only-after"],
    ):
        assert nodes.cli("add", *added, "--command", "true", db=db).returncode == 0


EDITS = [
    ["edit", "1", "--after", "3"],  # a cycle, named
    ["edit", "3", "--after", "1:failed"],
    ["edit", "3", "--no-after"],
    ["edit", "3", "--after", "99"],  # no such upstream
    ["edit", "99", "--notify", "never"],  # no such task
    ["edit", "1"],  # nothing to change
    ["edit", "1", "--notify", "after:3", "--on-wake", "ask"],
    ["edit", "2", "--on-wake", "spread:20m"],
    ["edit", "1", "--on-wake", "default"],
    ["edit", "2", "--notify", "DEFAULT", "--after", "1", "--only-after", "no"],
    ["edit", "1", "--on-wake", "spread:5d"],  # too long
    ["edit", "1", "--notify", "after:0"],
]


def test_every_edit_answers_as_on_a_file(nodes: Nodes, tmp_path: Path) -> None:
    file = str(tmp_path / "tasks.sqlite3")
    _three(nodes, file)
    _three(nodes, None)
    on_file = _answers(nodes, file, EDITS)
    shared = _answers(nodes, None, EDITS)
    assert [code for code, _, _ in shared] == [2, 0, 0, 2, 1, 2, 0, 0, 0, 0, 2, 2]
    assert shared == on_file
    assert "cycle: fetch (1) -> upload (3) -> build (2) -> fetch (1)" in shared[0][2]
    shows = [["show", str(task_id), "--json"] for task_id in (1, 2, 3)]
    assert _answers(nodes, None, shows) == _answers(nodes, file, shows)
    assert nodes.leader() is None  # the CLI led for a moment and gave the lead up
    shown = json.loads(nodes.cli("show", "1", "--json").stdout)
    assert (shown["notify"], shown["on_wake"]) == ("after:3", None)


def test_an_edit_while_a_node_runs_the_schedule_holds_from_the_next_run(
    nodes: Nodes, tmp_path: Path
) -> None:
    log = tmp_path / "runs.log"
    nodes.join("a")
    upstream = nodes.add("--name", "upstream", "--in", "1h", "--command", "true")
    tick = nodes.add("--name", "tick", "--every", "1s", "--command", LOG_LINE.format(log=log))

    def ticks() -> list[str]:
        lines = log.read_text().splitlines() if log.exists() else []
        return [line for line in lines if line.startswith(f"{tick} ")]

    wait_for(lambda: len(ticks()) >= 2, 30)
    edited = nodes.cli("edit", str(tick), "--after", str(upstream), "--only-after", "yes")
    assert edited.returncode == 0, edited.stderr
    assert f"runs after {upstream}:succeeded only" in edited.stdout
    assert nodes.leader() == "a"  # the node's engine made it, nobody else led
    shown = json.loads(nodes.cli("show", str(tick), "--json").stdout)
    assert shown["only_after"] is True and [e["id"] for e in shown["after"]] == [upstream]
    # It no longer runs every second: at most the run already under way ends.
    settled = len(ticks())
    time.sleep(3)  # three of its old periods: the absence of runs is what is tested
    assert len(ticks()) <= settled + 1
    before = len(ticks())
    assert nodes.cli("run-now", str(upstream)).returncode == 0
    wait_for(lambda: len(ticks()) == before + 1, 20)  # once, after its upstream
    notify = nodes.cli("edit", str(tick), "--notify", "on-failure")
    assert notify.returncode == 0, notify.stderr
    assert json.loads(nodes.cli("show", str(tick), "--json").stdout)["notify"] == "on-failure"
    refused = nodes.cli("edit", str(upstream), "--after", str(tick))  # a cycle
    assert refused.returncode == 2 and "cycle" in refused.stderr
