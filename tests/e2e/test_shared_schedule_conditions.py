"""Run conditions on a shared schedule, with real daemons: the node that claims a run
judges its conditions on its own machine. Each node reads its power from a fake
UPower on a private bus of its own (its "system bus"), written with jeepney, so one
machine is on battery and the other plugged in, and either can change.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.private_bus import FakeDesktopServices
from tests.helpers.shared_nodes import Nodes, wait_for
from tests.helpers.shared_power import powered


@pytest.fixture
def power(nodes: Nodes) -> Iterator[dict[str, FakeDesktopServices]]:
    """Nodes "a" and "b", each with a UPower of its own: "a" on battery, "b" on AC."""
    with powered(nodes, {"a": True, "b": False}) as fakes:
        yield fakes


def _runs(nodes: Nodes, task_id: int) -> list[tuple[str | None, str | None, int, str | None]]:
    return [
        (row[0], row[1], int(row[2]), row[3])
        for row in nodes.query(
            "SELECT node, outcome, attempt, error FROM runs WHERE task_id = %s ORDER BY id",
            (task_id,),
        )
    ]


def test_a_run_on_ac_power_goes_to_the_plugged_in_node_only(
    nodes: Nodes, power: dict[str, FakeDesktopServices]
) -> None:
    plugged = [
        nodes.add("--name", f"plugged {n}", "--command", "true", "--on-ac-power") for n in range(6)
    ]
    anywhere = [nodes.add("--name", f"any {n}", "--command", "true") for n in range(6)]
    wait_for(lambda: all(nodes.state(t) == "succeeded" for t in plugged + anywhere), 30)
    for task_id in plugged:
        assert _runs(nodes, task_id) == [("b", "succeeded", 1, None)]


def test_a_run_whose_conditions_end_is_stopped_there_and_runs_again_where_they_hold(
    nodes: Nodes, power: dict[str, FakeDesktopServices], tmp_path: Path
) -> None:
    log = tmp_path / "runs.log"
    task_id = nodes.add(
        "--name", "backup", "--on-ac-power", "--stop-if-unmet", "--max-attempts", "1",
        "--command", f'echo "$TASKGUI_ATTEMPT" >> {log}; sleep 60',
    )  # fmt: skip
    wait_for(lambda: log.exists() and len(log.read_text().splitlines()) == 1, 30)
    assert _runs(nodes, task_id) == [("b", None, 1, None)]
    power["a"].command("set upower OnBattery false")  # a is plugged in now
    power["b"].command("set upower OnBattery true")  # and b unplugged: its run stops
    wait_for(lambda: len(log.read_text().splitlines()) == 2, 30)
    first, second = _runs(nodes, task_id)
    assert first == ("b", "stopped", 1, "stopped: on battery")
    assert second == ("a", None, 1, None)  # the same attempt, no attempt spent
    assert nodes.state(task_id) == "running"
    cancelled = nodes.cli("cancel", str(task_id))
    assert cancelled.returncode == 0, cancelled.stderr
    wait_for(lambda: _runs(nodes, task_id)[-1][1] == "cancelled", 30)


def test_a_run_each_machine_fails_another_condition_of_says_none_meets_them_all(
    nodes: Nodes,
) -> None:
    with powered(nodes, {"a": True, "b": False}, services=("upower", "nm")) as fakes:
        fakes["b"].command("set nm Connectivity 1")  # a: on battery, b: offline
        task_id = nodes.add(
            "--name", "both", "--on-ac-power", "--network", "--command", "true"
        )  # fmt: skip
        wait_for(lambda: bool(nodes.query("SELECT 1 FROM runs WHERE task_id = %s", (task_id,))), 30)

        def listed() -> object:
            [task] = json.loads(nodes.cli("list", "--json").stdout)
            return task["waiting"]

        wait_for(lambda: listed() == "conditions_split", 15)  # both have published
        shown = nodes.cli("show", str(task_id)).stdout
        assert "pending (waiting: no machine meets all its conditions)" in shown
        fakes["b"].command("set nm Connectivity 4")  # b online again: it takes the run
        wait_for(lambda: nodes.state(task_id) == "succeeded", 30)
        assert _runs(nodes, task_id) == [("b", "succeeded", 1, None)]
