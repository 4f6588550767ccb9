"""When a task's runs are worth telling a person about: the notification rules.

A rule is chosen per task (``TaskSpec.notify``; ``None`` means "the default from the
settings") from five, the ones people ask every scheduler for:

* ``on-failure``: every failed attempt;
* ``after:N``: when a task has failed N times in a row (once per streak, so a task
  that keeps failing does not page anyone every minute);
* ``on-recovery``: the first success after one or more failures;
* ``on-give-up``: every attempt of an occurrence failed (taskgui's default so far);
* ``never``.

Quiet hours hold every notification back during a span of local wall-clock time
(possibly across midnight); what they held is told once when they end, as one summary
(``Trigger.HELD``; the relay keeps it): not a pile of stale news at 07:00, and not
silence either. A snooze holds back one task's until a time and drops it: the person
asked not to hear about that task, and its history has it.

Everything here is pure: ``NotifyGate`` keeps the streaks and snoozes, and is told the
time by its caller. A streak survives a restart: the first attempt of a task this
process judges has its streak counted from the task's history first
(``failure_streak``), so "after:3" counts failures before the restart too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from datetime import time as wall_time
from enum import StrEnum

from taskgui.core.errors import InvalidTaskError
from taskgui.core.states import RunOutcome

TaskId = int  # as core.task has it (which imports this module)
MAX_STREAK = 1_000  # "after:N" beyond this is a typo, not a policy


class NotifyWhen(StrEnum):
    """The rule's kind; the values are what the CLI and the export file say."""

    FAILURE = "on-failure"
    AFTER = "after"
    RECOVERY = "on-recovery"
    GIVE_UP = "on-give-up"
    NEVER = "never"


class Trigger(StrEnum):
    """What the notification is about (the ``event`` of a webhook body)."""

    FAILED = "failed"  # one attempt failed (on-failure)
    FAILING = "failing"  # the N-th failure in a row (after:N)
    RECOVERED = "recovered"  # the first success after failures
    GAVE_UP = "gave_up"  # every attempt failed
    HELD = "held"  # a summary of what quiet hours held back, when they end


@dataclass(frozen=True, slots=True, kw_only=True)
class NotifyRule:
    """One of the five rules; ``count`` is the N of ``after:N`` (1 otherwise)."""

    when: NotifyWhen = NotifyWhen.GIVE_UP
    count: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.when, NotifyWhen):
            object.__setattr__(self, "when", parse_rule(str(self.when)).when)
        if isinstance(self.count, bool) or not isinstance(self.count, int):
            raise InvalidTaskError("the failure count of a notification rule must be a number")
        if not 1 <= self.count <= MAX_STREAK:
            raise InvalidTaskError(
                f"notify after N failures takes N from 1 to {MAX_STREAK:,}, not {self.count}"
            )
        if self.when is not NotifyWhen.AFTER and self.count != 1:
            raise InvalidTaskError(f"only “after:N” takes a count, not {self.when.value}")

    @property
    def text(self) -> str:
        """``after:3``, ``on-failure``: what ``parse_rule`` reads back."""
        return f"after:{self.count}" if self.when is NotifyWhen.AFTER else self.when.value

    def describe(self) -> str:
        """For a person: ``after 3 failures in a row``."""
        if self.when is NotifyWhen.AFTER:
            return f"after {self.count} failure{'s' if self.count != 1 else ''} in a row"
        return _DESCRIPTIONS[self.when]


_DESCRIPTIONS = {
    NotifyWhen.FAILURE: "on every failure",
    NotifyWhen.RECOVERY: "when it recovers",
    NotifyWhen.GIVE_UP: "when it gives up",
    NotifyWhen.NEVER: "never",
}

DEFAULT_RULE = NotifyRule()
RULE_CHOICES = ("on-failure", "after:N", "on-recovery", "on-give-up", "never")


def parse_rule(text: str) -> NotifyRule:
    """``on-failure|after:N|on-recovery|on-give-up|never`` as a rule; a clear error else."""
    if not isinstance(text, str):
        raise InvalidTaskError("a notification rule must be text such as on-give-up")
    word = text.strip().lower()
    if word.startswith("after:") or word.startswith("after "):
        number = word[6:].strip()
        if not number.isascii() or not number.isdigit() or len(number) > 6:
            raise InvalidTaskError(f"“after:N” needs a whole number N, not {number[:20]!r}")
        return NotifyRule(when=NotifyWhen.AFTER, count=int(number))
    for when in NotifyWhen:
        if when is not NotifyWhen.AFTER and word == when.value:
            return NotifyRule(when=when)
    raise InvalidTaskError(
        f"notification rule {text[:40]!r} is not one of {', '.join(RULE_CHOICES)}"
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class QuietHours:
    """A daily span of local wall-clock time, ``start`` included, ``end`` excluded.

    ``start > end`` wraps midnight (22:00-07:00); ``start == end`` is an empty span.
    """

    start: wall_time
    end: wall_time

    def __post_init__(self) -> None:
        for value in (self.start, self.end):
            if not isinstance(value, wall_time) or value.tzinfo is not None:
                raise InvalidTaskError("quiet hours are two local times of day, like 22:00")

    def contains(self, local: wall_time) -> bool:
        moment = local.replace(tzinfo=None)
        if self.start <= self.end:
            return self.start <= moment < self.end
        return moment >= self.start or moment < self.end

    @property
    def text(self) -> str:
        return f"{self.start:%H:%M}-{self.end:%H:%M}"

    def ends_after(self, local: datetime) -> datetime:
        """The next end of the quiet hours after ``local`` (an aware local time).

        On ``local``'s own offset: across a daylight-saving change that night the
        end comes an hour early or late, once a year.
        """
        end = local.replace(
            hour=self.end.hour,
            minute=self.end.minute,
            second=self.end.second,
            microsecond=self.end.microsecond,
        )
        return end if end > local else end + timedelta(days=1)


def parse_quiet_hours(text: str) -> QuietHours | None:
    """``22:00-07:00`` as quiet hours; blank means none; a clear error for anything else."""
    text = text.strip()
    if not text:
        return None
    parts = text.split("-")
    if len(parts) != 2:
        raise InvalidTaskError(f"quiet hours look like 22:00-07:00, not {text[:40]!r}")
    try:
        start, end = (wall_time.fromisoformat(part.strip()) for part in parts)
    except ValueError:
        raise InvalidTaskError(f"quiet hours look like 22:00-07:00, not {text[:40]!r}") from None
    return QuietHours(start=start, end=end)


def trigger_for(
    rule: NotifyRule, *, failed: bool, gave_up: bool, streak_before: int
) -> Trigger | None:
    """What ``rule`` says about one finished attempt.

    ``streak_before`` is how many attempts in a row had failed before this one;
    ``gave_up`` is set for the attempt after which the task gave up (it failed too).
    """
    when = rule.when
    if when is NotifyWhen.NEVER:
        return None
    if when is NotifyWhen.GIVE_UP:
        return Trigger.GAVE_UP if gave_up else None
    if when is NotifyWhen.RECOVERY:
        return Trigger.RECOVERED if not failed and streak_before > 0 else None
    if not failed:
        return None
    if when is NotifyWhen.FAILURE:
        return Trigger.GAVE_UP if gave_up else Trigger.FAILED
    return Trigger.FAILING if streak_before + 1 == rule.count else None


def failure_streak(outcomes: Iterable[RunOutcome | None]) -> int:
    """How many attempts in a row failed, from ``outcomes`` newest first: up to the
    first success. Missed occurrences and open runs were no attempts, and are passed
    over; at most ``MAX_STREAK + 1`` are counted."""
    streak = 0
    for outcome in outcomes:
        if outcome is None or outcome is RunOutcome.MISSED:
            continue
        if not outcome.is_failure:
            break
        streak += 1
        if streak > MAX_STREAK:
            break
    return streak


class NotifyGate:
    """Streaks, snoozes and quiet hours: decides which finished attempts notify.

    Not thread-safe; the relay that owns it calls it from one thread.
    """

    def __init__(self, quiet: QuietHours | None = None) -> None:
        self.quiet = quiet
        self._streaks: dict[TaskId, int] = {}
        self._seen: set[TaskId] = set()  # streak known (seeded or counted here)
        self._snoozed: dict[TaskId, datetime] = {}

    def streak(self, task_id: TaskId) -> int:
        return self._streaks.get(task_id, 0)

    def knows(self, task_id: TaskId) -> bool:
        """Whether this task's streak is known here (else: seed it from history)."""
        return task_id in self._seen

    def seed(self, task_id: TaskId, streak: int) -> None:
        """The task's streak before its next attempt, as its history tells it."""
        self._seen.add(task_id)
        if streak > 0:
            self._streaks[task_id] = min(streak, MAX_STREAK + 1)
        else:
            self._streaks.pop(task_id, None)

    def snooze(self, task_id: TaskId, until: datetime) -> None:
        """Hold back this task's notifications until ``until`` (aware)."""
        self._snoozed[task_id] = until

    def snoozed_until(self, task_id: TaskId, now: datetime) -> datetime | None:
        until = self._snoozed.get(task_id)
        if until is not None and until <= now:
            del self._snoozed[task_id]
            return None
        return until

    def in_quiet_hours(self, local: wall_time) -> bool:
        return self.quiet is not None and self.quiet.contains(local)

    def forget(self, task_id: TaskId) -> None:
        self._streaks.pop(task_id, None)
        self._seen.discard(task_id)
        self._snoozed.pop(task_id, None)

    def attempt_finished(
        self,
        task_id: TaskId,
        rule: NotifyRule,
        *,
        failed: bool,
        gave_up: bool,
        now: datetime,
        local: wall_time,
        quiet_drops: bool = True,
    ) -> Trigger | None:
        """Count the attempt; the trigger to send, or None when the rule, a snooze or
        the quiet hours say nothing. ``local`` is ``now`` on the local wall clock.
        ``quiet_drops=False``: quiet hours do not drop it (the caller holds it back
        for the summary, asking ``in_quiet_hours``)."""
        before = self._streaks.get(task_id, 0)
        if failed:
            self._streaks[task_id] = min(before + 1, MAX_STREAK + 1)
        else:
            self._streaks.pop(task_id, None)
        trigger = trigger_for(rule, failed=failed, gave_up=gave_up, streak_before=before)
        if trigger is None:
            return None
        if self.snoozed_until(task_id, now) is not None:
            return None
        if quiet_drops and self.in_quiet_hours(local):
            return None
        return trigger
