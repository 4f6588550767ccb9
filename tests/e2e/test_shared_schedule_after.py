""" "Run after" on a shared (PostgreSQL) schedule, by the CLI as a new user runs it:
``add --after`` refuses a task that does not exist, and ``cancel`` / ``delete`` of a
task others run after ask first (refuse without a terminal, unless ``--force``), in
the same words and exit statuses as on a file, with no node running and while one
leads.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.helpers.cli import on_a_terminal
from tests.helpers.shared_nodes import Nodes

FAR = "2099-01-01T00:00"
# When a task was added differs between the two schedules (a one-off is due then).
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00")

STEPS = [
    ["add", "--name", "fetch", "--every", "1h", "--at", FAR, "--command", "true"],
    ["add", "--name", "lost", "--after", "99", "--command", "true"],  # no such upstream
    ["add", "--name", "two", "--after", "1", "--after", "7:failed", "--command", "true"],
    ["add", "--name", "upload", "--after", "1", "--only-after", "--command", "true"],
    ["add", "--name", "late", "--at", "2001-01-01T00:00", "--after", "1", "--command", "true"],
    ["cancel", "1"],  # upload (2) and late (3) run after it: refused, no terminal
    ["delete", "1"],
    ["delete", "2"],  # nothing runs after upload
    ["cancel", "1", "--force"],
    ["delete", "1"],  # cancelled, but still followed
    ["delete", "1", "--force"],
    ["list", "--json"],
]


def _answers(nodes: Nodes, db: str | None) -> list[tuple[int, str, str]]:
    """Each step's exit status, output and error, the database's name blanked."""
    said = []
    for command in STEPS:
        result = nodes.cli(*command, db=db)
        out = _TIME.sub("TIME", result.stdout)
        said.append((result.returncode, out, result.stderr.replace(db or nodes.dsn, "DB")))
    return said


def test_run_after_answers_as_on_a_file_with_no_node(nodes: Nodes, tmp_path: Path) -> None:
    on_file = _answers(nodes, str(tmp_path / "tasks.sqlite3"))
    shared = _answers(nodes, None)
    assert [code for code, _, _ in shared] == [0, 2, 2, 0, 0, 1, 1, 0, 0, 1, 0, 0]
    assert shared == on_file
    assert "--after names task 99, which does not exist" in shared[1][2]
    assert "--after names task 7, which does not exist" in shared[2][2]
    assert "that time has passed" in shared[4][2]
    refused = "upload (2), late (3) run(s) after fetch (1) and would wait"
    assert refused in shared[5][2] and "give --force to cancel it anyway" in shared[5][2]
    assert "would wait for it for ever; give --force to delete it anyway" in shared[6][2]
    assert [task["name"] for task in json.loads(shared[-1][1])] == ["late"]
    assert nodes.leader() is None  # the CLI led for a moment and gave the lead up


def test_run_after_answers_as_on_a_file_while_a_node_leads(nodes: Nodes) -> None:
    nodes.join("a")
    fetch = nodes.add("--name", "fetch", "--every", "1h", "--at", FAR, "--command", "true")
    lost = nodes.cli("add", "--name", "lost", "--after", "99", "--command", "true")
    assert (lost.returncode, lost.stdout) == (2, "")
    assert "--after names task 99, which does not exist" in lost.stderr
    upload = nodes.add(
        "--name", "upload", "--after", str(fetch), "--only-after", "--command", "true"
    )
    for op in ("cancel", "delete"):
        refused = nodes.cli(op, str(fetch))
        assert refused.returncode == 1, refused.stderr
        assert f"upload ({upload}) run(s) after fetch ({fetch})" in refused.stderr
    assert nodes.state(fetch) == "pending"
    assert nodes.cli("delete", str(fetch), "--force").returncode == 0
    assert nodes.leader() == "a"  # the node's engine performed it
    shown = nodes.cli("show", str(upload))
    assert f"waiting for task {fetch} (deleted)" in shown.stdout
    assert len(nodes.query("SELECT id FROM tasks")) == 1


def test_on_a_terminal_a_delete_asks_and_takes_no_for_an_answer(nodes: Nodes) -> None:
    fetch = nodes.add("--name", "fetch", "--every", "1h", "--at", FAR, "--command", "true")
    upload = nodes.add("--name", "upload", "--after", str(fetch), "--only-after", "--command", "x")
    code, text = on_a_terminal(nodes.dsn, "n", "delete", str(fetch))
    asked = f"upload ({upload}) run(s) after fetch ({fetch}); delete it anyway? [y/N]"
    assert code == 1 and asked in text and "not deleted" in text
    assert nodes.state(fetch) == "pending"
    code, text = on_a_terminal(nodes.dsn, "y", "delete", str(fetch))
    assert code == 0 and f"task {fetch} deleted" in text
    assert nodes.query("SELECT id FROM tasks") == [(upload,)]
