"""Reading a request from another process: every field judged before anything acts on it.

The ``requests`` table is written by other processes (the CLI, a second window) and
can be written by anything else that opens the file. SQLite does not enforce column
types, so a row may hold text where a time belongs, a number too large for a date, or
a payload that is not the JSON it should be. ``read_request`` turns one raw row into a
``Request`` or raises ``UnreadableRequestError`` naming what is wrong; the process
running the schedule answers such a row with that error and moves on to the next, so
one bad row never leaves the others unanswered (or a start failed).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from taskgui.core.errors import InvalidTaskError
from taskgui.core.operation import Op
from taskgui.core.shape.fields import FieldError
from taskgui.core.shape.task import TaskDecoder, task_json
from taskgui.core.shape.values import compact_json
from taskgui.core.status import TaskStatus
from taskgui.core.task import TaskId, TaskSpec
from taskgui.core.text_rules import shortened
from taskgui.store import codec
from taskgui.store.errors import CodecError, StoreError

log = logging.getLogger(__name__)

# The CLI waits 10 s for an answer; a request older than this was given up on.
REQUEST_EXPIRY = timedelta(seconds=30)
# SQLite's integers: anything outside cannot have been written by SQLite.
_INT64 = range(-(2**63), 2**63)
_OPS = {op.value: op for op in Op}


class UnreadableRequestError(StoreError):
    """A request row that cannot be read; it is answered with this and never performed."""


@dataclass(frozen=True, slots=True)
class RequestRow:
    """A request as stored: the raw column values, not yet judged (see ``read_request``)."""

    id: int
    op: Any
    task_id: Any
    payload: Any
    created_at: Any


@dataclass(frozen=True, slots=True)
class Request:
    """A request whose fields all have the types they should."""

    id: int
    op: Op
    task_id: TaskId | None
    payload: str | None
    created_at: datetime


def read_request(row: RequestRow) -> Request:
    """The request ``row`` holds, or UnreadableRequestError saying which field is wrong."""
    op = _OPS.get(row.op) if type(row.op) is str else None
    if op is None:
        raise UnreadableRequestError(f"unknown request {_shown(row.op)}")
    task_id = row.task_id
    if task_id is not None and (type(task_id) is not int or task_id < 1):
        raise UnreadableRequestError(f"the request names no valid task id ({_shown(task_id)})")
    if row.payload is not None and type(row.payload) is not str:
        raise UnreadableRequestError("the request's payload is not text")
    return Request(
        id=row.id,
        op=op,
        task_id=task_id,
        payload=row.payload,
        created_at=_created_at(row.created_at),
    )


def _created_at(value: object) -> datetime:
    if type(value) is not int or value not in _INT64:
        raise UnreadableRequestError(f"the request's time {_shown(value)} is not a time")
    try:
        return codec.from_us(value)
    except OverflowError:
        raise UnreadableRequestError(
            f"the request's time {value} is outside the calendar"
        ) from None


def _shown(value: object) -> str:
    return shortened(repr(value))


Perform = Callable[[Request, datetime], "str | None"]


def answer_request(row: RequestRow, now: datetime, perform: Perform) -> str | None:
    """What to answer the sender of ``row``: None when done, else its error. Never raises.

    A row that cannot be read is answered with what is wrong with it and never
    performed; so is one older than ``REQUEST_EXPIRY`` (its sender gave up waiting
    and told the person so; acting on it now would surprise them), unless it only
    says that tasks were added: they are stored, and the schedule must take them up
    however late (a trial's import left 63,187 of 100,000 tasks never scheduled by
    the running daemon, their notices expired while it worked through the others,
    and the CLI had said nothing). ``perform`` carries
    out a readable request and returns its error; anything it raises besides is a bug,
    answered and logged here so that the requests after it are still answered.
    """
    try:
        request = read_request(row)
    except UnreadableRequestError as error:
        log.warning("request %s cannot be read: %s", row.id, error)
        return f"the request cannot be read: {error}"
    if request.op is not Op.ADDED and now - request.created_at > REQUEST_EXPIRY:
        return "expired: the scheduler did not answer in time"
    try:
        return perform(request, now)
    except Exception as error:
        log.error("request %s (%s) failed: %s: %s", row.id, request.op, type(error).__name__, error)
        log.debug("the failure of request %s", row.id, exc_info=True)
        return (
            f"the request could not be carried out ({type(error).__name__}: {error}); "
            "this is a bug in taskgui; please report it"
        )


# ------------------------------------------------------- a definition in a request

# Version 2 carries the task's shape (``core.shape.task``), the same object an export
# file holds; version 1 carried the store's row and is still read, for a request sent
# by a taskgui from before it, during an upgrade.
PAYLOAD_VERSION = 2
_ROW_PAYLOAD = 1
# The version-1 payload is a row of the id and the definition columns as they were
# then: without ``rules`` (schema 9), which such a definition never had.
_SPEC_COLUMNS = codec.TASK_COLUMNS.index("rules")


def encode_spec(spec: TaskSpec) -> str:
    """A definition as JSON, to travel in a request."""
    return compact_json({"v": PAYLOAD_VERSION, "task": task_json(spec)})


def decode_spec(text: str) -> TaskSpec:
    """The definition ``encode_spec`` wrote; InvalidTaskError for anything else.

    The text comes from another process through the database, so it may be anything:
    JSON nested too deep to parse, a definition of the wrong shape or types. Each is
    refused with what is wrong, never raised as some other error.
    """
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise InvalidTaskError(f"the request's definition is not readable JSON ({error})") from None
    version = data.get("v") if isinstance(data, dict) else None
    if version == _ROW_PAYLOAD:
        return _decode_row(data.get("row"))
    if version != PAYLOAD_VERSION:
        raise InvalidTaskError("the request's definition has an unknown format")
    try:
        spec, _ = TaskDecoder(stored=True, memoise=False).task(data.get("task"))
    except FieldError as error:
        where = f"field {error.path!r}: " if error.path else ""
        raise InvalidTaskError(
            f"the request's definition is not valid: {where}{error.message}"
        ) from None
    return spec


def _decode_row(row: object) -> TaskSpec:
    if isinstance(row, list) and len(row) == _SPEC_COLUMNS - 1:
        row = [*row, None]  # written before tasks.notify: the default rule
    if not isinstance(row, list) or len(row) != _SPEC_COLUMNS:
        raise InvalidTaskError("the request's definition is not a task's row")
    # RowDecoder reads whole rows; a blank status fills the columns it expects.
    try:
        snapshot = codec.RowDecoder().snapshot((*row, None, *codec.status_values(TaskStatus())))
    except CodecError as error:
        raise InvalidTaskError(f"the request's definition is not valid: {error}") from None
    return snapshot.spec


# ------------------------------------------------------- tasks added, many at once

# The ids of one ``added`` notice at most: an import of 100,000 tasks is told in 100
# requests, not 100,000 (each its own commit, beside a daemon answering them, which
# made the import wait for the file and fail after its tasks were committed).
ADDED_PER_REQUEST = 1_000


def added_ids_payload(task_ids: Sequence[TaskId]) -> str:
    """The payload of an ``added`` request naming several tasks (its task id is None)."""
    return json.dumps({"ids": list(task_ids)})


def read_added_ids(payload: str | None) -> list[TaskId]:
    """The task ids of an ``added`` request's payload; InvalidTaskError if it holds none."""
    try:
        ids = json.loads(payload or "")["ids"]
    except (ValueError, TypeError, KeyError, RecursionError):
        raise InvalidTaskError("the added request names no tasks") from None
    if not isinstance(ids, list) or not all(
        type(task_id) is int and 0 < task_id < 2**63 for task_id in ids
    ):
        raise InvalidTaskError("the added request's task ids are not ids")
    if len(ids) > ADDED_PER_REQUEST:  # a row no taskgui wrote: it would hold the inbox
        raise InvalidTaskError(
            f"the added request names {len(ids):,} tasks, more than {ADDED_PER_REQUEST:,}"
        )
    return list(dict.fromkeys(ids))
