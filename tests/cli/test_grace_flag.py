"""``--grace``: how late a run may start and still count as on time."""

from __future__ import annotations

from tests.cli.test_cli import add, show
from tests.cli.test_cli import run as run  # noqa: PLC0414  (the fixture, by name)
from tests.helpers.cli import Run


def test_grace_sets_the_misfire_grace_period(run: Run) -> None:
    task_id = add(run, "--every", "1h", "--misfire", "skip", "--grace", "10m")
    assert show(run, task_id)["definition"]["misfire_grace_seconds"] == 600.0
    assert "misfire:         skip (grace 10m)" in run("show", str(task_id)).out


def test_without_it_the_grace_is_a_minute(run: Run) -> None:
    task_id = add(run)
    assert show(run, task_id)["definition"]["misfire_grace_seconds"] == 60.0


def test_a_grace_past_the_bound_is_refused(run: Run) -> None:
    result = run("add", "--name", "x", "--command", "true", "--grace", "999999999d")
    assert result.code == 2 and "at most 100 years" in result.err
