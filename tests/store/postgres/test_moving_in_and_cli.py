"""``taskgui --db postgresql://...`` and ``taskgui migrate --to``, on a real server: the
CLI as a new user runs it (a subprocess, empty XDG folders), and a moved schedule that
reads back exactly as the file did."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from taskgui.core.states import RunOutcome, SlotKind
from taskgui.core.status import RunResult
from taskgui.store.errors import StoreError
from taskgui.store.postgres.cluster import Cluster, Dispatch
from taskgui.store.postgres.moving_in import move_in
from taskgui.store.postgres.repository import PostgresRepository
from taskgui.store.postgres.schema import DEFAULT_SCHEMA
from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.factories import T0, at, fixed_retry, make_spec
from tests.helpers.postgres import PostgresServer
from tests.helpers.store import ROOT, Driver, rich_specs


def _taskgui(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    environ = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("TASKGUI_", "XDG_"))},
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CONFIG_HOME": str(home / "config"),
        **(env or {}),
    }
    return subprocess.run(
        [sys.executable, "-m", "taskgui", *args],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def dsn(postgres: PostgresServer) -> Iterator[str]:
    """A fresh database's DSN: the CLI keeps its tables in the schema "taskgui"."""
    from psycopg import sql  # noqa: PLC0415

    name = f"{postgres.database}_{postgres.new_schema()}"
    with postgres.connect() as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield postgres.dsn.rsplit("/", 1)[0] + f"/{name}"
    with postgres.connect() as connection:
        connection.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


def test_the_cli_adds_lists_and_shows_on_a_shared_schedule(tmp_path: Path, dsn: str) -> None:
    added = _taskgui(
        tmp_path, "--db", dsn, "add", "--name", "<b>nightly</b>", "--command", "true", "--in", "1h"
    )
    assert (added.returncode, added.stdout.strip()) == (0, "1"), added.stderr
    listed = _taskgui(tmp_path, "list", "--json", env={"TASKGUI_DB": dsn})
    assert listed.returncode == 0, listed.stderr
    [task] = json.loads(listed.stdout)
    assert (task["id"], task["name"], task["state"]) == (1, "<b>nightly</b>", "pending")
    shown = _taskgui(tmp_path, "--db", dsn, "show", "1")
    assert "<b>nightly</b>" in shown.stdout
    assert not (tmp_path / "home" / "data" / "taskgui").exists()  # no SQLite file made


def test_history_json_names_the_node_of_each_run(tmp_path: Path, dsn: str) -> None:
    repository = PostgresRepository(dsn, listen=False)
    try:
        [spec] = repository.add_tasks([make_spec(0)], T0)
        node = Cluster(repository.session, "backup-box")
        lease = node.lead(timedelta(seconds=30))
        assert lease is not None
        node.dispatch(
            lease.epoch,
            [Dispatch(task_id=spec.id, kind=SlotKind.OCCURRENCE, scheduled_at=T0, attempt=1)],
            T0,
        )
        [claimed] = node.claim(1)
        node.finish(claimed.run_id, RunOutcome.SUCCEEDED, at(1))
    finally:
        repository.close()
    history = _taskgui(tmp_path, "--db", dsn, "history", "1", "--json")
    assert history.returncode == 0, history.stderr
    [entry] = json.loads(history.stdout)
    assert (entry["node"], entry["outcome"]) == ("backup-box", "succeeded")
    nodes = _taskgui(tmp_path, "--db", dsn, "nodes", "--json")
    assert json.loads(nodes.stdout) == []  # none has sent a heartbeat


def test_nodes_lists_every_field(tmp_path: Path, dsn: str) -> None:
    from datetime import UTC, datetime  # noqa: PLC0415

    repository = PostgresRepository(dsn, listen=False)
    try:
        node = Cluster(repository.session, "laptop")
        node.heartbeat(
            host="laptop.lan", pid=4242, version="0.1.0", node_now=datetime.now(UTC), workers=4
        )
        assert node.lead(timedelta(seconds=30)) is not None
    finally:
        repository.close()
    result = _taskgui(tmp_path, "--db", dsn, "nodes", "--json")
    [row] = json.loads(result.stdout)
    assert set(row) == {
        "name",
        "leader",
        "pid",
        "host",
        "last_heartbeat",
        "running",
        "version",
        "clock_offset_ms",
        "clock_off",
        "answering",
        "tags",
    }
    assert row["clock_off"] is False and result.stderr == ""
    assert (row["name"], row["leader"], row["pid"], row["host"], row["running"]) == (
        "laptop",
        True,
        4242,
        "laptop.lan",
        0,
    )
    table = _taskgui(tmp_path, "--db", dsn, "nodes")
    assert "laptop" in table.stdout and "yes" in table.stdout


def test_nodes_warns_of_a_node_whose_clock_is_off_by_more_than_a_second(
    tmp_path: Path, dsn: str
) -> None:
    from datetime import UTC, datetime  # noqa: PLC0415

    repository = PostgresRepository(dsn, listen=False)
    try:
        for name, off in (("right", 0.0), ("skewed", 2.5)):
            Cluster(repository.session, name).heartbeat(
                host="h", pid=1, version="v", workers=1,
                node_now=datetime.now(UTC) + timedelta(seconds=off),
            )  # fmt: skip
    finally:
        repository.close()
    result = _taskgui(tmp_path, "--db", dsn, "nodes", "--json")
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert (rows["right"]["clock_off"], rows["skewed"]["clock_off"]) == (False, True)
    assert 2000 < rows["skewed"]["clock_offset_ms"] < 3000
    assert "node skewed's clock is +2" in result.stderr
    assert "right" not in result.stderr


def test_commands_not_made_for_a_shared_schedule_say_so(tmp_path: Path, dsn: str) -> None:
    # migrate moves a file's schedule in: from a shared one there is nothing to move.
    result = _taskgui(tmp_path, "--db", dsn, "migrate", "--to", dsn)
    assert result.returncode == 2  # the command line is wrong for this database
    assert "not available on a PostgreSQL schedule" in result.stderr
    on_a_file = _taskgui(tmp_path, "--db", str(tmp_path / "f.sqlite3"), "nodes")
    assert on_a_file.returncode == 2 and "give --db postgresql://" in on_a_file.stderr
    to_a_file = _taskgui(tmp_path, "migrate", "--to", str(tmp_path / "x.sqlite3"))
    assert to_a_file.returncode == 2 and "--to needs a PostgreSQL DSN" in to_a_file.stderr
    missing = _taskgui(tmp_path, "--db", dsn, "cancel", "1")  # a change: no such task
    assert missing.returncode == 1 and "1" in missing.stderr


def test_a_password_never_reaches_the_output(tmp_path: Path) -> None:
    result = _taskgui(
        tmp_path, "--db", "postgresql://me:hunter2@127.0.0.1:1/x?connect_timeout=1", "list"
    )
    assert result.returncode == 1
    assert "hunter2" not in result.stderr + result.stdout
    assert "postgresql://me:***@127.0.0.1:1/x" in result.stderr


# ---------------------------------------------------------------- moving in


def test_a_moved_schedule_reads_back_as_the_file_did(tmp_path: Path, dsn: str) -> None:
    source = tmp_path / "old.sqlite3"
    sqlite = SqliteRepository(source, history_limit=5)
    driver = Driver(sqlite)
    later = at(10**6)  # none of these falls due during the test
    ids = [driver.add_one(replace(spec, first_run_at=later)) for spec in rich_specs().values()]
    retrying = driver.add_one(make_spec(0, retry=fixed_retry(3, delay=5), first_run_at=later))
    for second in (0, 10):
        driver.run_once(
            ids[0], at(second), RunOutcome.SUCCEEDED, RunResult(exit_code=0, output="ok\n")
        )
    driver.run_once(
        retrying, at(20), RunOutcome.FAILED, RunResult(exit_code=3, error="exit status 3")
    )
    driver.apply(driver.engine.remove(ids[1]), at(30))  # a gap in the ids
    expected_tasks = sqlite.load(at(40)).tasks
    expected_runs = {task.id: sqlite.runs(task.id) for task in expected_tasks}
    sqlite.close()

    result = _taskgui(tmp_path, "--db", str(source), "migrate", "--to", dsn)
    assert result.returncode == 0, result.stderr
    assert f"moved {len(expected_tasks)} task(s), 3 run(s)" in result.stdout

    moved = PostgresRepository(dsn, schema=DEFAULT_SCHEMA, listen=False)
    try:
        assert moved.load(at(40)).tasks == expected_tasks
        assert {task.id: moved.runs(task.id) for task in expected_tasks} == expected_runs
        [new] = moved.add_tasks([make_spec(0)], at(40))
        assert new.id == max([*ids, retrying]) + 1  # never an id the file used
        with pytest.raises(StoreError, match="already holds"):
            move_in(source, moved)
    finally:
        moved.close()
