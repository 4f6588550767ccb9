"""The command line as scripts see it: flags, JSON, exit codes, one-line errors.

Validation cases call ``cli.main`` in-process (fast, with a FakeClock); what depends on
the real program (the entry point, processes holding the scheduler lock, local time
zones) runs ``python -m taskgui`` in a subprocess.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from taskgui.cli import main as cli
from taskgui.cli import output as cli_format
from taskgui.control.recovery import recover
from taskgui.core.clock import Clock, FakeClock, SystemClock
from taskgui.core.engine.engine import Engine
from taskgui.core.events import RunDispatched
from taskgui.core.retry import MAX_ATTEMPTS_LIMIT, RetryPolicy
from taskgui.core.states import RunOutcome
from taskgui.core.status import RunResult
from taskgui.store.sqlite.lock import SchedulerLock, is_locked
from taskgui.store.sqlite.repository import SqliteRepository
from taskgui.system.local_zone import local_zone_name
from tests.helpers.cli import Result, Run
from tests.helpers.factories import T0, make_spec
from tests.helpers.processes import fresh_python, request_server

ROOT = Path(__file__).resolve().parents[2]
ISO_MS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$")
ERROR_LINE = re.compile(r"^taskgui: error: \S.*\n$")


@pytest.fixture
def run(db: Path, capsys: pytest.CaptureFixture[str]) -> Run:
    """``cli.main`` in-process against the test database, at T0 unless told otherwise."""

    def invoke(*args: str, clock: Clock | None = None) -> Result:
        code = cli.main(["--db", str(db), *args], clock=clock or FakeClock(T0))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return invoke


def program(
    db: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    """The real program, the way a script runs it."""
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    environ.pop("TASKGUI_DB", None)
    return subprocess.run(
        [sys.executable, "-m", "taskgui", "--db", str(db), *args],
        capture_output=True,
        text=True,
        env=environ,
        cwd=db.parent,
        timeout=timeout,
        check=False,
    )


def add(run: Run, *args: str, name: str = "job") -> int:
    result = run("add", "--name", name, "--command", "true", *args)
    assert result.code == 0, result.err
    assert re.fullmatch(r"\d+\n", result.out)
    return int(result.out)


def show(run: Run, task_id: int) -> dict[str, Any]:
    result = run("show", str(task_id), "--json")
    assert result.code == 0, result.err
    data: dict[str, Any] = result.json()
    return data


# ------------------------------------------------------------------------------ add


def test_add_prints_only_the_id_and_applies_defaults(run: Run) -> None:
    assert add(run) == 1
    assert add(run, name="second") == 2
    task = show(run, 1)
    assert task["state"] == "pending"
    assert task["first_run_at"] == task["next_run_at"] == "2026-01-01T12:00:00.000+00:00"
    assert task["recurrence"] == {"kind": "once"}
    assert task["schedule"] == "once"
    assert task["retry"] == {
        "backoff": "exponential",
        "max_attempts": 3,
        "delay_seconds": 10.0,
        "max_delay_seconds": 3600.0,
        "factor": 2.0,
        "jitter": False,
    }
    assert (task["attempts"], task["max_attempts"]) == (0, 3)
    assert task["overlap"] == "skip"
    assert task["misfire"] == "run_once"
    assert task["shell"] is True
    assert task["paused"] is False
    assert task["timeout_seconds"] is None
    assert task["cwd"] is None
    assert task["env"] == {}
    assert task["concurrency_key"] is None


def test_add_with_every_flag_is_reflected_by_show_json(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # --cwd is relative to where the command is typed
    task_id = add(
        run,
        "--at", "2026-03-01T09:30:00+01:00",
        "--every", "1h30m", "--fixed-delay",
        "--priority", "7",
        "--max-attempts", "5", "--retry-delay", "30s", "--retry-max-delay", "10m",
        "--backoff", "fixed", "--jitter",
        "--timeout", "2m",
        "--key", "backups",
        "--overlap", "queue",
        "--misfire", "skip",
        "--cwd", "work",
        "--env", "A=1", "B=x=y", "--env", "C=",
        "--no-shell",
        "--paused",
    )  # fmt: skip
    task = show(run, task_id)
    assert task["first_run_at"] == "2026-03-01T08:30:00.000+00:00"
    assert task["recurrence"] == {
        "kind": "every",
        "interval_seconds": 5400.0,
        "mode": "fixed_delay",
    }
    assert task["schedule"] == "every 1 hour 30 minutes after the previous run finishes"
    assert task["priority"] == 7
    assert task["retry"] == {
        "backoff": "fixed",
        "max_attempts": 5,
        "delay_seconds": 30.0,
        "max_delay_seconds": 600.0,
        "factor": 2.0,
        "jitter": True,
    }
    assert task["max_attempts"] == 5
    assert task["timeout_seconds"] == 120.0
    assert task["concurrency_key"] == "backups"
    assert task["overlap"] == "queue"
    assert task["misfire"] == "skip"
    assert task["cwd"] == str(tmp_path / "work")
    assert task["env"] == {"A": "1", "B": "x=y", "C": ""}
    assert task["shell"] is False
    assert task["paused"] is True
    assert task["state"] == "paused"
    assert task["command"] == "true"


def test_cron_starts_at_its_first_match_in_the_given_zone(run: Run) -> None:
    # T0 + 1h is Thursday 14:00 in Berlin; the first weekday 09:00 after it is Friday.
    task_id = add(run, "--cron", "0 9 * * 1-5", "--tz", "Europe/Berlin", "--in", "1h")
    task = show(run, task_id)
    assert task["recurrence"] == {"kind": "cron", "expr": "0 9 * * 1-5", "tz": "Europe/Berlin"}
    assert task["first_run_at"] == "2026-01-02T08:00:00.000+00:00"
    assert "Europe/Berlin" in task["schedule"]


def test_cron_start_that_matches_is_the_first_run(run: Run) -> None:
    task_id = add(run, "--cron", "0 9 * * *", "--tz", "UTC", "--at", "2026-02-01T09:00Z")
    assert show(run, task_id)["first_run_at"] == "2026-02-01T09:00:00.000+00:00"


def test_in_adds_to_the_clock(run: Run) -> None:
    task_id = add(run, "--in", "2d")
    assert show(run, task_id)["next_run_at"] == "2026-01-03T12:00:00.000+00:00"


def test_naive_at_is_local_time(run: Run) -> None:
    task_id = add(run, "--at", "2026-07-01T09:30")
    expected = datetime(2026, 7, 1, 9, 30).astimezone().astimezone(UTC)
    assert show(run, task_id)["first_run_at"] == cli_format.iso(expected)


def test_a_past_one_off_time_is_accepted_with_a_note(run: Run) -> None:
    result = run("add", "--name", "late", "--command", "true", "--at", "2025-12-31T00:00Z")
    assert result.code == 0
    assert "passed" in result.err


@pytest.mark.parametrize(
    ("flags", "backoff", "attempts"),
    [
        (["--max-attempts", "1"], "none", 1),
        (["--max-attempts", "4"], "exponential", 4),
        (["--backoff", "none"], "none", 1),
        (["--backoff", "fixed"], "fixed", 3),
    ],
)
def test_retry_flags_combine(run: Run, flags: list[str], backoff: str, attempts: int) -> None:
    retry = show(run, add(run, *flags))["retry"]
    assert (retry["backoff"], retry["max_attempts"]) == (backoff, attempts)


def test_a_long_first_retry_delay_raises_the_default_cap(run: Run) -> None:
    retry = show(run, add(run, "--retry-delay", "2h"))["retry"]
    assert retry["delay_seconds"] == retry["max_delay_seconds"] == 7200.0


BAD_ADDS = {
    "bad duration": ["--in", "5x"],
    "garbage --at": ["--at", "next tuesday"],
    "every and cron": ["--every", "5m", "--cron", "* * * * *"],
    "at and in": ["--at", "2026-01-01T00:00", "--in", "5m"],
    "bad cron": ["--cron", "61 * * * *"],
    "cron fields": ["--cron", "* * *"],
    "bad tz": ["--cron", "* * * * *", "--tz", "Mars/Olympus"],
    "priority abc": ["--priority", "abc"],
    "priority range": ["--priority", "99999999"],
    "max attempts 0": ["--max-attempts", "0"],
    "unknown backoff": ["--backoff", "linear"],
    "none with attempts": ["--backoff", "none", "--max-attempts", "3"],
    "env without =": ["--env", "FOO"],
    "bad env name": ["--env", "1X=2"],
    "fixed delay alone": ["--fixed-delay"],
    "tz alone": ["--tz", "UTC"],
    "zero timeout": ["--timeout", "0s"],
    "short interval": ["--every", "100ms"],
    "unknown overlap": ["--overlap", "sometimes"],
    "unknown flag": ["--frobnicate"],
    "cap below delay": ["--retry-delay", "1m", "--retry-max-delay", "30s"],
}


@pytest.mark.parametrize("flags", BAD_ADDS.values(), ids=BAD_ADDS.keys())
def test_bad_add_input_is_a_one_line_usage_error(run: Run, flags: list[str]) -> None:
    result = run("add", "--name", "x", "--command", "true", *flags)
    assert result.code == 2
    assert ERROR_LINE.match(result.err), result.err
    assert "Traceback" not in result.err
    assert result.out == ""


BAD_USAGE = {
    "missing --name": ["add", "--command", "true"],
    "missing --command": ["add", "--name", "x"],
    "empty name": ["add", "--name", " ", "--command", "true"],
    "id not a number": ["show", "abc"],
    "id zero": ["cancel", "0"],
    "unknown state": ["list", "--state", "sleeping"],
    "unknown command": ["frobnicate"],
    "no command": [],
    "bad limit": ["history", "1", "--limit", "-3"],
    "bad workers": ["daemon", "--workers", "0"],
}


@pytest.mark.parametrize("argv", BAD_USAGE.values(), ids=BAD_USAGE.keys())
def test_bad_usage_exits_2_with_one_error_line(run: Run, argv: list[str]) -> None:
    result = run(*argv)
    assert result.code == 2
    assert ERROR_LINE.match(result.err), result.err


def test_error_messages_say_what_to_write(run: Run) -> None:
    assert "1h30m" in run("add", "--name", "x", "--command", "y", "--every", "often").err
    assert "NAME=VALUE" in run("add", "--name", "x", "--command", "y", "--env", "FOO").err
    assert "--name" in run("add", "--command", "y").err


def test_nothing_is_stored_after_a_rejected_add(run: Run) -> None:
    run("add", "--name", "x", "--command", "true", "--cron", "bogus")
    assert run("list", "--json").json() == []


# ------------------------------------------------------------------------ reading


def test_list_json_shape_and_time_format(run: Run) -> None:
    add(run, "--every", "5m", name="a")
    add(run, "--paused", name="b")
    tasks = run("list", "--json").json()
    assert [task["id"] for task in tasks] == [1, 2]
    required = {
        "id", "name", "state", "priority", "next_run_at", "attempts", "max_attempts",
        "schedule", "command", "paused", "last_outcome", "last_run_at",
        "concurrency_key", "waiting",
    }  # fmt: skip
    for task in tasks:
        assert required <= task.keys()
        assert ISO_MS.match(task["next_run_at"])
    assert tasks[0]["schedule"] == "every 5 minutes"
    paused = run("list", "--state", "paused", "--json").json()
    assert [task["name"] for task in paused] == ["b"]
    assert run("list", "--state", "running", "--json").json() == []


def test_list_table_is_aligned(run: Run) -> None:
    add(run, name="short")
    add(run, "--max-attempts", "5", "--priority", "10", name="a much longer name")
    lines = run("list").out.splitlines()
    assert lines[0].split() == [
        "ID", "NAME", "STATE", "WAITING", "PRI", "NEXT", "RUN", "SCHEDULE", "ATTEMPTS"
    ]  # fmt: skip
    assert len(lines) == 3
    names = ["NAME", "short", "a much"]
    starts = {line.index(word) for line, word in zip(lines, names, strict=True)}
    assert len(starts) == 1
    assert lines[2].endswith("  -")  # no attempt yet: nothing to count (the window: "—")
    assert lines[1].endswith("  -")
    assert run("list", "--state", "cancelled").out == "no cancelled tasks\n"


def test_show_prints_key_value_lines(run: Run) -> None:
    add(run, "--every", "1h", name="hourly")
    out = run("show", "1").out
    assert "name:" in out and "hourly" in out
    assert re.search(r"^schedule: +every hour$", out, re.MULTILINE)
    assert re.search(r"^attempts: +-$", out, re.MULTILINE)  # none used yet (the window: "—")


@pytest.mark.parametrize(
    "argv",
    [
        ["show", "7"],
        ["show", "7", "--json"],
        ["history", "7"],
        *([command, "7"] for command in ("cancel", "pause", "resume", "run-now", "retry")),
        ["delete", "7"],
    ],
)
def test_unknown_id_exits_1(run: Run, argv: list[str]) -> None:
    add(run)
    result = run(*argv)
    assert result.code == 1
    assert result.err == "taskgui: error: no task with id 7\n"


# ------------------------------------------------- changes with no scheduler running


def test_changes_without_a_scheduler(run: Run, db: Path) -> None:
    task_id = add(run, "--every", "10m")
    assert run("pause", str(task_id)).out == f"task {task_id} paused\n"
    assert show(run, task_id)["state"] == "paused"
    assert run("resume", str(task_id)).code == 0
    assert show(run, task_id)["state"] == "pending"
    assert run("cancel", str(task_id)).code == 0
    assert show(run, task_id)["state"] == "cancelled"
    # Already cancelled: nothing to do, said so (it said "task N cancelled" again).
    assert run("cancel", str(task_id)) == Result(0, f"task {task_id} is already cancelled\n", "")
    assert not is_locked(db)  # the CLI let go of the lock


def test_pause_and_resume_say_truthfully_when_nothing_changes(run: Run) -> None:
    task_id = add(run, "--every", "10m")
    assert run("resume", str(task_id)) == Result(
        0, f"task {task_id} is not paused; nothing to resume\n", ""
    )
    assert run("pause", str(task_id)).out == f"task {task_id} paused\n"
    assert run("pause", str(task_id)) == Result(0, f"task {task_id} is already paused\n", "")
    assert show(run, task_id)["state"] == "paused"
    assert run("resume", str(task_id)).out == f"task {task_id} resumed\n"
    assert show(run, task_id)["state"] == "pending"


def test_max_attempts_goes_up_to_the_limit_the_window_offers(run: Run) -> None:
    task_id = add(run, "--max-attempts", str(MAX_ATTEMPTS_LIMIT))
    assert show(run, task_id)["max_attempts"] == MAX_ATTEMPTS_LIMIT
    refused = run("add", "--name", "x", "--command", "true", "--max-attempts", "1001")
    assert refused.code == 2 and f"from 1 to {MAX_ATTEMPTS_LIMIT:,}" in refused.err


def test_waiting_says_what_a_task_waits_for_without_a_scheduler(run: Run) -> None:
    due = add(run, name="due")  # due now, and nobody runs the schedule
    later = add(run, "--in", "1h", name="later")
    paused = add(run, "--paused", name="paused")
    listed = {task["name"]: task["waiting"] for task in run("list", "--json").json()}
    assert listed == {"due": "no_scheduler", "later": None, "paused": "paused"}
    assert show(run, due)["waiting"] == "no_scheduler"
    assert show(run, later)["waiting"] is None
    assert show(run, paused)["waiting"] == "paused"
    table = run("list").out.splitlines()
    assert "no scheduler" in table[1] and "paused" in table[3]
    assert "(waiting: no scheduler)" in run("show", str(due)).out


def test_pausing_a_cancelled_task_fails_with_exit_1(run: Run) -> None:
    task_id = add(run)
    run("cancel", str(task_id))
    result = run("pause", str(task_id))
    assert result.code == 1
    assert ERROR_LINE.match(result.err)
    assert "cancelled" in result.err


def test_resuming_a_cancelled_task_fails_with_exit_1_as_pausing_it_does(run: Run) -> None:
    task_id = add(run, "--every", "10m")
    run("cancel", str(task_id))
    for command in ("pause", "resume"):
        result = run(command, str(task_id))
        assert result.code == 1, command
        assert ERROR_LINE.match(result.err)
        assert f"was cancelled; there is nothing to {command}" in result.err
        assert result.out == ""


def test_pause_and_resume_that_change_nothing_say_so_and_succeed(run: Run) -> None:
    task_id = add(run, "--every", "10m")
    assert run("resume", str(task_id)) == Result(
        0, f"task {task_id} is not paused; nothing to resume\n", ""
    )
    run("pause", str(task_id))
    assert run("pause", str(task_id)) == Result(0, f"task {task_id} is already paused\n", "")
    assert show(run, task_id)["state"] == "paused"


def test_run_now_queues_a_manual_run(run: Run) -> None:
    task_id = add(run, "--in", "1d")
    later = FakeClock(T0 + timedelta(minutes=5))
    result = run("run-now", str(task_id), clock=later)
    assert result.code == 0
    assert "no scheduler is running" in result.err
    task = show(run, task_id)
    assert task["next_run_kind"] == "manual"
    assert task["next_run_at"] == "2026-01-01T12:05:00.000+00:00"


def test_retry_of_a_healthy_task_fails_clearly(run: Run) -> None:
    task_id = add(run)
    result = run("retry", str(task_id))
    assert result.code == 1
    assert result.err == (
        "taskgui: error: task 'job' has not failed; use 'run now' to run it anyway\n"
    )


def test_delete_removes_the_task(run: Run) -> None:
    task_id = add(run)
    assert run("delete", str(task_id)).out == f"task {task_id} deleted\n"
    assert run("show", str(task_id)).code == 1
    assert run("list", "--json").json() == []


# ------------------------------------------------------------------------- history


def run_once(
    db: Path, at: datetime, outcome: RunOutcome, exit_code: int, output: str = "boom\n"
) -> None:
    """One run through store + engine, the way a scheduler records it."""
    repository = SqliteRepository(db)
    engine = Engine()
    recover(repository, engine, at)
    events = engine.due(at, 1)
    repository.apply(events, at)
    (ticket,) = [event.run for event in events if isinstance(event, RunDispatched)]
    finished = at + timedelta(seconds=2)
    result = RunResult(exit_code=exit_code, error=f"exit status {exit_code}", output=output)
    repository.apply(
        engine.finished(ticket.run_id, outcome, finished), finished, {ticket.run_id: result}
    )
    repository.close()


def test_history_after_runs(run: Run, db: Path) -> None:
    task_id = add(run, "--retry-delay", "10s", "--backoff", "fixed")
    assert run("history", str(task_id)).out == f"task {task_id} has not run yet\n"
    run_once(db, T0, RunOutcome.FAILED, 3)
    run_once(db, T0 + timedelta(seconds=12), RunOutcome.FAILED, 4)

    runs = run("history", str(task_id), "--json").json()
    assert [entry["attempt"] for entry in runs] == [2, 1]  # newest first
    first = runs[1]
    # The retry was due 10 s after the failure at 00:02: it is shown as scheduled then.
    assert runs[0]["scheduled_at"] == "2026-01-01T12:00:12.000+00:00"
    assert first["scheduled_at"] == "2026-01-01T12:00:00.000+00:00"
    assert first["started_at"] == "2026-01-01T12:00:00.000+00:00"
    assert first["finished_at"] == "2026-01-01T12:00:02.000+00:00"
    assert (first["outcome"], first["exit_code"]) == ("failed", 3)
    assert (first["output"], first["error"]) == ("boom\n", "exit status 3")
    assert [entry["missed"] for entry in runs] == [0, 0]  # runs, not missed records
    for entry in runs:
        for field in ("scheduled_at", "started_at", "finished_at"):
            assert ISO_MS.match(entry[field])

    assert len(run("history", str(task_id), "--json", "--limit", "1").json()) == 1
    lines = run("history", str(task_id)).out.splitlines()
    assert lines[0].split()[:3] == ["RUN", "ATTEMPT", "KIND"]
    assert lines[1].split()[1] == "2"
    assert "exit status 4" in lines[1]

    task = show(run, task_id)
    assert (task["state"], task["attempts"], task["last_outcome"]) == ("retrying", 2, "failed")


def test_list_state_takes_the_windows_groups_too(run: Run, db: Path) -> None:
    """``--state failed`` and ``done``, as the window's filters say them (a trial: the
    command line refused them, knowing only ``exhausted`` and ``succeeded``)."""
    failing = add(run, "--max-attempts", "1", "--priority", "10", name="gives up")
    working = add(run, name="works")
    waiting = add(run, "--every", "1h", name="recurring")
    run_once(db, T0, RunOutcome.FAILED, 1)  # the most urgent first: it gives up
    run_once(db, T0 + timedelta(seconds=5), RunOutcome.SUCCEEDED, 0)  # then "works"

    def listed(word: str) -> list[int]:
        return [task["id"] for task in run("list", "--state", word, "--json").json()]

    assert listed("failed") == listed("exhausted") == [failing]
    assert listed("done") == listed("succeeded") == [working]
    assert waiting in listed("pending") and failing not in listed("pending")
    assert run("list", "--state", "failed").out.splitlines()[1].split()[:2] == [
        str(failing),
        "gives",
    ]
    assert run("list", "--state", "missed").out == "no missed tasks\n"
    assert "failed" in run("list", "--help").out


def test_history_output_prints_each_runs_output_safely(run: Run, db: Path) -> None:
    """Text history showed no output at all (a trial): ``--output`` prints it under the
    table, each line indented and with its escapes shown, not obeyed."""
    task_id = add(run, "--retry-delay", "10s", "--backoff", "fixed")
    run_once(
        db,
        T0,
        RunOutcome.FAILED,
        3,
        output="first\r\n\x1b[2Jcleared?\n--- run 99 ---\n10%\r50%\x0c\u2028end",
    )
    run_once(db, T0 + timedelta(seconds=12), RunOutcome.FAILED, 4, output="")

    out = run("history", str(task_id), "--output").out
    table, _, outputs = out.partition("\n\n")
    assert table.splitlines()[0].split()[:2] == ["RUN", "ATTEMPT"]
    assert "\x1b" not in out
    blocks = outputs.split("\n\n")
    assert blocks[0].splitlines()[0].startswith("--- run 2, attempt 2, failed, started ")
    assert blocks[0].splitlines()[1:] == ["  (printed nothing)"]
    assert blocks[1].rstrip("\n").split("\n")[1:] == [
        "  first",
        "  \\x1b[2Jcleared?",
        "  --- run 99 ---",
        "  10%\\r50%\\x0c\\u2028end",  # shown, not line breaks (a review)
    ]
    assert "--- run" not in run("history", str(task_id)).out  # only when asked


def test_history_json_counts_the_occurrences_a_missed_record_stands_for(run: Run, db: Path) -> None:
    task_id = add(run, "--every", "1m", "--misfire", "skip", "--grace", "10s")
    # The scheduler finds it 5.5 minutes late (the machine slept): six are skipped
    # (00:05 is 30 s late, past its 10 s grace).
    late = T0 + timedelta(seconds=330)
    repository = SqliteRepository(db)
    engine = Engine()
    recover(repository, engine, late)
    repository.apply(engine.due(late, 1), late)
    repository.close()

    [missed] = run("history", str(task_id), "--json").json()

    assert (missed["outcome"], missed["missed"], missed["attempt"]) == ("missed", 6, 0)
    assert missed["error"].startswith("skipped 6 occurrences")


def test_retry_brings_a_failing_task_forward(run: Run, db: Path) -> None:
    task_id = add(run, "--retry-delay", "1h")
    run_once(db, T0, RunOutcome.FAILED, 1)
    now = FakeClock(T0 + timedelta(minutes=1))
    assert run("retry", str(task_id), clock=now).code == 0
    task = show(run, task_id)
    assert task["next_run_kind"] == "retry"
    assert task["next_run_at"] == "2026-01-01T12:01:00.000+00:00"


# ------------------------------------------------------- changes via the scheduler


@pytest.fixture
def scheduler(db: Path) -> Iterator[subprocess.Popen[str]]:
    """A separate process holding the scheduler lock and answering requests."""
    with request_server(db) as child:
        yield child


def test_requests_reach_the_running_scheduler(
    run: Run, db: Path, scheduler: subprocess.Popen[str]
) -> None:
    assert is_locked(db)
    added = program(db, "add", "--name", "while running", "--command", "true", "--in", "1h")
    assert added.returncode == 0, added.stderr
    task_id = int(added.stdout)

    paused = program(db, "pause", str(task_id))  # the scheduler must know the new task
    assert (paused.returncode, paused.stdout, paused.stderr) == (0, f"task {task_id} paused\n", "")
    cancelled = program(db, "cancel", str(task_id))
    assert cancelled.returncode == 0, cancelled.stderr
    assert show(run, task_id)["state"] == "cancelled"

    rerun = program(db, "run-now", str(task_id))  # a cancelled one-off may run again
    assert rerun.returncode == 0, rerun.stderr
    assert "no scheduler is running" not in rerun.stderr
    healthy = int(program(db, "add", "--name", "fine", "--command", "true").stdout)
    failed = program(db, "retry", str(healthy))
    assert failed.returncode == 1
    assert failed.stderr == (
        "taskgui: error: task 'fine' has not failed; use 'run now' to run it anyway\n"
    )
    assert program(db, "retry", "99").stderr == "taskgui: error: no task with id 99\n"
    assert scheduler.poll() is None  # still holding the lock: nothing took it over


def test_a_scheduler_that_does_not_answer_times_out(
    run: Run, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task_id = add(run)
    monkeypatch.setattr(cli, "REQUEST_TIMEOUT_SECONDS", 0.2)
    with SchedulerLock(db):  # held, but nobody reads the requests
        result = run("cancel", str(task_id), clock=SystemClock())
    assert result.code == 1
    assert ERROR_LINE.match(result.err)
    assert f"process {os.getpid()}" in result.err
    assert "did not answer" in result.err
    assert show(run, task_id)["state"] == "pending"


# --------------------------------------------------------------- damaged databases


def test_corrupt_database_is_reported_and_left_alone(db: Path) -> None:
    garbage = b"this is not a database\n" * 200
    db.write_bytes(garbage)
    result = program(db, "list")
    assert result.returncode == 1
    assert ERROR_LINE.match(result.stderr), result.stderr
    assert str(db) in result.stderr
    assert "--reset-corrupt" in result.stderr
    assert db.read_bytes() == garbage

    reset = program(db, "--reset-corrupt", "add", "--name", "fresh", "--command", "true")
    assert reset.returncode == 0, reset.stderr
    assert reset.stdout == "1\n"
    assert "moved it to" in reset.stderr
    (moved,) = db.parent.glob("t.sqlite3.corrupt-*[!lm]")  # not the -wal / -shm sidecars
    assert moved.read_bytes() == garbage
    assert [task["name"] for task in json.loads(program(db, "list", "--json").stdout)] == ["fresh"]


def test_newer_schema_is_refused(db: Path) -> None:
    SqliteRepository(db).close()
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA user_version = 99")
    connection.close()
    result = program(db, "list")
    assert result.returncode == 1
    assert ERROR_LINE.match(result.stderr)
    assert "newer taskgui" in result.stderr


# -------------------------------------------------------------- never a traceback


def test_unexpected_errors_are_one_line_with_a_hint(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(*_: object) -> list[str]:
        raise RuntimeError("kaboom")

    add(run)
    monkeypatch.setattr(cli_format, "task_table", explode)
    result = run("list")
    assert result.code == 1
    assert ERROR_LINE.match(result.err)
    assert "internal error: RuntimeError: kaboom" in result.err
    assert "report" in result.err


def test_ctrl_c_exits_130_quietly(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupt(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    add(run)  # the database exists: 'list' opens it
    monkeypatch.setattr(cli, "open_sqlite", interrupt)
    result = run("list")
    assert (result.code, result.out, result.err) == (130, "", "")


def test_a_closed_pipe_ends_quietly(db: Path) -> None:
    repository = SqliteRepository(db)
    spec = make_spec(0, retry=RetryPolicy())
    repository.add_tasks([spec] * 3000, T0)  # far more output than a pipe buffers
    repository.close()
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = f"{shlex.quote(sys.executable)} -m taskgui --db {shlex.quote(str(db))} list"
    result = subprocess.run(
        ["sh", "-c", f"{command} | head -n 1"],
        capture_output=True,
        text=True,
        env=environ,
        check=False,
        timeout=30,
    )
    assert result.stdout.split()[:2] == ["ID", "NAME"]
    assert result.stderr == ""


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write a read-only file")
def test_a_read_only_database_is_reported(run: Run, db: Path) -> None:
    add(run)
    db.chmod(0o400)
    result = run("add", "--name", "x", "--command", "true")
    assert result.code == 1
    assert ERROR_LINE.match(result.err)
    assert "read-only" in result.err


# --------------------------------------------------------------------- entry point


@pytest.mark.parametrize(
    "command",
    [
        "add",
        "list",
        "show",
        "history",
        "cancel",
        "pause",
        "resume",
        "run-now",
        "retry",
        "delete",
        "daemon",
    ],
)
def test_every_command_has_help_with_examples(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert "examples:" in out
    assert f"taskgui {command}" in out.split("examples:")[1]


def test_the_misfire_option_says_it_covers_a_pause(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["add", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    misfire = help_text.split("--misfire {run_once,skip,run_all}")[-1].split("--cwd")[0]
    assert "paused" in misfire and "resumed" in misfire and "asleep" in misfire


def test_the_program_runs_commands(db: Path) -> None:
    # Without a command it opens the window: tests/app/test_app.py covers that path.
    assert program(db, "add", "--name", "a", "--command", "true").stdout == "1\n"
    listed = program(db, "list")
    assert listed.returncode == 0 and "ID" in listed.stdout
    version = program(db, "--version")
    assert (version.returncode, version.stdout.split()[0]) == (0, "taskgui")


def test_taskgui_db_is_used_without_db(tmp_path: Path) -> None:
    target = tmp_path / "env.sqlite3"
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "TASKGUI_DB": str(target)}
    result = subprocess.run(
        [sys.executable, "-m", "taskgui", "add", "--name", "a", "--command", "true"],
        capture_output=True,
        text=True,
        env=environ,
        check=False,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    assert target.exists()


def test_commands_other_than_daemon_do_not_load_qt(db: Path) -> None:
    code = (
        "import sys; from taskgui import __main__ as m; "
        f"m.main(['--db', {str(db)!r}, 'list']); "
        "print('qt' if any(n.startswith('PySide6') for n in sys.modules) else 'no qt')"
    )
    result = fresh_python(code)
    assert result.stdout.splitlines()[-1] == "no qt", result.stderr


def test_local_zone_in_a_subprocess_follows_tz(db: Path) -> None:
    env = {"TZ": "America/New_York"}
    added = program(db, "add", "--name", "c", "--command", "true", "--cron", "0 9 * * *", env=env)
    assert added.returncode == 0, added.stderr
    naive = program(
        db, "add", "--name", "n", "--command", "true", "--at", "2026-07-01T09:30", env=env
    )
    assert naive.returncode == 0, naive.stderr
    tasks = json.loads(program(db, "list", "--json").stdout)
    assert tasks[0]["recurrence"]["tz"] == "America/New_York"
    assert tasks[1]["first_run_at"] == "2026-07-01T13:30:00.000+00:00"  # EDT is UTC-4


# ------------------------------------------------------------------ local zone name


def test_local_zone_name_sources(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    link = tmp_path / "localtime"
    link.symlink_to("/usr/share/zoneinfo/Europe/Paris")
    named = tmp_path / "timezone"
    named.write_text("Asia/Tokyo\n")
    assert local_zone_name({"TZ": ":Europe/Rome"}, link, named) == "Europe/Rome"
    assert local_zone_name({"TZ": "not/a zone"}, link, named) == "Europe/Paris"
    assert local_zone_name({}, missing, named) == "Asia/Tokyo"
    assert local_zone_name({}, missing, missing) == "UTC"
    assert local_zone_name({"TZ": "/etc/passwd"}, missing, missing) == "UTC"
