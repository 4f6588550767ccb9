"""The PostgreSQL benchmark still runs: a tiny ``--smoke`` run in a subprocess, against
the test server. It checks the script works and prints its table, never its speed."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import benchmarks
from tests.helpers.postgres import PostgresServer


def test_the_smoke_run_prints_the_table(postgres: PostgresServer) -> None:
    out = benchmarks.run_smoke("bench_postgres.py", "--admin-dsn", postgres.admin_dsn)

    assert out.startswith("taskgui PostgreSQL benchmark (smoke)")
    for row in (
        "durable add, 1 per commit",
        "durable cancel, 1 per commit",
        "no-op firings/s, 3 nodes",
        "fail-over after SIGKILL",
        "lateness p99, single task",
        "APScheduler 4",
    ):
        assert row in out
    assert "0 twice" in out
    assert "goal(s) missed" in out or "all goals met" in out
    # Its own database is dropped (another run on the same server may have one now).
    [name] = [line.split()[2] for line in out.splitlines() if line.startswith("(its database")]
    with postgres.connect() as connection:
        left = connection.execute(
            "SELECT count(*) FROM pg_database WHERE datname = %s", (name,)
        ).fetchone()
    assert name.startswith("taskgui_bench_") and left == (0,)


def test_the_lateness_probe_says_where_each_run_spent_its_time(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    stamps = tmp_path / "probe.txt"
    out = benchmarks.run_smoke(
        "bench_postgres.py", "--admin-dsn", postgres.admin_dsn, "--only-lateness",
        "--probe", str(stamps),
    )  # fmt: skip
    assert "durable add" not in out and "lateness p99, single task" in out
    assert "probe: SQL statements a run, by node:" in out
    for step in ("dispatched", "claimed", "spawned"):
        assert f"  {step} " in out
    steps = {line.split()[2] for line in stamps.read_text(encoding="utf-8").splitlines()}
    assert {"approach", "dispatched", "notified", "claimed", "spawned", "statements"} <= steps
