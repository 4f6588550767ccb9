"""A command that names its shell (a crontab's SHELL=): stored and exported as version 2
of the command JSON, so a taskgui that predates it sets the task aside instead of
running it with /bin/sh; every other command keeps the version 1 text it always had."""

from __future__ import annotations

import json

import pytest

from taskgui.core.errors import InvalidTaskError
from taskgui.core.shape.fields import FieldError
from taskgui.core.shape.values import decode_command
from taskgui.core.status import initial_status
from taskgui.core.task import Command
from taskgui.core.transfer.export_file import command_json
from taskgui.store import codec, row_decoder
from taskgui.store.errors import CodecError
from tests.helpers.factories import make_spec

BASH = Command(line="source ~/.profile && run", shell_path="/bin/bash", env=(("A", "1"),))


def test_a_command_with_a_shell_is_version_2_and_round_trips() -> None:
    text = codec.encode_command(BASH)
    assert json.loads(text) == {
        "v": 2,
        "line": "source ~/.profile && run",
        "shell": True,
        "cwd": None,
        "env": [["A", "1"]],
        "shell_path": "/bin/bash",
    }
    assert row_decoder._decode_command(text) == BASH
    spec = make_spec(7, command=BASH)
    row = (spec.id, *codec.spec_values(spec), *codec.status_values(initial_status(spec)))
    assert codec.RowDecoder().snapshot(row).spec == spec


def test_other_commands_keep_their_version_1_text() -> None:
    assert codec.encode_command(Command(line="ls")) == (
        '{"v":1,"line":"ls","shell":true,"cwd":null,"env":[]}'
    )
    assert json.loads(codec.encode_command(Command(line="ls", cwd="/tmp")))["v"] == 1


def test_a_reader_of_version_1_only_refuses_it_rather_than_run_it_with_sh() -> None:
    # What the taskgui before this change does with the row: _load_json read version 1.
    with pytest.raises(CodecError, match="format version 2; this taskgui reads version 1"):
        row_decoder._load_json(codec.encode_command(BASH), "command")
    with pytest.raises(CodecError, match="format version 3; this taskgui reads version 1 to 2"):
        row_decoder._decode_command('{"v":3,"line":"x"}')


def test_the_export_file_carries_the_shell_as_version_2() -> None:
    value = command_json(BASH)
    assert value["v"] == 2 and value["shell_path"] == "/bin/bash"
    assert decode_command(value) == BASH
    assert command_json(Command(line="ls"))["v"] == 1
    with pytest.raises(FieldError, match="written by a newer taskgui \\(version 3\\)"):
        decode_command({**value, "v": 3})


@pytest.mark.parametrize(
    ("fields", "phrase"),
    [
        ({"shell_path": "bash"}, "an absolute path like /bin/bash"),
        ({"shell_path": "/bin/ba\0sh"}, "an absolute path"),
        ({"shell_path": " /bin/bash"}, "an absolute path"),
        ({"shell_path": "/bin/bash", "use_shell": False}, "does not run through one"),
    ],
)
def test_a_shell_path_is_checked(fields: dict[str, object], phrase: str) -> None:
    with pytest.raises(InvalidTaskError, match=phrase):
        Command(line="x", **fields)  # type: ignore[arg-type]
