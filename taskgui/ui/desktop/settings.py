"""The person's preferences, kept with QSettings (organization and app "taskgui").

A thin typed layer over a ``QSettings`` that the caller passes in: the app gives the
user's native store (``Settings.for_user()``), tests give one on a file in a temporary
folder, so a test never writes the real configuration. Every setter writes through at
once and ``sync()``s, so a crash right after a change does not lose it.

Whether taskgui starts at login is not stored here: the autostart entry on disk is the
truth (see ``autostart``), so removing it by hand is respected.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings

from taskgui.core import defaults
from taskgui.core.wake import WakePolicy
from taskgui.runtime.notify_settings import (
    NOTIFY_EXHAUSTED,
    NOTIFY_FAILURES,
    NotifySettings,
    user_settings,
)
from taskgui.runtime.wake_settings import read_wake_policy, write_wake_policy

DEFAULT_WORKERS = defaults.DEFAULT_WORKERS  # the one definition, named here for readers
MAX_WORKERS = 64

_WORKERS = "scheduler/workers"
_NOTIFY_EXHAUSTED = NOTIFY_EXHAUSTED
_NOTIFY_FAILURES = NOTIFY_FAILURES
_START_MINIMIZED = "startup/minimized"
_CLOSE_HINT_SHOWN = "window/close_hint_shown"
_CLOSE_WITHOUT_TRAY = "window/close_without_tray"
CLOSE_CHOICES = ("ask", "quit", "background")
_GEOMETRY = "window/geometry"


class Settings:
    """Typed access to the stored preferences."""

    def __init__(self, store: QSettings) -> None:
        self.store = store

    @classmethod
    def for_user(cls) -> Settings:
        return cls(user_settings())

    @classmethod
    def at(cls, path: str) -> Settings:
        """Settings kept in the INI file ``path`` (tests, portable setups)."""
        return cls(QSettings(path, QSettings.Format.IniFormat))

    def _bool(self, key: str, default: bool) -> bool:
        value = self.store.value(key, default)
        if isinstance(value, str):  # INI files hold text
            return value.strip().lower() in ("true", "1", "yes", "on")
        return bool(value)

    def _set(self, key: str, value: object) -> None:
        self.store.setValue(key, value)
        self.store.sync()

    @property
    def workers(self) -> int:
        value = self.store.value(_WORKERS, DEFAULT_WORKERS)
        try:
            count = int(str(value))
        except ValueError:
            return DEFAULT_WORKERS
        return min(max(count, 1), MAX_WORKERS)

    @workers.setter
    def workers(self, count: int) -> None:
        self._set(_WORKERS, min(max(int(count), 1), MAX_WORKERS))

    @property
    def notify_exhausted(self) -> bool:
        """Notify when a task gives up after its last attempt (default on)."""
        return self._bool(_NOTIFY_EXHAUSTED, True)

    @notify_exhausted.setter
    def notify_exhausted(self, value: bool) -> None:
        self._set(_NOTIFY_EXHAUSTED, bool(value))
        self.notify.clear_default_rule()  # the rule follows the switches again

    @property
    def notify_failures(self) -> bool:
        """Notify on every failed run that will be retried (default off: it can be noisy)."""
        return self._bool(_NOTIFY_FAILURES, False)

    @notify_failures.setter
    def notify_failures(self, value: bool) -> None:
        self._set(_NOTIFY_FAILURES, bool(value))
        self.notify.clear_default_rule()

    @property
    def start_minimized(self) -> bool:
        """Start in the tray without showing the window (where there is a tray)."""
        return self._bool(_START_MINIMIZED, False)

    @start_minimized.setter
    def start_minimized(self, value: bool) -> None:
        self._set(_START_MINIMIZED, bool(value))

    @property
    def close_hint_shown(self) -> bool:
        """Whether we already said that closing the window keeps taskgui in the tray."""
        return self._bool(_CLOSE_HINT_SHOWN, False)

    @close_hint_shown.setter
    def close_hint_shown(self, value: bool) -> None:
        self._set(_CLOSE_HINT_SHOWN, bool(value))

    @property
    def close_without_tray(self) -> str:
        """What closing the window does where there is no tray: ``ask`` (each time, the
        default), ``quit``, or ``background`` (hand the schedule to taskgui daemon)."""
        value = str(self.store.value(_CLOSE_WITHOUT_TRAY, "ask"))
        return value if value in CLOSE_CHOICES else "ask"

    @close_without_tray.setter
    def close_without_tray(self, value: str) -> None:
        if value not in CLOSE_CHOICES:
            raise ValueError(f"closing the window can be one of {CLOSE_CHOICES}, not {value!r}")
        self._set(_CLOSE_WITHOUT_TRAY, value)

    @property
    def window_geometry(self) -> bytes | None:
        value = self.store.value(_GEOMETRY)
        if value is None:
            return None
        if isinstance(value, QByteArray):
            return bytes(value.data())
        return bytes(value) if isinstance(value, bytes | bytearray) else None

    @window_geometry.setter
    def window_geometry(self, value: bytes) -> None:
        # As a QByteArray: plain bytes would be stored as a pickled Python object.
        self._set(_GEOMETRY, QByteArray(value))

    @property
    def wake_policy(self) -> WakePolicy:
        """What a wake-up does with the runs due at once (core/wake.py); the daemon
        reads it too."""
        return read_wake_policy(self.store)

    @wake_policy.setter
    def wake_policy(self, policy: WakePolicy) -> None:
        write_wake_policy(self.store, policy)

    @property
    def notify(self) -> NotifySettings:
        """The notification rules and channels, in this same store (the daemon reads
        them from there too)."""
        return NotifySettings(self.store)

    def sync(self) -> None:
        self.store.sync()
