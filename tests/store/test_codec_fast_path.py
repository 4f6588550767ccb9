"""The store's fast paths give the same answers as the slow, validating ones.

``RowDecoder`` builds rows in canonical form without running ``__post_init__`` and
``encode_command`` writes its JSON by hand; ``TaskSpec.with_id`` copies instead of
calling ``replace``. Each is only allowed to be faster, never different.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taskgui.core.errors import InvalidTaskError
from taskgui.core.recurrence import Cron, Every, EveryMode
from taskgui.core.retry import RetryPolicy
from taskgui.core.states import MisfirePolicy, OverlapPolicy, RunOutcome, SlotKind, TaskState
from taskgui.core.status import TaskSnapshot, TaskStatus, initial_status
from taskgui.core.task import MAX_NAME_LENGTH, PRIORITY_MAX, Command, TaskSpec
from taskgui.core.text_rules import has_visible_character
from taskgui.store import codec, row_decoder
from taskgui.store.errors import CodecError
from tests.helpers.factories import T0, at, make_spec
from tests.helpers.shapes import commands_of

lines = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\0"), min_size=1)
# Printable ASCII, quotes and backslashes included: the lines the fast path takes.
plain_lines = st.text(st.characters(min_codepoint=32, max_codepoint=126), min_size=1)
env_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,7}", fullmatch=True)
commands = commands_of(
    plain_lines | lines,
    st.none() | lines,
    st.just(()) | st.dictionaries(env_names, lines, max_size=3).map(lambda env: tuple(env.items())),
)


def _json_dumps_command(command: Command) -> str:
    """encode_command as it was first written: json.dumps of a dict."""
    return json.dumps(
        {
            "v": codec.JSON_VERSION,
            "line": command.line,
            "shell": command.use_shell,
            "cwd": command.cwd,
            "env": [list(pair) for pair in command.env],
        },
        separators=(",", ":"),
    )


@given(command=commands)
def test_the_hand_written_command_json_is_what_json_dumps_writes(command: Command) -> None:
    text = codec.encode_command(command)

    assert text == _json_dumps_command(command)
    assert codec.RowDecoder().snapshot(row_of(make_spec(1, command=command))).spec.command == (
        command
    )


def row_of(spec: TaskSpec, status: TaskStatus | None = None) -> tuple[Any, ...]:
    status = initial_status(spec) if status is None else status
    return (spec.id, *codec.spec_values(spec), *codec.status_values(status))


def both_paths(row: tuple[Any, ...]) -> tuple[TaskSnapshot | None, TaskSnapshot]:
    decoder = codec.RowDecoder()
    return decoder._trusted_snapshot(row), decoder._snapshot(row)


CANONICAL = [
    make_spec(1),
    make_spec(2, name="x" * MAX_NAME_LENGTH, priority=PRIORITY_MAX, paused=True),
    make_spec(
        3,
        command=Command(line="ls -l", use_shell=False),
        recurrence=Every(timedelta(minutes=5), EveryMode.FIXED_DELAY),
        retry=RetryPolicy(),
        timeout=timedelta(seconds=1.5),
        concurrency_key="backup",
        overlap=OverlapPolicy.QUEUE,
        misfire=MisfirePolicy.SKIP,
        misfire_grace=timedelta(0),
    ),
    make_spec(4, command=Command(line="echo 'é'", cwd="/tmp", env=(("A", "1"),))),
    make_spec(5, recurrence=Cron("0 3 * * *", "Europe/Berlin"), first_run_at=at(-86_400)),
]
STATUSES = [
    None,
    TaskStatus(),
    TaskStatus(
        state=TaskState.RETRYING,
        attempt=2,
        next_run_at=at(30),
        slot_kind=SlotKind.RETRY,
        scheduled_at=at(0),
        slot_attempt=3,
        deferred_at=at(3600),
        last_outcome=RunOutcome.FAILED,
        last_run_at=at(10),
    ),
]


@pytest.mark.parametrize("status", STATUSES)
@pytest.mark.parametrize("spec", CANONICAL, ids=lambda spec: f"task{spec.id}")
def test_canonical_rows_take_the_fast_path_to_the_same_snapshot(
    spec: TaskSpec, status: TaskStatus | None
) -> None:
    fast, slow = both_paths(row_of(spec, status))

    assert fast is not None, "a row as the store writes it should take the fast path"
    assert fast == slow == TaskSnapshot(spec, status or initial_status(spec))
    for name in TaskSpec.__dataclass_fields__:
        assert getattr(fast.spec, name) == getattr(slow.spec, name), name


@settings(max_examples=200)
@given(
    command=commands,
    name=lines.filter(lambda text: 0 < len(text.strip()) <= 200 and has_visible_character(text)),
)
def test_the_fast_path_agrees_with_the_validating_one(command: Command, name: str) -> None:
    fast, slow = both_paths(row_of(make_spec(9, command=command, name=name)))

    assert fast is None or fast == slow
    plain = row_decoder._plain_command(codec.encode_command(command))
    assert plain is None or plain == command


def _with(column: str, value: object) -> tuple[Any, ...]:
    row = list(row_of(make_spec(7)))
    row[codec.TASK_COLUMNS.index(column)] = value
    return tuple(row)


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("name", "  padded  "),  # valid, but normalised by TaskSpec
        ("concurrency_key", "  "),  # likewise: blank means none
        ("concurrency_key", " key "),
        ("misfire_grace", 60),  # an int where the store writes a REAL
    ],
)
def test_rows_in_another_form_go_the_validating_way(column: str, value: object) -> None:
    fast, slow = both_paths(_with(column, value))

    assert fast is None
    assert codec.RowDecoder().snapshot(_with(column, value)) == slow


@pytest.mark.parametrize(
    "text",
    [
        '{"v":1,"line":"  ls  ","shell":true,"cwd":"","env":[]}',  # cwd "" means none
        '{"v": 1, "line": "ls"}',  # older JSON without the optional keys
        '{"v":1,"line":"a\\"b","shell":true,"cwd":null,"env":[]}',
        '{"v":1,"line":"\\u00e9","shell":true,"cwd":null,"env":[]}',
        '{"v":1,"line":"é","shell":true,"cwd":null,"env":[]}',
        '{"v":1,"line":"ls","shell":true,"cwd":null,"env":[["A","1"]]}',
    ],
)
def test_commands_in_another_form_are_decoded_and_validated_by_json(text: str) -> None:
    assert row_decoder._plain_command(text) is None
    fast, slow = both_paths(_with("command", text))

    assert fast == slow


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("name", ""),
        ("name", "x" * (MAX_NAME_LENGTH + 1)),
        ("name", 5),
        ("priority", PRIORITY_MAX + 1),
        ("priority", "3"),
        ("priority", 2.0),
        ("misfire_grace", -1.0),
        ("timeout", 0.0),
        ("timeout", 1e-9),  # rounds to a zero timedelta
        ("timeout", "soon"),
        ("overlap", "sometimes"),
        ("misfire", "never"),
        ("state", "sleeping"),
        ("slot_kind", "later"),
        ("last_outcome", "meh"),
        ("command", 42),
        ("command", '{"v":1,"line":"","shell":true,"cwd":null,"env":[]}'),
        ("command", '{"v":1,"line":"   ","shell":true,"cwd":null,"env":[]}'),
        ("command", '{"v":1,"line":"a\\u0000b","shell":true,"cwd":null,"env":[]}'),
        ("command", '{"v":1,"line":"a\tb","shell":true,"cwd":null,"env":[]}'),  # raw tab
        ("command", '{"v":3,"line":"ls","shell":true,"cwd":null,"env":[]}'),
        ("first_run_at", "today"),
        ("next_run_at", "tomorrow"),
    ],
)
def test_rows_that_do_not_validate_are_still_codec_errors(column: str, value: object) -> None:
    with pytest.raises(CodecError):
        codec.RowDecoder().snapshot(_with(column, value))


def test_with_id_is_replace_without_the_second_validation() -> None:
    for spec in CANONICAL:
        for task_id in (0, 1, 2**40):
            copy = spec.with_id(task_id)
            assert copy == replace(spec, id=task_id)
            assert type(copy) is TaskSpec and copy is not spec
            for name in TaskSpec.__dataclass_fields__:
                if name != "id":
                    assert getattr(copy, name) is getattr(spec, name), name


@pytest.mark.parametrize("task_id", [-1, True, 1.0, "3", None])
def test_with_id_still_refuses_what_replace_refuses(task_id: Any) -> None:
    with pytest.raises(InvalidTaskError) as caught:
        make_spec(1).with_id(task_id)
    with pytest.raises(InvalidTaskError) as expected:
        replace(make_spec(1), id=task_id)
    assert str(caught.value) == str(expected.value)


def test_a_new_task_row_decodes_to_what_was_added() -> None:
    for spec in CANONICAL:
        row = codec.new_task_row(spec, codec.to_us(T0))[: len(codec.TASK_COLUMNS)]
        fast, slow = both_paths(row)
        assert fast == slow == TaskSnapshot(spec, initial_status(spec))
