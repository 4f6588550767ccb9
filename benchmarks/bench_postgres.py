"""How the PostgreSQL store does, beside raw psycopg on the same server, in one run.

Rows:

- **durable add**: ``PostgresRepository.add_tasks([spec])`` then ``engine.add``, one
  committed task per call, against raw psycopg: the same INSERT with the same values,
  then COMMIT. Goal: at most 2x raw.
- **durable cancel**: ``engine.cancel`` and ``repository.apply`` of its events, against a
  raw UPDATE of the same row + COMMIT. Goal: at most 2x raw.
- **no-op firings/s, 3 nodes**: three node processes (``tests/helpers/cluster_node``:
  the real lease, fenced dispatch, SKIP LOCKED claims) on one schema, tasks due every
  ``period``; each firing appends a line to a file. Counted from the first to the last
  line. Goal: at least 10x the 85-98 one-off firings/s published for Quartz.NET 4 on
  PostgreSQL.
- **fail-over after SIGKILL of the leader**: seconds from the kill until another node
  holds the lease, over several trials, as a multiple of the lease. Goal: at most 2x.

Operations alternate in chunks between taskgui and the raw baseline, so a busy machine
slows both alike; a row reports the median over chunks of the mean per operation, and
the ratio of the two medians. Lateness (p99 of a single task on 3 nodes) is not
measured: the engine-driven daemon does not run on PostgreSQL yet, and the node harness
steps on its lease interval, which says nothing about taskgui's timers.

**APScheduler 4** (the nearest Python peer for several schedulers sharing a store) runs
in the same run with ``--apscheduler4 PYTHON`` (or $TASKGUI_BENCH_APSCHEDULER4): a
Python that has it, in a throwaway venv, since it is a pre-release and no dependency
of taskgui (``benchmarks/peer_apscheduler4.py`` says how to make one). Its rows: add
and remove of a schedule against a raw INSERT/DELETE + COMMIT of the same row, timed in
turn with it, and
one-off firings per second on three schedulers sharing its SQLAlchemy store (asyncpg,
its PostgreSQL event broker), each firing a line in a file, first to last line.

    python benchmarks/bench_postgres.py           # ~1 minute (~2 with APScheduler 4)
    python benchmarks/bench_postgres.py --smoke   # tiny: checks the script still runs

The server: ``--admin-dsn`` (default $TASKGUI_TEST_POSTGRES, else the local trust-auth
server); the benchmark makes a database of its own and drops it.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import psycopg  # noqa: E402
from psycopg import sql  # noqa: E402

from taskgui.core.engine.engine import Engine  # noqa: E402
from taskgui.core.recurrence import Once  # noqa: E402
from taskgui.core.task import Command, TaskSpec  # noqa: E402
from taskgui.store import codec  # noqa: E402
from taskgui.store.postgres.repository import PostgresRepository  # noqa: E402

NOW = datetime.now(UTC) + timedelta(hours=2)
DEFAULT_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"


@dataclass(frozen=True)
class Profile:
    ops: int
    chunks: int
    firing_tasks: int
    firing_occurrences: int
    period_ms: int
    failover_trials: int
    lease_ms: int
    peer_ops: int  # APScheduler 4's adds and removes (each ~10 ms here)
    peer_firings: int  # its one-off schedules, all due at one moment


PROFILES = {
    # Firings: every occurrence due within a fraction of a second (period 1 ms), so
    # the rate is the nodes' capacity, not the schedule's pace.
    "full": Profile(2000, 10, 50, 100, 1, 7, 1000, 300, 1000),
    "smoke": Profile(40, 2, 5, 5, 1, 1, 600, 5, 10),
}
PEER = ROOT / "benchmarks" / "peer_apscheduler4.py"


def _spec(index: int) -> TaskSpec:
    return TaskSpec(
        name=f"bench {index}",
        command=Command(line="true"),
        recurrence=Once(),
        first_run_at=NOW + timedelta(seconds=index),
    )


# ------------------------------------------------------------- add and cancel


def _alternate(
    chunks: int, per_chunk: int, systems: dict[str, Callable[[int], None]]
) -> dict[str, float]:
    """Median over chunks of µs per operation, each system's chunks interleaved."""
    times: dict[str, list[float]] = {name: [] for name in systems}
    index = 0
    for _ in range(chunks):
        for name, operation in systems.items():
            begun = time.perf_counter()
            for offset in range(per_chunk):
                operation(index + offset)
            times[name].append((time.perf_counter() - begun) / per_chunk * 1e6)
        index += per_chunk
    return {name: statistics.median(values) for name, values in times.items()}


def bench_add_cancel(dsn: str, profile: Profile) -> list[tuple[str, float, float]]:
    schema_taskgui, schema_raw = "bench_taskgui", "bench_raw"
    repository = PostgresRepository(dsn, schema=schema_taskgui)
    PostgresRepository(dsn, schema=schema_raw).close()  # the same tables, for raw SQL
    raw = psycopg.connect(dsn)  # not autocommit: INSERT then COMMIT, as an app would
    raw.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema_raw)))
    raw.commit()
    engine = Engine()
    per_chunk = max(1, profile.ops // profile.chunks)
    specs = [_spec(index) for index in range(per_chunk * profile.chunks)]
    columns = ", ".join((*codec.TASK_COLUMNS, "created_at", "updated_at"))
    placeholders = ", ".join(["%s"] * (len(codec.TASK_COLUMNS) + 2))
    insert = f"INSERT INTO tasks ({columns}) VALUES ({placeholders})"
    now_us = codec.to_us(NOW)
    raw_rows = [
        codec.new_task_row(spec.with_id(index + 1), now_us) for index, spec in enumerate(specs)
    ]
    added: list[int] = []

    def taskgui_add(index: int) -> None:
        [stored] = repository.add_tasks([specs[index]], NOW)
        engine.add(stored)
        added.append(stored.id)

    def raw_add(index: int) -> None:
        raw.execute(insert, raw_rows[index])
        raw.commit()

    adds = _alternate(profile.chunks, per_chunk, {"taskgui": taskgui_add, "raw": raw_add})
    update = (
        "UPDATE tasks SET state = 'cancelled', next_run_at = NULL, slot_kind = NULL, "
        "scheduled_at = NULL, updated_at = %s WHERE id = %s"
    )

    def taskgui_cancel(index: int) -> None:
        repository.apply(engine.cancel(added[index]), NOW)

    def raw_cancel(index: int) -> None:
        raw.execute(update, (now_us, index + 1))
        raw.commit()

    cancels = _alternate(profile.chunks, per_chunk, {"taskgui": taskgui_cancel, "raw": raw_cancel})
    raw.close()
    repository.close()
    return [
        ("durable add, 1 per commit", adds["taskgui"], adds["raw"]),
        ("durable cancel, 1 per commit", cancels["taskgui"], cancels["raw"]),
    ]


# --------------------------------------------------------------- three nodes


def _node(
    dsn: str,
    schema: str,
    name: str,
    *,
    log: Path,
    profile: Profile,
    lease_ms: int,
    total: int,
) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.helpers.cluster_node",
            dsn,
            schema,
            name,
            str(log),
            str(profile.period_ms),
            str(lease_ms),
            str(total),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    ready = process.stdout.readline()
    process.stdout.close()
    if not ready.startswith("ready"):
        raise RuntimeError(f"node {name} did not start")
    return process


def _schema_with_tasks(dsn: str, schema: str, tasks: int, delay_ms: int) -> None:
    repository = PostgresRepository(dsn, schema=schema)
    repository.add_tasks([_spec(index) for index in range(tasks)], NOW)
    repository.close()
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        connection.execute(
            "INSERT INTO counters VALUES ('start_us', "
            "(1e6 * EXTRACT(EPOCH FROM clock_timestamp()))::bigint + %s)",
            (delay_ms * 1000,),
        )


def _stop(processes: list[subprocess.Popen[str]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def bench_firings(dsn: str, profile: Profile, folder: Path) -> tuple[float, int, int]:
    """(firings per second, firings, of them more than once) on three nodes."""
    schema = "bench_firings"
    total = profile.firing_occurrences
    _schema_with_tasks(dsn, schema, profile.firing_tasks, delay_ms=1500)
    log = folder / "firings.log"
    log.touch()
    processes = [
        _node(dsn, schema, name, log=log, profile=profile, lease_ms=1000, total=total)
        for name in "abc"
    ]
    expected = profile.firing_tasks * total
    deadline = time.monotonic() + 120
    try:
        while len(log.read_text().splitlines()) < expected and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        _stop(processes)
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        [(first, last)] = connection.execute(
            "SELECT min(finished_at), max(finished_at) FROM runs WHERE outcome = 'succeeded'"
        ).fetchall()
    lines = log.read_text().splitlines()
    keys = [tuple(line.split()[:2]) for line in lines]
    duplicates = len(keys) - len(set(keys))
    seconds = max((last - first) / 1e6, 1e-6)
    return len(lines) / seconds, len(lines), duplicates


def bench_failover(dsn: str, profile: Profile, folder: Path) -> list[float]:
    schema = "bench_failover"
    _schema_with_tasks(dsn, schema, 3, delay_ms=0)
    log = folder / "failover.log"
    log.touch()
    lease = profile.lease_ms
    names = iter(f"n{index}" for index in range(1000))
    nodes = {
        name: _node(dsn, schema, name, log=log, profile=profile, lease_ms=lease, total=10**6)
        for name in ("a", "b", "c")
    }
    watch = psycopg.connect(dsn, autocommit=True)
    watch.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))

    def leader() -> tuple[str | None, int]:
        [(node, epoch)] = watch.execute(
            "SELECT CASE WHEN expires_at > clock_timestamp() THEN node END, epoch FROM leadership"
        ).fetchall()
        return node, int(epoch)

    failovers: list[float] = []
    try:
        for _ in range(profile.failover_trials):
            while (current := leader())[0] is None:
                time.sleep(0.01)
            name, epoch = current
            assert name is not None
            os.kill(nodes[name].pid, signal.SIGKILL)
            nodes.pop(name).wait(timeout=10)
            killed = time.monotonic()
            while True:
                node, now_epoch = leader()
                if node is not None and now_epoch > epoch:
                    break
                time.sleep(0.005)
            failovers.append(time.monotonic() - killed)
            new = next(names)
            nodes[new] = _node(
                dsn, schema, new, log=log, profile=profile, lease_ms=lease, total=10**6
            )
    finally:
        watch.close()
        _stop(list(nodes.values()))
    return [seconds / (lease / 1000) for seconds in failovers]


# ------------------------------------------------------------ APScheduler 4


@dataclass(frozen=True)
class PeerFigures:
    add_us: float
    raw_add_us: float
    remove_us: float
    raw_remove_us: float
    firings_per_s: float
    firings: int
    twice: int


def bench_apscheduler4(python: str, admin_dsn: str, profile: Profile, folder: Path) -> PeerFigures:
    """APScheduler 4 on a database of its own (its tables in ``public``)."""

    def peer(*args: str, **popen: object) -> subprocess.Popen[str]:
        return subprocess.Popen(  # type: ignore[call-overload, no-any-return]
            [python, str(PEER), *args], cwd=PEER.parent, text=True, **popen
        )

    name, dsn = _database(admin_dsn)
    try:
        timing = peer(
            "add-cancel", dsn, str(profile.peer_ops), str(profile.chunks),
            stdout=subprocess.PIPE,
        )  # fmt: skip
        out, _ = timing.communicate(timeout=600)
        if timing.returncode != 0:
            raise RuntimeError("APScheduler 4 add/remove failed")
        add_us, raw_add_us, remove_us, raw_remove_us = (float(v) for v in out.split())
        # Seeded far ahead, then all made due at one moment on the server's clock,
        # so the seeding's own pace (~10 ms a schedule) is not in the rate.
        seeding = peer("seed", dsn, str(profile.peer_firings), str(time.time() + 3600))
        if seeding.wait(timeout=600) != 0:
            raise RuntimeError("APScheduler 4 seeding failed")
        with psycopg.connect(dsn, autocommit=True) as connection:
            connection.execute(
                "UPDATE schedules SET next_fire_time = clock_timestamp() + interval '3 s'"
            )
        log = folder / "apscheduler4.log"
        log.touch()
        nodes: list[subprocess.Popen[str]] = []
        try:
            for node in "abc":
                process = peer(
                    "node", dsn, str(log), node, stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )  # fmt: skip
                assert process.stdout is not None
                if not process.stdout.readline().startswith("ready"):
                    raise RuntimeError(f"APScheduler 4 scheduler {node} did not start")
                process.stdout.close()
                nodes.append(process)
            deadline = time.monotonic() + 120
            while (
                len(log.read_text().splitlines()) < profile.peer_firings
                and time.monotonic() < deadline
            ):
                time.sleep(0.05)
        finally:
            _stop(nodes)
        lines = [line.split() for line in log.read_text().splitlines()]
        moments = sorted(float(line[2]) for line in lines)
        keys = [line[0] for line in lines]
        span = max(moments[-1] - moments[0], 1e-6) if moments else 1e-6
        return PeerFigures(add_us, raw_add_us, remove_us, raw_remove_us, len(lines) / span,
                           len(lines),
                           len(keys) - len(set(keys)))  # fmt: skip
    finally:
        _drop(admin_dsn, name)


# --------------------------------------------------------------------- main


def _database(admin_dsn: str) -> tuple[str, str]:
    name = f"taskgui_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return name, urlunsplit(urlsplit(admin_dsn)._replace(path=f"/{name}"))


def _drop(admin_dsn: str, name: str) -> None:
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        admin.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="a tiny run, to test the script")
    parser.add_argument(
        "--admin-dsn",
        default=os.environ.get("TASKGUI_TEST_POSTGRES", DEFAULT_ADMIN),
        help="a server where this role may CREATE DATABASE",
    )
    parser.add_argument(
        "--apscheduler4",
        metavar="PYTHON",
        default=os.environ.get("TASKGUI_BENCH_APSCHEDULER4"),
        help="a Python with APScheduler 4 installed: measure it in the same run",
    )
    args = parser.parse_args(argv)
    mode = "smoke" if args.smoke else "full"
    profile = PROFILES[mode]
    name, dsn = _database(args.admin_dsn)
    server = "?"
    try:
        with psycopg.connect(dsn) as connection:
            server = str(connection.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]
        with tempfile.TemporaryDirectory() as folder:
            rows = bench_add_cancel(dsn, profile)
            rate, firings, duplicates = bench_firings(dsn, profile, Path(folder))
            failover = bench_failover(dsn, profile, Path(folder))
            peer = (
                bench_apscheduler4(args.apscheduler4, args.admin_dsn, profile, Path(folder))
                if args.apscheduler4
                else None
            )
    finally:
        _drop(args.admin_dsn, name)
    missed = 0
    print(
        f"taskgui PostgreSQL benchmark ({mode}); PostgreSQL {server}, psycopg {psycopg.__version__}"
    )
    print(f"database {name} (dropped)")
    print(
        f"{'operation':<32} {'taskgui µs':>11} {'raw psycopg µs':>15} {'ratio':>7}  goal   verdict"
    )
    for label, ours, raw in rows:
        ratio = ours / raw
        ok = ratio <= 2.0
        missed += not ok
        verdict = "met" if ok else "MISSED"
        print(f"{label:<32} {ours:>11.0f} {raw:>15.0f} {ratio:>6.2f}x  ≤2x    {verdict}")
    goal_rate = 10 * 98
    ok = rate >= goal_rate
    missed += not ok
    print(
        f"{'no-op firings/s, 3 nodes':<32} {rate:>11.0f} {'':>15} {'':>7}  ≥{goal_rate}  "
        f"{'met' if ok else 'MISSED'}  ({firings} firings, {duplicates} twice)"
    )
    worst = max(failover)
    ok = worst <= 2.0
    missed += not ok
    print(
        f"{'fail-over after SIGKILL, x lease':<32} {statistics.median(failover):>11.2f} "
        f"{'':>15} {'':>7}  ≤2x    {'met' if ok else 'MISSED'}  "
        f"(median of {len(failover)}, worst {worst:.2f}x, lease {profile.lease_ms} ms)"
    )
    print("lateness p99, single task: not measured (the engine does not run on PostgreSQL yet)")
    if peer is None:
        print("APScheduler 4: not measured (no --apscheduler4 PYTHON)")
    else:
        # Its raw baseline is its own row (a copy of its schedules table), timed in
        # turn with it: the same run's commit cost, whatever the disk does meanwhile.
        print(
            f"{'APScheduler 4 add a schedule':<32} {peer.add_us:>11.0f} {peer.raw_add_us:>15.0f} "
            f"{peer.add_us / peer.raw_add_us:>6.2f}x  (taskgui {rows[0][1] / rows[0][2]:.2f}x)"
        )
        print(
            f"{'APScheduler 4 remove a schedule':<32} {peer.remove_us:>11.0f} "
            f"{peer.raw_remove_us:>15.0f} {peer.remove_us / peer.raw_remove_us:>6.2f}x  "
            f"(taskgui {rows[1][1] / rows[1][2]:.2f}x)"
        )
        ahead = rate / max(peer.firings_per_s, 1e-9)
        ok = ahead > 1.0
        missed += not ok
        print(
            f"{'APScheduler 4 firings/s, 3 nodes':<32} {peer.firings_per_s:>11.0f} "
            f"{'':>15} {'':>7}  taskgui ahead: {ahead:.1f}x  {'met' if ok else 'MISSED'}  "
            f"({peer.firings} firings, {peer.twice} twice)"
        )
    print("all goals met" if not missed else f"{missed} goal(s) missed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
