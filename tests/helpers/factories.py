"""Builders for core objects, so tests say only what matters to them."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from taskgui.core.retry import Backoff, RetryPolicy
from taskgui.core.task import Command, TaskSpec

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    """A moment ``seconds`` after the fixed test epoch T0."""
    return T0 + timedelta(seconds=seconds)


def fixed_retry(max_attempts: int = 3, delay: float = 10.0) -> RetryPolicy:
    return RetryPolicy(
        backoff=Backoff.FIXED,
        max_attempts=max_attempts,
        base_delay=timedelta(seconds=delay),
        max_delay=timedelta(seconds=delay),
    )


def make_spec(task_id: int = 1, **overrides: Any) -> TaskSpec:
    """A valid one-off task due at T0 unless told otherwise."""
    spec = TaskSpec(
        id=task_id,
        name=f"task {task_id}",
        command=Command(line="true"),
        first_run_at=T0,
        retry=RetryPolicy.no_retry(),
    )
    return replace(spec, **overrides) if overrides else spec
