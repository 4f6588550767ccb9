"""A calm wake-up: what to do with the runs that came due while the computer slept.

systemd starts every persistent timer the moment a laptop resumes (systemd#43350,
#43464), and so did taskgui: eight hours of hourly tasks meant a dozen commands in the
same second. A wake-up policy says what happens instead, per task (``TaskSpec.on_wake``;
None follows the global one in the settings or the daemon's ``--on-wake``):

* ``now``: run the catch-ups at once (what happened before there were policies);
* ``spread:10m``: start them one after another over ten minutes, the most urgent
  first (priority, then the time each was due, then the id: deterministic, so the
  same backlog is always spread the same way), each start committed with the task so
  a restart does not spread them again;
* ``ask``: hold them and ask the person at the window (Run them now / Skip / Spread).
  Nobody answers a headless daemon, so there ``ask`` spreads, over the policy's width.

A policy applies only when a wake-up finds at least ``CALM_FROM`` runs due at once:
one or two catch-ups are no stampede, and asking about them would be noise.
Everything here is pure; the engine applies it (``core/engine/wake.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from taskgui.core.duration import check_duration, format_duration, parse_duration
from taskgui.core.errors import InvalidTaskError
from taskgui.core.text_rules import shortened

CALM_FROM = 3  # runs due at once on a wake-up before a policy applies
DEFAULT_WAKE_SPREAD = timedelta(minutes=10)
MAX_WAKE_SPREAD = timedelta(days=1)
# Wall time running ahead of monotonic time by this much is taken for a sleep (a
# smaller step is an NTP correction or a person setting the clock).
WAKE_JUMP = timedelta(minutes=1)
WAKE_CHOICES = ("now", "spread:DURATION", "ask")


class WakeKind(StrEnum):
    NOW = "now"
    SPREAD = "spread"
    ASK = "ask"


class WakeAnswer(StrEnum):
    """What the person answered (or a policy decided) for held catch-ups."""

    NOW = "now"
    SPREAD = "spread"
    SKIP = "skip"


@dataclass(frozen=True, slots=True, kw_only=True)
class WakePolicy:
    """A wake-up policy; ``spread`` is the width for ``spread`` (and for ``ask``
    where nobody can answer)."""

    kind: WakeKind = WakeKind.SPREAD
    spread: timedelta = DEFAULT_WAKE_SPREAD

    def __post_init__(self) -> None:
        if not isinstance(self.kind, WakeKind):
            raise InvalidTaskError(f"a wake-up policy is one of {', '.join(WAKE_CHOICES)}")
        check_duration(self.spread, "the wake-up spread")
        if not timedelta(0) < self.spread <= MAX_WAKE_SPREAD:
            raise InvalidTaskError(
                "the wake-up spread must be more than 0 and at most "
                f"{format_duration(MAX_WAKE_SPREAD)}"
            )

    @property
    def text(self) -> str:
        """``now``, ``ask``, ``spread:10m``: what ``parse_wake_policy`` reads back."""
        if self.kind is WakeKind.SPREAD:
            return f"spread:{format_duration(self.spread)}"
        return self.kind.value

    def describe(self) -> str:
        if self.kind is WakeKind.NOW:
            return "run the catch-ups at once"
        if self.kind is WakeKind.ASK:
            return "ask what to do"
        return f"spread the catch-ups over {format_duration(self.spread)}"


DEFAULT_WAKE_POLICY = WakePolicy()


def parse_wake_policy(text: object) -> WakePolicy:
    """``now``, ``ask`` or ``spread:DURATION`` (``spread`` alone: 10 minutes)."""
    if not isinstance(text, str):
        raise InvalidTaskError("a wake-up policy must be text such as spread:10m")
    word = text.strip().lower()
    if word == "now":
        return WakePolicy(kind=WakeKind.NOW)
    if word == "ask":
        return WakePolicy(kind=WakeKind.ASK)
    if word == "spread":
        return WakePolicy(kind=WakeKind.SPREAD)
    if word.startswith("spread:"):
        return WakePolicy(kind=WakeKind.SPREAD, spread=parse_duration(word[7:]))
    shown = shortened(text)
    raise InvalidTaskError(
        f"wake-up policy {shown!r} is not one of now, ask, spread or spread:DURATION (spread:10m)"
    )


@dataclass(frozen=True, slots=True)
class CatchUp:
    """One run a wake-up found due: enough to order it, and its task's spread width."""

    task_id: int
    priority: int
    due_at: datetime
    width: timedelta


def spread_starts(catch_ups: Sequence[CatchUp], now: datetime) -> list[tuple[int, datetime]]:
    """(task id, start) for each catch-up, the most urgent first.

    The i-th of n starts ``width * i / n`` after ``now``: the first at once, the
    last a step before the width is up. Ordered by priority, then the time each was
    due, then the id, so the same backlog always spreads the same way. (Tasks with
    different widths keep one order; each steps through its own width.)
    """
    ordered = sorted(catch_ups, key=lambda c: (-c.priority, c.due_at, c.task_id))
    count = len(ordered)
    return [(c.task_id, now + c.width * index / count) for index, c in enumerate(ordered)]


@dataclass(frozen=True, slots=True)
class WakeQuestion:
    """Runs held after a wake-up for a person's answer (``ask``)."""

    count: int
    names: tuple[str, ...]  # plain text: they came from the tasks
    spread: timedelta = DEFAULT_WAKE_SPREAD  # what "Spread" means (the global policy's)

    @property
    def text(self) -> str:
        runs = "1 run was" if self.count == 1 else f"{self.count} runs were"
        return f"{runs} missed while the computer slept"
