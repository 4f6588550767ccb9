"""A shape value kept as text (a store's column, a request's payload), read back.

The text was written by a taskgui, but it comes back from a file anything can edit,
so it is judged like any input: not JSON, not an object, a version this taskgui
cannot read, or a field that no longer validates is a ``StoredValueError`` whose
message says which (the store turns it into a CodecError and sets the task aside).
Unlike a hand-written file, a stored value always carries its version.
"""

from __future__ import annotations

import json
from typing import Any

from taskgui.core.recurrence import Recurrence
from taskgui.core.retry import RetryPolicy
from taskgui.core.shape.fields import SHAPE_VERSION, FieldError
from taskgui.core.shape.values import (
    COMMAND_SHELL_VERSION,
    decode_command,
    decode_retry,
    decode_schedule,
)
from taskgui.core.task import Command


class StoredValueError(ValueError):
    """A stored shape value that cannot be read; the message says why."""


def load_object(text: object, what: str, newest: int = SHAPE_VERSION) -> dict[str, Any]:
    """The JSON object ``text`` holds, of a version from 1 to ``newest``."""
    try:
        value = json.loads(text)  # type: ignore[arg-type]  # judged right here
    except (TypeError, ValueError, RecursionError) as error:
        raise StoredValueError(f"the stored {what} is not valid JSON ({error})") from None
    if not isinstance(value, dict):
        raise StoredValueError(f"the stored {what} is not a JSON object")
    version = value.get("v")
    if type(version) is not int or not SHAPE_VERSION <= version <= newest:
        readable = str(SHAPE_VERSION) if newest == SHAPE_VERSION else f"{SHAPE_VERSION} to {newest}"
        raise StoredValueError(
            f"the stored {what} has format version {version!r}; this taskgui reads "
            f"version {readable} (was the file written by a newer taskgui?)"
        )
    return value


def _field(what: str, error: FieldError) -> StoredValueError:
    where = f"field {error.path!r}: " if error.path else ""
    return StoredValueError(f"the stored {what}: {where}{error.message}")


def command_from_text(text: object) -> Command:
    data = load_object(text, "command", COMMAND_SHELL_VERSION)
    try:
        return decode_command(data, "")
    except FieldError as error:
        raise _field("command", error) from None


def schedule_from_text(text: object) -> Recurrence:
    data = load_object(text, "schedule")
    try:
        return decode_schedule(data, "", stored=True)
    except FieldError as error:
        raise _field("schedule", error) from None


def retry_from_text(text: object) -> RetryPolicy:
    data = load_object(text, "retry policy")
    try:
        return decode_retry(data, "")
    except FieldError as error:
        raise _field("retry policy", error) from None
