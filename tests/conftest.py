"""Shared test configuration: Qt always runs headless, and every test is a new user.

Each test gets empty XDG folders of its own and no ``TASKGUI_DB``, so nothing a test
does reaches the real account's database, settings, log or autostart entry, and code
that forgets to create a folder fails here as it would on a fresh account.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

# Must happen before any QApplication exists, so it runs when pytest imports this file.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# Hypothesis's deadline and its "input generation is slow" health check are wall-clock
# limits: on a shared 2-CPU machine with other suites running they failed tests that
# were right (a 1.01 s generation of 9 task specs, under load). Tests never assert
# speed (benchmarks/ measure it), so neither may Hypothesis. Explicit @settings in a
# test still take these as their defaults.
hypothesis_settings.register_profile(
    "taskgui", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
hypothesis_settings.load_profile("taskgui")

XDG_FOLDERS = ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")


@pytest.fixture(autouse=True)
def new_user_folders(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Point the XDG folders at paths that do not exist yet, as on a new account."""
    home = tmp_path_factory.mktemp("account")
    for name in XDG_FOLDERS:
        monkeypatch.setenv(name, str(home / name.lower()))
    monkeypatch.delenv("TASKGUI_DB", raising=False)
    yield


@pytest.fixture(autouse=True)
def qt_garbage_collected_on_this_thread(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a test that used Qt, collect its cyclic garbage here, on the GUI thread.

    A QObject in a reference cycle (a signal connected to its own method) is freed by
    Python's cyclic collector, which runs on whatever thread allocates when it kicks
    in: left alone, a test's dead services, notifiers and watchers were freed on a
    runner thread of a later test, destroying Qt objects off their thread, a segfault
    there (seen in test_hydration and test_service_faults).
    """
    yield
    if "qtbot" in request.fixturenames or "qapp" in request.fixturenames:
        gc.collect()
