"""The export file format: what it refuses, and that every refusal says where.

An import is all or nothing, so a person fixing a file needs the exact spot: the line
and column of a JSON syntax error, or the task (counted from 1) and the field of an
invalid value. Round trips against a real database are in tests/control/test_transfer.py.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from taskgui.core.recurrence import Cron, Every
from taskgui.core.retry import RetryPolicy
from taskgui.core.states import TaskState
from taskgui.core.status import TaskSnapshot, initial_status
from taskgui.core.task import Command, TaskSpec
from taskgui.core.text_rules import quoted
from taskgui.core.transfer.export_file import (
    FORMAT_NAME,
    FORMAT_VERSION,
    TransferFormatError,
    build_document,
    dump_document,
    parse_document,
)
from tests.helpers.factories import T0, make_spec


def snapshot(spec: TaskSpec, state: TaskState | None = None) -> TaskSnapshot:
    status = initial_status(spec)
    return TaskSnapshot(spec, status if state is None else status._replace(state=state))


def document(*specs: TaskSpec) -> dict[str, Any]:
    return build_document([snapshot(spec) for spec in specs], T0)


def three_tasks() -> dict[str, Any]:
    return document(
        make_spec(1, name="one"),
        make_spec(2, name="two", recurrence=Every(timedelta(minutes=5))),
        make_spec(3, name="backup", recurrence=Cron("0 2 * * *", "Europe/Berlin")),
    )


def refusal(data: Any) -> TransferFormatError:
    text = data if isinstance(data, str) else json.dumps(data)
    with pytest.raises(TransferFormatError) as caught:
        parse_document(text)
    return caught.value


def test_a_document_reads_back_as_the_same_definitions() -> None:
    specs = [make_spec(i, name=f"t{i}") for i in (3, 1, 2)]
    parsed = parse_document(dump_document(document(*specs)))

    assert [item.spec for item in parsed.candidates] == [
        spec.with_id(0) for spec in sorted(specs, key=lambda spec: spec.id)
    ]
    assert [item.where for item in parsed.candidates] == ["task 1", "task 2", "task 3"]


def test_the_header_names_format_version_and_time() -> None:
    data = document(make_spec(1))

    assert data["format"] == FORMAT_NAME
    assert data["version"] == FORMAT_VERSION == 1
    assert data["exported_at"] == "2026-01-01T12:00:00+00:00"
    assert "runs" not in data
    task = data["tasks"][0]
    assert task["first_run_at"] == "2026-01-01T12:00:00+00:00"
    assert task["command"] == {"v": 1, "line": "true", "shell": True, "cwd": None, "env": []}
    assert task["schedule"] == {"v": 1, "kind": "once"}


def test_a_syntax_error_names_its_line_and_column() -> None:
    text = '{\n  "format": "taskgui-export",\n  "version": 1,,\n}'
    message = str(refusal(text))

    assert "not valid JSON: line 3, column 16" in message
    assert "--crontab" not in message


def test_a_crontab_given_as_an_export_gets_a_hint() -> None:
    message = str(refusal("0 2 * * * backup\n"))
    assert "line 1, column" in message and "taskgui import --crontab" in message


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ([], "not a taskgui export"),
        ({"format": "something-else", "version": 1, "tasks": []}, "not a taskgui export"),
        ({"format": FORMAT_NAME, "tasks": []}, "field 'version': expected a whole number"),
        ({"format": FORMAT_NAME, "version": "1", "tasks": []}, "field 'version'"),
        ({"format": FORMAT_NAME, "version": 1}, "field 'tasks': expected a list"),
        ({"format": FORMAT_NAME, "version": 1, "tasks": {}}, "field 'tasks': expected a list"),
    ],
)
def test_a_file_that_is_not_an_export_is_refused(data: Any, expected: str) -> None:
    assert expected in str(refusal(data))


def test_a_file_from_a_newer_version_is_refused_clearly() -> None:
    data = three_tasks()
    data["version"] = 2
    message = str(refusal(data))

    assert "written by a newer taskgui (version 2)" in message
    assert "reads version 1" in message


# (path into the third task, new value or DELETE, the field named, part of the message)
DELETE = object()
FIELD_CASES: list[tuple[tuple[str, ...], Any, str, str]] = [
    (("retry", "max_attempts"), 0, "retry.max_attempts", "between 1 and 1000, not 0"),
    (("retry", "max_attempts"), "3", "retry.max_attempts", "expected a whole number"),
    (("retry", "max_attempts"), True, "retry.max_attempts", "expected a whole number"),
    (("retry", "base"), -1, "retry.base", "longer than zero"),
    (("retry", "factor"), 0.5, "retry.factor", "at least 1"),
    (("retry", "max"), 1, "retry", "maximum retry delay must be at least"),
    (("retry", "backoff"), "linear", "retry.backoff", "expected one of exponential"),
    (("retry", "v"), 2, "retry.v", "written by a newer taskgui (version 2)"),
    (("retry", "tries"), 2, "retry.tries", "unknown field"),
    (("schedule", "kind"), "sometimes", "schedule.kind", "expected one of once, every, cron"),
    (("schedule", "expr"), "61 * * * *", "schedule.expr", "minute 61 is not in 0-59"),
    (("schedule", "expr"), "@reboot", "schedule.expr", "@reboot"),
    (("schedule", "tz"), "Mars/Olympus", "schedule.tz", "unknown time zone"),
    (("schedule", "seconds"), 1, "schedule.seconds", "unknown field"),
    (("command", "line"), " ", "command.line", "the command is empty"),
    (("command", "line"), None, "command.line", "expected text"),
    (("command", "env"), [["1BAD", "x"]], "command.env", "not valid"),
    (("command", "env"), [["ONLY_NAME"]], "command.env[0]", "[name, value] pair"),
    (("command", "shell"), "yes", "command.shell", "expected true or false"),
    (("command",), DELETE, "command", "required"),
    (("command",), "true", "command", "expected a JSON object"),
    (("name",), "   ", "name", "needs a name"),
    (("name",), "x" * 201, "name", "longer than 200"),
    (("name",), "bad \ud800 name", "name", "cannot be saved"),
    (("priority",), 10**9, "priority", "between"),
    (("priority",), 1.5, "priority", "expected a whole number"),
    (("timeout_seconds",), 0, "timeout_seconds", "longer than zero"),
    (("timeout_seconds",), "1m", "timeout_seconds", "a number of seconds or null"),
    (("misfire_grace_seconds",), -1, "misfire_grace_seconds", "cannot be negative"),
    (("misfire_grace_seconds",), 1e300, "misfire_grace_seconds", "out of range"),
    (("first_run_at",), "2026-01-01T12:00:00", "first_run_at", "with an offset"),
    (("first_run_at",), "tomorrow", "first_run_at", "ISO 8601"),
    (("first_run_at",), DELETE, "first_run_at", "required"),
    (("overlap",), "sometimes", "overlap", "expected one of skip, queue, parallel"),
    (("misfire",), "never", "misfire", "expected one of run_once"),
    (("paused",), 0, "paused", "expected true or false"),
    (("state",), "weird", "state", "expected one of pending"),
    (("id",), -1, "id", "whole number from 0"),
    (("retyr",), {}, "retyr", "unknown field"),
]


@pytest.mark.parametrize(("path", "value", "field", "expected"), FIELD_CASES)
def test_an_invalid_task_names_its_position_and_field(
    path: tuple[str, ...], value: Any, field: str, expected: str
) -> None:
    data = three_tasks()
    target = data["tasks"][2]
    for key in path[:-1]:
        target = target[key]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    name = data["tasks"][2]["name"]
    label = f"task 3 ({quoted(name)})" if isinstance(name, str) else "task 3"  # cut short
    error = refusal(data)

    assert len(error.problems) == 1
    assert error.problems[0].startswith(f"{label}: field '{field}': "), error.problems[0]
    assert expected in error.problems[0]
    assert str(error).startswith("nothing was imported: 1 task is not valid: task 3")


def test_a_task_that_is_not_an_object_is_named_by_its_position() -> None:
    data = three_tasks()
    data["tasks"].insert(1, "backup")
    assert refusal(data).problems == ('task 2: expected a JSON object, got "backup"',)


def test_every_invalid_task_is_listed_not_just_the_first() -> None:
    data = three_tasks()
    data["tasks"][0]["priority"] = "high"
    data["tasks"][2]["retry"]["max_attempts"] = 0
    error = refusal(data)

    assert [problem.split(":")[0] for problem in error.problems] == [
        "task 1 ('one')",
        "task 3 ('backup')",
    ]
    assert "2 tasks are not valid" in str(error)


def test_a_long_list_of_problems_is_cut_in_the_message_but_kept_whole() -> None:
    data = document(*[make_spec(i, name=f"t{i}") for i in range(1, 26)])
    for task in data["tasks"]:
        task["priority"] = "high"
    error = refusal(data)

    assert len(error.problems) == 25
    assert "and 15 more" in str(error)


def test_a_hand_written_task_needs_only_a_name_a_command_and_a_time() -> None:
    text = json.dumps(
        {
            "format": FORMAT_NAME,
            "version": 1,
            "tasks": [
                {
                    "name": "hand written",
                    "command": {"line": "echo hi", "env": {"A": "1"}},
                    "first_run_at": "2026-03-01T09:30:00+01:00",
                    "schedule": {"kind": "every", "seconds": 300},
                }
            ],
        }
    )
    [item] = parse_document(text).candidates

    assert item.spec == TaskSpec(
        name="hand written",
        command=Command(line="echo hi", env=(("A", "1"),)),
        first_run_at=datetime(2026, 3, 1, 8, 30, tzinfo=UTC),
        recurrence=Every(timedelta(minutes=5)),
        retry=RetryPolicy(),
    )


@pytest.mark.parametrize(
    "state", [TaskState.SUCCEEDED, TaskState.EXHAUSTED, TaskState.CANCELLED, TaskState.MISSED]
)
def test_tasks_finished_when_exported_are_skipped_with_the_reason(state: TaskState) -> None:
    data = build_document([snapshot(make_spec(1, name="done"), state), snapshot(make_spec(2))], T0)
    parsed = parse_document(json.dumps(data))

    assert [item.spec.name for item in parsed.candidates] == ["task 2"]
    [skipped] = parsed.skipped
    assert (skipped.where, skipped.text) == ("task 1", "done")
    assert f"had finished ({state.value})" in skipped.reason


@pytest.mark.parametrize("state", [TaskState.RUNNING, TaskState.RETRYING, TaskState.PAUSED])
def test_tasks_still_active_when_exported_are_imported(state: TaskState) -> None:
    data = build_document([snapshot(make_spec(1), state)], T0)
    assert len(parse_document(json.dumps(data)).candidates) == 1


def test_history_in_the_file_is_noted_not_imported() -> None:
    data = copy.deepcopy(three_tasks())
    data["runs"] = {"1": [{"id": 1}, {"id": 2}], "3": [{"id": 3}]}
    parsed = parse_document(json.dumps(data))

    assert len(parsed.candidates) == 3
    [note] = parsed.notes
    assert note == "the file's run history (3 runs) is not imported; it stays in the file"


def test_text_utf8_cannot_encode_is_escaped_and_still_reads_back() -> None:
    spec = make_spec(1, name="ünïcødé", command=Command(line="ls \udcff"))
    text = dump_document(document(spec))

    text.encode("utf-8")  # writable as UTF-8
    assert "\\udcff" in text
    [item] = parse_document(text).candidates
    assert item.spec == spec.with_id(0)
    assert "ünïcødé" in dump_document(document(make_spec(1, name="ünïcødé")))
