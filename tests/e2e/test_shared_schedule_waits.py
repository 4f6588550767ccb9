"""What a shared schedule's waiting runs show, with real daemons, in the CLI and in the
window: a run that waits for its conditions on every machine reads "pending, waiting:
on battery", as on a file, not "running"; a run dispatched for a node that is away (or
a tag no node has) reads as waiting for that node, not "starting…"; once a machine
takes it, it runs and shows so.
"""

from __future__ import annotations

import json

from pytestqt.qtbot import QtBot

from taskgui.core.states import TaskState
from taskgui.ui.table.columns import Column
from tests.e2e.test_shared_schedule_window import Shown, shown
from tests.helpers.shared_nodes import Nodes, wait_for
from tests.helpers.shared_power import powered

__all__ = ["shown"]


def _dispatched(nodes: Nodes, task_id: int) -> bool:
    rows = nodes.query("SELECT node FROM runs WHERE task_id = %s AND outcome IS NULL", (task_id,))
    return bool(rows) and rows[0][0] is None


def _listed(nodes: Nodes, *args: str) -> dict[int, dict[str, object]]:
    result = nodes.cli("list", "--json", *args)
    assert result.returncode == 0, result.stderr
    return {task["id"]: task for task in json.loads(result.stdout)}


def _next_run(shown: Shown, task_id: int) -> object:
    model = shown.window.model
    row = model.row_of(task_id)
    return None if row is None else model.data(model.index(row, Column.NEXT_RUN))


def test_a_run_waiting_for_its_conditions_everywhere_shows_why(
    nodes: Nodes, shown: Shown, qtbot: QtBot
) -> None:
    with powered(nodes, {"a": True, "b": True}) as power:  # both on battery
        task_id = nodes.add("--name", "needs power", "--on-ac-power", "--command", "true")
        wait_for(lambda: _dispatched(nodes, task_id), 30)
        listed = _listed(nodes)[task_id]
        assert (listed["state"], listed["waiting"]) == ("pending", "ac_power")
        assert task_id in _listed(nodes, "--state", "pending")
        assert task_id not in _listed(nodes, "--state", "running")
        table = nodes.cli("list").stdout
        assert "on battery" in table and "running" not in table
        assert "pending (waiting: on battery)" in nodes.cli("show", str(task_id)).stdout
        qtbot.waitUntil(lambda: _next_run(shown, task_id) == "waiting: on battery", timeout=15_000)
        assert shown.service.task(task_id).state is TaskState.PENDING
        assert shown.service.task(task_id).status.nodes == ()
        power["b"].command("set upower OnBattery false")  # plugged in: b takes it
        wait_for(lambda: nodes.state(task_id) == "succeeded", 30)
        qtbot.waitUntil(
            lambda: shown.service.task(task_id).state is TaskState.SUCCEEDED, timeout=15_000
        )


def test_a_run_for_a_node_that_is_away_says_which_node_it_waits_for(
    nodes: Nodes, shown: Shown, qtbot: QtBot
) -> None:
    nodes.join("a")
    pinned = nodes.add("--name", "on c", "--on-node", "c", "--command", "true")
    tagged = nodes.add("--name", "on disk", "--on-tag", "disk", "--command", "true")
    wait_for(lambda: _dispatched(nodes, pinned) and _dispatched(nodes, tagged), 30)
    listed = _listed(nodes)
    # No node that answers may take either: said so, not as if its nodes were busy.
    assert [(listed[t]["state"], listed[t]["waiting"]) for t in (pinned, tagged)] == [
        ("pending", "no_node"),
        ("pending", "no_node"),
    ]
    table = nodes.cli("list").stdout
    assert "node c, which is not answering" in table and "a node tagged disk;" in table
    shown_pinned = nodes.cli("show", str(pinned)).stdout
    assert "(waiting: node c, which is not answering)" in shown_pinned
    no_tag = "a node tagged disk; no node that answers has that tag"
    assert f"(waiting: {no_tag})" in nodes.cli("show", str(tagged)).stdout
    qtbot.waitUntil(
        lambda: _next_run(shown, pinned) == "waiting for node c, which is not answering",
        timeout=15_000,
    )
    qtbot.waitUntil(lambda: _next_run(shown, tagged) == f"waiting for {no_tag}", timeout=15_000)
    # Its history: one run, waiting, with no start (its row's dispatch time is not one).
    [waiting_run] = json.loads(nodes.cli("history", str(pinned), "--json").stdout)
    assert (waiting_run["outcome"], waiting_run["started_at"], waiting_run["node"]) == (
        None, None, None,
    )  # fmt: skip
    [_, row] = nodes.cli("history", str(pinned)).stdout.splitlines()
    assert " waiting " in row and " running " not in row, row
    nodes.start("c")  # the node it waits for joins, and runs it
    wait_for(lambda: nodes.state(pinned) == "succeeded", 90)  # a start at load 15: 30+ s
    # Run once, by the node that joined: not taken by its first look at its machine and
    # then closed by its start as a leftover of its own ("interrupted", run again).
    [ran] = json.loads(nodes.cli("history", str(pinned), "--json").stdout)
    assert (ran["outcome"], ran["node"], ran["attempt"]) == ("succeeded", "c", 1)
    assert ran["started_at"]
    qtbot.waitUntil(lambda: shown.service.task(pinned).state is TaskState.SUCCEEDED, timeout=15_000)
    assert _next_run(shown, tagged) == f"waiting for {no_tag}"
