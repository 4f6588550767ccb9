"""Tasks added by the CLI while no scheduler ran, as a new user would: the daemon starts
with them cold (known by id and run time only, ``core/engine/cold.py``) and gives them
the same rules as tasks read whole: the spread drawn at the start, the misfire policy
for what passed during the downtime.

The real program on empty XDG folders, no ``--db``.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from taskgui.core.spread import Spread
from tests.e2e.test_daemon_log import new_user, taskgui
from tests.helpers.processes import daemon_until

HOUR = timedelta(hours=1)


def _show(env: dict[str, str], task_id: int) -> dict[str, Any]:
    return dict(json.loads(taskgui(env, "show", str(task_id), "--json")))


def _history(env: dict[str, str], task_id: int) -> list[dict[str, Any]]:
    return list(json.loads(taskgui(env, "history", str(task_id), "--json")))


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _offset(task_id: int, width: timedelta) -> timedelta:
    return Spread(width, fixed=True).offset(task_id, random.random)


def _close(shown: str, expected: datetime) -> bool:
    """The CLI's JSON gives times to the millisecond."""
    return abs(_at(shown) - expected) < timedelta(milliseconds=1)


@pytest.mark.slow
def test_cold_tasks_get_their_spread_and_their_catch_up_at_the_start(tmp_path: Path) -> None:
    env = new_user(tmp_path)
    past = (datetime.now(UTC) - timedelta(minutes=150)).replace(microsecond=0).isoformat()

    def add(name: str, *flags: str) -> int:
        return int(taskgui(env, "add", "--name", name, "--command", "true", *flags))

    ahead = add("ahead", "--in", "2h", "--every", "4h", "--spread", "1h", "--spread-fixed")
    once = add("once", "--at", past, "--every", "1h")
    skip = add("skip", "--at", past, "--every", "1h", "--misfire", "skip")
    late = add("late", "--at", past, "--every", "1h", "--spread", "20m", "--spread-fixed")
    first = _show(env, ahead)["first_run_at"]
    assert _show(env, ahead)["next_run_at"] == first  # the CLI drew no spread

    def caught_up() -> bool:
        return all(
            any(run["outcome"] == "succeeded" for run in _history(env, task_id))
            for task_id in (once, late)
        ) and bool(_history(env, skip))

    daemon_until(env, caught_up, timeout=120)  # a loaded machine: CLI calls take seconds

    # Due in 2 h: its spread drawn and committed at the start, as for a task read whole.
    assert _close(_show(env, ahead)["next_run_at"], _at(first) + _offset(ahead, HOUR))
    # run_once: the latest occurrence that passed ran, the two before it are missed.
    [missed, ran] = sorted(_history(env, once), key=lambda run: run["id"])
    assert (missed["outcome"], missed["missed"], ran["outcome"]) == ("missed", 2, "succeeded")
    # skip: nothing ran; the three occurrences that passed are recorded as missed.
    [skipped] = _history(env, skip)
    assert (skipped["outcome"], skipped["missed"]) == ("missed", 3)
    # Spread: its catch-up stands for the latest occurrence, started late by its offset.
    [_, caught] = sorted(_history(env, late), key=lambda run: run["id"])
    occurrence = _at(past) + 2 * HOUR
    assert _close(caught["scheduled_at"], occurrence + _offset(late, timedelta(minutes=20)))
