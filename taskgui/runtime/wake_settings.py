"""Where the global wake-up policy lives: ``wake/policy`` in the preferences.

The window's Settings dialog writes it and both the window and ``taskgui daemon`` read
it (the daemon's ``--on-wake`` overrides it for its run), so it sits here, below both,
in the same ``QSettings`` store as the other preferences. A value that cannot be read
(edited by hand) is logged and the default used: a typo must not stop the schedule.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QSettings

from taskgui.core.errors import InvalidTaskError
from taskgui.core.wake import DEFAULT_WAKE_POLICY, WakePolicy, parse_wake_policy

log = logging.getLogger(__name__)

WAKE_POLICY = "wake/policy"


def read_wake_policy(store: QSettings) -> WakePolicy:
    """The stored policy; what another process wrote since counts (``sync`` re-reads)."""
    store.sync()
    value = store.value(WAKE_POLICY, "")
    if not isinstance(value, str) or not value.strip():
        return DEFAULT_WAKE_POLICY
    try:
        return parse_wake_policy(value)
    except InvalidTaskError as error:
        log.warning("the stored wake-up policy is not used: %s", error)
        return DEFAULT_WAKE_POLICY


def write_wake_policy(store: QSettings, policy: WakePolicy) -> None:
    store.setValue(WAKE_POLICY, policy.text)
    store.sync()
