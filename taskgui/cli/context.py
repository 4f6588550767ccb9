"""What every command of the command line shares: its context, its errors, its voice."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from taskgui.cli import output as cli_format
from taskgui.core.clock import Clock
from taskgui.core.errors import TaskguiError
from taskgui.core.terminal_text import visible
from taskgui.core.wake import WakePolicy
from taskgui.store.sqlite.repository import SqliteRepository

PROG = "taskgui"
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class DaemonLauncher(Protocol):
    """Runs ``taskgui daemon`` and returns its exit status: a database file, or a DSN
    (this machine as a node of that shared schedule, named ``node``, with ``tags``)."""

    def __call__(
        self,
        database: Path | str,
        workers: int,
        reset_corrupt: bool,
        on_wake: WakePolicy | None = None,
        *,
        node: str | None = None,
        tags: list[str] | None = None,
    ) -> int: ...


# (database, now, reset_corrupt) -> the open repository, and where a damaged file went
OpenStore = Callable[[Path, datetime, bool], tuple[SqliteRepository, Path | None]]


class UsageError(TaskguiError):
    """The command line itself is wrong: exit status 2, like argparse's own errors."""


class OperationFailedError(TaskguiError):
    """The scheduler refused a request or did not answer it: exit status 1."""


@dataclass(frozen=True, slots=True)
class Context:
    """What every command needs, built once from the global flags by ``main``."""

    database: Path
    reset_corrupt: bool
    clock: Clock
    open_store: OpenStore
    request_timeout: float
    daemon: DaemonLauncher | None = None


def note(message: str) -> None:
    """A remark on stderr, terminal-safe (names and paths are shown as given)."""
    print(f"{PROG}: {visible(message)}", file=sys.stderr)


def print_json(value: Any) -> None:
    print(cli_format.json_text(value))
