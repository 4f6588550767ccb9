"""``--on-wake`` on add, and ``taskgui edit ID --on-wake/--notify``: stored in the task's
rules, shown, exported; bad values refused with a clear error; ``default`` clears."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cli import add, run, show
from tests.helpers.cli import Run

__all__ = ["run"]  # the fixture


def test_a_policy_given_on_add_is_shown_and_exported(run: Run, tmp_path: Path) -> None:
    task_id = add(run, "--on-wake", "spread:20m", "--every", "1h")
    assert show(run, task_id)["on_wake"] == "spread:20m"
    assert show(run, add(run, name="plain"))["on_wake"] is None
    assert "on wake:" in run("show", str(task_id)).out
    target = tmp_path / "tasks.json"
    assert run("export", str(target)).code == 0
    tasks = {task["name"]: task for task in json.loads(target.read_text())["tasks"]}
    assert tasks["plain"].get("on_wake") is None and "on_wake" not in tasks["plain"]
    assert [t["on_wake"] for t in tasks.values() if "on_wake" in t] == ["spread:20m"]


def test_edit_changes_the_notification_rule_and_the_policy_and_default_clears(run: Run) -> None:
    task_id = add(run)
    result = run("edit", str(task_id), "--notify", "after:3", "--on-wake", "ask")
    assert result.code == 0, result.err
    shown = show(run, task_id)
    assert (shown["notify"], shown["on_wake"]) == ("after:3", "ask")
    assert run("edit", str(task_id), "--on-wake", "default").code == 0
    shown = show(run, task_id)
    assert (shown["notify"], shown["on_wake"]) == ("after:3", None)
    assert run("edit", str(task_id), "--notify", "DEFAULT").code == 0
    assert show(run, task_id)["notify"] is None


@pytest.mark.parametrize(
    ("args", "code", "phrase"),
    [
        (["--on-wake", "spread:5d"], 2, "at most 1d"),
        (["--on-wake", "whenever"], 2, "not one of now, ask, spread"),
        (["--on-wake", "spread:" + "9" * 400], 2, "--on-wake"),
        (["--notify", "after:0"], 2, "--notify"),
        ([], 2, "say what to change"),
    ],
)
def test_bad_edits_get_a_clear_error(run: Run, args: list[str], code: int, phrase: str) -> None:
    task_id = add(run)
    result = run("edit", str(task_id), *args)
    assert result.code == code
    assert phrase in result.err
    assert len(result.err) < 400


def test_editing_a_missing_task_says_so(run: Run) -> None:
    add(run)
    result = run("edit", "99", "--notify", "never")
    assert result.code == 1 and "99" in result.err


def test_the_daemon_s_flag_is_checked_before_it_starts(run: Run) -> None:
    result = run("daemon", "--on-wake", "spread:0s")
    assert result.code == 2 and "more than 0" in result.err
