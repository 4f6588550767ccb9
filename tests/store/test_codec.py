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

from taskgui.core.errors import TaskguiError
from taskgui.core.events import TaskChanged
from taskgui.core.recurrence import Cron, Every, EveryMode, Once, Recurrence
from taskgui.core.retry import MAX_ATTEMPTS_LIMIT, Backoff, RetryPolicy
from taskgui.core.states import MisfirePolicy, OverlapPolicy, RunOutcome, SlotKind, TaskState
from taskgui.core.status import TaskSnapshot, TaskStatus, initial_status
from taskgui.core.task import PRIORITY_MAX, PRIORITY_MIN, Command, TaskSpec
from taskgui.core.text_rules import has_visible_character
from taskgui.store import codec
from taskgui.store.errors import CodecError, StoreError
from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.factories import T0, make_spec

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

# Durations up to 100 years: stored as REAL seconds, they round-trip to the microsecond
# up to about 2**52 us (~142 years); beyond that a float cannot hold every microsecond.
durations = st.timedeltas(min_value=timedelta(microseconds=1), max_value=timedelta(days=36_500))
safe_text = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\0"))
env_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True)
commands = st.builds(
    Command,
    line=safe_text.filter(str.strip),
    use_shell=st.booleans(),
    cwd=st.none() | safe_text,
    env=st.dictionaries(env_names, safe_text, max_size=4).map(lambda env: tuple(env.items())),
)
recurrences: st.SearchStrategy[Recurrence] = st.one_of(
    st.just(Once()),
    st.builds(
        Every,
        st.timedeltas(min_value=timedelta(seconds=1), max_value=timedelta(days=36_500)),
        st.sampled_from(list(EveryMode)),
    ),
    st.builds(
        Cron,
        st.sampled_from(["*/5 * * * *", "0 9 * * 1-5", "30 2 1 * *", "@daily", "0 0 29 2 *"]),
        st.sampled_from(["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe"]),
    ),
)


@st.composite
def retry_policies(draw: st.DrawFn) -> RetryPolicy:
    base = draw(durations)
    return RetryPolicy(
        backoff=draw(st.sampled_from(list(Backoff))),
        max_attempts=draw(st.integers(1, MAX_ATTEMPTS_LIMIT)),
        base_delay=base,
        max_delay=base + draw(st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=30))),
        factor=draw(st.floats(1.0, 100.0, allow_nan=False)),
        jitter=draw(st.booleans()),
    )


specs = st.builds(
    TaskSpec,
    id=st.integers(1, 2**62),
    name=safe_text.filter(
        lambda text: 0 < len(text.strip()) <= 200 and has_visible_character(text)
    ),
    command=commands,
    first_run_at=utc_times,
    priority=st.integers(PRIORITY_MIN, PRIORITY_MAX),
    recurrence=recurrences,
    retry=retry_policies(),
    timeout=st.none() | durations,
    concurrency_key=st.none() | safe_text.filter(lambda text: len(text.strip()) <= 200),
    overlap=st.sampled_from(list(OverlapPolicy)),
    misfire=st.sampled_from(list(MisfirePolicy)),
    misfire_grace=st.just(timedelta(0)) | durations,
    paused=st.booleans(),
)
optional_times = st.none() | utc_times
statuses = st.builds(
    TaskStatus,
    state=st.sampled_from(list(TaskState)),
    attempt=st.integers(0, MAX_ATTEMPTS_LIMIT),
    next_run_at=optional_times,
    slot_kind=st.none() | st.sampled_from(list(SlotKind)),
    scheduled_at=optional_times,
    slot_attempt=st.integers(1, MAX_ATTEMPTS_LIMIT),
    deferred_at=optional_times,
    last_outcome=st.none() | st.sampled_from(list(RunOutcome)),
    last_run_at=optional_times,
    # Live fields the engine knows only while running; never stored.
    running=st.just(0),
    running_since=st.none(),
    waiting=st.none(),
)


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

    assert str(caught.value) == f"unknown schedule kind {json.loads(kind)!r}"


@pytest.mark.parametrize(
    ("column", "value", "phrase"),
    [
        ("recurrence", '{"v": 1, "kind": "every", "seconds": 0}', "at least 1 second"),
        ("recurrence", '{"v": 1, "kind": "every", "seconds": 60, "mode": "x"}', "'x'"),
        ("recurrence", '{"v": 1, "kind": "cron", "expr": 61}', "text expression"),
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
    if column not in JSON_COLUMNS or "'" in phrase:
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
