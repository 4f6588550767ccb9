"""``pause --for`` / ``--until``: here, and through a running daemon's request queue."""

from __future__ import annotations

from datetime import timedelta

from taskgui.core.clock import FakeClock
from tests.cli.test_cli import add, show
from tests.cli.test_cli import run as run  # noqa: PLC0414  (the fixture, by name)
from tests.helpers.cli import Run
from tests.helpers.factories import T0


def test_pause_for_an_hour_stores_when_it_ends(run: Run) -> None:
    task_id = add(run, "--every", "10m")
    result = run("pause", str(task_id), "--for", "1h")
    assert result.code == 0 and result.out.startswith(f"task {task_id} paused until ")
    task = show(run, task_id)
    assert task["state"] == "paused"
    assert task["definition"]["paused_until"] == (T0 + timedelta(hours=1)).isoformat()
    assert "it resumes by itself" in run("show", str(task_id)).out


def test_pause_until_a_time_and_then_for_good(run: Run) -> None:
    task_id = add(run, "--every", "10m")
    assert run("pause", str(task_id), "--until", "2026-01-01T15:00+00:00").code == 0
    assert show(run, task_id)["definition"]["paused_until"].startswith("2026-01-01T15:00")
    assert run("pause", str(task_id)).out == f"task {task_id} paused\n"  # no end any more
    assert "paused_until" not in show(run, task_id)["definition"]


def test_the_pause_ends_at_the_next_start_after_its_time(run: Run) -> None:
    task_id = add(run, "--every", "10m")
    run("pause", str(task_id), "--for", "1h")
    # A later command that loads the schedule (nobody runs it) finds the pause over.
    run("run-now", str(task_id), clock=FakeClock(T0 + timedelta(hours=2)))
    assert show(run, task_id)["state"] != "paused"


def test_nonsense_is_refused(run: Run) -> None:
    task_id = add(run)
    assert run("pause", str(task_id), "--until", "2020-01-01T00:00+00:00").code == 2
    assert run("pause", str(task_id), "--for", "999999999d").code == 2
    zero = run("pause", str(task_id), "--for", "0s")  # over as it begins: as a past --until
    assert zero.code == 2
    assert "--for must be longer than 0s" in zero.err
    both = run("pause", str(task_id), "--for", "1h", "--until", "2027-01-01T00:00")
    assert both.code == 2
