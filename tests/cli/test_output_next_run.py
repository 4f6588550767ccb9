"""``show`` never promises a run that will not happen (outside trial)."""

from __future__ import annotations

from datetime import timedelta

from taskgui.cli.output import task_lines
from taskgui.core.recurrence import stored_cron
from taskgui.core.status import TaskSnapshot, initial_status
from tests.helpers.factories import T0, make_spec


def _next_run(snapshot: TaskSnapshot) -> str:
    [line] = [line for line in task_lines(snapshot, T0) if line.startswith("next run:")]
    return line.split(":", 1)[1].strip()


def test_a_task_whose_schedule_is_refused_shows_no_next_run() -> None:
    refused = stored_cron("R * * * *", "UTC")  # croniter's random minute, refused now
    assert refused.refusal is not None
    spec = make_spec(1, recurrence=refused)
    status = initial_status(make_spec(1))._replace(next_run_at=T0 + timedelta(minutes=37))
    assert _next_run(TaskSnapshot(spec, status)) == "none: its schedule is refused (see schedule)"


def test_an_ordinary_task_shows_its_next_run() -> None:
    spec = make_spec(1)
    status = initial_status(spec)._replace(next_run_at=T0 + timedelta(minutes=37))
    assert "in 37m" in _next_run(TaskSnapshot(spec, status))
