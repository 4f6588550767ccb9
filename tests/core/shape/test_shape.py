"""The task's JSON shape: one writer and one reader per value, holding each other exact."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taskgui.core.recurrence import Recurrence, RefusedCron
from taskgui.core.retry import RetryPolicy
from taskgui.core.shape import stored, values
from taskgui.core.shape.fields import FieldError
from taskgui.core.shape.stored import StoredValueError
from taskgui.core.shape.task import TaskDecoder, decode_run, run_json, task_json
from taskgui.core.states import SlotKind, TaskState
from taskgui.core.status import RunRecord
from taskgui.core.task import Command, TaskSpec
from tests.helpers.shapes import recurrences, retry_policies, runs, shell_commands, specs


def through_json(value: object) -> object:
    """What a reader gets: the value written out as JSON text and parsed again."""
    return json.loads(json.dumps(value))


@given(command=shell_commands())
def test_a_command_round_trips_and_its_text_is_the_compact_json(command: Command) -> None:
    value = values.command_json(command)
    assert values.decode_command(through_json(value)) == command
    assert values.command_text(command) == values.compact_json(value)
    assert stored.command_from_text(values.command_text(command)) == command
    assert value["v"] == (1 if command.shell_path is None else values.COMMAND_SHELL_VERSION)


@given(recurrence=recurrences)
def test_every_schedule_kind_round_trips(recurrence: Recurrence) -> None:
    value = values.schedule_json(recurrence)
    assert values.decode_schedule(through_json(value)) == recurrence
    assert values.schedule_text(recurrence) == values.compact_json(value)
    assert stored.schedule_from_text(values.schedule_text(recurrence)) == recurrence


@given(policy=retry_policies())
def test_a_retry_policy_round_trips(policy: RetryPolicy) -> None:
    value = values.retry_json(policy)
    assert values.decode_retry(through_json(value)) == policy
    assert values.retry_text(policy) == values.compact_json(value)
    assert stored.retry_from_text(values.retry_text(policy)) == policy


@given(spec=specs, state=st.none() | st.sampled_from(list(TaskState)))
def test_a_definition_round_trips_with_its_id_and_state(
    spec: TaskSpec, state: TaskState | None
) -> None:
    value = through_json(task_json(spec, state))
    assert isinstance(value, dict)
    assert ("state" in value) == (state is not None)
    assert TaskDecoder().task(value) == (spec, state)
    assert TaskDecoder().task(value, keep_id=False) == (spec.with_id(0), state)


@given(run=runs)
def test_a_run_round_trips(run: RunRecord) -> None:
    assert decode_run(through_json(run_json(run))) == run


def test_a_stored_cron_this_taskgui_refuses_is_kept_but_a_file_is_refused() -> None:
    value = {"v": 1, "kind": "cron", "expr": "61 * * * *", "tz": "UTC"}

    kept = values.decode_schedule(value, stored=True)
    assert isinstance(kept, RefusedCron) and kept.refusal
    assert values.schedule_json(kept) == value  # written back unchanged
    with pytest.raises(FieldError, match="minute 61"):
        values.decode_schedule(value)
    assert isinstance(stored.schedule_from_text(json.dumps(value)), RefusedCron)


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("not json", "the stored command is not valid JSON"),
        ("[1]", "the stored command is not a JSON object"),
        ('{"line": "x"}', "has format version None"),
        ('{"v": 3, "line": "x"}', "reads version 1 to 2"),
        ('{"v": 1}', "the stored command: field 'line': this field is required"),
        ('{"v": 1, "line": "x", "cwd": 5}', "field 'cwd': expected text or null, got 5"),
        ('{"v": 1, "line": "x", "tries": 2}', "field 'tries': unknown field"),
        ('{"v": 1, "line": ' + "[" * 100_000 + "]" * 100_000 + "}", "not valid JSON"),
    ],
)
def test_stored_text_that_cannot_be_read_says_why(text: str, phrase: str) -> None:
    with pytest.raises(StoredValueError) as caught:
        stored.command_from_text(text)
    assert phrase in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_run_that_is_not_valid_names_its_field() -> None:
    value = run_json(
        RunRecord(
            id=1,
            task_id=2,
            attempt=1,
            kind=SlotKind.OCCURRENCE,
            scheduled_at=datetime(2026, 1, 1, tzinfo=UTC),
            started_at=None,
            finished_at=None,
            outcome=None,
        )
    )
    for key, bad, phrase in (
        ("attempt", "1", "attempt: expected a whole number"),
        ("kind", "later", "kind: expected one of occurrence"),
        ("scheduled_at", "noon", "scheduled_at: expected an ISO 8601 time"),
        ("exit", 0, "exit: unknown field"),
    ):
        with pytest.raises(FieldError, match=phrase):
            decode_run({**value, key: bad})
