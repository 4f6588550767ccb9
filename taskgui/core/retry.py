"""Retry policies: how long to wait after a failed attempt, and when to give up.

The engine asks ``next_delay(attempt)`` and does no backoff math itself, so changing
the backoff never touches the scheduling loop. The delay is capped and computed without
ever forming a huge number, so attempt 10,000 is as safe as attempt 1.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum

from taskgui.core.duration import check_duration
from taskgui.core.errors import InvalidTaskError

DEFAULT_BASE_DELAY = timedelta(seconds=10)
DEFAULT_MAX_DELAY = timedelta(hours=1)
MAX_ATTEMPTS_LIMIT = 1_000


class Backoff(StrEnum):
    """How the delay grows from one attempt to the next."""

    EXPONENTIAL = "exponential"
    FIXED = "fixed"
    NONE = "none"  # never retry: the first failure is final


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """Backoff parameters plus the attempt limit.

    ``max_attempts`` counts every run of one occurrence, the first included: 3 means
    one run and up to two retries. Jitter multiplies each delay by a factor in
    [0.5, 1.0] drawn from the ``random.Random`` passed to ``next_delay``, which spreads
    out retries of tasks that failed together without ever exceeding the cap.
    """

    backoff: Backoff = Backoff.EXPONENTIAL
    max_attempts: int = 3
    base_delay: timedelta = DEFAULT_BASE_DELAY
    max_delay: timedelta = DEFAULT_MAX_DELAY
    factor: float = 2.0
    jitter: bool = False
    # Cached log-space threshold beyond which the exponential delay is at the cap.
    _cap_exponent: float = field(default=0.0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.backoff, Backoff):
            try:
                object.__setattr__(self, "backoff", Backoff(self.backoff))
            except ValueError:
                raise InvalidTaskError(
                    f"backoff {self.backoff!r} is not one of exponential, fixed, none"
                ) from None
        check_duration(self.base_delay, "the first retry delay")
        check_duration(self.max_delay, "the maximum retry delay")
        if isinstance(self.factor, bool) or not isinstance(self.factor, int | float):
            raise InvalidTaskError("the backoff factor must be a number of at least 1")
        if isinstance(self.max_attempts, bool) or not isinstance(self.max_attempts, int):
            raise InvalidTaskError("max attempts must be a whole number")
        if not 1 <= self.max_attempts <= MAX_ATTEMPTS_LIMIT:
            raise InvalidTaskError(
                f"max attempts must be between 1 and {MAX_ATTEMPTS_LIMIT}, not {self.max_attempts}"
            )
        if self.base_delay <= timedelta(0):
            raise InvalidTaskError("the first retry delay must be longer than zero")
        if self.max_delay < self.base_delay:
            raise InvalidTaskError("the maximum retry delay must be at least the first retry delay")
        if not math.isfinite(self.factor) or self.factor < 1.0:
            raise InvalidTaskError("the backoff factor must be a number of at least 1")
        ratio = self.max_delay / self.base_delay
        exponent = math.log(ratio) / math.log(self.factor) if self.factor > 1.0 else math.inf
        object.__setattr__(self, "_cap_exponent", exponent)

    @classmethod
    def no_retry(cls) -> RetryPolicy:
        """A policy that never retries."""
        return cls(backoff=Backoff.NONE, max_attempts=1)

    @property
    def retries(self) -> bool:
        """True when a failure can be followed by another attempt."""
        return self.backoff is not Backoff.NONE and self.max_attempts > 1

    def next_delay(self, attempt: int, rng: random.Random | None = None) -> timedelta | None:
        """Delay before attempt ``attempt + 1``, after attempt ``attempt`` failed.

        None means give up: the policy retries never, or ``attempt`` was the last one.
        Never exceeds ``max_delay`` and never overflows, whatever ``attempt`` is.
        """
        if attempt < 1:
            raise ValueError(f"attempts are numbered from 1, not {attempt}")
        if not self.retries or attempt >= self.max_attempts:
            return None
        delay = self.raw_delay(attempt)
        if self.jitter and rng is not None:
            delay = delay * rng.uniform(0.5, 1.0)
        return delay

    def raw_delay(self, attempt: int) -> timedelta:
        """The delay after ``attempt`` before jitter, ignoring the attempt limit."""
        if self.backoff is Backoff.FIXED:
            return self.base_delay
        steps = attempt - 1
        if steps >= self._cap_exponent:
            return self.max_delay
        return min(self.base_delay * (self.factor**steps), self.max_delay)

    def preview(self, count: int | None = None) -> list[timedelta]:
        """The delays a task would wait before each retry (no jitter), for the dialog."""
        limit = self.max_attempts - 1 if count is None else min(count, self.max_attempts - 1)
        if not self.retries:
            return []
        return [self.raw_delay(attempt) for attempt in range(1, limit + 1)]
