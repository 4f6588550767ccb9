"""Shared for the UI tests: private settings, and a table model with its filter proxy.

UI tests never read or write the person's real settings.

``Settings.for_user()`` (used by ``taskgui.app.window``) opens the native QSettings store;
here it is pointed into the test's temporary folder. Qt keeps one search path per
process, so it is set again for every test rather than relying on XDG_CONFIG_HOME.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from taskgui.core.clock import FakeClock
from taskgui.ui.table.task_filter import TaskFilterProxy
from taskgui.ui.table.task_model import TaskTableModel
from tests.helpers.factories import T0


@pytest.fixture(autouse=True)
def private_settings(tmp_path: Path) -> Path:
    folder = tmp_path / "qsettings"
    for settings_format in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
        QSettings.setPath(settings_format, QSettings.Scope.UserScope, str(folder))
    return folder


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(T0)


@pytest.fixture
def model(qapp: QApplication, clock: FakeClock) -> Iterator[TaskTableModel]:
    model = TaskTableModel(clock)
    yield model
    model.flush_pending()


@pytest.fixture
def proxy(model: TaskTableModel) -> TaskFilterProxy:
    proxy = TaskFilterProxy()
    proxy.setSourceModel(model)
    return proxy
