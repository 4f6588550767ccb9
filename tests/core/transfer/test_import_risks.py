"""An import file is someone else's commands: the report shows what they run and when.

Besides the command line, a task's environment (``LD_PRELOAD``, ``PATH``,
``BASH_ENV`` …) and its folder decide what runs, and a task whose start has passed
runs the moment it is imported. ``plan_import`` puts all of it in the report; the
report words it once (``cautions``) for the CLI and the dialog.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from taskgui.core.recurrence import Cron, Every
from taskgui.core.states import MisfirePolicy
from taskgui.core.task import Command, TaskSpec
from taskgui.core.transfer.env_risk import is_risky_variable
from taskgui.core.transfer.plan import Candidate, ParsedImport, plan_import, runs_at_once
from taskgui.core.transfer.report import RUNS_AS_YOU, AddedTask
from tests.helpers.factories import T0, make_spec

HOUR = timedelta(hours=1)


def planned(*specs: TaskSpec) -> tuple[AddedTask, ...]:
    parsed = ParsedImport(
        candidates=tuple(Candidate(f"task {n}", s.name, s) for n, s in enumerate(specs, 1))
    )
    return plan_import(parsed, [], T0).report.added


@pytest.mark.parametrize(
    "name",
    ["LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PATH", "BASH_ENV", "ENV", "PYTHONPATH",
     "PERL5OPT", "NODE_OPTIONS", "GIT_SSH_COMMAND", "BASH_FUNC_ls%%", "DYLD_INSERT_LIBRARIES"],
)  # fmt: skip
def test_variables_that_change_what_runs_are_risky(name: str) -> None:
    assert is_risky_variable(name)


@pytest.mark.parametrize("name", ["LANG", "TZ", "GREETING", "BACKUP_DIR", "PATHS", "MY_PATH"])
def test_ordinary_variables_are_not(name: str) -> None:
    assert not is_risky_variable(name)


def test_the_report_carries_each_tasks_folder_environment_and_first_run() -> None:
    task = make_spec(
        0,
        name="backup",
        command=Command(
            line="tar czf b.tgz ~",
            cwd="/srv/data",
            env=(("LD_PRELOAD", "/tmp/x.so"), ("LANG", "C"), ("PATH", "/tmp/bin:/usr/bin")),
        ),
        first_run_at=T0 - HOUR,
    )
    [added] = planned(task)
    assert added.cwd == "/srv/data"
    assert added.env == (("LANG", "C"), ("LD_PRELOAD", "/tmp/x.so"), ("PATH", "/tmp/bin:/usr/bin"))
    assert added.risky_env == ("LD_PRELOAD", "PATH")
    assert added.runs_at_once


def test_which_tasks_run_at_once() -> None:
    grace = timedelta(minutes=5)
    one_off = make_spec(0, first_run_at=T0 - timedelta(minutes=1), misfire_grace=grace)
    assert runs_at_once(one_off, T0)  # late, within the grace: it simply starts
    assert runs_at_once(replace(one_off, first_run_at=T0), T0)  # due this moment
    assert not runs_at_once(replace(one_off, first_run_at=T0 + HOUR), T0)
    assert not runs_at_once(replace(one_off, paused=True), T0)
    long_ago = replace(one_off, first_run_at=T0 - 24 * HOUR)
    assert runs_at_once(long_ago, T0)  # run_once: the missed run runs now
    assert not runs_at_once(replace(long_ago, misfire=MisfirePolicy.SKIP), T0)
    hourly = replace(long_ago, recurrence=Every(HOUR))
    assert runs_at_once(hourly, T0) and runs_at_once(
        replace(hourly, misfire=MisfirePolicy.RUN_ALL), T0
    )
    assert not runs_at_once(replace(hourly, misfire=MisfirePolicy.SKIP), T0)
    # A cron task starts at its first match at or after its start, not at the start.
    cron = replace(one_off, first_run_at=T0 - timedelta(seconds=30), recurrence=Cron("0 3 * * *"))
    assert not runs_at_once(cron, T0)


def test_the_cautions_say_it_in_words() -> None:
    risky = make_spec(
        0, name="sync", command=Command(line="rsync", env=(("BASH_ENV", "/tmp/rc"),)),
        first_run_at=T0 + HOUR,
    )  # fmt: skip
    late = make_spec(0, name="report", first_run_at=T0 - HOUR)
    parsed = ParsedImport(
        candidates=(Candidate("task 1", "sync", risky), Candidate("task 2", "report", late))
    )
    report = plan_import(parsed, [], T0).report
    assert report.cautions() == (
        RUNS_AS_YOU,
        "1 task runs as soon as it is imported, because its start has passed: “report”",
        "1 task sets variables that change which programs, libraries or startup files run: "
        "“sync” sets BASH_ENV",
    )
    assert report.done().cautions()[0].startswith("1 task runs")  # done: no "importing runs"

    text = report.render()
    assert "      env: BASH_ENV=/tmp/rc (!)\n" in text
    assert "      starts: at once (its start has passed)\n" in text
    assert text.endswith("Caution:\n  ! " + "\n  ! ".join(report.cautions()))
    assert "folder:" not in text  # neither sets one: they run in the home folder

    as_json = report.to_json()
    assert as_json["added"][0]["env"] == {"BASH_ENV": "/tmp/rc"}
    assert as_json["added"][0]["risky_env"] == ["BASH_ENV"]
    assert [task["runs_at_once"] for task in as_json["added"]] == [False, True]
    assert as_json["cautions"] == list(report.cautions())


def test_nothing_to_add_needs_no_caution() -> None:
    assert plan_import(ParsedImport(), [], T0).report.cautions() == ()
