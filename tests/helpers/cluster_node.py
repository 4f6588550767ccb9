"""A node of a test cluster, run as a process: ``python -m tests.helpers.cluster_node``.

It runs the real membership loop (``taskgui.runtime.cluster.node``) and the real cluster
SQL; its "schedule" is the simplest one that shows single-fire: every task of the schema
has occurrence ``k`` due at ``start + k * period``. When it leads it dispatches every due
occurrence it believes is not yet dispatched: that belief is kept in memory and only
refreshed when it takes the lead, so a leader that was paused wakes up believing stale
things and must be stopped by the fence and the run key, not by luck. Rescued runs are
dispatched again as the next attempt. Every node claims runs and "runs" each by
appending ``task occurrence attempt node`` to the log file.

A node wakes when the database notifies a change (new runs to claim), and each batch it
claims takes WORK_MS to "run", so that work spreads over the nodes as real runs would.

Arguments: DSN SCHEMA NODE LOG PERIOD_MS LEASE_MS OCCURRENCES [WORK_MS [DEAD_MS]];
DEAD_MS is how long a node may be silent before its runs are rescued (default: the
lease).
"""

from __future__ import annotations

import logging
import os
import select
import signal
import sys
import threading
import time
from datetime import timedelta

from taskgui.core.clock import SystemClock
from taskgui.core.states import RunOutcome, SlotKind
from taskgui.runtime.cluster.node import NodeLoop, NodeTimes
from taskgui.store import codec
from taskgui.store.postgres.cluster import Cluster, Dispatch, Lease, RescuedRun
from taskgui.store.postgres.feed import NotifyFeed
from taskgui.store.postgres.session import Session

DISPATCH_CHUNK = 500  # runs a dispatch commits at once


def node_application_name(name: str, schema: str) -> str:
    return f"taskgui node {name} {schema}"[:63]  # PostgreSQL keeps 63 bytes


def main(argv: list[str]) -> int:
    dsn, schema, name, log_path, period_ms, lease_ms, occurrences, *rest = argv
    work_s = int(rest[0]) / 1000 if rest else 0.0
    dead_after = timedelta(milliseconds=int(rest[1])) if len(rest) > 1 else None
    period_us = int(period_ms) * 1000
    claim_budget = int(lease_ms) / 4000  # seconds of claiming a step: beats stay in time
    total = int(occurrences)
    logging.basicConfig(level=logging.INFO, format=f"{name} %(message)s", stream=sys.stderr)
    # Named with its schema: two test runs on one server (two worktrees, CI beside a
    # developer) then cannot mistake each other's node connections for their own.
    session = Session(dsn, schema, application_name=node_application_name(name, schema))
    cluster = Cluster(session, name)
    clock = SystemClock()
    tasks = [int(row[0]) for row in session.query("SELECT id FROM tasks ORDER BY id")]
    start_us = int(session.query("SELECT value FROM counters WHERE name = 'start_us'")[0][0])
    believed: dict[int, int] = {}  # task -> next occurrence to dispatch, as this node thinks
    retries: list[Dispatch] = []
    epoch_seen = [0]

    def rescued(lease: Lease, runs: list[RescuedRun]) -> None:
        rows = session.query(
            "SELECT task_id, scheduled_at, attempt FROM runs WHERE id = ANY(%s)",
            ([run.run_id for run in runs],),
        )
        for task_id, scheduled_at, attempt in rows:
            retries.append(
                Dispatch(
                    task_id=task_id,
                    kind=SlotKind.RETRY,
                    scheduled_at=codec.from_us(scheduled_at),
                    attempt=attempt + 1,
                )
            )

    def work(lease: Lease | None) -> None:
        now = clock.now()
        if lease is not None:
            if lease.epoch != epoch_seen[0]:  # took the lead: learn what was dispatched
                epoch_seen[0] = lease.epoch
                for task_id, done in session.query(
                    "SELECT task_id, count(DISTINCT scheduled_at) FROM runs GROUP BY task_id"
                ):
                    believed[task_id] = int(done)
            due_k = int(min(total, (codec.to_us(now) - start_us) // period_us + 1))
            # Earliest occurrences first, in commits of DISPATCH_CHUNK for at most the
            # budget: one commit of every due run (30,000 after a slow start) held the
            # lease row for half a minute at a load of 15 and nothing ran meanwhile. Each
            # task's dispatched occurrences stay a prefix, which a new leader's count of
            # them relies on.
            batch = list(retries)
            first = min((believed.get(task_id, 0) for task_id in tasks), default=due_k)
            for k in range(first, due_k):
                scheduled_at = codec.from_us(start_us + k * period_us)
                batch.extend(
                    Dispatch(
                        task_id=task_id,
                        kind=SlotKind.OCCURRENCE,
                        scheduled_at=scheduled_at,
                        attempt=1,
                    )
                    for task_id in tasks
                    if believed.get(task_id, 0) <= k
                )
            dispatching_until = time.monotonic() + claim_budget
            for start in range(0, len(batch), DISPATCH_CHUNK):
                chunk = batch[start : start + DISPATCH_CHUNK]
                if (
                    time.monotonic() > dispatching_until
                    or cluster.dispatch(lease.epoch, chunk, now) is None
                ):
                    break
                for sent in chunk:
                    if sent.kind is SlotKind.RETRY:
                        retries.remove(sent)
                    else:
                        k = (codec.to_us(sent.scheduled_at) - start_us) // period_us
                        believed[sent.task_id] = max(believed.get(sent.task_id, 0), k + 1)
        # Claim for a step's length at most, then let the loop beat: a node that drained
        # a backlog of thousands without a heartbeat (at a load of 7, over 10 s) had its
        # runs rescued, which is right for a silent node but not what a test of
        # exactly-once wants to see.
        claiming_until = time.monotonic() + claim_budget
        while time.monotonic() < claiming_until and (claimed := cluster.claim(32)):
            with open(log_path, "a", encoding="utf-8") as log_file:
                for run in claimed:
                    k = (codec.to_us(run.scheduled_at) - start_us) // period_us
                    log_file.write(f"{run.task_id} {k} {run.attempt} {name}\n")
            if work_s:
                time.sleep(work_s)
            cluster.finish_all([run.run_id for run in claimed], RunOutcome.SUCCEEDED, clock.now())

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    loop = NodeLoop(
        cluster,
        clock,
        version="test",
        workers=8,
        times=NodeTimes(lease=timedelta(milliseconds=int(lease_ms)), dead_after=dead_after),
        on_rescued=rescued,
    )
    print(f"ready {os.getpid()}", flush=True)
    feed = NotifyFeed(dsn, schema, own=lambda: session.backend_pid)

    def wake(timeout: float) -> None:
        descriptor = feed.fileno()
        if descriptor is not None:
            select.select([descriptor], [], [], timeout)
        feed.changed()

    loop.run(stop, work, wake)
    feed.close()
    session.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
