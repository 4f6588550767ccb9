"""Typed access to the keys of one JSON object, blaming the key at fault.

The constructors (``TaskSpec``, ``Command``, ``RetryPolicy``, ``Every``, ``Cron``)
own every rule, and their messages say what is wrong but not where it is. So each
field's JSON type is checked here first (that names the field directly), and when a
constructor still refuses the whole, ``build`` tries each value on its own with every
other value at its default: the first that fails alone is the one to blame. No rule
is written twice, and "retry.max_attempts: max attempts must be between 1 and 1000,
not 0" points at the exact spot. The probing only runs on the error path, so a valid
value pays one construction.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import timedelta
from enum import StrEnum
from typing import Any, TypeVar

from taskgui.core.errors import InvalidTaskError
from taskgui.core.iso_time import read_iso
from taskgui.core.text_rules import shortened

SHAPE_VERSION = 1
E = TypeVar("E", bound=StrEnum)
T = TypeVar("T")
MISSING: Any = object()
# What a constructor may raise for a value it cannot take.
REFUSALS = (InvalidTaskError, ValueError, TypeError, OverflowError)


class FieldError(Exception):
    """``path`` (e.g. 'retry.max_attempts'; empty for the whole value) is not valid."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


def join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def shown(value: object) -> str:
    """A value as JSON, cut to 60 characters: what an error quotes."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return shortened(text, 60)


class Fields:
    """Typed access to one JSON object's keys, with errors that name the key."""

    def __init__(self, value: object, path: str, known: Sequence[str]) -> None:
        if not isinstance(value, dict):
            raise FieldError(path, f"expected a JSON object, got {shown(value)}")
        self.data: dict[str, Any] = value
        self.path = path
        if not value.keys() <= set(known):
            unknown = sorted(key for key in value if key not in known)
            raise FieldError(
                join(path, unknown[0]), f"unknown field; expected one of {', '.join(known)}"
            )

    def at(self, key: str) -> str:
        return join(self.path, key)

    def get(self, key: str, default: Any) -> Any:
        if key in self.data:
            return self.data[key]
        if default is MISSING:
            raise FieldError(self.at(key), "this field is required")
        return default

    def check_version(self, newest: int = SHAPE_VERSION) -> None:
        version = self.data.get("v", SHAPE_VERSION)  # a hand-written file may leave it out
        if type(version) is not int:
            raise FieldError(self.at("v"), f"expected a whole number, got {shown(version)}")
        if version > newest:
            readable = (
                str(SHAPE_VERSION) if newest == SHAPE_VERSION else f"{SHAPE_VERSION}-{newest}"
            )
            raise FieldError(
                self.at("v"),
                f"written by a newer taskgui (version {version}); this taskgui reads "
                f"version {readable}",
            )
        if version < SHAPE_VERSION:
            raise FieldError(self.at("v"), f"unknown version {version}")

    def text(self, key: str, default: Any = MISSING, *, nullable: bool = False) -> Any:
        value = self.get(key, default)
        if isinstance(value, str) or (nullable and value is None) or value is default:
            return value
        kind = "text or null" if nullable else "text"
        raise FieldError(self.at(key), f"expected {kind}, got {shown(value)}")

    def integer(self, key: str, default: Any = MISSING, *, nullable: bool = False) -> Any:
        value = self.get(key, default)
        if type(value) is int or value is default or (nullable and value is None):
            return value
        kind = "a whole number or null" if nullable else "a whole number"
        raise FieldError(self.at(key), f"expected {kind}, got {shown(value)}")

    def number(self, key: str, default: Any = MISSING) -> Any:
        value = self.get(key, default)
        if value is default:
            return value
        if type(value) in (int, float):
            return float(value)
        raise FieldError(self.at(key), f"expected a number, got {shown(value)}")

    def boolean(self, key: str, default: Any = MISSING) -> Any:
        value = self.get(key, default)
        if type(value) is bool or value is default:
            return value
        raise FieldError(self.at(key), f"expected true or false, got {shown(value)}")

    def seconds(self, key: str, default: Any = MISSING, *, nullable: bool = False) -> Any:
        value = self.get(key, default)
        if value is default or (nullable and value is None):
            return value
        if type(value) not in (int, float):
            kind = "a number of seconds or null" if nullable else "a number of seconds"
            raise FieldError(self.at(key), f"expected {kind}, got {shown(value)}")
        try:
            return timedelta(seconds=value)
        except (OverflowError, ValueError):
            raise FieldError(self.at(key), f"{shown(value)} seconds is out of range") from None

    def choice(self, key: str, enum: type[E], default: Any = MISSING) -> Any:
        value = self.get(key, default)
        if value is default:
            return value
        try:
            return enum(value)
        except ValueError:
            choices = ", ".join(member.value for member in enum)
            raise FieldError(
                self.at(key), f"expected one of {choices}, got {shown(value)}"
            ) from None

    def moment(self, key: str, default: Any = MISSING, *, nullable: bool = False) -> Any:
        value = self.get(key, default)
        if value is default or (nullable and value is None):
            return value
        # ISO 8601 only: fromisoformat would read 200 digits as 1111-11-11 (iso_time).
        moment = read_iso(value) if isinstance(value, str) else None
        if moment is None or moment.utcoffset() is None:
            raise FieldError(
                self.at(key),
                f"expected an ISO 8601 time with an offset, like "
                f"2026-03-01T09:30:00+01:00, got {shown(value)}",
            )
        return moment


Probes = Callable[[], Sequence[tuple[str, Callable[[], object]]]]


def build(path: str, make: Callable[[], T], probes: Probes) -> T:
    """``make()``, or a FieldError on the first probed key that fails on its own.

    ``probes`` is called only when ``make`` fails: building the probes costs about as
    much as a small value's whole decoding, and a valid value never needs them.
    """
    try:
        return make()
    except REFUSALS as error:
        for key, probe in probes():
            try:
                probe()
            except REFUSALS as alone:
                raise FieldError(join(path, key), str(alone)) from None
        raise FieldError(path, str(error)) from None


def check_savable(value: str | None, path: str) -> None:
    """Refuse text the database cannot store as a column (a lone surrogate, which JSON
    can spell as an escape); command lines and environments are stored as JSON, which
    escapes it, and need no such check."""
    if value is None or value.isascii():
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise FieldError(
            path, "holds a character that cannot be saved (a lone surrogate)"
        ) from None


def env_pairs(value: object, path: str) -> tuple[tuple[str, str], ...]:
    """``[["NAME", "value"], ...]`` as the shape writes it, or ``{"NAME": "value"}``."""
    if isinstance(value, dict):
        value = list(value.items())
    if not isinstance(value, list):
        raise FieldError(path, f"expected a list of [name, value] pairs, got {shown(value)}")
    pairs: list[tuple[str, str]] = []
    for index, pair in enumerate(value):
        if (
            not isinstance(pair, list | tuple)
            or len(pair) != 2
            or not all(isinstance(part, str) for part in pair)
        ):
            raise FieldError(
                f"{path}[{index}]", f"expected a [name, value] pair of text, got {shown(pair)}"
            )
        pairs.append((pair[0], pair[1]))
    return tuple(pairs)
