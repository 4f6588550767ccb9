"""Where a shared schedule's lateness goes: ``taskgui daemon`` with time stamps.

``bench_postgres.py --probe FILE`` starts its three lateness daemons through this
script, which wraps the steps a run passes through on its way to its process and
appends one line per step to FILE (wall-clock time, pid, step, task id):

* ``approach``: the leader's deadline timer said the next deadline is near (it
  dispatches ``DISPATCH_AHEAD`` before the run's time);
* ``dispatched``: the leader's fenced dispatch committed;
* ``notified``: a node's LISTEN socket woke it (the dispatch's NOTIFY);
* ``claimed``: a node's claim committed (the run is its own);
* ``woke``: the worker's wait for the run's time ended;
* ``spawned``: the command's process exists (what lateness is measured to);
* ``statements``: at exit, how many SQL statements the process sent (each a round
  trip to the server, where a busy machine makes every wake-up wait for a CPU).

Nothing here is part of taskgui: it patches classes before the daemon builds its
objects, then runs ``taskgui``'s own main.

    python benchmarks/lateness_probe.py FILE -- --db DSN daemon --node NAME
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from taskgui.core.events import RunDispatched  # noqa: E402
from taskgui.runtime import runner  # noqa: E402
from taskgui.runtime.cluster import service  # noqa: E402
from taskgui.store.postgres import cluster, repository  # noqa: E402

_out: list[Any] = []  # the open file, once main has it


def stamp(step: str, task: object = "-") -> None:
    _out[0].write(f"{time.time():.6f} {os.getpid()} {step} {task}\n")


def _count_statements() -> None:
    import atexit  # noqa: PLC0415

    import psycopg  # noqa: PLC0415

    sent = [0]
    execute = psycopg.Cursor.execute

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        sent[0] += 1
        return execute(self, *args, **kwargs)

    psycopg.Cursor.execute = counted  # type: ignore[method-assign]
    atexit.register(lambda: stamp("statements", sent[0]))


def _patch() -> None:
    _count_statements()
    node_service = service.ClusterNodeService
    ahead = os.environ.get("PROBE_DISPATCH_AHEAD")  # seconds: try another dispatch-ahead
    if ahead:
        defaults = node_service.__init__.__kwdefaults__
        assert defaults is not None
        defaults["dispatch_ahead"] = float(ahead)
    approaching = node_service._on_deadline_approaching
    activated = node_service._on_notifier_activated

    def on_approaching(self: Any, *args: Any) -> None:
        stamp("approach")
        approaching(self, *args)

    def on_activated(self: Any, *args: Any) -> None:
        stamp("notified")
        activated(self, *args)

    node_service._on_deadline_approaching = on_approaching  # type: ignore[method-assign]
    node_service._on_notifier_activated = on_activated  # type: ignore[method-assign]

    apply_fenced = repository.PostgresRepository.apply_fenced

    def fenced(self: Any, events: Any, *args: Any, **kwargs: Any) -> Any:
        written = apply_fenced(self, events, *args, **kwargs)
        for event in events:
            if isinstance(event, RunDispatched):
                stamp("dispatched", event.run.task_id)
        return written

    repository.PostgresRepository.apply_fenced = fenced  # type: ignore[method-assign]

    claim = cluster.Cluster.claim

    def claimed(self: Any, *args: Any, **kwargs: Any) -> Any:
        runs = claim(self, *args, **kwargs)
        for run in runs:
            stamp("claimed", run.task_id)
        return runs

    cluster.Cluster.claim = claimed  # type: ignore[method-assign]

    wait_until = runner.CommandRunner._wait_until

    def waited(self: Any, start_at: float) -> None:
        wait_until(self, start_at)
        stamp("woke", self._extra_env.get("TASKGUI_TASK_ID"))

    runner.CommandRunner._wait_until = waited  # type: ignore[method-assign]

    start_process = runner.start_process  # type: ignore[attr-defined]

    def started(command: Any, argv: Any, cwd: Any, env: Any) -> Any:
        process = start_process(command, argv, cwd, env)
        stamp("spawned", env.get("TASKGUI_TASK_ID"))
        return process

    runner.start_process = started  # type: ignore[attr-defined,assignment]


def main() -> int:
    path, separator, *args = sys.argv[1:]
    assert separator == "--", "usage: lateness_probe.py FILE -- TASKGUI ARGS"
    _out.append(open(path, "a", buffering=1, encoding="utf-8"))  # noqa: SIM115 - for its life
    _patch()
    from taskgui.__main__ import main as taskgui_main  # noqa: PLC0415 - after the patches

    return int(taskgui_main(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
