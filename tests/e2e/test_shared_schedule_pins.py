"""Tasks pinned to a node (``add --on-node``) or a node tag (``add --on-tag``, a node's
tags from ``daemon --node-tag``) run only there, whichever node is free; a pinned run
waits for its node without holding up the rest of the schedule."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.shared_nodes import LOG_LINE, Nodes, wait_for


def test_pinned_tasks_run_only_on_their_node_or_tag(nodes: Nodes, tmp_path: Path) -> None:
    line = LOG_LINE.format(log=tmp_path / "runs.log")
    nodes.start("a", 2, "--node-tag", "disk", "--node-tag", "gpu")
    nodes.join("b", "c")
    on_b = [nodes.add("--name", f"b{n}", "--on-node", "b", "--command", line) for n in range(4)]
    on_disk = [
        nodes.add("--name", f"disk{n}", "--on-tag", "disk", "--command", line) for n in range(4)
    ]
    on_away = nodes.add("--name", "away", "--on-node", "nobody", "--command", line)
    free = [nodes.add("--name", f"free{n}", "--command", line) for n in range(4)]
    shown = json.loads(nodes.cli("show", str(on_disk[0]), "--json").stdout)["definition"]
    assert (shown.get("on_tag"), shown.get("on_node")) == ("disk", None)
    # Which node has which tag, in the listing of the nodes and its JSON.
    listed = json.loads(nodes.cli("nodes", "--json").stdout)
    assert {row["name"]: row["tags"] for row in listed} == {"a": ["disk", "gpu"], "b": [], "c": []}
    header, *rows = nodes.cli("nodes").stdout.splitlines()
    assert header.split()[-1] == "tags"
    assert {row.split()[0]: row.split()[-1] for row in rows} == {
        "a": "disk,gpu",
        "b": "-",
        "c": "-",
    }

    def ran() -> bool:
        done = nodes.query(
            "SELECT count(*) FROM tasks WHERE id = ANY(%s) AND state = 'succeeded'",
            ([*on_b, *on_disk, *free],),
        )
        return bool(done[0][0] == len(on_b) + len(on_disk) + len(free))

    wait_for(ran, 30)
    where = dict(nodes.query("SELECT task_id, node FROM runs WHERE outcome IS NOT NULL"))
    assert {where[task] for task in on_b} == {"b"}
    assert {where[task] for task in on_disk} == {"a"}
    # The run for a node that never came waits, unclaimed, and took no one's worker.
    assert nodes.query(
        "SELECT node, outcome, on_node FROM runs WHERE task_id = %s", (on_away,)
    ) == [(None, None, "nobody")]
    assert nodes.state(on_away) == "running"
