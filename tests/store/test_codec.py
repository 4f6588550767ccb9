"""Rows <-> core objects: exact times, versioned JSON, and errors a person can read."""

from __future__ import annotations

import json
import tempfile
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taskgui.core.dependencies import After, Upstream
from taskgui.core.errors import TaskguiError
from taskgui.core.events import TaskChanged
from taskgui.core.recurrence import Cron, Every, EveryMode, Once, Recurrence
from taskgui.core.retry import RetryPolicy
from taskgui.core.status import TaskSnapshot, TaskStatus, initial_status
from taskgui.core.task import Command, TaskSpec
from taskgui.store import codec
from taskgui.store.errors import CodecError, StoreError
from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.factories import T0, make_spec
from tests.helpers.shapes import commands, recurrences, retry_policies, specs, statuses

# ------------------------------------------------------------------ times

MIN_TIME = datetime(1970, 1, 1)
MAX_TIME = datetime(2200, 1, 1)
utc_times = st.datetimes(min_value=MIN_TIME, max_value=MAX_TIME, timezones=st.just(UTC))


@given(moment=utc_times)
def test_microseconds_round_trip_exactly(moment: datetime) -> None:
    value = codec.to_us(moment)

    assert type(value) is int
    back = codec.from_us(value)
    assert back == moment
    assert back.tzinfo is UTC
    assert back.microsecond == moment.microsecond
    assert codec.opt_from_us(codec.opt_to_us(moment)) == moment


@given(
    moment=utc_times, zone=st.sampled_from(["Europe/Berlin", "America/St_Johns", "Asia/Kathmandu"])
)
def test_the_same_instant_in_another_zone_gives_the_same_number(
    moment: datetime, zone: str
) -> None:
    assert codec.to_us(moment.astimezone(ZoneInfo(zone))) == codec.to_us(moment)


@given(first=utc_times, second=utc_times)
def test_microseconds_keep_the_order_of_times(first: datetime, second: datetime) -> None:
    assert (first < second) == (codec.to_us(first) < codec.to_us(second))
    assert codec.to_us(second) - codec.to_us(first) == (second - first) // timedelta(microseconds=1)


def test_known_values() -> None:
    assert codec.to_us(datetime(1970, 1, 1, tzinfo=UTC)) == 0
    assert codec.to_us(datetime(2026, 1, 1, 12, 0, 0, 1, tzinfo=UTC)) == 1_767_268_800_000_001
    assert codec.from_us(-1) == datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)
    assert codec.opt_to_us(None) is None and codec.opt_from_us(None) is None


def test_a_naive_time_is_refused_rather_than_guessed() -> None:
    with pytest.raises(TypeError):
        codec.to_us(datetime(2026, 1, 1, 12, 0))


# ------------------------------------------------------------------- JSON


def row_of(spec: TaskSpec, status: TaskStatus) -> tuple[Any, ...]:
    return (spec.id, *codec.spec_values(spec), *codec.status_values(status))


@settings(max_examples=300)
@given(spec=specs, status=statuses)
def test_every_encoder_round_trips_through_the_row_decoder(
    spec: TaskSpec, status: TaskStatus
) -> None:
    row = row_of(spec, status)
    assert len(row) == len(codec.TASK_COLUMNS)

    decoded = codec.RowDecoder().snapshot(row)

    assert decoded == TaskSnapshot(spec, status)
    for name in TaskSpec.__dataclass_fields__:
        assert getattr(decoded.spec, name) == getattr(spec, name), name


@given(spec=specs)
def test_a_new_task_row_is_the_spec_with_its_initial_status(spec: TaskSpec) -> None:
    now_us = codec.to_us(T0)
    row = codec.new_task_row(spec, now_us)

    assert row == (*row_of(spec, initial_status(spec)), now_us, now_us)
    decoded = codec.RowDecoder().snapshot(row[: len(codec.TASK_COLUMNS)])
    assert decoded == TaskSnapshot(spec, initial_status(spec))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=specs, status=statuses)
def test_every_field_round_trips_through_a_real_file(spec: TaskSpec, status: TaskStatus) -> None:
    with tempfile.TemporaryDirectory() as folder:
        repository = SqliteRepository(Path(folder) / "codec.sqlite3")
        try:
            [added] = repository.add_tasks([spec], T0)
            snapshot = TaskSnapshot(replace(spec, id=added.id), status)
            repository.apply([TaskChanged(snapshot)], T0)
            assert repository.get(added.id) == snapshot
            assert repository.load(T0).tasks == [snapshot]
        finally:
            repository.close()


@given(command=commands, recurrence=recurrences, retry=retry_policies())
def test_the_json_is_versioned_and_plain(
    command: Command, recurrence: Recurrence, retry: RetryPolicy
) -> None:
    for text in (
        codec.encode_command(command),
        codec.encode_recurrence(recurrence),
        codec.encode_retry(retry),
    ):
        data = json.loads(text)
        assert isinstance(data, dict)
        assert data["v"] == codec.JSON_VERSION
    assert json.loads(codec.encode_command(command))["line"] == command.line


def test_older_json_without_optional_keys_still_decodes() -> None:
    spec = make_spec(7)
    row = list(row_of(spec, TaskStatus()))
    column = codec.TASK_COLUMNS.index
    row[column("command")] = '{"v": 1, "line": "backup.sh"}'
    row[column("recurrence")] = '{"v": 1, "kind": "every", "seconds": 60}'
    row[column("retry")] = (
        '{"v": 1, "backoff": "exponential", "max_attempts": 3, "base": 10, "max": 3600}'
    )

    decoded = codec.RowDecoder().snapshot(tuple(row)).spec

    assert decoded.command == Command(line="backup.sh")
    assert decoded.recurrence == Every(timedelta(minutes=1), EveryMode.FIXED_RATE)
    assert decoded.retry == RetryPolicy()
    row[column("recurrence")] = '{"v": 1, "kind": "cron", "expr": "0 9 * * *"}'
    assert codec.RowDecoder().snapshot(tuple(row)).spec.recurrence == Cron("0 9 * * *", "UTC")


# ----------------------------------------------------------------- errors

JSON_COLUMNS = {"command": "command", "recurrence": "schedule", "retry": "retry policy"}


def decode_with(column: str, value: object) -> TaskSnapshot:
    row = list(row_of(make_spec(7), TaskStatus()))
    row[codec.TASK_COLUMNS.index(column)] = value
    return codec.RowDecoder().snapshot(tuple(row))


@pytest.mark.parametrize("column", JSON_COLUMNS)
@pytest.mark.parametrize("version", ['"v": 3', '"v": "1"', '"v": null', '"version": 1'])
def test_an_unknown_json_version_is_a_codec_error(column: str, version: str) -> None:
    with pytest.raises(CodecError) as caught:
        decode_with(column, f'{{{version}, "kind": "once", "line": "x"}}')

    message = str(caught.value)
    assert f"the stored {JSON_COLUMNS[column]} has format version" in message
    assert "newer taskgui" in message
    assert "\n" not in message


@pytest.mark.parametrize("column", JSON_COLUMNS)
@pytest.mark.parametrize("text", ["{", "not json", "", '{"v": 1,}'])
def test_malformed_json_is_a_codec_error(column: str, text: str) -> None:
    with pytest.raises(CodecError, match=f"the stored {JSON_COLUMNS[column]} is not valid JSON"):
        decode_with(column, text)


@pytest.mark.parametrize("column", JSON_COLUMNS)
@pytest.mark.parametrize("text", ["[1]", "1", "null", '"v"'])
def test_json_that_is_not_an_object_is_a_codec_error(column: str, text: str) -> None:
    with pytest.raises(CodecError, match=f"the stored {JSON_COLUMNS[column]} is not a JSON object"):
        decode_with(column, text)


@pytest.mark.parametrize("kind", ['"hourly"', "null", '"Every"'])
def test_an_unknown_schedule_kind_is_a_codec_error(kind: str) -> None:
    with pytest.raises(CodecError) as caught:
        decode_with("recurrence", f'{{"v": 1, "kind": {kind}}}')

    # The shape's reader names the field and quotes the kind as JSON.
    assert str(caught.value).startswith("task 7: the stored schedule: field 'kind': ")
    assert json.dumps(json.loads(kind)) in str(caught.value)


@pytest.mark.parametrize(
    ("column", "value", "phrase"),
    [
        ("recurrence", '{"v": 1, "kind": "every", "seconds": 0}', "at least 1 second"),
        ("recurrence", '{"v": 1, "kind": "every", "seconds": 60, "mode": "x"}', '"x"'),
        ("recurrence", '{"v": 1, "kind": "cron", "expr": 61}', "field 'expr': expected text"),
        ("recurrence", '{"v": 1, "kind": "every"}', "'seconds'"),
        ("command", '{"v": 1, "line": "   "}', "the command is empty"),
        ("command", '{"v": 1}', "'line'"),
        (
            "retry",
            '{"v": 1, "backoff": "linear", "max_attempts": 3, "base": 1, "max": 2}',
            "linear",
        ),
        (
            "retry",
            '{"v": 1, "backoff": "fixed", "max_attempts": 3, "base": 5, "max": 1}',
            "maximum",
        ),
        ("overlap", "sometimes", "sometimes"),
        ("state", "sleeping", "sleeping"),
        ("slot_kind", "later", "later"),
        ("last_outcome", "meh", "meh"),
        ("name", "   ", "needs a name"),
        ("priority", 10**7, "priority"),
        ("misfire_grace", -1.0, "cannot be negative"),
        ("timeout", 0.0, "longer than zero"),
        ("first_run_at", 2**62, "out of range"),
    ],
)
def test_a_value_that_no_longer_validates_is_a_codec_error_naming_the_task(
    column: str, value: object, phrase: str
) -> None:
    with pytest.raises(CodecError) as caught:
        decode_with(column, value)

    message = str(caught.value)
    assert phrase in message
    assert "\n" not in message and "Traceback" not in message
    assert message.startswith("task 7: ")


def test_codec_errors_are_store_errors_of_taskgui() -> None:
    with pytest.raises(CodecError) as caught:
        decode_with("command", "not json")
    assert isinstance(caught.value, StoreError)
    assert isinstance(caught.value, TaskguiError)
    assert caught.value.__cause__ is None  # the message stands on its own


def test_a_bad_row_does_not_poison_the_decoder() -> None:
    decoder = codec.RowDecoder()
    good = row_of(make_spec(1), TaskStatus())
    bad = list(row_of(make_spec(2), TaskStatus()))
    bad[codec.TASK_COLUMNS.index("retry")] = '{"v": 9}'

    with pytest.raises(CodecError):
        decoder.snapshot(tuple(bad))
    with pytest.raises(CodecError):
        decoder.snapshot(tuple(bad))  # not memoised as a success

    assert decoder.snapshot(good) == TaskSnapshot(make_spec(1), TaskStatus())


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    spec=specs,
    upstreams=st.dictionaries(
        st.integers(1000, 2**40), st.sampled_from(list(After)), min_size=1, max_size=5
    ),
    only=st.booleans(),
    data=st.data(),
)
def test_upstreams_and_fan_in_marks_round_trip_through_a_real_file(
    spec: TaskSpec, upstreams: dict[int, After], only: bool, data: st.DataObject
) -> None:
    edges = tuple(Upstream(task_id, on) for task_id, on in upstreams.items())
    spec = replace(spec, id=0, after=edges, only_after=only, recurrence=Once())
    marks = frozenset(data.draw(st.sets(st.sampled_from(sorted(upstreams)))))
    with tempfile.TemporaryDirectory() as folder:
        repository = SqliteRepository(Path(folder) / "codec.sqlite3")
        try:
            [added] = repository.add_tasks([spec], T0)
            first = repository.get(added.id)
            assert first == TaskSnapshot(added, initial_status(added))
            assert (first.status.next_run_at is None) is only  # no slot of its own
            status = initial_status(added)._replace(after_marks=marks)
            repository.apply([TaskChanged(TaskSnapshot(added, status))], T0)
            assert repository.get(added.id).status.after_marks == marks
            assert repository.get(added.id).spec.after == tuple(sorted(edges))
            row = row_of(added, status)
            assert codec.RowDecoder().snapshot(row) == TaskSnapshot(added, status)
        finally:
            repository.close()
