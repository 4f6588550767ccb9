"""The in-memory store's request mailbox: requests filed and their answers, as the
SQLite file keeps them (``requests`` table), shared by every connection to one store.

Apart from ``memory`` (the tasks and their runs), as the SQLite backend keeps its
mailbox apart from its writes; ``MemoryRepository`` commits each change it makes here.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import datetime

from taskgui.core.task import TaskId
from taskgui.store import codec
from taskgui.store.protocols import storable_text
from taskgui.store.requests import RequestRow

_ANSWER_KEPT_US = 86_400_000_000  # a day


@dataclass(slots=True)
class _StoredRequest:
    row: RequestRow
    done_at: int | None = None
    error: str | None = None


class RequestBox:
    """The requests of one in-memory store, by id (ids from 1, never reused)."""

    def __init__(self) -> None:
        self._requests: dict[int, _StoredRequest] = {}
        self._ids = itertools.count(1)

    def submit(self, op: str, task_id: TaskId | None, payload: str | None, now: datetime) -> int:
        request_id = next(self._ids)
        # Kept as SQLite keeps a bound value: a str subclass (an Op) as plain text.
        text = None if payload is None else str(payload)
        row = RequestRow(request_id, str(op), task_id, text, codec.to_us(now))
        self._requests[request_id] = _StoredRequest(row)
        return request_id

    def open(self) -> list[RequestRow]:
        return [
            stored.row for _, stored in sorted(self._requests.items()) if stored.done_at is None
        ]

    def complete(self, request_id: int, error: str | None, now: datetime) -> None:
        now_us = codec.to_us(now)
        stored = self._requests.get(request_id)
        if stored is not None:
            stored.done_at = now_us
            stored.error = None if error is None else storable_text(error)
        # As SQLite: answers are read within seconds; a day later they are clutter.
        for old_id in [
            key
            for key, old in self._requests.items()
            if old.done_at is not None and old.done_at < now_us - _ANSWER_KEPT_US
        ]:
            del self._requests[old_id]

    def outcome(self, request_id: int) -> tuple[bool, str | None]:
        stored = self._requests.get(request_id)
        if stored is None:
            return True, f"request {request_id} was lost"
        return stored.done_at is not None, stored.error
