"""Crontab lines -> cron tasks: every supported form, and every other line reported.

The sample below holds each supported form, environment lines, comments, ``@reboot``
and garbage; the tests check what each line became and that every line that did not
become a task is named in the report with a reason.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from taskgui.core.errors import InvalidTaskError
from taskgui.core.recurrence import Cron, Every
from taskgui.core.states import MisfirePolicy
from taskgui.core.status import TaskSnapshot, initial_status
from taskgui.core.task import MAX_NAME_LENGTH, TaskSpec
from taskgui.core.transfer.crontab import DERIVED_NAME_LENGTH, parse_crontab
from taskgui.core.transfer.plan import Candidate, ParsedImport, plan_import
from tests.helpers.factories import T0, make_spec

SAMPLE = r"""# Edit this file to introduce tasks to be run by cron.
#
# m h  dom mon dow   command
SHELL=/bin/bash
MAILTO="me@example.com"
PATH = /usr/local/bin:/usr/bin:/bin

# Nightly backup
# of the photos
30 2 * * 1-5 rsync -a ~/photos /mnt/backup
*/15 * * * * date +\%Y-\%m-\%d >> /tmp/stamp.log
@hourly echo hourly
GREETING='hello world'
@daily      echo daily
@midnight   echo midnight
# Weekly report
@weekly /usr/bin/report --weekly
CRON_TZ=Europe/Berlin
@monthly echo monthly
@yearly echo yearly
@annually echo annually
0 9 * jan,feb mon-fri echo names
@reboot /usr/bin/start-agent
0 5 * * * mail -s hi me%body text
this line is garbage
61 * * * * echo bad-minute
0 5 * * *
@fortnightly echo never
TZ=Asia/Tokyo
# 0 3 * * * old-job
0 4 * * * echo daily
0 4 * * * echo daily
"""

EXPECTED = {
    # line: (name, 5-field expression, zone, command)
    10: ("Nightly backup of the photos", "30 2 * * 1-5", "UTC", "rsync -a ~/photos /mnt/backup"),
    11: (
        "date +%Y-%m-%d >> /tmp/stamp.log",
        "*/15 * * * *",
        "UTC",
        "date +%Y-%m-%d >> /tmp/stamp.log",
    ),
    12: ("echo hourly", "0 * * * *", "UTC", "echo hourly"),
    14: ("echo daily", "0 0 * * *", "UTC", "echo daily"),
    15: ("echo midnight", "0 0 * * *", "UTC", "echo midnight"),
    17: ("Weekly report", "0 0 * * 0", "UTC", "/usr/bin/report --weekly"),
    19: ("echo monthly", "0 0 1 * *", "Europe/Berlin", "echo monthly"),
    20: ("echo yearly", "0 0 1 1 *", "Europe/Berlin", "echo yearly"),
    21: ("echo annually", "0 0 1 1 *", "Europe/Berlin", "echo annually"),
    22: ("echo names", "0 9 * jan,feb mon-fri", "Europe/Berlin", "echo names"),
    31: ("echo daily (2)", "0 4 * * *", "Europe/Berlin", "echo daily"),
    32: ("echo daily (3)", "0 4 * * *", "Europe/Berlin", "echo daily"),
}
SKIPPED_LINES = {23, 24, 25, 26, 27, 28}


def parse(text: str = SAMPLE, tz: str = "UTC") -> ParsedImport:
    return parse_crontab(text, now=T0, default_tz=tz)


def by_line(parsed: ParsedImport) -> dict[int, TaskSpec]:
    return {int(item.where.split()[1]): item.spec for item in parsed.candidates}


def reasons(parsed: ParsedImport) -> dict[int, str]:
    return {int(item.where.split()[1]): item.reason for item in parsed.skipped}


def test_every_supported_form_becomes_a_cron_task() -> None:
    tasks = by_line(parse())

    assert set(tasks) == set(EXPECTED)
    for line, (name, expr, zone, command) in EXPECTED.items():
        spec = tasks[line]
        assert (spec.name, spec.command.line) == (name, command), line
        assert spec.recurrence == Cron(expr, zone), line
        assert spec.command.use_shell


def test_cron_tasks_do_not_retry_and_make_up_a_missed_run_once() -> None:
    for spec in by_line(parse()).values():
        assert not spec.retry.retries
        assert spec.misfire is MisfirePolicy.RUN_ONCE
        assert not spec.paused


def test_the_first_run_is_the_first_match_at_or_after_now() -> None:
    tasks = by_line(parse())

    assert tasks[11].first_run_at == T0  # */15 matches 12:00 itself
    assert tasks[12].first_run_at == T0  # @hourly: minute 0
    assert tasks[10].first_run_at == datetime(2026, 1, 2, 2, 30, tzinfo=UTC)  # a Friday
    # @monthly in Berlin: midnight of 1 February local time, 23:00 UTC the day before.
    assert tasks[19].first_run_at == datetime(2026, 1, 31, 23, 0, tzinfo=UTC)
    for spec in tasks.values():
        assert spec.first_run_at >= T0
        assert spec.recurrence.first_at_or_after(T0) == spec.first_run_at


def test_environment_lines_apply_to_the_entries_below_them() -> None:
    tasks = by_line(parse())
    path = "/usr/local/bin:/usr/bin:/bin"

    assert tasks[10].command.env_dict == {"PATH": path}
    assert tasks[12].command.env_dict == {"PATH": path}
    assert tasks[14].command.env_dict == {"PATH": path, "GREETING": "hello world"}  # unquoted
    assert tasks[31].command.env_dict == {
        "PATH": path,
        "GREETING": "hello world",
        "TZ": "Asia/Tokyo",
    }


def test_cron_settings_are_notes_not_environment() -> None:
    parsed = parse()
    tasks = by_line(parsed)

    for spec in tasks.values():
        assert not {"SHELL", "MAILTO", "CRON_TZ"} & set(spec.command.env_dict)
        assert spec.command.shell_path == "/bin/bash"  # SHELL= on line 4 applies below it
    notes = "\n".join(parsed.notes)
    assert "SHELL=/bin/bash (line 4): the commands below it run with /bin/bash" in notes
    assert "MAILTO=me@example.com (line 5) is not applied" in notes
    assert "TZ=Asia/Tokyo (line 29)" in notes
    assert "no retries" in notes and "run_once" in notes
    assert "time zone UTC" in notes


def test_every_line_that_is_not_a_task_is_reported_with_its_reason() -> None:
    parsed = parse()
    skipped = reasons(parsed)

    assert set(skipped) == SKIPPED_LINES
    assert "@reboot" in skipped[23] and "cannot run it" in skipped[23]
    assert "uses %" in skipped[24] and "stdin" in skipped[24]
    assert skipped[25].startswith("not a crontab entry")
    assert skipped[26] == "minute 61 is not in 0-59"
    assert "has no command" in skipped[27]
    assert "unknown cron macro '@fortnightly'" in skipped[28]
    lines = SAMPLE.split("\n")
    for item in parsed.skipped:
        number = int(item.where.split()[1])
        assert item.text == lines[number - 1]  # the report quotes the line itself


def test_every_line_is_a_task_a_skip_or_a_comment_blank_or_setting() -> None:
    parsed = parse()
    accounted = set(by_line(parsed)) | set(reasons(parsed))
    for number, line in enumerate(SAMPLE.split("\n"), start=1):
        body = line.strip()
        if number in accounted:
            continue
        assert not body or body.startswith("#") or "=" in body, (number, line)


def test_the_report_names_each_skipped_line() -> None:
    plan = plan_import(parse(), [], T0)
    text = plan.report.render()

    for number in SKIPPED_LINES:
        assert f"line {number}: {SAMPLE.split(chr(10))[number - 1].strip()}" in text
    assert plan.report.summary() == f"{len(EXPECTED)} tasks to add, {len(SKIPPED_LINES)} skipped"


def test_comment_paragraphs_name_the_entry_below_them() -> None:
    text = """# First line of a comment
# second line
0 1 * * * first

# Detached comment

0 2 * * * second
# ignored: an empty '#' line ends the paragraph
#
0 3 * * * third
# Above a setting
FOO=bar
0 4 * * * fourth
# Good name
# 0 3 * * * commented-out entry
0 5 * * * fifth
# m h dom mon dow command
0 6 * * * sixth
# Used once
0 7 * * * seventh
0 8 * * * eighth
"""
    names = [item.spec.name for item in parse(text).candidates]

    assert names == [
        "First line of a comment second line",
        "second",
        "third",
        "fourth",
        "fifth",
        "sixth",
        "Used once",
        "eighth",
    ]


def test_long_names_are_shortened() -> None:
    command = "/usr/local/bin/a-very-long-program-name --with --many --arguments"
    comment = "x" * (MAX_NAME_LENGTH + 50)
    first, second = parse(f"0 1 * * * {command}\n# {comment}\n0 2 * * * true\n").candidates

    assert len(first.spec.name) == DERIVED_NAME_LENGTH
    assert first.spec.name.endswith("…")
    assert command.startswith(first.spec.name[:-1])
    assert len(second.spec.name) < MAX_NAME_LENGTH


def test_escaped_percent_is_literal_and_unescaped_percent_is_refused() -> None:
    parsed = parse("0 1 * * * printf '100\\%'\n0 2 * * * cat % input\n")

    [task] = parsed.candidates
    assert task.spec.command.line == "printf '100%'"
    [skipped] = parsed.skipped
    assert skipped.where == "line 2" and "%" in skipped.reason


def test_an_unknown_cron_tz_skips_the_entries_below_it_until_a_valid_one() -> None:
    parsed = parse("CRON_TZ=Mars/Olympus\n0 1 * * * a\nCRON_TZ=Asia/Tokyo\n0 2 * * * b\n")

    assert [item.where for item in parsed.skipped] == ["line 1", "line 2"]
    assert "unknown time zone 'Mars/Olympus'" in parsed.skipped[0].reason
    assert "CRON_TZ on line 1" in parsed.skipped[1].reason
    [task] = parsed.candidates
    assert task.spec.recurrence == Cron("0 2 * * *", "Asia/Tokyo")


def test_the_default_zone_is_used_without_cron_tz() -> None:
    [task] = parse("0 9 * * * a\n", tz="America/New_York").candidates

    assert task.spec.recurrence == Cron("0 9 * * *", "America/New_York")
    assert task.spec.first_run_at == datetime(2026, 1, 1, 14, 0, tzinfo=UTC)


def test_an_unknown_default_zone_is_refused() -> None:
    with pytest.raises(InvalidTaskError, match="unknown time zone"):
        parse("0 9 * * * a\n", tz="Nowhere/Atlantis")


def test_windows_line_endings_and_indentation_are_accepted() -> None:
    parsed = parse("  # Indented name\r\n\t0 1 * * *   echo  spaced\r\n@daily\techo tab\n")

    first, second = parsed.candidates
    assert (first.spec.name, first.spec.command.line) == ("Indented name", "echo  spaced")
    assert second.spec.command.line == "echo tab"
    assert second.spec.recurrence == Cron("0 0 * * *", "UTC")


def test_an_empty_crontab_gives_nothing_and_no_notes() -> None:
    parsed = parse("# just a comment\n\n")
    assert parsed == ParsedImport()


def test_existing_names_are_skipped_unless_replaced() -> None:
    existing = TaskSnapshot(
        make_spec(4, name="Weekly report"), initial_status(make_spec(4, name="Weekly report"))
    )
    parsed = parse()

    kept = plan_import(parsed, [existing], T0)
    assert "Weekly report" not in [spec.name for spec in kept.to_add]
    [clash] = [item for item in kept.report.skipped if item.where == "line 17"]
    assert "already exists (task 4); use --replace" in clash.reason

    replaced = plan_import(parsed, [existing], T0, replace_existing=True)
    assert "Weekly report" in [spec.name for spec in replaced.to_add]
    assert replaced.delete_ids == (4,)
    assert len(replaced.to_add) == len(kept.to_add) + 1


def test_plans_say_when_a_task_will_catch_up_at_once() -> None:
    late = make_spec(0, recurrence=Every(timedelta(hours=1)), first_run_at=T0 - timedelta(days=3))
    parsed = ParsedImport(candidates=(Candidate("task 1", late.name, late),))

    assert any("will run once" in note for note in plan_import(parsed, [], T0).report.notes)
    assert not plan_import(parsed, [], T0 - timedelta(days=4)).report.notes
    skipping = replace(late, misfire=MisfirePolicy.SKIP)
    parsed = ParsedImport(candidates=(Candidate("task 1", late.name, skipping),))
    assert not plan_import(parsed, [], T0).report.notes
