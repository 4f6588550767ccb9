"""The scheduler service's calm wake-up: notice the wake, apply the policies, ask.

A wake-up is noticed two ways, whichever comes first: logind's ``PrepareForSleep(false)``
(``conditions/sleep_watch.py``, where there is a system bus) and the deadline timer's
wall clock running at least ``WAKE_JUMP`` ahead of its monotonic one (everywhere, up to
a minute late: the timer's longest wait). Both lead to ``calm_wake``, *before* anything
due is dispatched: the engine applies the wake-up policies (``core/engine/wake.py``) and
the changed starts are committed in the same transaction as whatever starts at once.
A second notice of the same wake-up finds the catch-ups already planned and changes
nothing.

With ``ask`` and a person to answer (``set_wake_policy(..., can_ask=True)``, the window),
the held catch-ups are put to them through ``wake_asked``; ``answer_wake`` carries out
the answer. Without one (the daemon) ``ask`` spreads.

Signals:
    wake_asked(object): a WakeQuestion: catch-ups wait for ``answer_wake``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta

from PySide6.QtCore import Signal

from taskgui.core.wake import DEFAULT_WAKE_POLICY, WakeAnswer, WakePolicy
from taskgui.runtime.conditions.sleep_watch import SleepWatch
from taskgui.runtime.dispatch_loop import DispatchLoop
from taskgui.runtime.guard import service_slot

log = logging.getLogger("taskgui.runtime.service")


class WakeUp(DispatchLoop):
    """See the module docstring; ``SchedulerService`` derives from it."""

    wake_asked = Signal(object)

    _wake_source: Callable[[], WakePolicy] = staticmethod(lambda: DEFAULT_WAKE_POLICY)
    _can_ask = False

    @property
    def wake_policy(self) -> WakePolicy:
        return self._wake_source()

    def set_wake_policy(
        self, policy: WakePolicy | Callable[[], WakePolicy], *, can_ask: bool = False
    ) -> None:
        """The global wake-up policy (tasks may have their own), or where to read it
        at each wake-up (the window's settings, which a person may change meanwhile);
        ``can_ask``: someone answers ``wake_asked`` (else ``ask`` spreads)."""
        if isinstance(policy, WakePolicy):
            fixed = policy
            self._wake_source = lambda: fixed
        else:
            self._wake_source = policy
        self._can_ask = can_ask

    def watch_sleep(self, watch: SleepWatch) -> bool:
        """Follow logind's sleep signal; False when there is no bus to hear it on
        (the clock's jump still notices a wake-up)."""
        watch.setParent(self)
        watch.woke.connect(self._on_sleep_watch_woke)
        return watch.start()

    @service_slot
    def _on_sleep_watch_woke(self) -> None:
        if self._health.file_is_ours(companions=False):
            log.info("the computer woke (logind)")
            self._ahead.forget()
            self._calm_wake()

    def _calm_wake(self) -> None:
        if not (self._running and not self._stopping and self._health.healthy):
            return
        policy = self.wake_policy
        events, question = self._engine.calm_wake(self._clock.now(), policy, can_ask=self._can_ask)
        if events:
            held = self._engine.held_count
            log.info("the computer woke: catch-ups planned, %d held for an answer", held)
        self._dispatch(done=events)  # the planned starts committed with what starts now
        if question is not None:
            self.wake_asked.emit(replace(question, spread=policy.spread))

    def answer_wake(self, answer: WakeAnswer, width: timedelta | None = None) -> None:
        """Run the held catch-ups now, spread them over ``width`` (the policy's by
        default), or skip them (recorded as missed)."""
        self._health.refuse_if_lost()
        spread = width if width is not None else self.wake_policy.spread
        events = self._engine.answer_wake(answer, self._clock.now(), spread)
        self._dispatch(done=events)
