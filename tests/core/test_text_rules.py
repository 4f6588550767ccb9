"""What text a task may hold: no NUL, a name you can see, and an environment exec takes.

Each of these was accepted before: a NUL in the name, key or working folder; a name of
zero-width or bidi-control characters only; 100,000 variables and a 50 MB key (the
database grew to 61 MB).
"""

from __future__ import annotations

from typing import Any

import pytest

from taskgui.core.errors import InvalidTaskError
from taskgui.core.task import (
    MAX_CWD_LENGTH,
    MAX_ENV_BYTES,
    MAX_ENV_ENTRY_BYTES,
    MAX_ENV_VARIABLES,
    MAX_KEY_LENGTH,
    Command,
    name_is_canonical,
)
from taskgui.core.text_rules import has_visible_character
from tests.helpers.factories import make_spec

INVISIBLE_NAMES = [
    "\u200b",  # zero-width space
    "\u200b\u200c\u200d\u2060",  # zero-width non-joiner, joiner, word joiner
    "\u202e\u202c",  # right-to-left override, pop directional formatting
    "\u2066\u2069",  # left-to-right isolate, pop directional isolate
    "\u200e\u200f\u061c",  # direction marks
    "\ufeff",  # byte-order mark
    "\u00ad",  # soft hyphen
    " \u200b\u3000\u00a0 ",  # spaces of several kinds around a zero-width space
    "\u3164",  # Hangul filler (a "letter" that draws nothing)
    "\u115f\u1160\uffa0",
    "\u2800",  # braille pattern blank
    "\u034f\ufe0f",  # combining grapheme joiner, variation selector: marks on nothing
    "\x1b\x07",  # terminal controls
    "\U000e0041\U000e007f",  # tag characters
]
VISIBLE_NAMES = ["backup", "Nächtliche Sicherung", "日本語", "🔥", "\u202eevil", "a\u200bb", "·"]


@pytest.mark.parametrize("name", INVISIBLE_NAMES)
def test_a_name_made_only_of_invisible_characters_is_refused(name: str) -> None:
    assert not has_visible_character(name)
    with pytest.raises(InvalidTaskError, match="the name has no visible character"):
        make_spec(name=name)
    assert not name_is_canonical(name)


@pytest.mark.parametrize("name", VISIBLE_NAMES)
def test_a_name_with_something_to_see_is_accepted(name: str) -> None:
    assert make_spec(name=name).name == name
    assert name_is_canonical(name)


@pytest.mark.parametrize(
    ("overrides", "phrase"),
    [
        ({"name": "back\0up"}, "the name contains a NUL character"),
        ({"concurrency_key": "db\0"}, "the concurrency key contains a NUL character"),
        ({"concurrency_key": "k" * (MAX_KEY_LENGTH + 1)}, "longer than 200 characters"),
        ({"concurrency_key": "k" * 50_000_000}, "longer than 200 characters"),
        ({"concurrency_key": 5}, "the concurrency key must be text"),
    ],
)
def test_bad_task_text_is_refused(overrides: dict[str, Any], phrase: str) -> None:
    with pytest.raises(InvalidTaskError, match=phrase):
        make_spec(**overrides)


def test_the_longest_key_is_accepted() -> None:
    assert make_spec(concurrency_key="k" * MAX_KEY_LENGTH).concurrency_key == "k" * MAX_KEY_LENGTH


def _env(count: int, value: str = "x") -> tuple[tuple[str, str], ...]:
    return tuple((f"V{index}", value) for index in range(count))


@pytest.mark.parametrize(
    ("overrides", "phrase"),
    [
        ({"cwd": "/tmp/a\0b"}, "the working folder contains a NUL character"),
        ({"cwd": "/" + "d" * MAX_CWD_LENGTH}, "working folder is longer than 4,096"),
        ({"cwd": 5}, "the working folder must be text"),
        ({"env": _env(100_000)}, "100,000 environment variables is too many"),
        ({"env": _env(MAX_ENV_VARIABLES + 1)}, "at most 1,000"),
        ({"env": {"BIG": "x" * MAX_ENV_ENTRY_BYTES}}, "value of BIG is longer than a program"),
        ({"env": {"WIDE": "ü" * (MAX_ENV_ENTRY_BYTES // 2)}}, "value of WIDE is longer"),
        ({"env": _env(10, "x" * (MAX_ENV_BYTES // 10))}, "more than 1024 KiB"),
    ],
)
def test_what_exec_could_not_take_is_refused(overrides: dict[str, Any], phrase: str) -> None:
    with pytest.raises(InvalidTaskError, match=phrase):
        Command(line="true", **overrides)


def test_the_largest_environment_exec_takes_is_accepted() -> None:
    one = MAX_ENV_ENTRY_BYTES - len("BIG") - 2
    assert Command(line="true", env=(("BIG", "x" * one),)).env_dict["BIG"] == "x" * one
    assert len(Command(line="true", env=_env(MAX_ENV_VARIABLES)).env) == MAX_ENV_VARIABLES
