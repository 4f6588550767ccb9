"""``taskgui add --notify RULE``: stored, shown, exported and imported; bad rules refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taskgui.cli import main as cli
from taskgui.core.clock import FakeClock
from tests.cli.test_cli import add, run, show
from tests.helpers.cli import Run
from tests.helpers.factories import T0

__all__ = ["run"]  # the fixture


def test_a_rule_given_on_add_is_shown_in_text_and_json(run: Run) -> None:
    task_id = add(run, "--notify", "after:3")
    assert show(run, task_id)["notify"] == "after:3"
    assert show(run, add(run, name="plain"))["notify"] is None
    text = run("show", str(task_id)).out
    assert "notify:" in text and "after:3" in text


@pytest.mark.parametrize("rule", ["after:0", "sometimes", "after:x\n", "on-failure\0"])
def test_a_bad_rule_is_a_usage_error_naming_the_choices(run: Run, rule: str) -> None:
    result = run("add", "--name", "x", "--command", "true", "--notify", rule)
    assert result.code == 2
    assert "--notify" in result.err
    assert run("list", "--json").json() == []


def test_export_and_import_carry_the_rule(
    run: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add(run, "--notify", "on-recovery", name="watched")
    add(run, name="default")
    target = tmp_path / "tasks.json"
    assert run("export", str(target)).code == 0
    tasks = {task["name"]: task for task in json.loads(target.read_text())["tasks"]}
    assert tasks["watched"]["notify"] == "on-recovery"
    assert "notify" not in tasks["default"]  # a file older taskgui versions still read
    other = tmp_path / "other.sqlite3"
    assert cli.main(["--db", str(other), "import", str(target)], clock=FakeClock(T0)) == 0
    capsys.readouterr()
    assert cli.main(["--db", str(other), "list", "--json"], clock=FakeClock(T0)) == 0
    listed = json.loads(capsys.readouterr().out)
    assert sorted((t["name"], t["notify"]) for t in listed) == [
        ("default", None),
        ("watched", "on-recovery"),
    ]
