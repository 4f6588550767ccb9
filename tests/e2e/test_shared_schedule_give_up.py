"""``--give-up-after`` on a shared schedule, with real daemons: a run that waits for
its conditions on every machine is given up by the leader when its time runs out
(recorded as missed, "its run conditions did not hold in time"), as a file's engine
gives it up; one that waits only for a free worker on a machine that meets them is
not; and a recurring task's waiting occurrence gives way to the next one.
"""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

from tests.helpers.shared_nodes import LOG_LINE, Nodes, wait_for
from tests.helpers.shared_power import powered

GAVE_UP = "skipped 1 occurrence (its run conditions did not hold in time)"


def _runs(nodes: Nodes, task_id: int) -> list[tuple[str | None, str | None, str | None]]:
    return [
        (row[0], row[1], row[2])
        for row in nodes.query(
            "SELECT node, outcome, error FROM runs WHERE task_id = %s ORDER BY id", (task_id,)
        )
    ]


def _lines(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_a_run_no_machine_can_take_is_given_up_in_time(nodes: Nodes, tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    line = LOG_LINE.format(log=log)
    with powered(nodes, {"a": True, "b": True}) as power:  # both on battery
        added = time.monotonic()
        limited = nodes.add(
            "--name", "limited", "--on-ac-power", "--give-up-after", "3s", "--command", line
        )
        patient = nodes.add("--name", "patient", "--on-ac-power", "--command", line)
        hourly = nodes.add(
            "--name", "every 4s", "--every", "4s", "--on-ac-power", "--command", "true"
        )
        wait_for(lambda: nodes.state(limited) == "missed", 30)
        assert time.monotonic() - added >= 3  # not before its time
        assert _runs(nodes, limited) == [(None, "missed", GAVE_UP)]
        assert nodes.state(patient) != "missed"  # no limit: a one-off waits for them
        # A recurring task's occurrence waits until the next one is due, then is missed.
        wait_for(lambda: [r[1] for r in _runs(nodes, hourly)][:2] == ["missed", "missed"], 30)
        assert all(r == (None, "missed", GAVE_UP) for r in _runs(nodes, hourly)[:2])
        assert _lines(log) == []
        [record] = json.loads(nodes.cli("history", str(limited), "--json").stdout)
        assert (record["outcome"], record["error"]) == ("missed", GAVE_UP)
        # It never started, as a file's missed record says: no start, no duration.
        assert record["started_at"] is None and record["finished_at"] is not None
        [row] = nodes.cli("history", str(limited)).stdout.splitlines()[1:]
        assert row.split()[5:8] == ["-", "-", "missed"], row  # STARTED, TOOK, OUTCOME
        power["b"].command("set upower OnBattery false")  # plugged in: the patient one runs
        wait_for(lambda: nodes.state(patient) == "succeeded", 30)
        assert _runs(nodes, patient) == [("b", "succeeded", None)]
        assert nodes.state(limited) == "missed" and len(_lines(log)) == 1


def test_a_run_waiting_for_a_worker_where_its_conditions_hold_is_not_given_up(
    nodes: Nodes, tmp_path: Path
) -> None:
    marker = tmp_path / "blocker-ran"
    with powered(nodes, {"a": True, "b": False}, workers={"b": 1}):
        blocker = nodes.add(
            "--name", "blocker", "--on-node", "b", "--command", f"touch {marker}; sleep 6"
        )
        wait_for(marker.exists, 30)  # b's one worker is busy for 6 s
        waiting = nodes.add(
            "--name", "waits for b", "--on-ac-power", "--give-up-after", "1s", "--command", "true"
        )
        wait_for(lambda: nodes.state(waiting) == "succeeded", 40)
        assert _runs(nodes, waiting) == [("b", "succeeded", None)]
        assert nodes.state(blocker) == "succeeded"


def test_a_spread_occurrence_waiting_for_its_conditions_gives_way_to_the_next_one(
    nodes: Nodes,
) -> None:
    with powered(nodes, {"a": True}):  # on battery: every occurrence waits, in vain
        task_id = nodes.add(
            "--name", "spread", "--every", "4s", "--spread", "3s", "--on-ac-power",
            "--command", "true",
        )  # fmt: skip

        def ended() -> list[tuple[int, int, str]]:
            rows = nodes.query(
                "SELECT scheduled_at, finished_at, error FROM runs "
                "WHERE task_id = %s AND outcome IS NOT NULL ORDER BY id",
                (task_id,),
            )
            return [(int(row[0]), int(row[1]), str(row[2])) for row in rows]

        wait_for(lambda: len(ended()) >= 7, 90)
    runs = ended()
    # Each is given up when the next occurrence is due, as on a file, so the next one,
    # started at another random offset, is never skipped as an overlap with it.
    assert [error for _, _, error in runs] == [GAVE_UP] * len(runs)
    for (_, gave_up, _), (next_start, _, _) in itertools.pairwise(runs):
        assert gave_up <= next_start
