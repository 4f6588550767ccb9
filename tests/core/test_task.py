"""TaskSpec and Command: validation with actionable messages, normalisation, immutability."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taskgui.core.errors import InvalidTaskError, TaskguiError
from taskgui.core.recurrence import Every, Once
from taskgui.core.retry import RetryPolicy
from taskgui.core.states import MisfirePolicy, OverlapPolicy
from taskgui.core.task import (
    DEFAULT_MISFIRE_GRACE,
    MAX_COMMAND_LENGTH,
    MAX_NAME_LENGTH,
    PRIORITY_MAX,
    PRIORITY_MIN,
    Command,
    TaskSpec,
    _checked_name,
)

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def build_spec(**overrides: Any) -> TaskSpec:
    """A TaskSpec built directly (not through replace), so construction is what is tested."""
    fields: dict[str, Any] = {
        "name": "backup",
        "command": Command(line="tar czf /tmp/b.tgz ~/notes"),
        "first_run_at": T0,
    }
    fields.update(overrides)
    return TaskSpec(**fields)


def build_command(**overrides: Any) -> Command:
    fields: dict[str, Any] = {"line": "echo hi"}
    fields.update(overrides)
    return Command(**fields)


# ------------------------------------------------------------------ a valid spec


def test_minimal_spec_gets_sensible_defaults() -> None:
    spec = build_spec()
    assert spec.id == 0
    assert spec.priority == 0
    assert spec.recurrence == Once()
    assert spec.retry == RetryPolicy()
    assert spec.max_attempts == 3
    assert spec.timeout is None
    assert spec.concurrency_key is None
    assert spec.overlap is OverlapPolicy.SKIP
    assert spec.misfire is MisfirePolicy.RUN_ONCE
    assert spec.misfire_grace == DEFAULT_MISFIRE_GRACE
    assert spec.paused is False
    assert spec.describe_schedule() == "once"


def test_describe_schedule_uses_the_recurrence() -> None:
    spec = build_spec(recurrence=Every(timedelta(minutes=5)))
    assert spec.describe_schedule() == "every 5 minutes"


@pytest.mark.parametrize("priority", [PRIORITY_MIN, -1, 0, 1, PRIORITY_MAX])
def test_priority_bounds_are_inclusive(priority: int) -> None:
    assert build_spec(priority=priority).priority == priority


def test_longest_name_is_accepted_and_measured_after_stripping() -> None:
    name = "n" * MAX_NAME_LENGTH
    assert build_spec(name=name).name == name
    assert build_spec(name=f"   {name}\t\n").name == name


# ------------------------------------------------------------------ TaskSpec validation


@pytest.mark.parametrize(
    ("overrides", "phrase"),
    [
        ({"name": ""}, "the task needs a name"),
        ({"name": "   \t\n"}, "the task needs a name"),
        ({"name": None}, "the task needs a name"),
        ({"name": "x" * (MAX_NAME_LENGTH + 1)}, "the name is longer than 200 characters"),
        ({"first_run_at": datetime(2026, 1, 1, 12, 0)}, "first run time .* with a time zone"),
        ({"first_run_at": "2026-01-01T12:00Z"}, "first run time must be a date and time"),
        ({"priority": True}, "the priority must be a whole number"),
        ({"priority": False}, "the priority must be a whole number"),
        ({"priority": 1.5}, "the priority must be a whole number"),
        ({"priority": "5"}, "the priority must be a whole number"),
        ({"priority": PRIORITY_MAX + 1}, "between -1,000,000 and 1,000,000"),
        ({"priority": PRIORITY_MIN - 1}, "between -1,000,000 and 1,000,000"),
        ({"timeout": timedelta(0)}, "the timeout must be longer than zero"),
        ({"timeout": timedelta(seconds=-1)}, "the timeout must be longer than zero"),
        (
            {"overlap": "sometimes"},
            "overlap policy 'sometimes' is not one of skip, queue, parallel",
        ),
        (
            {"misfire": "later"},
            "misfire policy 'later' is not one of run_once, skip, run_all",
        ),
        ({"misfire_grace": timedelta(seconds=-1)}, "grace period cannot be negative"),
        ({"id": -1}, "task ids are whole numbers"),
        ({"id": True}, "task ids are whole numbers"),
    ],
)
def test_invalid_spec_is_rejected_with_an_actionable_message(
    overrides: dict[str, Any], phrase: str
) -> None:
    with pytest.raises(InvalidTaskError, match=phrase) as caught:
        build_spec(**overrides)
    # One error type for every front end: it is both a TaskguiError and a ValueError.
    assert isinstance(caught.value, TaskguiError)
    assert isinstance(caught.value, ValueError)


# ------------------------------------------------------------------ Command validation


@pytest.mark.parametrize(
    ("overrides", "phrase"),
    [
        ({"line": ""}, "the command is empty; enter the command line to run"),
        ({"line": "  \t \n"}, "the command is empty"),
        ({"line": "echo a\0b"}, "the command contains a NUL character"),
        (
            {"line": "x" * (MAX_COMMAND_LENGTH + 1)},
            "longer than 100,000 characters; put it in a script",
        ),
        ({"env": (("", "1"),)}, "environment variable name '' is not valid"),
        ({"env": (("A=B", "1"),)}, "environment variable name 'A=B' is not valid"),
        ({"env": (("A\0", "1"),)}, "is not valid; use letters, digits and underscores"),
        ({"env": {"GOOD": "bad\0value"}}, "value of GOOD contains a NUL"),
        ({"env": {"A B": "x"}}, "'A B' is not valid"),
        ({"env": {"1X": "x"}}, "not starting with a digit"),
        ({"env": (("PATH", "/bin"), ("PATH", "/usr/bin"))}, "environment variable is given twice"),
    ],
)
def test_invalid_command_is_rejected_with_an_actionable_message(
    overrides: dict[str, Any], phrase: str
) -> None:
    with pytest.raises(InvalidTaskError, match=phrase):
        build_command(**overrides)


def test_longest_command_is_accepted() -> None:
    line = "x" * MAX_COMMAND_LENGTH
    assert build_command(line=line).line == line


def test_empty_command_is_rejected_inside_a_spec_too() -> None:
    with pytest.raises(InvalidTaskError, match="the command is empty"):
        build_spec(command=Command(line=""))


# ------------------------------------------------------------------ normalisation


def test_name_is_stripped() -> None:
    assert build_spec(name="  nightly backup \n").name == "nightly backup"


@pytest.mark.parametrize(
    "first_run_at",
    [
        datetime(2026, 1, 1, 13, 0, tzinfo=ZoneInfo("Europe/Berlin")),
        datetime(2026, 1, 1, 7, 0, tzinfo=ZoneInfo("America/New_York")),
        datetime(2026, 1, 1, 12, 0, tzinfo=ZoneInfo("UTC")),
        datetime(2026, 1, 1, 17, 30, tzinfo=timezone(timedelta(hours=5, minutes=30))),
        T0,
    ],
)
def test_first_run_at_is_converted_to_utc(first_run_at: datetime) -> None:
    spec = build_spec(first_run_at=first_run_at)
    assert spec.first_run_at == T0
    assert spec.first_run_at.tzinfo is UTC


def test_env_is_sorted_and_compares_regardless_of_order() -> None:
    from_dict = build_command(env={"B": "2", "A": "1", "C": "3"})
    from_pairs = build_command(env=(("C", "3"), ("A", "1"), ("B", "2")))
    assert from_dict.env == (("A", "1"), ("B", "2"), ("C", "3"))
    assert from_dict == from_pairs
    assert hash(from_dict) == hash(from_pairs)
    assert from_dict.env_dict == {"A": "1", "B": "2", "C": "3"}


def test_blank_working_directory_means_none() -> None:
    assert build_command(cwd="   ").cwd is None
    assert build_command(cwd="/tmp").cwd == "/tmp"


@pytest.mark.parametrize(
    ("overlap", "expected"),
    [
        ("skip", OverlapPolicy.SKIP),
        ("queue", OverlapPolicy.QUEUE),
        ("parallel", OverlapPolicy.PARALLEL),
    ],
)
def test_overlap_strings_become_enums(overlap: str, expected: OverlapPolicy) -> None:
    value: Any = overlap
    assert build_spec(overlap=value).overlap is expected


@pytest.mark.parametrize(
    ("misfire", "expected"),
    [
        ("run_once", MisfirePolicy.RUN_ONCE),
        ("skip", MisfirePolicy.SKIP),
        ("run_all", MisfirePolicy.RUN_ALL),
    ],
)
def test_misfire_strings_become_enums(misfire: str, expected: MisfirePolicy) -> None:
    value: Any = misfire
    assert build_spec(misfire=value).misfire is expected


@pytest.mark.parametrize(
    ("key", "expected"),
    [(None, None), ("", None), ("   ", None), (" database ", "database"), ("gpu", "gpu")],
)
def test_concurrency_key_is_stripped_and_blank_means_none(
    key: str | None, expected: str | None
) -> None:
    assert build_spec(concurrency_key=key).concurrency_key == expected


# ------------------------------------------------------------------ immutability and replace


def test_spec_and_command_are_frozen() -> None:
    spec = build_spec()
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.name = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.command.line = "rm -rf /"  # type: ignore[misc]
    assert spec.name == "backup"


def test_spec_compares_by_value() -> None:
    assert build_spec() == build_spec()
    assert build_spec() != build_spec(priority=1)


def test_replace_changes_one_field_and_normalises_it() -> None:
    spec = build_spec(priority=5, concurrency_key="db")
    berlin = datetime(2026, 6, 1, 9, 0, tzinfo=ZoneInfo("Europe/Berlin"))
    changed = dataclasses.replace(spec, name="  renamed  ", first_run_at=berlin)
    assert changed.name == "renamed"
    assert changed.first_run_at == datetime(2026, 6, 1, 7, 0, tzinfo=UTC)
    assert changed.first_run_at.tzinfo is UTC
    assert changed.priority == 5
    assert changed.concurrency_key == "db"
    assert spec.name == "backup"  # the original is untouched


@pytest.mark.parametrize(
    ("overrides", "phrase"),
    [
        ({"name": "  "}, "needs a name"),
        ({"priority": True}, "whole number"),
        ({"first_run_at": datetime(2026, 1, 1)}, "time zone"),
        ({"timeout": timedelta(0)}, "longer than zero"),
        ({"overlap": "never"}, "overlap policy 'never'"),
    ],
)
def test_replace_revalidates(overrides: dict[str, Any], phrase: str) -> None:
    with pytest.raises(InvalidTaskError, match=phrase):
        dataclasses.replace(build_spec(), **overrides)


def test_replace_on_a_command_revalidates() -> None:
    command = build_command(env={"A": "1"})
    with pytest.raises(InvalidTaskError, match="NUL"):
        dataclasses.replace(command, line="a\0")
    assert dataclasses.replace(command, line="echo bye").env == (("A", "1"),)


@settings(max_examples=300)
@given(
    name=st.one_of(
        st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=8),
        st.text(max_size=6),
        st.sampled_from(["a", " a", "a ", "\x1fa", "a\x1c", "\x00", "~", "a" * 200, "a" * 201]),
    )
)
def test_a_name_is_accepted_and_normalised_as_the_full_check_does(name: str) -> None:
    """The constructor's fast path for plain ASCII names agrees with ``_checked_name``."""
    try:
        expected = _checked_name(name)
    except InvalidTaskError:
        with pytest.raises(InvalidTaskError):
            build_spec(name=name)
        return
    assert build_spec(name=name).name == expected
