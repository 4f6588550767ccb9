"""A doorbell between connections of one process: the memory store's ``fileno``.

The memory store's connections share one process, so "another process committed" is
a call on another object; a pipe per listening connection turns it into what an event
loop can wait on, as PostgreSQL's LISTEN socket is: each commit rings every other
connection's bell (one byte, never blocking: a full pipe has rung already), and
``changed`` drains its own.
"""

from __future__ import annotations

import os
from contextlib import suppress


class Doorbells:
    """The bells of every connection to one store, by connection."""

    def __init__(self) -> None:
        self._writers: dict[int, int] = {}  # id(connection) -> write end of its pipe

    def ring_others(self, connection: object) -> None:
        """A commit by ``connection``: wake everyone else who listens."""
        own = id(connection)
        for owner, writer in self._writers.items():
            if owner != own:
                with suppress(BlockingIOError):
                    os.write(writer, b"\0")

    def bell(self, connection: object) -> Bell:
        read, write = os.pipe()
        os.set_blocking(read, False)
        os.set_blocking(write, False)
        self._writers[id(connection)] = write
        return Bell(self, id(connection), read, write)

    def _remove(self, owner: int) -> None:
        self._writers.pop(owner, None)


class Bell:
    """One connection's end: ``fileno`` to wait on, ``drain`` once it was heard."""

    def __init__(self, bells: Doorbells, owner: int, read: int, write: int) -> None:
        self._bells = bells
        self._owner = owner
        self._read: int | None = read
        self._write = write

    def fileno(self) -> int | None:
        return self._read

    def drain(self) -> None:
        if self._read is None:
            return
        with suppress(BlockingIOError):
            while os.read(self._read, 4096):
                pass

    def close(self) -> None:
        if self._read is None:
            return
        self._bells._remove(self._owner)
        os.close(self._read)
        os.close(self._write)
        self._read = None
